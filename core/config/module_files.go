package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckModulePath reports whether dir (an existing module block path) can
// be built: a synthesized server's spec directory (it holds server.json)
// or a Go package (at least one non-test .go file; weft builds it with GOOS=wasip1
// -buildmode=c-shared). It reads the directory only, it compiles nothing.
// Errors name the directory and what a module path must hold.
func CheckModulePath(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is a file; a module path is a Go module source directory (a main package such as examples/modules/hello) or a synthesized server's spec directory (server.json); use bundle for a bundle file", dir)
	}
	if fi, err := os.Stat(filepath.Join(dir, "server.json")); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			return nil
		}
	}
	return fmt.Errorf("%s holds no Go source files and no server.json: a module path is a Go module source directory (a main package such as examples/modules/hello) or a synthesized server's spec directory", dir)
}

// CheckSeedFile reports whether the file at path is well-formed as a module
// seed: one JSON object (a weft.state/v1 document, or {table: [rows]}).
// It checks the JSON syntax of the whole file (a truncated copy fails
// here, with the byte offset) but not the rows against the schema, which
// the module build does. Errors name the file.
func CheckSeedFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if json.Valid(data) {
		if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return fmt.Errorf("seed file %s is not a JSON object: a seed is a weft.state/v1 file or {table: [rows]} JSON", path)
		}
		return nil
	}
	var v any
	err = json.Unmarshal(data, &v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && se.Error() == "unexpected end of JSON input":
		return fmt.Errorf("seed file %s is not valid JSON: it ends early at byte %d (truncated?)", path, len(data))
	case errors.As(err, &se):
		return fmt.Errorf("seed file %s is not valid JSON: %v at byte %d", path, se, se.Offset)
	}
	return fmt.Errorf("seed file %s is not valid JSON: %v", path, err)
}
