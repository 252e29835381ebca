package plugins_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestGeneratedCodeFresh regenerates sdk/plugin/pluginpb/v2 from
// plugins/proto with protoc and the pinned Go generators (make proto-tools)
// and fails when the committed code differs: run `make proto`.
//
// Without protoc or the generators it skips, unless WEFT_REQUIRE_PROTOC=1
// (set by .ci/run), where it fails.
func TestGeneratedCodeFresh(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), ".."))
	require := os.Getenv("WEFT_REQUIRE_PROTOC") == "1"
	missing := func(what string) {
		if require {
			t.Fatalf("%s not found (WEFT_REQUIRE_PROTOC=1): install protobuf-compiler and run `make proto-tools`", what)
		}
		t.Skipf("%s not found: install protobuf-compiler and run `make proto-tools` to check the generated code", what)
	}
	path := os.Getenv("PATH")
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		path = filepath.Join(strings.TrimSpace(string(gopath)), "bin") + string(os.PathListSeparator) + path
	}
	lookup := func(name string) string {
		for _, dir := range filepath.SplitList(path) {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return p
			}
		}
		return ""
	}
	protoc := lookup("protoc")
	if protoc == "" {
		missing("protoc")
	}
	for _, gen := range []string{"protoc-gen-go", "protoc-gen-go-grpc"} {
		if lookup(gen) == "" {
			missing(gen)
		}
	}
	out := t.TempDir()
	cmd := exec.Command(protoc, "-I", filepath.Join(root, "plugins/proto"),
		"--go_out="+out, "--go_opt=module=github.com/weft-dev/weft",
		"--go-grpc_out="+out, "--go-grpc_opt=module=github.com/weft-dev/weft",
		filepath.Join(root, "plugins/proto/weft/plugin/v2/plugin.proto"))
	cmd.Env = append(os.Environ(), "PATH="+path)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	for _, dir := range []string{"sdk/plugin/pluginpb/v2"} {
		for _, name := range []string{"plugin.pb.go", "plugin_grpc.pb.go"} {
			want, err := os.ReadFile(filepath.Join(out, dir, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(root, dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s is stale (or was generated with other tool versions): run `make proto`", dir, name)
			}
		}
	}
}
