package module_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
)

// TestErrorsKeepState: a tool error rolls its call's writes back, unless
// the manifest says errors_keep_state (a reference implementation whose
// error answers follow a mutation, as BFCL's): then it commits them, as
// a success does. A successful call commits either way.
func TestErrorsKeepState(t *testing.T) {
	ctx := context.Background()
	// count_then_refuse inserts a row, then answers a tool error.
	dispatch := func(_ context.Context, h abi.Host, req []byte) []byte {
		var r abi.CallRequest
		_ = json.Unmarshal(req, &r)
		q, _ := json.Marshal(abi.SQLRequest{SQL: "INSERT INTO counter (id) VALUES (1)", Args: []json.RawMessage{}})
		h.SQL(q)
		if r.Tool == "count_then_refuse" {
			return []byte(`{"content":[{"type":"text","text":"refused"}],"isError":true}`)
		}
		return []byte(`{"content":[{"type":"text","text":"ok"}]}`)
	}
	for _, keep := range []bool{false, true} {
		m := abi.Manifest{ABI: abi.Version, Name: "counter", Version: "1.0.0", Hosts: abi.HostVersions(),
			Tables: abi.Tables{Owns: []string{"counter"}}, ErrorsKeepState: keep,
			Tools: []abi.Tool{
				{Name: "count_then_refuse", InputSchema: json.RawMessage(`{"type":"object"}`)},
				{Name: "count", InputSchema: json.RawMessage(`{"type":"object"}`)},
			}}
		manifest, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := module.NewNative(manifest, dispatch, module.Config{})
		if err != nil {
			t.Fatal(err)
		}
		store := state.NewStore()
		v0, err := store.Load(ctx, "CREATE TABLE counter (id INT PRIMARY KEY)")
		if err != nil {
			t.Fatal(err)
		}
		ws := store.Fork(v0)
		base := ws.Hash()
		sess := &module.Session{Workspace: ws}
		res, err := mod.Call(ctx, sess, "count_then_refuse", json.RawMessage(`{}`))
		if err != nil || !res.IsError || abi.FirstText(res.Content) != "refused" {
			t.Fatalf("keep=%v: %+v %v, want the tool error", keep, res, err)
		}
		if changed := ws.Hash() != base; changed != keep {
			t.Errorf("keep=%v: state changed = %v after a tool error, want %v", keep, changed, keep)
		}
		rows, err := ws.Query(ctx, "SELECT COUNT(*) FROM counter")
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if keep {
			want = 1
		}
		if n, _ := toInt64(rows.Values[0][0]); n != want {
			t.Errorf("keep=%v: %v rows after the tool error, want %d", keep, rows.Values[0][0], want)
		}
	}
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case uint64:
		return int64(x), true
	}
	return 0, false
}
