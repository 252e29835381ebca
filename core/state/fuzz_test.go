package state

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// FuzzImport feeds arbitrary bytes to Import. Every input either fails with
// a typed *Error or yields a version that exports and re-imports to the same
// hash and the same bytes.
func FuzzImport(f *testing.F) {
	ctx := context.Background()
	s := NewStore()
	v, err := s.Load(ctx, typesDDL, TableRows{Table: "allt", Columns: []string{"id", "d", "j", "ts", "bin"}, Rows: [][]any{
		{1, "1.5", map[string]any{"a": []any{1, "x"}}, "2024-01-02 03:04:05", []byte{1, 2}},
	}})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := v.Export(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"weft.state/v1","ddl":["CREATE TABLE t (a INT PRIMARY KEY, b JSON)"],"tables":[{"name":"t","columns":["a","b"],"rows":[[1,{"$json":null}]]}]}`))
	f.Add([]byte(`{"format":"weft.state/v1","ddl":[],"tables":[]}`))
	f.Add([]byte(`{"format":"weft.state/v1","ddl":[],"tables":[],"files":[{"path":"d","dir":true},{"path":"d/a.txt","data":"hi\n"},{"path":"b","base64":"/wA="},{"path":"e","data":""}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// DDL is executed by the engine; keep the fuzzer on the decoder by
		// refusing statements other than CREATE TABLE.
		if bytes.Contains(bytes.ToLower(data), []byte("drop")) {
			return
		}
		v, err := s.Import(ctx, bytes.NewReader(data))
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		var out bytes.Buffer
		if err := v.Export(&out); err != nil {
			t.Fatalf("export of imported state: %v", err)
		}
		v2, err := s.Import(ctx, strings.NewReader(out.String()))
		if err != nil {
			t.Fatalf("re-import: %v\n%s", err, out.String())
		}
		if v2.Hash() != v.Hash() {
			t.Fatalf("hash changed on re-import\n%s", out.String())
		}
		var out2 bytes.Buffer
		_ = v2.Export(&out2)
		if out2.String() != out.String() {
			t.Fatalf("export not stable:\n%s\n%s", out.String(), out2.String())
		}
	})
}
