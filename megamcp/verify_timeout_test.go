package megamcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestVerifySQLServerSideTimeout is issue 15 item 15: verify SQL on the
// admin API had no server-side timeout (a cartesian join ran as long as the
// client waited). Each SQL check now stops at VerifySQLTimeout and fails
// with a message naming it; the other checks still run and the session is
// unchanged.
func TestVerifySQLServerSideTimeout(t *testing.T) {
	reg := megamcptest.Registry(t)
	s := newServer(t, "", reg)
	defer s.Close()
	ctx := context.Background()
	_, vid := fxTask(t, s)
	a, err := s.Create(ctx, CreateOptions{Modules: []string{"fx"}, Version: vid})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		call(t, s, a.ID, 0, "put", `{"id":"`+id+`","n":1}`)
	}
	h := mustInfo(t, s, a.ID).Hash
	old := VerifySQLTimeout
	VerifySQLTimeout = 300 * time.Millisecond
	defer func() { VerifySQLTimeout = old }()
	done := make(chan *VerifyResult, 1)
	start := time.Now()
	go func() {
		vr, err := s.Verify(ctx, a.ID, 0, []Check{
			{Name: "join", SQL: "SELECT COUNT(*) FROM items a, items b, items c, items d, items e, items f, items g, items h"},
			{Name: "huge", SQL: "SELECT LENGTH(REPEAT('x', 1000000000))"},
			{Name: "count", SQL: "SELECT COUNT(*) FROM items"},
			{Name: "chance", SQL: "SELECT RAND()"},
		})
		if err != nil {
			t.Error(err)
		}
		done <- vr
	}()
	var vr *VerifyResult
	select {
	case vr = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("verify SQL ran for 10 s past a 300 ms server-side timeout")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("verify took %s", el)
	}
	if vr == nil || len(vr.Checks) != 4 || vr.Passed {
		t.Fatalf("verify = %+v", vr)
	}
	if c := vr.Checks[0]; c.Passed || !strings.Contains(c.Message, "server-side timeout") {
		t.Errorf("join check: %+v", c)
	}
	if c := vr.Checks[1]; c.Passed || !strings.Contains(c.Message, "resource limit") {
		t.Errorf("huge value check: %+v", c)
	}
	if c := vr.Checks[2]; string(c.Got) != "[[12]]" {
		t.Errorf("count check: %+v", c)
	}
	if c := vr.Checks[3]; c.Passed || !strings.Contains(c.Message, "random stream") {
		t.Errorf("RAND() check: %+v", c)
	}
	if mustInfo(t, s, a.ID).Hash != h {
		t.Fatal("verify changed the session")
	}
}
