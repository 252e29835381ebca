package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/registry"
)

// TestModulePushPull builds the hello example, pushes it to a registry
// server, and pulls it into a second local registry: the bytes arrive
// identical, under the same digest and name:tag.
func TestModulePushPull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	regA, regB := filepath.Join(dir, "a"), filepath.Join(dir, "b")

	server, err := module.OpenRegistry(filepath.Join(dir, "server"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(registry.MountPath+"/", http.StripPrefix(registry.MountPath, registry.NewHandler(server, registry.HandlerOptions{Token: "tok"})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	code, out, errOut := run(t, stamped, "module", "build", "../../examples/modules/hello", "--registry", regA, "--cache-dir", cache)
	if code != ExitOK {
		t.Fatalf("build: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	digest := lines[len(lines)-1]
	local, err := module.OpenRegistry(regA)
	if err != nil {
		t.Fatal(err)
	}
	tar, d, err := local.Tar("hello:latest")
	if err != nil || d != digest {
		t.Fatalf("local hello:latest: %s %v, want %s", d, err, digest)
	}

	// Without the token, or with a wrong one, the server refuses and stores
	// nothing.
	t.Setenv("WEFT_TOKEN", "")
	for _, tok := range [][]string{nil, {"--token", "nope"}} {
		code, _, errOut = run(t, stamped, append([]string{"module", "push", "hello", "--server", srv.URL, "--registry", regA}, tok...)...)
		if code != ExitError || !strings.HasPrefix(errOut, "weft: registry push hello:latest: registry server: unauthorized: ") {
			t.Fatalf("push with token %v: %d %q", tok, code, errOut)
		}
	}
	if refs, _ := server.List(); len(refs) != 0 {
		t.Fatalf("refused pushes stored %v", refs)
	}
	code, _, errOut = run(t, stamped, "module", "push", "hello", "--registry", regA)
	if code != ExitUsage || !strings.Contains(errOut, "--server is required") {
		t.Fatalf("push without --server: %d %q", code, errOut)
	}

	code, out, errOut = run(t, stamped, "module", "push", "hello", "--server", srv.URL, "--token", "tok", "--registry", regA, "--json")
	if code != ExitOK {
		t.Fatalf("push: %d %s", code, errOut)
	}
	want := map[string]any{"name": "hello", "tag": "latest", "digest": digest, "server": srv.URL + registry.MountPath}
	if diff := cmp.Diff(want, decodeOneObject(t, out)); diff != "" {
		t.Fatalf("push --json (-want +got):\n%s", diff)
	}
	if got, d, err := server.Tar("hello:latest"); err != nil || d != digest || !bytes.Equal(got, tar) {
		t.Fatalf("server hello:latest: %s %v, identical=%v", d, err, bytes.Equal(got, tar))
	}
	// --tag, and text output whose last line is the digest.
	code, out, errOut = run(t, stamped, "module", "push", digest, "--tag", "stable", "--server", srv.URL+registry.MountPath+"/", "--token", "tok", "--registry", regA)
	if code != ExitOK || out != "pushed hello:stable to "+srv.URL+registry.MountPath+"\n"+digest+"\n" {
		t.Fatalf("push --tag: %d %q %s", code, out, errOut)
	}

	// Pull into an empty registry, the token from $WEFT_TOKEN.
	t.Setenv("WEFT_TOKEN", "tok")
	code, out, errOut = run(t, stamped, "module", "pull", "hello:stable", "--server", srv.URL, "--registry", regB, "--json")
	if code != ExitOK {
		t.Fatalf("pull: %d %s", code, errOut)
	}
	want = map[string]any{"name": "hello", "tag": "stable", "digest": digest, "registry": regB}
	if diff := cmp.Diff(want, decodeOneObject(t, out)); diff != "" {
		t.Fatalf("pull --json (-want +got):\n%s", diff)
	}
	pulled, err := module.OpenRegistry(regB)
	if err != nil {
		t.Fatal(err)
	}
	got, d, err := pulled.Tar("hello:stable")
	if err != nil || d != digest || !bytes.Equal(got, tar) {
		t.Fatalf("pulled hello:stable: %s %v, identical=%v", d, err, bytes.Equal(got, tar))
	}
	refs, err := pulled.List()
	if err != nil {
		t.Fatal(err)
	}
	wantRefs := []module.Ref{{Name: "hello", Tag: "1.0.0", Digest: digest}, {Name: "hello", Tag: "latest", Digest: digest}, {Name: "hello", Tag: "stable", Digest: digest}}
	if diff := cmp.Diff(wantRefs, refs); diff != "" {
		t.Fatalf("pulled registry (-want +got):\n%s", diff)
	}
	// The pulled module runs.
	code, out, errOut = run(t, stamped, "module", "call", "hello:stable", "add_note", `{"text": "x"}`, "--json", "--registry", regB, "--cache-dir", cache)
	if code != ExitOK || strings.TrimSpace(out) != `{"content":[{"type":"text","text":"{\"id\":1}"}],"structuredContent":{"id":1}}` {
		t.Fatalf("call pulled module: %d %q %s", code, out, errOut)
	}

	// By digest: stored under the manifest's name and version.
	regC := filepath.Join(dir, "c")
	code, out, errOut = run(t, stamped, "module", "pull", digest, "--server", srv.URL, "--registry", regC)
	if code != ExitOK || !strings.HasSuffix(out, "\n"+digest+"\n") {
		t.Fatalf("pull by digest: %d %q %s", code, out, errOut)
	}
	byDigest, err := module.OpenRegistry(regC)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := byDigest.Resolve("hello:1.0.0"); err != nil || d != digest {
		t.Fatalf("pulled by digest: hello:1.0.0 = %s %v", d, err)
	}

	code, _, errOut = run(t, stamped, "module", "pull", "nosuch:1", "--server", srv.URL, "--registry", regB)
	if code != ExitError || !strings.Contains(errOut, "not_found") {
		t.Fatalf("pull unknown: %d %q", code, errOut)
	}
}

// A server that sends other bytes than the digest it announces is caught,
// and nothing is stored locally.
func TestModulePullLyingServer(t *testing.T) {
	b := &module.Bundle{
		Manifest: module.Manifest{ABI: module.ABIVersion, Name: "hello", Version: "1", Tables: module.Tables{Owns: []string{"notes"}}},
		Wasm:     []byte("\x00asm\x01\x00\x00\x00"),
		Schema:   "CREATE TABLE notes (id INT PRIMARY KEY);",
	}
	tar, err := b.Tar()
	if err != nil {
		t.Fatal(err)
	}
	digest := module.Digest(tar)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(registry.DigestHeader, digest)
		bad := bytes.Clone(tar)
		bad[len(bad)/3] ^= 1
		w.Write(bad)
	}))
	defer srv.Close()
	reg := filepath.Join(t.TempDir(), "reg")
	code, _, errOut := run(t, stamped, "module", "pull", "hello", "--server", srv.URL, "--registry", reg)
	if code != ExitError || !strings.Contains(errOut, "digest mismatch") || !strings.Contains(errOut, "expected "+digest) {
		t.Fatalf("pull from a lying server: %d %q", code, errOut)
	}
	local, err := module.OpenRegistry(reg)
	if err != nil {
		t.Fatal(err)
	}
	if refs, _ := local.List(); len(refs) != 0 {
		t.Fatalf("stored %v", refs)
	}
}
