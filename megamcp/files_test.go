package megamcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// A notesfs session end to end in process: the seed's file, file writes
// through calls, a failed call changing nothing, snapshot/restore, Diff with
// file changes, the workspace-file resource, and recovery after the server
// closes (the ledger replayed onto the seed).
func TestWorkspaceFilesSession(t *testing.T) {
	reg := megamcptest.Registry(t)
	dir := t.TempDir()
	s := newServer(t, dir, reg)
	ctx := context.Background()
	info, err := s.Create(ctx, CreateOptions{Modules: []string{"notesfs"}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	readme := "# notes\n\nNotes are kept in notes/log.txt, one a line.\n"
	res, err := s.ReadFile(ctx, id, 0, "README.md")
	if err != nil || res.Contents[0].Text != readme || res.Contents[0].MimeType != "text/markdown; charset=utf-8" || res.Contents[0].URI != "weft://files/README.md" {
		t.Fatalf("seed README.md: %+v %v", res, err)
	}
	v0, err := s.Snapshot(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"first", "second"} {
		if r := call(t, s, id, 0, "add_note", `{"text":"`+n+`"}`); r.Result.IsError || r.RowsChanged != 1 {
			t.Fatalf("add_note %s: %+v %s", n, r, text(r))
		}
	}
	// A refused write (outside notes/**) is a tool error and changes
	// nothing.
	before, _ := s.Current(ctx, id)
	if r := call(t, s, id, 0, "write_file", `{"path":"README.md","content":"x"}`); !r.Result.IsError || text(r) != `denied: denied: the module's manifest does not allow it to write "README.md"` {
		t.Fatalf("write README.md: %s", text(r))
	}
	if r := call(t, s, id, 0, "write_file", `{"path":"../x","content":"x"}`); !r.Result.IsError || text(r)[:14] != "invalid_path: " {
		t.Fatalf("write ../x: %s", text(r))
	}
	after, _ := s.Current(ctx, id)
	if before.Hash() != after.Hash() {
		t.Fatal("refused writes changed the state")
	}
	res, err = s.ReadFile(ctx, id, 0, "notes/log.txt")
	if err != nil || res.Contents[0].Text != "first\nsecond\n" {
		t.Fatalf("notes/log.txt: %+v %v", res, err)
	}
	if _, err := s.ReadFile(ctx, id, 0, "notes/none"); !errors.Is(err, module.ErrUnknownResource) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := s.ReadFile(ctx, id, 0, "../etc/passwd"); !errors.Is(err, ErrBadRequest) {
		t.Errorf("../etc/passwd: %v", err)
	}
	ch, err := s.Diff(ctx, v0, "session:"+id)
	if err != nil {
		t.Fatal(err)
	}
	want := []state.FileChange{{Path: "notes/log.txt", Change: state.FileAdded,
		TextDiff:  "--- a/notes/log.txt\n+++ b/notes/log.txt\n@@ -0,0 +1,2 @@\n+first\n+second\n",
		NewSHA256: sha256Hex("first\nsecond\n")}}
	if d := cmp.Diff(want, ch.Files); d != "" {
		t.Errorf("diff files (-want +got):\n%s", d)
	}
	// Restore drops the files written since the snapshot.
	if _, err := s.Restore(ctx, id, 0, v0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadFile(ctx, id, 0, "notes/log.txt"); !errors.Is(err, module.ErrUnknownResource) {
		t.Errorf("after restore: %v", err)
	}
	call(t, s, id, 0, "add_note", `{"text":"third"}`)
	final, _ := s.Current(ctx, id)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Recovery: a new server on the same data directory has the same state.
	s2 := newServer(t, dir, reg)
	defer s2.Close()
	rec, err := s2.Current(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Hash() != final.Hash() {
		t.Errorf("recovered hash %s, want %s", rec.Hash(), final.Hash())
	}
	got, err := rec.ReadFile("notes/log.txt")
	if err != nil || string(got) != "third\n" {
		t.Errorf("recovered notes/log.txt %q %v", got, err)
	}
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// The workspace-file resource over MCP /mcp/sessions/{id}: the template is
// listed, a read returns the file of the session's state, a missing or
// undeclared path is Resource not found.
func TestMCPWorkspaceFileResource(t *testing.T) {
	_, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)
	info := a.create(map[string]any{"modules": []string{"notesfs"}, "seed": 5})
	cs := mcpConnect(t, ts.URL+info.MCP, nil)
	ctx := context.Background()
	callTool(t, cs, "add_note", map[string]any{"text": "over mcp"})
	lt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tmpls []string
	for _, tp := range lt.ResourceTemplates {
		tmpls = append(tmpls, tp.URITemplate)
	}
	if d := cmp.Diff([]string{FilesURITemplate}, tmpls); d != "" {
		t.Errorf("templates (-want +got):\n%s", d)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weft://files/notes/log.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "over mcp\n" || rr.Contents[0].MIMEType != "text/plain; charset=utf-8" {
		t.Errorf("read = %+v", rr.Contents[0])
	}
	for _, uri := range []string{"weft://files/notes/none", "weft://files/secret.txt", "weft://files/../x"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: %v, want Resource not found", uri, err)
		}
	}
}
