package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/synth/compose"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
)

// composeConfig writes a compose config over the two tau2 servers with
// the given extra attributes and returns its path.
func composeConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	retail, _ := filepath.Abs("../../examples/servers/tau2-retail")
	airline, _ := filepath.Abs("../../examples/servers/tau2-airline")
	src := "compose {\n  servers = [\"" + retail + "\", \"" + airline + "\"]\n" + extra + "\n}\npipeline {\n  stages = [\"compose\"]\n}\n"
	p := filepath.Join(dir, "c.hcl")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// weft run of a config with a compose block composes offline: progress on
// stderr, the report as JSON on stdout, the task file (states in the set
// beside it) loadable with every task's initial state; weft synth compose
// --config gives the same bytes.
func TestRunComposeConfig(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "gen", "tasks.weft.json")
	cfg := composeConfig(t, dir, "  tasks = 1\n  turns = 4\n  spread = 1\n  gen_seeds = 1\n  per_tool = 2\n  rounds = 1\n  shared_entities = 2\n  out = \""+out+"\"")
	code, stdout, stderr := run(t, stamped, "run", cfg, "--out", filepath.Join(dir, "run"), "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "weft compose: atomic pool: tau2-retail seed 1/1") || !strings.Contains(stderr, "composed 1/1") {
		t.Errorf("progress on stderr:\n%s", stderr)
	}
	var rep compose.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, stdout)
	}
	if rep.Format != compose.ReportFormat || rep.Composed != 1 || rep.Turns != 4 || len(rep.Pools) != 2 {
		t.Errorf("report %+v", rep)
	}
	ts, err := task.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || len(ts[0].InitialState) == 0 || len(ts[0].Atomic) < 3 || len(ts[0].Atomic) > 5 {
		t.Fatalf("tasks %d, state %d bytes", len(ts), len(ts[0].InitialState))
	}
	first, _ := os.ReadFile(out)
	states, _ := os.ReadFile(task.StatesPath(out))
	if code, _, stderr := run(t, stamped, "synth", "compose", "--config", cfg, "--json"); code != ExitOK {
		t.Fatalf("synth compose --config: exit %d: %s", code, stderr)
	}
	again, _ := os.ReadFile(out)
	states2, _ := os.ReadFile(task.StatesPath(out))
	if string(first) != string(again) || string(states) != string(states2) {
		t.Error("weft synth compose --config and weft run gave different files")
	}
}

// A bad compose block fails before any work with the diagnostic at the
// element: an unknown server, turns out of bounds; nothing is written.
func TestRunComposeConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, extra, edit, want string
	}{
		{"unknown server", "", "tau2-airline", `c.hcl:2:`},
		{"turns", "  turns = 1", "", "c.hcl:3:11: error: Invalid turns; turns must be at least 2, got 1."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "gen", "tasks.weft.json")
			cfg := composeConfig(t, dir, tc.extra+"\n  out = \""+out+"\"")
			if tc.edit != "" {
				b, _ := os.ReadFile(cfg)
				os.WriteFile(cfg, []byte(strings.Replace(string(b), tc.edit, "no-such-server", 1)), 0o644)
			}
			for _, args := range [][]string{{"run", cfg}, {"synth", "compose", "--config", cfg}} {
				code, _, stderr := run(t, stamped, args...)
				if code == ExitOK || !strings.Contains(stderr, tc.want) {
					t.Errorf("%v: exit %d, stderr %s, want %q", args, code, stderr, tc.want)
				}
				if tc.name == "unknown server" && !strings.Contains(stderr, "Unknown server") {
					t.Errorf("%v: %s", args, stderr)
				}
			}
			if _, err := os.Stat(filepath.Dir(out)); err == nil {
				t.Error("a refused config wrote output")
			}
		})
	}
}

// The human summary lists the first maxRejectionLines rejected samples
// with their atomic task, source and failing call, then how many more the
// report holds.
func TestWriteRejections(t *testing.T) {
	var rs []compose.Rejection
	for i := 1; i <= maxRejectionLines+2; i++ {
		rs = append(rs, compose.Rejection{Attempt: i, Task: "compose-0001", Reason: "reference_call_failed", Atomic: "a3",
			Source: "tau2-retail:cancel.1", Rejections: 2, Call: &tasks.FailedCall{Index: 1, TaskIndex: 7, Tool: "cancel_pending_order",
				Arguments: json.RawMessage(`{"order_id":"#W1"}`), Error: "order not found"}})
	}
	rs[1] = compose.Rejection{Attempt: 2, Task: "compose-0001", Reason: "no_candidates", Detail: "1 atomic task(s) sampled for 6 turns; a composed task needs two"}
	var b strings.Builder
	writeRejections(&b, rs, "r.json")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		`  sample 1 (compose-0001): reference_call_failed in a3 (tau2-retail:cancel.1): call 1 (composite 7) cancel_pending_order {"order_id":"#W1"}: order not found (+1 more reasons)`,
		`  sample 2 (compose-0001): no_candidates: 1 atomic task(s) sampled for 6 turns; a composed task needs two`,
	}
	if len(lines) != maxRejectionLines+1 || lines[0] != want[0] || lines[1] != want[1] {
		t.Fatalf("summary lines:\n%s\nwant %d lines starting\n%s", b.String(), maxRejectionLines+1, strings.Join(want, "\n"))
	}
	if last := lines[maxRejectionLines]; last != `  ... 2 more in r.json ("rejections")` {
		t.Errorf("last line %q", last)
	}
}
