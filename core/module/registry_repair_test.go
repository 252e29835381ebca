package module

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
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
