package filetest

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	fshost "github.com/weft-dev/weft/hosts/fs"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/tool"
)

type pathIn struct {
	Path string `json:"path"`
	To   string `json:"to,omitempty"`
	Data string `json:"data,omitempty"`
	All  bool   `json:"all,omitempty"`
}

type out struct {
	Data    string   `json:"data,omitempty"`
	Entries []string `json:"entries,omitempty"`
	Size    int64    `json:"size,omitempty"`
	Dir     bool     `json:"dir,omitempty"`
}

// fsErr turns a file error into a tool error carrying its kind, so tests
// see the kind the guest saw.
func fsErr(err error) error {
	var fe *tool.FileError
	if errors.As(err, &fe) {
		return tool.Errorf("%s: %s", fe.Kind, fe.Message)
	}
	return err
}

// A notes-like module: files under "notes/**" read and written, "docs/**"
// only read, everything else undeclared.
func init() {
	tool.Module(tool.Info{Name: "files", Version: "1.0.0", Owns: []string{"t"},
		FileWrites: []string{"notes/**"}, FileReads: []string{"docs/**", "README.md"}})
	fsys := tool.Files()
	tool.Register("read", "Reads a file.", func(ctx context.Context, in pathIn) (out, error) {
		b, err := fsys.ReadFile(in.Path)
		return out{Data: string(b)}, fsErr(err)
	})
	tool.Register("write", "Writes a file.", func(ctx context.Context, in pathIn) (out, error) {
		return out{}, fsErr(fsys.WriteFile(in.Path, []byte(in.Data)))
	})
	tool.Register("append", "Appends to a file.", func(ctx context.Context, in pathIn) (out, error) {
		return out{}, fsErr(fsys.AppendFile(in.Path, []byte(in.Data)))
	})
	tool.Register("list", "Lists a directory (fs.ReadDir).", func(ctx context.Context, in pathIn) (out, error) {
		ents, err := fs.ReadDir(fsys, in.Path)
		var o out
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			o.Entries = append(o.Entries, n)
		}
		return o, fsErr(err)
	})
	tool.Register("walk", "Walks the tree (fs.WalkDir).", func(ctx context.Context, in pathIn) (out, error) {
		var o out
		err := fs.WalkDir(fsys, in.Path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			o.Entries = append(o.Entries, p)
			return nil
		})
		return o, fsErr(err)
	})
	tool.Register("stat", "Stats a path.", func(ctx context.Context, in pathIn) (out, error) {
		fi, err := fsys.Stat(in.Path)
		if err != nil {
			return out{}, fsErr(err)
		}
		return out{Size: fi.Size(), Dir: fi.IsDir()}, nil
	})
	tool.Register("mkdir", "Makes a directory.", func(ctx context.Context, in pathIn) (out, error) {
		if in.All {
			return out{}, fsErr(fsys.MkdirAll(in.Path))
		}
		return out{}, fsErr(fsys.Mkdir(in.Path))
	})
	tool.Register("remove", "Removes a path.", func(ctx context.Context, in pathIn) (out, error) {
		if in.All {
			return out{}, fsErr(fsys.RemoveAll(in.Path))
		}
		return out{}, fsErr(fsys.Remove(in.Path))
	})
	tool.Register("rename", "Renames a path.", func(ctx context.Context, in pathIn) (out, error) {
		return out{}, fsErr(fsys.Rename(in.Path, in.To))
	})
	tool.Register("write_then_fail", "Writes a file and a row, then fails: both roll back.", func(ctx context.Context, in pathIn) (out, error) {
		if err := fsys.WriteFile(in.Path, []byte(in.Data)); err != nil {
			return out{}, fsErr(err)
		}
		if _, err := tool.DB().ExecContext(ctx, "INSERT INTO t VALUES (99)"); err != nil {
			return out{}, err
		}
		return out{}, tool.Errorf("failed on purpose")
	})
	tool.Register("is_not_exist", "Reports errors.Is(err, fs.ErrNotExist) of a read.", func(ctx context.Context, in pathIn) (bool, error) {
		_, err := fsys.ReadFile(in.Path)
		return errors.Is(err, fs.ErrNotExist), nil
	})
}

type fixture struct {
	t   *testing.T
	mod *module.Module
	s   *module.Session
}

func newFixture(t *testing.T, limits state.FileLimits) *fixture {
	t.Helper()
	ctx := context.Background()
	mod, err := module.NewNative(tool.ManifestJSON(), tool.Dispatch, module.Config{})
	if err != nil {
		t.Fatal(err)
	}
	store := state.NewStore()
	store.SetFileLimits(limits)
	v, err := store.Load(ctx, "CREATE TABLE t (id INT PRIMARY KEY)")
	if err != nil {
		t.Fatal(err)
	}
	v, err = v.WithFiles([]state.File{
		{Path: "docs/guide.md", Data: []byte("# Guide\n")},
		{Path: "README.md", Data: []byte("readme")},
		{Path: "secret/key", Data: []byte("k")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, mod: mod, s: &module.Session{Workspace: store.Fork(v)}}
}

// call runs tool with args and returns the structured result or the tool
// error's text (prefixed "error: ").
func (f *fixture) call(tool string, args string) string {
	f.t.Helper()
	res, err := f.mod.Call(context.Background(), f.s, tool, json.RawMessage(args))
	if err != nil {
		f.t.Fatalf("%s %s: %v", tool, args, err)
	}
	if res.IsError {
		return "error: " + res.Content[0].Text
	}
	return string(res.StructuredContent)
}

func TestManifestDeclaresFiles(t *testing.T) {
	var m abi.Manifest
	if err := json.Unmarshal(tool.ManifestJSON(), &m); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&abi.Files{Reads: []string{"docs/**", "README.md"}, Writes: []string{"notes/**"}}, m.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if m.Hosts["fs"] != "v1" {
		t.Errorf("hosts %v: no fs v1", m.Hosts)
	}
}

func TestNativeFiles(t *testing.T) {
	f := newFixture(t, state.FileLimits{})
	for _, c := range []struct{ tool, args, want string }{
		{"write", `{"path":"notes/a.txt","data":"one\n"}`, `{}`},
		{"append", `{"path":"notes/a.txt","data":"two\n"}`, `{}`},
		{"read", `{"path":"notes/a.txt"}`, `{"data":"one\ntwo\n"}`},
		{"read", `{"path":"docs/guide.md"}`, `{"data":"# Guide\n"}`},
		{"stat", `{"path":"notes/a.txt"}`, `{"size":8}`},
		{"stat", `{"path":"notes"}`, `{"dir":true}`},
		{"mkdir", `{"path":"notes/sub/deep","all":true}`, `{}`},
		{"mkdir", `{"path":"notes/sub"}`, `error: exists: state: file exists: notes/sub already exists`},
		{"rename", `{"path":"notes/a.txt","to":"notes/sub/b.txt"}`, `{}`},
		// The root lists only what the module may read (or reach).
		{"list", `{"path":"."}`, `{"entries":["README.md","docs/","notes/"]}`},
		{"list", `{"path":"notes/sub"}`, `{"entries":["b.txt","deep/"]}`},
		{"walk", `{"path":"notes"}`, `{"entries":["notes","notes/sub","notes/sub/b.txt","notes/sub/deep"]}`},
		{"remove", `{"path":"notes/sub"}`, `error: not_empty: state: directory not empty: directory notes/sub is not empty`},
		{"remove", `{"path":"notes/sub","all":true}`, `{}`},
		{"read", `{"path":"notes/sub/b.txt"}`, `error: not_found: state: no such file or directory: notes/sub/b.txt does not exist`},
		{"is_not_exist", `{"path":"notes/none"}`, `true`},
	} {
		got := f.call(c.tool, c.args)
		if c.tool == "is_not_exist" {
			res, err := f.mod.Call(context.Background(), f.s, c.tool, json.RawMessage(c.args))
			if err != nil {
				t.Fatal(err)
			}
			got = res.Content[0].Text
		}
		if got != c.want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.tool, c.args, got, c.want)
		}
	}
	// A tool error rolls back the call's file write with its SQL write.
	before := f.s.Workspace.Hash()
	if got := f.call("write_then_fail", `{"path":"notes/x","data":"x"}`); got != "error: failed on purpose" {
		t.Errorf("write_then_fail: %s", got)
	}
	if f.s.Workspace.Hash() != before {
		t.Error("a failed call left changes")
	}
	if _, err := f.s.Workspace.ReadFile("notes/x"); !errors.Is(err, state.ErrNoSuchFile) {
		t.Errorf("rolled-back file: %v", err)
	}
}

// Bad input through the module: typed error kinds, and the workspace
// unchanged (hash and files).
func TestNativeFilesBadInput(t *testing.T) {
	f := newFixture(t, state.FileLimits{MaxFileBytes: 8, MaxWorkspaceBytes: 40, MaxFiles: 7})
	// 5 entries: docs, docs/guide.md, README.md, secret, secret/key (15 bytes).
	if got := f.call("write", `{"path":"notes/n","data":"12345678"}`); got != `{}` {
		t.Fatal(got) // 7 entries, 23 bytes
	}
	before, beforeFiles := f.s.Workspace.Hash(), f.s.Workspace.Files()
	for _, c := range []struct{ tool, args, kind string }{
		{"write", `{"path":"../escape","data":"x"}`, abi.FSInvalidPath},
		{"write", `{"path":"notes/../../escape","data":"x"}`, abi.FSInvalidPath},
		{"write", `{"path":"/etc/passwd","data":"x"}`, abi.FSInvalidPath},
		{"write", `{"path":"notes/a\u0000b","data":"x"}`, abi.FSInvalidPath},
		{"read", `{"path":"/etc/passwd"}`, abi.FSInvalidPath},
		{"rename", `{"path":"notes/n","to":"../n"}`, abi.FSInvalidPath},
		{"write", `{"path":"notes/big","data":"123456789"}`, abi.FSTooLarge},
		{"append", `{"path":"notes/n","data":"9"}`, abi.FSTooLarge},
		{"write", `{"path":"notes/m","data":"12345678"}`, abi.FSTooManyFiles},
		{"mkdir", `{"path":"notes/a/b","all":true}`, abi.FSTooManyFiles},
		{"write", `{"path":"secret/key","data":"x"}`, abi.FSDenied},
		{"read", `{"path":"secret/key"}`, abi.FSDenied},
		{"write", `{"path":"docs/guide.md","data":"x"}`, abi.FSDenied},
		{"write", `{"path":"other.txt","data":"x"}`, abi.FSDenied},
		{"rename", `{"path":"notes/n","to":"docs/n"}`, abi.FSDenied},
		{"rename", `{"path":"docs/guide.md","to":"notes/g"}`, abi.FSDenied},
		{"remove", `{"path":"docs","all":true}`, abi.FSDenied},
	} {
		got := f.call(c.tool, c.args)
		ok := false
		for _, k := range strings.Split(c.kind, "|") {
			ok = ok || strings.HasPrefix(got, "error: "+k+": ")
		}
		if !ok {
			t.Errorf("%s %s: %s, want kind %s", c.tool, c.args, got, c.kind)
		}
		if f.s.Workspace.Hash() != before {
			t.Fatalf("%s %s changed the workspace", c.tool, c.args)
		}
	}
	if d := cmp.Diff(beforeFiles, f.s.Workspace.Files()); d != "" {
		t.Errorf("files changed (-before +after):\n%s", d)
	}
}

// A 9-byte write with the entry cap reached is too_many_files, and with the
// byte cap reached workspace_full: each cap on its own.
func TestNativeFilesCaps(t *testing.T) {
	f := newFixture(t, state.FileLimits{MaxFileBytes: 100, MaxWorkspaceBytes: 20, MaxFiles: 100})
	if got := f.call("write", `{"path":"notes/a","data":"123456"}`); !strings.HasPrefix(got, "error: workspace_full: ") {
		t.Errorf("over the byte cap: %s", got)
	}
	f = newFixture(t, state.FileLimits{MaxFiles: 6})
	if got := f.call("write", `{"path":"notes/a","data":"1"}`); !strings.HasPrefix(got, "error: too_many_files: ") {
		t.Errorf("over the entry cap: %s", got)
	}
}

func TestManifestFilesValidation(t *testing.T) {
	for _, c := range []struct {
		files string
		hosts string
		want  string
	}{
		{`{"writes":["../x/**"]}`, `"fs":"v1"`, `files pattern "../x/**"`},
		{`{"reads":["a/**/b"]}`, `"fs":"v1"`, `"**" is allowed only alone`},
		{`{"reads":["[x"]}`, `"fs":"v1"`, `syntax error in pattern`},
		{`{"reads":["docs/**"]}`, `"sql":"v1"`, `declares files but not the host library "fs"`},
	} {
		m := `{"abi":"weft/v1","name":"x","version":"1","tools":[],"tables":{"owns":[]},"hosts":{` + c.hosts + `},"files":` + c.files + `}`
		_, err := module.NewNative([]byte(m), func(context.Context, abi.Host, []byte) []byte { return nil }, module.Config{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("files %s: %v, want %q", c.files, err, c.want)
		}
	}
}

// FuzzPathRules: the host library's path check and the state's agree on
// every input (a path passing fshost.ValidPath is never refused by the
// state as invalid, and the other way round).
func FuzzPathRules(f *testing.F) {
	for _, s := range []string{".", "a", "a/b", "../a", "/a", "a//b", "a/", "a\x00", "a\xff", `a\b`, "./a", "a/.", strings.Repeat("x", 256)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		h, s := fshost.ValidPath(p), state.CheckPath(p)
		if (h == nil) != (s == nil) {
			t.Fatalf("%q: host %v, state %v", p, h, s)
		}
		if s != nil && !errors.Is(s, state.ErrInvalidPath) {
			t.Fatalf("%q: state error %v is not ErrInvalidPath", p, s)
		}
	})
}
