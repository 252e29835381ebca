package module

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegistryIOErrorIsNotNotFound: a reference the registry does not hold
// is ErrNotFound; one it cannot read (here a ref that is a directory, as an
// I/O failure would be) is the I/O error, not ErrNotFound (issue 15 item
// 22: I/O failures were reported as 404 no_such_module).
func TestRegistryIOErrorIsNotNotFound(t *testing.T) {
	dir := t.TempDir()
	reg, err := OpenRegistry(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Resolve("hello:1.0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing ref: %v, want ErrNotFound", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "refs", "hello", "1.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = reg.Resolve("hello:1.0")
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "module registry: reading hello:1.0: ") || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("unreadable ref: %v, want the I/O error", err)
	}
	_, _, err = reg.Get("hello:1.0")
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an unreadable ref: %v", err)
	}
}
