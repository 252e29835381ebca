package module

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fxBundle is the fx fixture as a bundle, with the manifest it declares.
func fxBundle(t *testing.T, r *Runtime) *Bundle {
	t.Helper()
	m := compileFixture(t, r, "fx")
	return &Bundle{Manifest: *m.Manifest(), Wasm: fixture(t, "fx"), Schema: fxDDL}
}

// TestRegistryPutRepairsCorruptBlob: a registry blob whose bytes no longer
// hash to its name (16 bytes overwritten in the middle, or a truncated copy)
// is replaced when the same bundle is stored again, by Put (module build)
// and by PutTar (module pull); the repaired module loads and answers a call.
// Before the fix Put skipped any existing file and the module stayed unusable
// (trial report F2).
func TestRegistryPutRepairsCorruptBlob(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, Config{})
	b := fxBundle(t, r)
	want, err := b.Tar()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := reg.Put(b)
	if err != nil {
		t.Fatal(err)
	}
	if d != digestOf(want) {
		t.Fatalf("Put digest %s, want %s", d, digestOf(want))
	}
	path := reg.blobPath(d)

	corrupt := map[string]func([]byte) []byte{
		"overwritten": func(p []byte) []byte {
			q := bytes.Clone(p)
			copy(q[len(q)/2:], bytes.Repeat([]byte{0xAA}, 16))
			return q
		},
		"truncated": func(p []byte) []byte { return bytes.Clone(p[:len(p)/3]) },
	}
	store := map[string]func() (string, error){
		"Put":    func() (string, error) { return reg.Put(b) },
		"PutTar": func() (string, error) { return reg.PutTar(want, d) },
	}
	for cname, mangle := range corrupt {
		for sname, put := range store {
			if err := os.WriteFile(path, mangle(want), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := reg.Get("fx:latest")
			if !errors.Is(err, ErrInvalidBundle) || !strings.Contains(err.Error(), "stored bundle "+d+" is corrupt") {
				t.Fatalf("%s/%s: Get of the corrupt blob: %v, want ErrInvalidBundle naming %s", cname, sname, err, d)
			}
			got, err := put()
			if err != nil || got != d {
				t.Fatalf("%s/%s: store again: %s, %v", cname, sname, got, err)
			}
			on, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(on, want) {
				t.Fatalf("%s/%s: blob after repair: %d bytes (%v), want the %d canonical bytes", cname, sname, len(on), err, len(want))
			}
			gb, gd, err := reg.Get("fx:latest")
			if err != nil || gd != d {
				t.Fatalf("%s/%s: Get after repair: %s, %v", cname, sname, gd, err)
			}
			m, err := r.Load(ctx, reg, gb)
			if err != nil {
				t.Fatalf("%s/%s: Load: %v", cname, sname, err)
			}
			ws := fxWorkspace(t)
			s := &Session{Workspace: ws, Seed: 1, Clock: NewVirtualClock(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))}
			id := cname + "-" + sname
			if res, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"`+id+`","n":7}`)); err != nil || res.IsError {
				t.Fatalf("%s/%s: put after repair: %v %+v", cname, sname, err, res)
			}
			res, err := m.Call(ctx, s, "get", json.RawMessage(`{"id":"`+id+`"}`))
			if err != nil || string(res.StructuredContent) != `{"id":"`+id+`","n":7}` {
				t.Fatalf("%s/%s: get after repair: %v %+v", cname, sname, err, res)
			}
		}
	}

	// An intact blob is not rewritten: same file (inode) before and after.
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Put(b); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("intact blob rewritten (%v)", err)
	}
}

// TestOpenRegistryCreatesNothing: opening and reading a registry whose
// directory does not exist (a mistyped $WEFT_REGISTRY) creates nothing;
// reads find nothing and Check names the directory. The first Put creates
// it (trial F13: weft module list made the whole tree).
func TestOpenRegistryCreatesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "typo", "registry")
	reg, err := OpenRegistry(dir)
	if err != nil {
		t.Fatal(err)
	}
	if refs, err := reg.List(); err != nil || len(refs) != 0 {
		t.Fatalf("List: %v, %v; want none", refs, err)
	}
	if _, err := reg.Resolve("hello"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Resolve: %v, want ErrNotFound", err)
	}
	want := "no module registry at " + dir + ": nothing has been built or pulled into it (check --registry and $WEFT_REGISTRY)"
	if err := reg.Check(); !errors.Is(err, ErrNoRegistry) || err.Error() != want {
		t.Fatalf("Check: %v\nwant %s", err, want)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("reads created %v", entries)
	}
	b := &Bundle{Manifest: Manifest{ABI: ABIVersion, Name: "m", Version: "1", Tables: Tables{Owns: []string{"t"}}}, Wasm: []byte("\x00asm"), Schema: "CREATE TABLE t (id INT PRIMARY KEY)"}
	d, err := reg.Put(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Check(); err != nil {
		t.Fatalf("Check after Put: %v", err)
	}
	if got, err := reg.Resolve("m:1"); err != nil || got != d {
		t.Fatalf("Resolve after Put: %s, %v", got, err)
	}
	f := filepath.Join(root, "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRegistry(f); err == nil || err.Error() != "module registry: "+f+" is not a directory" {
		t.Fatalf("OpenRegistry of a file: %v", err)
	}
}
