package state

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func smallState(t testing.TB, s *Store) *Version {
	t.Helper()
	v, err := s.Load(context.Background(), "CREATE TABLE t (id INT PRIMARY KEY, s TEXT)",
		TableRows{Table: "t", Columns: []string{"id", "s"}, Rows: [][]any{{1, "a"}, {2, "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The hash of a state without files is the one it had before workspace
// files existed (pinned values computed at commit 50ce08d, the last commit
// without files), so existing version ids and data directories stay valid.
func TestFilesHashOfStateWithoutFilesUnchanged(t *testing.T) {
	s := NewStore()
	f, err := os.Open("../../examples/data/tau2-retail/db.state.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	retail, err := s.Import(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := retail.Hash().String(), "c10482ef14f87982560ad1e3b0d86a994e2c1d56338967cab2f43c1f4ada5734"; got != want {
		t.Errorf("retail seed hash %s, want %s (pre-files)", got, want)
	}
	small := smallState(t, s)
	const smallHash = "688ee6cd35db438780f1892486f7eafd074f0563839e7a0f18cdef7f277c94b4"
	if got := small.Hash().String(); got != smallHash {
		t.Errorf("small hash %s, want %s", got, smallHash)
	}
	// Adding a file changes it; removing it again restores it exactly.
	ws := s.Fork(small)
	if err := ws.WriteFile("a.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if ws.Hash().String() == smallHash {
		t.Fatal("a file did not change the hash")
	}
	if err := ws.Remove("a.txt", false); err != nil {
		t.Fatal(err)
	}
	if got := ws.Hash().String(); got != smallHash {
		t.Errorf("hash after removing the only file %s, want %s", got, smallHash)
	}
	// Export of a state without files has no "files" member.
	var b bytes.Buffer
	if err := small.Export(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"files"`) {
		t.Errorf("export without files mentions files: %s", b.String())
	}
}

func TestFilesOperations(t *testing.T) {
	s := NewStore()
	v := smallState(t, s)
	ws := s.Fork(v)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ws.WriteFile("docs/a.txt", []byte("hello\n")))
	must(ws.AppendFile("docs/a.txt", []byte("world\n")))
	must(ws.AppendFile("log.txt", []byte("1")))
	must(ws.Mkdir("empty", false))
	must(ws.Mkdir("x/y/z", true))
	must(ws.Mkdir("x/y", true)) // -p on an existing dir
	got, err := ws.ReadFile("docs/a.txt")
	must(err)
	if string(got) != "hello\nworld\n" {
		t.Errorf("content %q", got)
	}
	root, err := ws.ReadDir(".")
	must(err)
	want := []FileInfo{
		{Name: "docs", Path: "docs", Dir: true},
		{Name: "empty", Path: "empty", Dir: true},
		{Name: "log.txt", Path: "log.txt", Size: 1},
		{Name: "x", Path: "x", Dir: true},
	}
	if d := cmp.Diff(want, root); d != "" {
		t.Errorf("root listing (-want +got):\n%s", d)
	}
	fi, err := ws.Stat("docs/a.txt")
	must(err)
	if d := cmp.Diff(FileInfo{Name: "a.txt", Path: "docs/a.txt", Size: 12}, fi); d != "" {
		t.Error(d)
	}
	must(ws.Rename("docs", "x/docs2"))
	got, err = ws.ReadFile("x/docs2/a.txt")
	must(err)
	if string(got) != "hello\nworld\n" {
		t.Errorf("renamed content %q", got)
	}
	if _, err := ws.Stat("docs/a.txt"); !errors.Is(err, ErrNoSuchFile) {
		t.Errorf("old path after rename: %v", err)
	}
	if err := ws.Remove("x", false); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("remove non-empty: %v", err)
	}
	must(ws.Remove("x", true))
	var paths []string
	for _, f := range ws.Files() {
		paths = append(paths, f.Path)
	}
	if d := cmp.Diff([]string{"empty", "log.txt"}, paths); d != "" {
		t.Errorf("files after remove (-want +got):\n%s", d)
	}
	// Errors of each kind.
	for _, c := range []struct {
		name string
		err  error
		kind error
	}{
		{"read dir", func() error { _, e := ws.ReadFile("empty"); return e }(), ErrIsDir},
		{"read missing", func() error { _, e := ws.ReadFile("nope"); return e }(), ErrNoSuchFile},
		{"write under file", ws.WriteFile("log.txt/a", nil), ErrNotDir},
		{"write dir", ws.WriteFile("empty", nil), ErrIsDir},
		{"mkdir exists", ws.Mkdir("empty", false), ErrFileExists},
		{"mkdir no parent", ws.Mkdir("q/r", false), ErrNoSuchFile},
		{"rename onto existing", ws.Rename("log.txt", "empty"), ErrFileExists},
		{"rename into missing dir", ws.Rename("log.txt", "nodir/l"), ErrNoSuchFile},
		{"rename dir into itself", ws.Rename("empty", "empty/sub"), ErrInvalidPath},
		{"list file", func() error { _, e := ws.ReadDir("log.txt"); return e }(), ErrNotDir},
		{"remove root", ws.Remove(".", true), ErrInvalidPath},
	} {
		if !errors.Is(c.err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.kind)
		}
	}
	// The version forked from is untouched.
	if v.FileCount() != 0 || v.Hash().String() != "688ee6cd35db438780f1892486f7eafd074f0563839e7a0f18cdef7f277c94b4" {
		t.Errorf("base version changed: %d files", v.FileCount())
	}
}

// Bad input: typed errors, and the workspace (hash and files) unchanged.
func TestFilesBadInput(t *testing.T) {
	s := NewStore()
	s.SetFileLimits(FileLimits{MaxFileBytes: 10, MaxWorkspaceBytes: 25, MaxFiles: 4})
	base, err := smallState(t, s).WithFiles([]File{{Path: "d", Dir: true}, {Path: "d/a", Data: []byte("0123456789")}})
	if err != nil {
		t.Fatal(err)
	}
	ws := s.Fork(base)
	before, beforeFiles := ws.Hash(), ws.Files()
	for _, c := range []struct {
		name  string
		err   error
		kind  error
		limit string
	}{
		{"dotdot", ws.WriteFile("../etc/passwd", []byte("x")), ErrInvalidPath, ""},
		{"inner dotdot", ws.WriteFile("d/../../x", []byte("x")), ErrInvalidPath, ""},
		{"absolute", ws.WriteFile("/etc/passwd", []byte("x")), ErrInvalidPath, ""},
		{"NUL", ws.WriteFile("a\x00b", []byte("x")), ErrInvalidPath, ""},
		{"invalid UTF-8", ws.WriteFile("a\xffb", []byte("x")), ErrInvalidPath, ""},
		{"backslash", ws.WriteFile(`a\b`, []byte("x")), ErrInvalidPath, ""},
		{"trailing slash", ws.WriteFile("d/", []byte("x")), ErrInvalidPath, ""},
		{"empty", ws.WriteFile("", []byte("x")), ErrInvalidPath, ""},
		{"dot element", ws.Mkdir("./d2", false), ErrInvalidPath, ""},
		{"rename to dotdot", ws.Rename("d/a", "../a"), ErrInvalidPath, ""},
		{"long element", ws.WriteFile(strings.Repeat("e", 256), nil), ErrInvalidPath, ""},
		{"over file cap", ws.WriteFile("b", []byte("01234567890")), ErrFileLimit, LimitFileBytes},
		{"append over file cap", ws.AppendFile("d/a", []byte("x")), ErrFileLimit, LimitFileBytes},
		{"over workspace cap", func() error {
			if err := ws.WriteFile("b", []byte("0123456789")); err != nil {
				return err
			}
			defer func() { _ = ws.Remove("b", false) }()
			return ws.WriteFile("c", []byte("0123456789"))
		}(), ErrFileLimit, LimitWorkspaceBytes},
		{"too many files", func() error {
			// 2 entries now; cap 4: a/b/c needs 3 more.
			return ws.WriteFile("x/y/z", nil)
		}(), ErrFileLimit, LimitFiles},
		{"too many dirs", ws.Mkdir("p/q/r", true), ErrFileLimit, LimitFiles},
	} {
		if !errors.Is(c.err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.kind)
			continue
		}
		var se *Error
		if !errors.As(c.err, &se) || se.Limit != c.limit {
			t.Errorf("%s: limit %q, want %q (%v)", c.name, se.Limit, c.limit, c.err)
		}
		if ws.Hash() != before {
			t.Errorf("%s: workspace changed", c.name)
		}
	}
	if d := cmp.Diff(beforeFiles, ws.Files()); d != "" {
		t.Errorf("files changed (-before +after):\n%s", d)
	}
}

func TestFilesUnitRollbackAndCommit(t *testing.T) {
	s := NewStore()
	ws := s.Fork(smallState(t, s))
	if err := ws.WriteFile("keep.txt", []byte("k")); err != nil {
		t.Fatal(err)
	}
	before := ws.Hash()
	u, err := ws.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := u.WriteFile("tmp.txt", []byte("t")); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Exec(context.Background(), "INSERT INTO t VALUES (3, 'c')"); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile("outside.txt", nil); !errors.Is(err, ErrUnitInProgress) {
		t.Errorf("workspace write during a unit: %v", err)
	}
	if err := u.Rollback(); err != nil {
		t.Fatal(err)
	}
	if ws.Hash() != before {
		t.Error("rollback left changes")
	}
	if _, err := ws.ReadFile("tmp.txt"); !errors.Is(err, ErrNoSuchFile) {
		t.Errorf("rolled-back file: %v", err)
	}
	if err := u.WriteFile("late.txt", nil); !errors.Is(err, ErrUnitDone) {
		t.Errorf("write after rollback: %v", err)
	}
	err = ws.Do(func(u *Unit) error { return u.Rename("keep.txt", "kept.txt") })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ws.ReadFile("kept.txt"); err != nil || string(got) != "k" {
		t.Errorf("committed rename: %q %v", got, err)
	}
}

func TestFilesDiff(t *testing.T) {
	s := NewStore()
	a, err := smallState(t, s).WithFiles([]File{
		{Path: "same.txt", Data: []byte("same\n")},
		{Path: "gone.txt", Data: []byte("bye\n")},
		{Path: "edit.txt", Data: []byte("one\ntwo\nthree\n")},
		{Path: "bin", Data: []byte{0xff, 0x00}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ws := s.Fork(a)
	for _, err := range []error{
		ws.Remove("gone.txt", false),
		ws.WriteFile("edit.txt", []byte("one\n2\nthree\n")),
		ws.WriteFile("new.txt", []byte("hi\n")),
		ws.WriteFile("bin", []byte{0xfe}),
		ws.Mkdir("dir", false),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, _ := ws.Snapshot()
	c := Diff(a, b)
	want := []FileChange{
		{Path: "bin", Change: FileChanged}, // binary: no text diff
		{Path: "dir", Change: FileAdded},
		{Path: "edit.txt", Change: FileChanged, TextDiff: "--- a/edit.txt\n+++ b/edit.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"},
		{Path: "gone.txt", Change: FileRemoved, TextDiff: "--- a/gone.txt\n+++ b/gone.txt\n@@ -1 +0,0 @@\n-bye\n"},
		{Path: "new.txt", Change: FileAdded, TextDiff: "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"},
	}
	// SHA-256 of each side's content (pinned once in TestFilesSHAHex).
	want[0].OldSHA256 = sha256Hex([]byte{0xff, 0x00})
	want[0].NewSHA256 = sha256Hex([]byte{0xfe})
	want[2].OldSHA256, want[2].NewSHA256 = sha256Hex([]byte("one\ntwo\nthree\n")), sha256Hex([]byte("one\n2\nthree\n"))
	want[3].OldSHA256 = sha256Hex([]byte("bye\n"))
	want[4].NewSHA256 = sha256Hex([]byte("hi\n"))
	if d := cmp.Diff(want, c.Files); d != "" {
		t.Errorf("file changes (-want +got):\n%s", d)
	}
	if c.Empty() || len(c.Tables) != 0 {
		t.Errorf("Empty %v, tables %d", c.Empty(), len(c.Tables))
	}
	if d := cmp.Diff(c.Files, ws.DiffWorkspace(a).Files); d != "" {
		t.Errorf("DiffWorkspace differs:\n%s", d)
	}
	if !Diff(b, b).Empty() {
		t.Error("diff of a version with itself is not empty")
	}
}

func TestFilesSHAHex(t *testing.T) {
	// sha256Hex is the test's helper; pin one value so the helper is right.
	if got := sha256Hex([]byte("hi\n")); got != "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4" {
		t.Errorf("sha256 of hi\\n = %s", got)
	}
}

func TestFilesExportImportDelta(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	base, err := smallState(t, s).WithFiles([]File{
		{Path: "docs/readme.md", Data: []byte("# hi\n")},
		{Path: "empty.txt", Data: []byte{}},
		{Path: "img.bin", Data: []byte{0x89, 'P', 'N', 'G', 0xff}},
		{Path: "tmp", Dir: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := base.Export(&b); err != nil {
		t.Fatal(err)
	}
	wantJSON := `"files":[{"path":"docs","dir":true},{"path":"docs/readme.md","data":"# hi\n"},{"path":"empty.txt","data":""},{"path":"img.bin","base64":"iVBOR/8="},{"path":"tmp","dir":true}]}`
	if !strings.HasSuffix(strings.TrimSpace(b.String()), wantJSON) {
		t.Errorf("export files member:\n%s\nwant suffix\n%s", b.String(), wantJSON)
	}
	s2 := NewStore()
	imp, err := s2.Import(ctx, bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if imp.Hash() != base.Hash() {
		t.Errorf("import hash %s, want %s", imp.Hash(), base.Hash())
	}
	if d := cmp.Diff(base.Files(), imp.Files()); d != "" {
		t.Errorf("imported files (-want +got):\n%s", d)
	}
	// A delta carrying only file changes, including a file turning into a
	// directory.
	ws := s.Fork(base)
	for _, err := range []error{
		ws.Remove("tmp", false),
		ws.WriteFile("tmp", []byte("now a file")),
		ws.Rename("docs/readme.md", "README.md"),
		ws.AppendFile("empty.txt", []byte("x")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	next, _ := ws.Snapshot()
	var db bytes.Buffer
	if err := next.ExportDelta(&db, base); err != nil {
		t.Fatal(err)
	}
	wantDelta := `{"format":"weft.state-delta/v1","base":"` + base.Hash().String() + `","tables":[],"files":{"delete":["docs/readme.md","tmp"],"upsert":[{"path":"README.md","data":"# hi\n"},{"path":"empty.txt","data":"x"},{"path":"tmp","data":"now a file"}]}}` + "\n"
	if db.String() != wantDelta {
		t.Errorf("delta\n%s\nwant\n%s", db.String(), wantDelta)
	}
	got, err := s.ImportDelta(ctx, base, bytes.NewReader(db.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash() != next.Hash() {
		t.Errorf("delta import hash %s, want %s", got.Hash(), next.Hash())
	}
	// Malformed files members are ErrBadImport, naming the path.
	for _, doc := range []string{
		`{"format":"weft.state/v1","ddl":[],"tables":[],"files":[{"path":"a","data":"x","dir":true}]}`,
		`{"format":"weft.state/v1","ddl":[],"tables":[],"files":[{"path":"a","base64":"!!"}]}`,
		`{"format":"weft.state/v1","ddl":[],"tables":[],"files":[{"path":"a"}]}`,
	} {
		if _, err := s.Import(ctx, strings.NewReader(doc)); !errors.Is(err, ErrBadImport) {
			t.Errorf("import %s: %v, want ErrBadImport", doc, err)
		}
	}
	if _, err := s.Import(ctx, strings.NewReader(`{"format":"weft.state/v1","ddl":[],"tables":[],"files":[{"path":"../a","data":""}]}`)); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("import of ../a: %v, want ErrInvalidPath", err)
	}
}

func TestFilesMerge(t *testing.T) {
	s := NewStore()
	v1, _ := smallState(t, s).WithFiles([]File{{Path: "a", Data: []byte("1")}, {Path: "shared", Data: []byte("s")}})
	v2, _ := s.Fork(v1).Snapshot()
	ws := s.Fork(v2)
	_ = ws.Remove("a", false)
	_ = ws.WriteFile("b", []byte("2"))
	v2, _ = ws.Snapshot()
	m, err := Merge(v1, v2)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range m.Files() {
		paths = append(paths, f.Path+"="+string(f.Data))
	}
	if d := cmp.Diff([]string{"a=1", "b=2", "shared=s"}, paths); d != "" {
		t.Errorf("merged files (-want +got):\n%s", d)
	}
	ws = s.Fork(v1)
	_ = ws.WriteFile("shared", []byte("other"))
	v3, _ := ws.Snapshot()
	if _, err := Merge(v1, v3); !errors.Is(err, ErrBadArgument) {
		t.Errorf("merge of differing files: %v", err)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
