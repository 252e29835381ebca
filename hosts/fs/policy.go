package fshost

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Policy is a module's workspace-file policy (the manifest's "files"):
// Reads may be read, Writes read and written. A pattern is "**" (the whole
// workspace, the root included), "dir/**" (dir itself and every path under
// it), or a path.Match glob matched against the whole path. Empty: no
// access.
type Policy struct {
	Reads  []string
	Writes []string
}

// CheckPattern reports whether pat is a valid policy pattern.
func CheckPattern(pat string) error {
	if pat == "**" {
		return nil
	}
	if base, ok := strings.CutSuffix(pat, "/**"); ok {
		if err := ValidPath(base); err != nil {
			return fmt.Errorf("files pattern %q: %w", pat, err)
		}
		return nil
	}
	if strings.Contains(pat, "**") {
		return fmt.Errorf(`files pattern %q: "**" is allowed only alone or as a final "/**"`, pat)
	}
	if _, err := path.Match(pat, ""); err != nil {
		return fmt.Errorf("files pattern %q: %w", pat, err)
	}
	if strings.HasPrefix(pat, "/") || strings.Contains(pat, "..") {
		return fmt.Errorf("files pattern %q: patterns are relative workspace paths", pat)
	}
	return nil
}

func match(pat, p string) bool {
	if pat == "**" {
		return true
	}
	if base, ok := strings.CutSuffix(pat, "/**"); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	ok, _ := path.Match(pat, p)
	return ok
}

// CanRead reports whether p (a valid path; "." the root) may be read.
func (pol Policy) CanRead(p string) bool {
	return pol.CanWrite(p) || matchAny(pol.Reads, p)
}

// CanWrite reports whether p may be written.
func (pol Policy) CanWrite(p string) bool { return matchAny(pol.Writes, p) }

func matchAny(pats []string, p string) bool {
	for _, pat := range pats {
		if match(pat, p) {
			return true
		}
	}
	return false
}

// Limits on paths, bytes (the same as core/state's).
const (
	MaxPathBytes    = 4096
	MaxElementBytes = 255
)

// ValidPath checks a workspace path: "." (the root) or an io/fs.ValidPath
// path (relative, slash-separated, no "", "." or ".." elements) of valid
// UTF-8 without NUL, control characters or backslashes, at most
// MaxPathBytes long with elements of at most MaxElementBytes. It applies
// the rules of core/state.CheckPath, so a path passing here is never
// refused by the state as invalid.
func ValidPath(p string) error {
	if p == "." {
		return nil
	}
	switch {
	case p == "":
		return errors.New("empty path")
	case len(p) > MaxPathBytes:
		return fmt.Errorf("path of %d bytes is longer than %d", len(p), MaxPathBytes)
	case !utf8.ValidString(p):
		return errors.New("path is not valid UTF-8")
	case p[0] == '/':
		return errors.New("absolute path: workspace paths are relative to the workspace root")
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == 0:
			return errors.New("path contains NUL")
		case c < 0x20 || c == 0x7f:
			return errors.New("path contains a control character")
		case c == '\\':
			return errors.New(`path contains a backslash: elements are separated by "/"`)
		}
	}
	for _, el := range strings.Split(p, "/") {
		switch {
		case el == "":
			return errors.New("empty path element (a doubled or trailing /)")
		case el == "..":
			return errors.New(`".." element: paths cannot leave the workspace`)
		case el == ".":
			return errors.New(`"." element inside a path`)
		case len(el) > MaxElementBytes:
			return fmt.Errorf("path element of %d bytes is longer than %d", len(el), MaxElementBytes)
		}
	}
	return nil
}
