package state

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// FuzzImportDelta feeds arbitrary bytes to ImportDelta over a fixed base.
// Every input either fails with a typed *Error, leaving the base unchanged,
// or yields a version whose delta against the base re-imports to the same
// hash.
func FuzzImportDelta(f *testing.F) {
	ctx := context.Background()
	s := NewStore()
	base, err := s.Load(ctx, deltaDDL,
		TableRows{Table: "acct", Columns: []string{"email", "bal", "meta"}, Rows: [][]any{{"a@x", "1.50", map[string]any{"k": 1}}, {"b@x", "2.00", nil}}},
		TableRows{Table: "note", Columns: []string{"a", "b", "body"}, Rows: [][]any{{1, "p", "hello"}}})
	if err != nil {
		f.Fatal(err)
	}
	baseHash := base.Hash()
	ws := s.Fork(base)
	for _, q := range []string{"INSERT INTO acct (email, bal) VALUES ('c@x', 3.25)", "DELETE FROM note WHERE a = 1", "UPDATE acct SET email = 'z@x' WHERE id = 1"} {
		if _, err := ws.Exec(ctx, q); err != nil {
			f.Fatal(err)
		}
	}
	v, _ := ws.Snapshot()
	var buf bytes.Buffer
	if err := v.ExportDelta(&buf, base); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	h := baseHash.String()
	f.Add([]byte(`{"format":"weft.state-delta/v1","base":"` + h + `","tables":[]}`))
	f.Add([]byte(`{"format":"weft.state-delta/v1","base":"` + h + `","tables":[{"name":"acct","auto_increment":9,"delete":[[2]],"upsert":[[7,"b@x","1.00",null]]}]}`))
	f.Add([]byte(`{"format":"weft.state-delta/v1","base":"` + h + `","tables":[{"name":"note","upsert":[[1,"p"]]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := s.ImportDelta(ctx, base, bytes.NewReader(data))
		if base.Hash() != baseHash {
			t.Fatal("ImportDelta changed its base")
		}
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		var out bytes.Buffer
		if err := got.ExportDelta(&out, base); err != nil {
			t.Fatalf("re-export: %v", err)
		}
		again, err := s.ImportDelta(ctx, base, bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("re-import: %v\n%s", err, out.Bytes())
		}
		if again.Hash() != got.Hash() {
			t.Fatalf("round trip changed the state\nin:  %s\nout: %s", data, out.Bytes())
		}
	})
}
