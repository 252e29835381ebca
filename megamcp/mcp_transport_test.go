package megamcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestMCPResponseModes: the Streamable HTTP answer of a tools/call in each
// of HTTPOptions' transport settings (weft serve --mcp-response,
// --mcp-resumption): its content type, whether SSE events carry ids, and
// whether a broken stream can be resumed with Last-Event-ID; in every
// setting the calls land in the session in order (the second add_note
// gets id 2).
func TestMCPResponseModes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        HTTPOptions
		contentType string
		eventIDs    bool
	}{
		{"sse+resumption", HTTPOptions{}, "text/event-stream", true},
		{"json", HTTPOptions{JSONResponse: true}, "application/json", false},
		{"sse-noresumption", HTTPOptions{NoResumption: true}, "text/event-stream", false},
		{"json-noresumption", HTTPOptions{JSONResponse: true, NoResumption: true}, "application/json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, "", megamcptest.Registry(t))
			tc.opts.DefaultModules = []string{"hello"}
			h, err := s.Handler(t.Context(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			hc := ts.Client()
			sess, err := leanInit(hc, ts.URL+"/mcp")
			if err != nil {
				t.Fatal(err)
			}
			var lastID string
			for i, want := range []string{`{\"id\":1}`, `{\"id\":2}`} {
				req, _ := http.NewRequest(http.MethodPost, sess.url, strings.NewReader(
					`{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"name":"add_note","arguments":{"text":"n"}}}`))
				req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
					"Mcp-Session-Id": {sess.mcpID}, "Mcp-Protocol-Version": {leanProtocol}}
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, tc.contentType) {
					t.Fatalf("call %d: %d %q, want 200 %q: %s", i+1, resp.StatusCode, ct, tc.contentType, body)
				}
				msg := leanMessage(body)
				if !bytes.Contains(msg, []byte(want)) || !bytes.Contains(msg, []byte(`"id":`+strconv.Itoa(i+1)+`,`)) {
					t.Fatalf("call %d: message %s, want the response to id %d with %s", i+1, msg, i+1, want)
				}
				if tc.contentType == "application/json" && !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0"`)) {
					t.Fatalf("call %d: JSON body %q is not one JSON-RPC message", i+1, body)
				}
				ids := eventIDs(body)
				if tc.eventIDs != (len(ids) > 0) {
					t.Fatalf("call %d: event ids %q, want ids: %v\n%s", i+1, ids, tc.eventIDs, body)
				}
				if len(ids) > 0 {
					lastID = ids[0] // the priming event's: resuming after it replays the answer
				}
			}
			// Resume the second call's stream after its first event.
			req, _ := http.NewRequest(http.MethodGet, sess.url, nil)
			req.Header = http.Header{"Accept": {"text/event-stream"}, "Mcp-Session-Id": {sess.mcpID},
				"Mcp-Protocol-Version": {leanProtocol}, "Last-Event-Id": {lastID}}
			if !tc.eventIDs {
				req.Header.Set("Last-Event-Id", "0_1")
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			resp, err := hc.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if !tc.eventIDs {
				if resp.StatusCode == http.StatusOK {
					t.Fatalf("resume without an event store: 200, want a refusal")
				}
				return
			}
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("resume: %d %s", resp.StatusCode, b)
			}
			// Read until the replayed answer arrives (the stream stays open).
			var got []byte
			buf := make([]byte, 4096)
			for !bytes.Contains(got, []byte(`{\"id\":2}`)) {
				n, err := resp.Body.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil && !bytes.Contains(got, []byte(`{\"id\":2}`)) {
					t.Fatalf("resume: stream ended (%v) before the replayed answer: %q", err, got)
				}
			}
		})
	}
}

// eventIDs lists the "id: " lines of an SSE body.
func eventIDs(body []byte) []string {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "id: "); ok {
			out = append(out, v)
		}
	}
	return out
}
