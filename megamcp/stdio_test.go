package megamcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestStdioMalformedLines: weft mcp's stdio transport answers every
// malformed line with a JSON-RPC error and goes on (issue 15 item 14: it
// used to exit on the first one); on stdin EOF right after a tool call the
// call finishes, is answered, and is in the session's state and ledger
// when the server returns (what --state-out writes).
func TestStdioMalformedLines(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, "", megamcptest.Registry(t))
	defer s.Close()
	ms, id, err := s.StdioServer(ctx, CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	lines := []string{
		`garbage`,
		`[]`,
		`null`,
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"x\":\"\xff\"}",
		`{"jsonrpc":"1.0","id":7,"method":"ping"}`,
		`{"id":8,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`42`,
	}
	for _, l := range lines {
		in.WriteString(l + "\n")
	}
	// A 50 MB line.
	in.WriteString(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"add_note","arguments":{"text":"`)
	in.Write(bytes.Repeat([]byte("x"), 50<<20))
	in.WriteString("\"}}}\n")
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_note","arguments":{"text":"last words"}}}` + "\n")
	// ... and EOF right after the call.
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- ms.Run(ctx, &StdioTransport{In: &in, Out: &out}) }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not return after stdin EOF")
	}
	if err != nil && err != io.EOF && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("Run: %v", err)
	}
	type wireErr struct {
		ID    any `json:"id"`
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	var got []string
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m wireErr
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		idb, _ := json.Marshal(m.ID)
		switch {
		case m.Error != nil:
			got = append(got, string(idb)+" error "+itoa(uint64(-m.Error.Code)))
		default:
			got = append(got, string(idb)+" result")
		}
	}
	want := []string{
		"null error 32700", // garbage
		"null error 32600", // []
		"null error 32600", // null
		"null error 32700", // invalid UTF-8
		"7 error 32600",    // jsonrpc 1.0
		"8 error 32600",    // no jsonrpc
		"null error 32600", // a batch
		"null error 32600", // 42
		"null error 32600", // the 50 MB line
		"1 result",         // initialize
		"2 result",         // the call before EOF
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("responses (-want +got):\n%s", d)
	}
	recs, err := s.Ledger(ctx, id, 0, 0)
	if err != nil || len(recs) != 1 || recs[0].Tool != "add_note" || string(recs[0].Arguments) != `{"text":"last words"}` {
		t.Fatalf("ledger after EOF: %+v, %v", recs, err)
	}
	v, err := s.Current(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.store.Fork(v).Query(ctx, "SELECT text FROM notes")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Values) != 1 || rows.Values[0][0] != "last words" {
		t.Fatalf("state after EOF: %v", rows.Values)
	}
}
