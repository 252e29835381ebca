package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/synth/compose"
)

// Numeric flags the options would silently replace by defaults are usage
// errors (exit 2) naming the flag, and nothing is written.
func TestSynthNumericFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compose", "--tasks", "0"}, "--tasks must be in [1, 100000], got 0"},
		{[]string{"compose", "--tasks", "-5"}, "--tasks must be in [1, 100000], got -5"},
		{[]string{"compose", "--distractors", "-2"}, "--distractors must be in [0, 16] (0 = none), got -2"},
		{[]string{"compose", "--distractors", "17"}, "--distractors must be in [0, 16] (0 = none), got 17"},
		{[]string{"compose", "--gen-seeds", "0"}, "--gen-seeds must be in [1, 64], got 0"},
		// config.md: turns in [2, 200]; --turns 1 was clamped to 2 (trial F4).
		{[]string{"compose", "--turns", "1"}, "--turns must be in [2, 200], got 1"},
		{[]string{"compose", "--turns", "201"}, "--turns must be in [2, 200], got 201"},
		{[]string{"compose", "--turns", "4", "--spread", "4"}, "--spread must be less than --turns (4), got 4"},
		{[]string{"compose", "--shared-entities", "-1"}, "--shared-entities must be in [0, 1000], got -1"},
		// The same server twice was refused only after two atomic pools.
		{[]string{"compose", "--server", retailServer}, "--server " + retailServer + " is given twice (first as " + retailServer + "); each server joins the group once"},
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

// --distractors 0 means none, as the compose block's distractors = 0 does
// (it meant the default, 2: trial D3); without the flag it is 2, and -1
// (the old spelling of none) is still none.
func TestSynthComposeDistractorsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"--distractors", "0"}, -1},
		{[]string{"--distractors", "-1"}, -1},
		{[]string{"--distractors", "3"}, 3},
	} {
		cf := &composeFlags{}
		cmd := &cobra.Command{}
		cf.add(cmd)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		if err := cf.check(cmd); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := cf.options().Distractors; got != c.want {
			t.Errorf("%v: compose.Options.Distractors %d, want %d", c.args, got, c.want)
		}
	}
	// The flag and the attribute agree on 0.
	cf := &composeFlags{distractor: 0}
	if f, a := cf.options().Distractors, composeOptions(&config.Compose{Distractors: 0}).Distractors; f != a {
		t.Errorf("--distractors 0 gives %d, distractors = 0 gives %d", f, a)
	}
}

// End to end: --distractors 0 composes with no context rows (it gave the
// 2-distractor states before).
func TestSynthComposeNoDistractors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.weft.json")
	code, stdout, stderr := run(t, stamped, "synth", "compose", "--server", retailServer, "--server", airlineGroupServer,
		"--tasks", "1", "--turns", "4", "--spread", "1", "--gen-seeds", "1", "--distractors", "0", "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep compose.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if rep.Composed != 1 || rep.Grounding.EntityRows == 0 || rep.Grounding.ContextRows != 0 || rep.Grounding.DistractorsDropped != 0 {
		t.Errorf("composed %d, grounding %+v; want 1 task with entity rows and no context rows", rep.Composed, rep.Grounding)
	}
}
