package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
)

const fsConfig = `{"root": {"workspace": {"type": "directory", "contents": {
	"document": {"type": "directory", "contents": {
		"report.txt": {"type": "file", "content": "b line\na line"},
		"sub": {"type": "directory", "contents": {"deep.txt": {"type": "file", "content": "deep"}}}}},
	"archive": {"type": "directory", "contents": {}}}}}}`

func fsSession(t *testing.T) (*module.Module, *module.Session, *state.Store) {
	t.Helper()
	store := state.NewStore()
	v, err := seedVersion(context.Background(), store, []string{"GorillaFileSystem"}, map[string]json.RawMessage{"GorillaFileSystem": json.RawMessage(fsConfig)})
	if err != nil {
		t.Fatal(err)
	}
	return nativeModule(t), &module.Session{Workspace: store.Fork(v)}, store
}

func fsCall(t *testing.T, m *module.Module, sess *module.Session, tool, args string) string {
	t.Helper()
	res, err := m.Call(context.Background(), sess, tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	return abi.FirstText(res.Content)
}

func classRow(t *testing.T, ws *state.Workspace) string {
	t.Helper()
	r, err := ws.Query(context.Background(), "SELECT c.config, c.state, a.attr, a.value FROM bfcl_class c JOIN bfcl_attr a ON a.class = c.name WHERE c.name = 'GorillaFileSystem' ORDER BY a.attr")
	if err != nil || len(r.Values) != 2 {
		t.Fatalf("class rows: %v %v", r, err)
	}
	return fmt.Sprint(r.Values)
}

// The seed and every call keep GorillaFileSystem's tree in the workspace
// files: directories as directories, file content as bytes; SQL holds no
// file content, only entry order and the side record (root name, cwd).
func TestFileSystemTreeInFiles(t *testing.T) {
	m, sess, _ := fsSession(t)
	ws := sess.Workspace
	var paths []string
	for _, f := range ws.Files() {
		paths = append(paths, f.Path)
	}
	if d := cmp.Diff([]string{"archive", "document", "document/report.txt", "document/sub", "document/sub/deep.txt"}, paths); d != "" {
		t.Fatalf("seed files (-want +got):\n%s", d)
	}
	if row := classRow(t, ws); strings.Contains(row, "line") || strings.Contains(row, "deep") || !strings.Contains(row, `"root":"workspace"`) {
		t.Errorf("class row holds the tree: %s", row)
	}
	// ls shows dict order (document before archive), not name order.
	if got := fsCall(t, m, sess, "ls", `{}`); got != `{"current_directory_content":["document","archive"]}` {
		t.Errorf("ls = %s", got)
	}
	fsCall(t, m, sess, "cd", `{"folder": "document"}`)
	fsCall(t, m, sess, "touch", `{"file_name": "a.txt"}`)
	fsCall(t, m, sess, "echo", `{"content": "hello", "file_name": "a.txt"}`)
	fsCall(t, m, sess, "mv", `{"source": "report.txt", "destination": "sub"}`)
	if b, err := ws.ReadFile("document/a.txt"); err != nil || string(b) != "hello" {
		t.Errorf("document/a.txt = %q, %v", b, err)
	}
	if b, err := ws.ReadFile("document/sub/report.txt"); err != nil || string(b) != "b line\na line" {
		t.Errorf("document/sub/report.txt = %q, %v", b, err)
	}
	if _, err := ws.Stat("document/report.txt"); !errors.Is(err, state.ErrNoSuchFile) {
		t.Errorf("document/report.txt after mv: %v", err)
	}
	if row := classRow(t, ws); !strings.Contains(row, `"cwd":"document"`) || strings.Contains(row, "hello") {
		t.Errorf("class row: %s", row)
	}
	if got := fsCall(t, m, sess, "ls", `{}`); got != `{"current_directory_content":["sub","a.txt"]}` {
		t.Errorf("ls = %s", got)
	}
	// Names that are no path element are escaped, and come back.
	fsCall(t, m, sess, "mv", `{"source": "a.txt", "destination": ".."}`)
	if _, err := ws.Stat("document/%.."); err != nil {
		t.Errorf("escaped name: %v", err)
	}
	if got := fsCall(t, m, sess, "cat", `{"file_name": ".."}`); got != `{"file_content":"hello"}` {
		t.Errorf("cat .. = %s", got)
	}
}

// Object identity BFCL's graph has and paths do not (mv of a directory
// leaves its children's parent link on the old object) is kept in the side
// record only while it matters, and dropped when the tree describes the
// graph again.
func TestFileSystemIdentityOverlay(t *testing.T) {
	m, sess, _ := fsSession(t)
	ws := sess.Workspace
	fsCall(t, m, sess, "mv", `{"source": "document", "destination": "docs"}`)
	if row := classRow(t, ws); !strings.Contains(row, `"graph"`) || strings.Contains(row, `"content"`) {
		t.Errorf("after mv of a directory the side record has the graph shape, no content: %s", row)
	}
	fsCall(t, m, sess, "cd", `{"folder": "docs"}`)
	fsCall(t, m, sess, "cd", `{"folder": "sub"}`)
	// BFCL: sub's parent is still the directory object named document.
	if got := fsCall(t, m, sess, "pwd", `{}`); got != `{"current_working_directory":"/workspace/document/sub"}` {
		t.Errorf("pwd = %s", got)
	}
	fsCall(t, m, sess, "echo", `{"content": "changed", "file_name": "deep.txt"}`)
	if b, _ := ws.ReadFile("docs/sub/deep.txt"); string(b) != "changed" {
		t.Errorf("docs/sub/deep.txt = %q", b)
	}
	fsCall(t, m, sess, "cd", `{"folder": ".."}`)
	fsCall(t, m, sess, "cd", `{"folder": ".."}`)
	if got := fsCall(t, m, sess, "rm", `{"file_name": "docs"}`); !strings.Contains(got, "removed") {
		t.Fatalf("rm docs = %s", got)
	}
	if row := classRow(t, ws); strings.Contains(row, `"graph"`) || !strings.Contains(row, `"cwd":""`) {
		t.Errorf("the tree describes the graph again, the side record should be small: %s", row)
	}
	if got := fsCall(t, m, sess, "ls", `{}`); got != `{"current_directory_content":["archive"]}` {
		t.Errorf("ls = %s", got)
	}
}
