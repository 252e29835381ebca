package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
)

// callResultBytes returns what writeCallResult and writeJSON write for res.
func callResultBytes(res *CallResult) (fast, slow []byte, fastPath bool) {
	rf, rs := httptest.NewRecorder(), httptest.NewRecorder()
	writeCallResult(rf, res)
	writeJSON(rs, 200, res)
	var buf bytes.Buffer
	return rf.Body.Bytes(), rs.Body.Bytes(), appendCallResult(&buf, res)
}

// TestWriteCallResultBytes: the calls answer is byte for byte writeJSON's
// (the admin API's answer before), on the direct path (text items: HTML,
// control characters, invalid UTF-8, U+2028, empty; structured content
// with white space; isError) and on the fallback (other content types, no
// content, invalid structured content), with the same status and type.
func TestWriteCallResultBytes(t *testing.T) {
	text := func(s ...string) []abi.Content {
		out := []abi.Content{}
		for _, x := range s {
			out = append(out, abi.Text(x))
		}
		return out
	}
	cases := []struct {
		name string
		res  *CallResult
		fast bool
	}{
		{"retail", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: text(`{"order_id":"#W2417020","status":"pending","items":[{"name":"T-Shirt","price":53.43}]}`)}}, Seq: 1, Generation: 1, Index: 0, RowsChanged: 0}, true},
		{"escapes", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: text("<a href=\"x\">&amp;</a>\n\t\r\b\f\x01\x1f\\ é \u2028\u2029 \xff\xfe end", "")}}, Seq: 18446744073709551615, Generation: 7, Index: 42, RowsChanged: 21}, true},
		{"structured", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: text("ok"), StructuredContent: json.RawMessage(" {\"a\" : [1, 2,\n 3], \"h\": \"<&>\"} ")}}, Seq: 3}, true},
		{"is-error", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: text("Error: order not found"), IsError: true}, Denied: []string{"DROP TABLE x"}}, Seq: 2, Index: 5}, true},
		{"text-with-other-members", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: []abi.Content{{Type: abi.ContentText, Text: "t", Data: "ZGF0YQ==", MimeType: "text/plain", URI: "file:///x", Name: "n"}}}}}, true},
		{"empty-content", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: []abi.Content{}}}}, true},
		{"image", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: []abi.Content{abi.Text("a"), {Type: abi.ContentImage, Data: "aGk=", MimeType: "image/png"}}}}}, false},
		{"nil-content", &CallResult{Result: &module.Result{}}, false},
		{"nil-result", &CallResult{Seq: 9}, false},
		{"bad-structured", &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: text("x"), StructuredContent: json.RawMessage(`{"a":`)}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fast, slow, path := callResultBytes(c.res)
			if path != c.fast {
				t.Errorf("direct path = %v, want %v", path, c.fast)
			}
			if !bytes.Equal(fast, slow) {
				t.Fatalf("writeCallResult wrote\n%q\nwriteJSON\n%q", fast, slow)
			}
			if c.fast && (len(fast) == 0 || !json.Valid(fast)) {
				t.Fatalf("answer %q is not JSON", fast)
			}
		})
	}
	rf := httptest.NewRecorder()
	writeCallResult(rf, cases[0].res)
	if rf.Code != 200 || rf.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q; want 200, application/json", rf.Code, rf.Header().Get("Content-Type"))
	}
}

// FuzzWriteCallResult: for any text items and structured content the calls
// answer equals writeJSON's bytes.
func FuzzWriteCallResult(f *testing.F) {
	f.Add("plain", "", []byte(nil), false, uint64(1), 3)
	f.Add("<&>\u2028\xff\"\\", "second\n", []byte(` {"k": [1, "<"]} `), true, uint64(1<<63), -1)
	f.Add("", "", []byte(`{"a":`), false, uint64(0), 0)
	f.Fuzz(func(t *testing.T, a, b string, sc []byte, isErr bool, seq uint64, rows int) {
		res := &CallResult{Result: &module.Result{CallResult: abi.CallResult{Content: []abi.Content{abi.Text(a), abi.Text(b)}, StructuredContent: sc, IsError: isErr}},
			Seq: seq, Generation: seq / 3, Index: seq / 7, RowsChanged: rows}
		fast, slow, _ := callResultBytes(res)
		if !bytes.Equal(fast, slow) {
			t.Fatalf("writeCallResult wrote\n%q\nwriteJSON\n%q", fast, slow)
		}
	})
}

// TestAdminRetailCallsUnchanged: through the admin API (data directory,
// the ledger on disk), each retail call's answer is byte for byte what the
// old path wrote (writeJSON of Server.Call's result on a twin session, the
// same first call), and its ledger record's rows_changed is
// state.Diff(seed, after).Count(), > 0 for the writes.
func TestAdminRetailCallsUnchanged(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)
	ctx := context.Background()
	for _, c := range serveRetailCalls {
		t.Run(c.tool, func(t *testing.T) {
			var ids [2]string
			for i := range ids {
				r := a.do("POST", "/v1/sessions", `{"modules":["retail"]}`)
				var info SessionInfo
				if r.status != http.StatusCreated || json.Unmarshal(r.body, &info) != nil {
					t.Fatalf("create: %d %s", r.status, r.body)
				}
				ids[i] = info.ID
			}
			got := a.do("POST", "/v1/sessions/"+ids[0]+"/calls", `{"tool":"`+c.tool+`","arguments":`+c.args+`}`)
			if got.status != http.StatusOK {
				t.Fatalf("call: %d %s", got.status, got.body)
			}
			twin, err := s.Call(ctx, ids[1], CallRequest{Tool: c.tool, Arguments: json.RawMessage(c.args)})
			if err != nil || twin.Result.IsError {
				t.Fatalf("twin call: %v %+v", err, twin)
			}
			old := httptest.NewRecorder()
			writeJSON(old, http.StatusOK, twin)
			if !bytes.Equal(got.body, old.Body.Bytes()) {
				t.Fatalf("answer\n%s\nthe old encoding\n%s", got.body, old.Body.Bytes())
			}
			recs, err := s.Ledger(ctx, ids[0], 0, 10)
			if err != nil || len(recs) != 1 {
				t.Fatalf("ledger: %v, %d records", err, len(recs))
			}
			ss, err := s.Session(ids[0])
			if err != nil {
				t.Fatal(err)
			}
			seed := ss.anchor // the session's starting state (the retail seed)
			cur, err := s.Current(ctx, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			want := state.Diff(seed, cur).Count()
			if recs[0].RowsChanged != want || twin.RowsChanged != want || (c.tool != "get_order_details") != (want > 0) {
				t.Fatalf("rows_changed: ledger %d, twin %d, Diff %d", recs[0].RowsChanged, twin.RowsChanged, want)
			}
		})
	}
}
