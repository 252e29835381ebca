package megamcp

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// The ledger records a call's arguments as sent when module.Call decoded
// them (no second scan in megamcp), and arguments that are not JSON as a
// JSON string with an invalid_arguments error, the session unchanged.
func TestLedgerRecordsArgumentsOnce(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	s := newServer(t, t.TempDir(), reg)
	info, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	call(t, s, info.ID, 0, "add_note", `{"text": "spaced"}`)
	before := mustInfo(t, s, info.ID)
	if r := call(t, s, info.ID, 0, "add_note", `{"text": `); !r.Result.IsError {
		t.Fatalf("truncated JSON: %s", text(r))
	}
	if r := call(t, s, info.ID, 0, "no_such_tool", `{"x":`); !r.Result.IsError {
		t.Fatalf("unknown tool: %s", text(r))
	}
	recs, err := s.Ledger(ctx, info.ID, 0, 10)
	if err != nil || len(recs) != 3 {
		t.Fatalf("ledger: %v, %d records", err, len(recs))
	}
	if got := string(recs[0].Arguments); got != `{"text":"spaced"}` && got != `{"text": "spaced"}` {
		t.Errorf("valid arguments recorded as %s", got)
	}
	for i, want := range []string{`"{\"text\":"`, `"{\"x\":"`} {
		r := recs[i+1]
		if string(r.Arguments) != want || r.Error == nil || (i == 0 && r.Error.Kind != "invalid_arguments") {
			t.Errorf("record %d: arguments %s, error %+v; want %s", i+1, r.Arguments, r.Error, want)
		}
	}
	after := mustInfo(t, s, info.ID)
	if after.Hash != before.Hash {
		t.Errorf("refused calls changed the session: %s -> %s", before.Hash, after.Hash)
	}
}
