package fshost

import (
	"strings"
	"testing"
)

func TestPolicyMatch(t *testing.T) {
	pol := Policy{Reads: []string{"docs/**", "*.md"}, Writes: []string{"notes/**", "out/*.txt"}}
	for _, c := range []struct {
		path        string
		read, write bool
	}{
		{"docs", true, false},
		{"docs/a/b.txt", true, false},
		{"docsx", false, false},
		{"README.md", true, false},
		{"sub/README.md", false, false}, // path.Match: * does not cross /
		{"notes", true, true},
		{"notes/x/y", true, true},
		{"out/a.txt", true, true},
		{"out/a.csv", false, false},
		{"out/sub/a.txt", false, false},
		{".", false, false},
	} {
		if got := pol.CanRead(c.path); got != c.read {
			t.Errorf("CanRead(%q) = %v, want %v", c.path, got, c.read)
		}
		if got := pol.CanWrite(c.path); got != c.write {
			t.Errorf("CanWrite(%q) = %v, want %v", c.path, got, c.write)
		}
	}
	if !(Policy{Writes: []string{"**"}}).CanWrite(".") {
		t.Error(`"**" does not cover the root`)
	}
	for _, c := range []struct {
		p    string
		want bool
	}{{".", true}, {"docs", true}, {"do", false}, {"out", true}, {"notes", true}, {"nope", false}} {
		if got := pol.reachable(c.p); got != c.want {
			t.Errorf("reachable(%q) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestCheckPattern(t *testing.T) {
	for _, c := range []struct{ pat, err string }{
		{"**", ""},
		{"docs/**", ""},
		{"*.txt", ""},
		{"a/*/b.md", ""},
		{"../**", `".." element`},
		{"/etc/**", "absolute path"},
		{"a/**/b", `"**" is allowed only alone`},
		{"[x", "syntax error in pattern"},
		{"/x", "relative workspace paths"},
	} {
		err := CheckPattern(c.pat)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.pat, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want %q", c.pat, err, c.err)
		}
	}
}

func TestValidPath(t *testing.T) {
	for _, c := range []struct{ p, err string }{
		{".", ""},
		{"a", ""},
		{"a/b.c/d", ""},
		{"ünï/cödé", ""},
		{"", "empty path"},
		{"/a", "absolute path"},
		{"../a", `".." element`},
		{"a/..", `".." element`},
		{"a/./b", `"." element`},
		{"a//b", "empty path element"},
		{"a/", "empty path element"},
		{"a\x00b", "NUL"},
		{"a\nb", "control character"},
		{`a\b`, "backslash"},
		{"a\xffb", "not valid UTF-8"},
		{strings.Repeat("x", 256), "element of 256 bytes"},
		{strings.Repeat("x/", 2048) + "x", "longer than 4096"},
	} {
		err := ValidPath(c.p)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.p, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want %q", c.p, err, c.err)
		}
	}
}
