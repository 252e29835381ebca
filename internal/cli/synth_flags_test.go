package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Numeric flags the options would silently replace by defaults are usage
// errors (exit 2) naming the flag, and nothing is written.
func TestSynthNumericFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compose", "--tasks", "0"}, "--tasks must be at least 1, got 0"},
		{[]string{"compose", "--tasks", "-5"}, "--tasks must be at least 1, got -5"},
		{[]string{"compose", "--distractors", "-2"}, "--distractors must be -1 (none) or more"},
		{[]string{"compose", "--gen-seeds", "0"}, "--gen-seeds must be at least 1"},
		{[]string{"tasks", "--per-tool", "-3"}, "--per-tool and --rounds must be 0 (the default) or more, got -3 and 0"},
	} {
		out := filepath.Join(t.TempDir(), "x.weft.json")
		args := append([]string{"synth"}, c.args...)
		args = append(args, "--server", retailServer, "--server", airlineGroupServer, "--out", out)
		code, _, stderr := run(t, stamped, args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, ExitUsage, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: %s written", c.args, out)
		}
	}
}

// An --out in a directory that does not exist fails before any work.
func TestSynthOutDirMissing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nonexist", "x.weft.json")
	for _, args := range [][]string{
		{"synth", "certify", tau2Slice(t, "0"), "--server", retailServer, "--out", out},
		{"synth", "tasks", "--server", retailServer, "--out", out},
		{"synth", "compose", "--server", retailServer, "--server", airlineGroupServer, "--out", out},
	} {
		code, stdout, stderr := run(t, stamped, args...)
		if code != ExitError || !strings.Contains(stderr, "cannot write "+out+": directory "+filepath.Dir(out)+" does not exist") || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q stderr %q", args[1], code, stdout, stderr)
		}
	}
}

// synth compose's --server help says what compose reads: spec
// directories and files, not bundles or registry references; it offers
// no --registry or --cache-dir (it opens no module), which the commands
// that do still take, before or after the subcommand's name.
func TestSynthComposeServerHelp(t *testing.T) {
	code, stdout, _ := run(t, stamped, "synth", "compose", "--help")
	if code != ExitOK || !regexp.MustCompile(`--server stringArray +a server: spec directory or spec JSON file \(repeat: at least two`).MatchString(stdout) || strings.Contains(stdout, "registry reference") {
		t.Fatalf("exit %d, help %q", code, stdout)
	}
	for _, flag := range []string{"--registry", "--cache-dir"} {
		if strings.Contains(stdout, flag) {
			t.Errorf("synth compose help offers %s", flag)
		}
		if code, _, stderr := run(t, stamped, "synth", "compose", flag, "x", "--server", "a", "--server", "b"); code != ExitUsage || !strings.Contains(stderr, "unknown flag: "+flag) {
			t.Errorf("synth compose %s: exit %d, stderr %q; want a usage error", flag, code, stderr)
		}
	}
	for _, sub := range []string{"env", "validate", "tasks", "certify"} {
		_, stdout, _ := run(t, stamped, "synth", sub, "--help")
		if !regexp.MustCompile(`--registry string +module registry directory`).MatchString(stdout) || !strings.Contains(stdout, "--cache-dir string") {
			t.Errorf("synth %s help lacks --registry or --cache-dir:\n%s", sub, stdout)
		}
	}
	if code, _, stderr := run(t, stamped, "synth", "--registry", t.TempDir(), "certify"); code != ExitUsage || strings.Contains(stderr, "unknown flag") {
		t.Errorf("synth --registry DIR certify: exit %d, stderr %q; want certify's own usage error", code, stderr)
	}
}
