package inspect

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestMySQLServerQueryTimeout: a runaway inspection query is cancelled at
// QueryTimeout with an error, and the connection stays usable.
func TestMySQLServerQueryTimeout(t *testing.T) {
	f := newInspectFixture(t)
	srv, err := NewMySQLServer(f.store, MySQLConfig{Password: inspectToken, Resolve: f.resolve, List: f.list, QueryTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := mustDial(t, srv.Addr().(*net.TCPAddr).Port, "sess-a")
	start := time.Now()
	// 2^26 rows: minutes of work.
	from := make([]string, 26)
	for i := range from {
		from[i] = "users u" + string(rune('a'+i))
	}
	_, err = c.ExecuteFetch("SELECT COUNT(*) FROM "+strings.Join(from, ", "), 10, false)
	if err == nil {
		t.Fatal("runaway query finished")
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("cancelled only after %s", el)
	}
	if msg := strings.ToLower(err.Error()); !strings.Contains(msg, "context") && !strings.Contains(msg, "cancel") && !strings.Contains(msg, "deadline") {
		t.Fatalf("not a timeout: %v", err)
	}
	wantRows(t, c, "SELECT COUNT(*) FROM users", "2")
}
