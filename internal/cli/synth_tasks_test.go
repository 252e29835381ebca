package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
)

const (
	walletServer = "../../core/synth/tasks/testdata/servers/wallet"
	retailServer = "../../examples/servers/tau2-retail"
)

// tau2Slice writes the tau2 retail tasks with the given ids to a file.
func tau2Slice(t *testing.T, ids ...string) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/data/tau2-retail/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	var all []map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[`"`+id+`"`] = true
	}
	var out []map[string]json.RawMessage
	for _, x := range all {
		if want[string(x["id"])] {
			out = append(out, x)
		}
	}
	p := filepath.Join(t.TempDir(), "tasks.json")
	ob, _ := json.Marshal(out)
	if err := os.WriteFile(p, ob, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// weft synth certify on tau2 tasks: --json gives the summary with every
// rejection (task 64 with its failing call 6), the certified tasks file
// holds the rest, the report file the per-task results.
func TestSynthCertifyTau2(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "certified.weft.json")
	code, stdout, stderr := run(t, stamped, "synth", "certify", tau2Slice(t, "0", "64", "110"), "--server", retailServer, "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum certifySummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	type rk struct {
		Task, Atomic string
		Reason       tasks.Reason
		Index        int
		Tool         string
	}
	var got []rk
	for _, r := range sum.Rejections {
		k := rk{Task: r.Task, Atomic: r.Atomic, Reason: r.Reason, Index: -1}
		if r.Call != nil {
			k.Index, k.Tool = r.Call.TaskIndex, r.Call.Tool
		}
		got = append(got, k)
	}
	want := []rk{
		{"64", "a1", tasks.ReasonReferenceFailed, 6, "exchange_delivered_order_items"},
		{"110", "a2", tasks.ReasonPassesOnInitial, -1, ""},
		{"110", "a2", tasks.ReasonReadOnlyUnverifiable, -1, ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rejections (-want +got):\n%s", d)
	}
	if sum.Tasks != 3 || sum.TasksCertified != 1 || sum.Format != tasks.ReportFormat {
		t.Errorf("summary %+v", sum)
	}
	ts, err := task.LoadFile(out)
	if err != nil || len(ts) != 1 || ts[0].ID != "0" || ts[0].Source != "tau2-retail:0" {
		t.Fatalf("certified file: %v %v", ts, err)
	}
	// The certified weft.tasks/v1 file certifies again, whole.
	code, stdout, stderr = run(t, stamped, "synth", "certify", out, "--server", retailServer, "--out", filepath.Join(dir, "again.weft.json"), "--strict")
	if code != ExitOK || !strings.HasPrefix(stdout, "1 of 1 tasks certified, 1 of 1 atomic tasks (0 read-only), 0 warnings\nrejections: none\n") {
		t.Errorf("re-certify: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var rep tasks.Report
	rb, err := os.ReadFile(filepath.Join(dir, "certified.report.json"))
	if err != nil || json.Unmarshal(rb, &rep) != nil || len(rep.Results) != 3 || rep.Results[1].ID != "64" || rep.Results[1].Certified {
		t.Fatalf("report file: %v (%d results)", err, len(rep.Results))
	}
}

// weft synth tasks: the same seed gives byte-identical task files; the
// report counts what was kept; bad input is a clear error that writes
// nothing.
func TestSynthTasksDeterministic(t *testing.T) {
	dir := t.TempDir()
	var files [][]byte
	for i := range 2 {
		out := filepath.Join(dir, "gen"+string(rune('a'+i))+".weft.json")
		code, stdout, stderr := run(t, stamped, "synth", "tasks", "--server", walletServer, "--seed", "7", "--out", out)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "3 kept (2 write, 1 read)") || !strings.Contains(stdout, "coverage: 7 of 8 cells") {
			t.Errorf("stdout:\n%s", stdout)
		}
		if !strings.Contains(stderr, "msg=round round=1") {
			t.Errorf("no progress on stderr: %q", stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("seed 7 gave two different task files")
	}
	ts, err := task.Load(bytes.NewReader(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"get_account.1", "deposit.1", "set_note.1"}, []string{ts[0].ID, ts[1].ID, ts[2].ID}); d != "" || len(ts) != 3 {
		t.Errorf("tasks (-want +got):\n%s", d)
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"synth", "tasks"}, ExitUsage, "give at least one --server"},
		{[]string{"synth", "tasks", "--server", "no/such/dir"}, ExitError, "no/such/dir"},
		{[]string{"synth", "tasks", "--server", walletServer, "--writer", "poet"}, ExitUsage, `--writer must be template or endpoint, got "poet"`},
		{[]string{"synth", "certify", "--server", walletServer}, ExitUsage, "needs a tasks file"},
		{[]string{"synth", "certify", filepath.Join(dir, "nope.json"), "--server", walletServer}, ExitError, "nope.json"},
	} {
		out := filepath.Join(dir, "bad.weft.json")
		code, _, stderr := run(t, stamped, append(c.args, "--out", out)...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d containing %q", c.args, code, stderr, c.code, c.msg)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v wrote %s", c.args, out)
		}
	}
}

// --writer endpoint checks the endpoint before anything else: an endpoint
// that does not answer, and one that does not serve the model, stop the
// command with an error naming the base URL and the model, before any
// generation request, and nothing is written.
func TestSynthTasksEndpointPreflight(t *testing.T) {
	gone := modeltest.NewServer(t)
	goneURL := gone.URL()
	gone.Close()
	other := modeltest.NewServer(t, modeltest.WithModels("other"), modeltest.WithReplies(modeltest.Status(404, "model nope does not exist")))
	for _, c := range []struct {
		name, url, msg string
		srv            *modeltest.Server
	}{
		{"unreachable", goneURL, "unavailable", nil},
		{"bad model", other.URL(), "model nope does not exist", other},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "t.weft.json")
			code, stdout, stderr := run(t, stamped, "synth", "tasks", "--server", walletServer, "--writer", "endpoint",
				"--base-url", c.url, "--model", "nope", "--out", out)
			want := `--writer endpoint: ` + c.url + ` does not serve model "nope"`
			if code != ExitError || !strings.Contains(stderr, want) || !strings.Contains(stderr, c.msg) {
				t.Fatalf("exit %d, stderr %q; want %d with %q and %q", code, stderr, ExitError, want, c.msg)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("wrote %v", ents)
			}
			if c.srv != nil {
				// GET /models and the one-token probe; no writer request.
				if n := len(c.srv.Requests()); n != 1 {
					t.Errorf("%d chat requests, want the probe's 1", n)
				}
			}
		})
	}
}
