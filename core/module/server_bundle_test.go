package module

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/sdk/abi"
)

const fakeInterp = "sha256:0000000000000000000000000000000000000000000000000000000000000001"

// A server bundle is deterministic, round-trips through its tar, and gives
// back the spec it was made from.
func TestServerBundleRoundTrip(t *testing.T) {
	s := loadBank(t)
	b, err := ServerBundle(s, fakeInterp)
	if err != nil {
		t.Fatal(err)
	}
	t1, err := b.Tar()
	if err != nil {
		t.Fatal(err)
	}
	b2, err := ServerBundle(loadBank(t), fakeInterp)
	if err != nil {
		t.Fatal(err)
	}
	t2, _ := b2.Tar()
	if !bytes.Equal(t1, t2) {
		t.Fatal("two bundles of the same spec differ")
	}
	var names []string
	tr := tar.NewReader(bytes.NewReader(t1))
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if d := cmp.Diff([]string{"manifest.json", "schema.sql", "seed.json", "server.json"}, names); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	rb, err := ReadBundle(bytes.NewReader(t1))
	if err != nil {
		t.Fatal(err)
	}
	if !rb.IsServer() || rb.Wasm != nil || rb.Manifest.Interpreter != fakeInterp {
		t.Fatalf("read back: server %v wasm %d interpreter %q", rb.IsServer(), len(rb.Wasm), rb.Manifest.Interpreter)
	}
	if err := rb.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := rb.Spec()
	if err != nil {
		t.Fatal(err)
	}
	// Equal up to the JSON encoding of the schemas (compacted in server.json).
	wj, _ := abi.Marshal(s)
	gj, _ := abi.Marshal(got)
	if d := cmp.Diff(string(wj), string(gj)); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
	d1, _ := b.Digest()
	d2, _ := rb.Digest()
	if d1 != d2 {
		t.Errorf("digest %s after the round trip, was %s", d2, d1)
	}
}

// tarOf writes files (name, content pairs) as a bundle tar.
func tarOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i < len(files); i += 2 {
		tw.WriteHeader(&tar.Header{Name: files[i], Mode: 0o644, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[i+1]))
	}
	tw.Close()
	return buf.Bytes()
}

// Hostile or inconsistent server bundles are refused with errors saying
// what is wrong; nothing reaches the registry.
func TestServerBundleRefused(t *testing.T) {
	ok, err := ServerBundle(loadBank(t), fakeInterp)
	if err != nil {
		t.Fatal(err)
	}
	man, _ := canonicalManifest(&ok.Manifest)
	srv := string(ok.Server)
	noInterp := strings.Replace(string(man), `"interpreter":"`+fakeInterp+`",`, "", 1)
	edited := strings.Replace(string(man), `"readOnlyHint":true`, `"readOnlyHint":false`, 1)
	badProgram := strings.Replace(srv, `def spin():`, `def spin(:`, 1)
	undeclared := strings.Replace(srv, `"reads":["transfers"]`, `"reads":["ledger"]`, 1)
	withSchema := strings.Replace(srv, `"name":"bank"`, `"name":"bank","schema":"CREATE TABLE x (id INT PRIMARY KEY)"`, 1)
	cases := []struct {
		name string
		tar  []byte
		want string
	}{
		{"both wasm and server", tarOf(t, "manifest.json", string(man), "schema.sql", ok.Schema, "server.json", srv, "module.wasm", "\x00asm"), "holds both module.wasm and server.json"},
		{"neither", tarOf(t, "manifest.json", string(man), "schema.sql", ok.Schema), "missing module.wasm (or server.json for a synthesized server)"},
		{"no interpreter", tarOf(t, "manifest.json", noInterp, "schema.sql", ok.Schema, "server.json", srv), "names no interpreter"},
		{"manifest edited", tarOf(t, "manifest.json", edited, "schema.sql", ok.Schema, "server.json", srv), "manifest.json differs from the manifest its server.json gives"},
		{"program does not compile", tarOf(t, "manifest.json", string(man), "schema.sql", ok.Schema, "server.json", badProgram), `server "bank", field program: program: program.star:`},
		{"undeclared table", tarOf(t, "manifest.json", string(man), "schema.sql", ok.Schema, "server.json", undeclared), `server "bank", tool "list_transfers", field reads: table "ledger" is not created by the schema`},
		{"schema inline", tarOf(t, "manifest.json", string(man), "schema.sql", ok.Schema, "server.json", withSchema), "belong in schema.sql and seed.json"},
		{"not JSON", tarOf(t, "manifest.json", string(man), "schema.sql", ok.Schema, "server.json", "{"), "server.json: spec: not a weft.server/v1 JSON object"},
		{"seed violates schema", tarOf(t, "manifest.json", string(man), "schema.sql", ok.Schema, "server.json", srv, "seed.json", `{"accounts":[{"id":"a1","owner":null,"balance":1}]}`), "seed"},
	}
	reg, err := OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		_, err := reg.PutTar(c.tar, "")
		if err == nil {
			b, rerr := ReadBundle(bytes.NewReader(c.tar))
			if rerr == nil {
				err = b.Check(context.Background())
			} else {
				err = rerr
			}
		}
		if !errors.Is(err, ErrInvalidBundle) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an ErrInvalidBundle containing %q", c.name, err, c.want)
		}
	}
	// PutTar does not Check (the registry handler does); what matters for
	// the others is that ReadBundle or Check refuse. The registry holds at
	// most what PutTar accepted, and Load of those refuses too.
	refs, _ := reg.List()
	for _, r := range refs {
		b, _, err := reg.Get(r.Digest)
		if err != nil {
			continue
		}
		if err := b.Check(context.Background()); err == nil {
			t.Errorf("registry holds a bundle that passes Check: %s", r.Digest)
		}
	}
}

// A server bundle whose interpreter the registry does not hold cannot be
// loaded, and says how to fix it.
func TestLoadServerBundleNoInterpreter(t *testing.T) {
	b, err := ServerBundle(loadBank(t), fakeInterp)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Put(b); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	_, err = rt.Load(ctx, reg, b)
	if !errors.Is(err, ErrNoInterpreter) || !strings.Contains(err.Error(), "run make build") || !strings.Contains(err.Error(), fakeInterp) {
		t.Errorf("Load: %v", err)
	}
	if _, err := ResolveInterpreter(reg); !errors.Is(err, ErrNoInterpreter) {
		t.Errorf("ResolveInterpreter: %v", err)
	}
}
