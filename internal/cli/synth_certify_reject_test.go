package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
)

// certifyTask is one retail task (change a user's address) with the
// modules and the atomic tasks' JSON given.
func certifyTaskJSON(id, modules, atomic string) string {
	return fmt.Sprintf(`{"id":%q,"modules":%s,"brief":"change my address","atomic":%s,"checks":null}`, id, modules, atomic)
}

const okAtomic = `{"id":"a1","request":"change my address","reference":[
 {"tool":"get_user_details","arguments":{"user_id":"chen_silva_7485"}},
 {"tool":"modify_user_address","arguments":{"address1":"999 Oak Street","address2":"Suite 614","city":"Phoenix","country":"USA","state":"FL","user_id":"chen_silva_7485","zip":"77209"}}],
 "checks":[%s]}`

// A task file with faulty tasks: each is rejected on its own with the
// reason (invalid_task, no_env) and the good task is still certified and
// written, instead of the whole run aborting.
func TestSynthCertifyPerTaskRejections(t *testing.T) {
	changed := `{"kind":"changed_rows"}`
	atom := func(check string) string { return "[" + fmt.Sprintf(okAtomic, check) + "]" }
	cycle := `[{"id":"a1","request":"x","after":["a2"],"reference":[],"checks":[{"kind":"communicate","text":"x"}]},
	 {"id":"a2","request":"y","after":["a1"],"reference":[],"checks":[{"kind":"communicate","text":"y"}]}]`
	file := `{"format":"weft.tasks/v1","tasks":[` + strings.Join([]string{
		certifyTaskJSON("good", `["tau2-retail"]`, atom(changed)),
		certifyTaskJSON("badcheck", `["tau2-retail"]`, atom(`{"kind":"banana"}`)),
		certifyTaskJSON("cycle", `["tau2-retail"]`, cycle),
		certifyTaskJSON("dropsql", `["tau2-retail"]`, atom(changed+`,{"kind":"sql","sql":"DROP TABLE orders","expect":[]}`)),
		certifyTaskJSON("sleep", `["tau2-retail"]`, atom(changed+`,{"kind":"sql","sql":"SELECT SLEEP(100)","expect":[[0]]}`)),
		certifyTaskJSON("otherserver", `["airline"]`, atom(changed)),
	}, ",") + `]}`
	dir := t.TempDir()
	in := filepath.Join(dir, "tasks.weft.json")
	if err := os.WriteFile(in, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "certified.weft.json")
	code, stdout, stderr := run(t, stamped, "synth", "certify", in, "--server", retailServer, "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum certifySummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	got := map[string]string{}
	for _, r := range sum.Rejections {
		got[r.Task] = string(r.Reason) + ": " + r.Detail
	}
	want := map[string]struct {
		reason tasks.Reason
		detail string
	}{
		"badcheck":    {tasks.ReasonInvalidTask, `unknown check kind "banana"`},
		"cycle":       {tasks.ReasonInvalidTask, "cycle"},
		"dropsql":     {tasks.ReasonInvalidTask, "DROP TABLE orders"},
		"sleep":       {tasks.ReasonInvalidTask, "SLEEP"},
		"otherserver": {tasks.ReasonNoEnv, `module "airline" is not among the servers given (tau2-retail)`},
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || !strings.HasPrefix(g, string(w.reason)+": ") || !strings.Contains(g, w.detail) {
			t.Errorf("task %s: rejection %q, want %s containing %q", id, g, w.reason, w.detail)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rejections %v, want one per faulty task", got)
	}
	if sum.Tasks != 6 || sum.TasksCertified != 1 {
		t.Errorf("%d of %d certified, want 1 of 6", sum.TasksCertified, sum.Tasks)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, err := task.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].ID != "good" {
		t.Fatalf("certified file holds %d tasks, want only good", len(ts))
	}
}

// Two tasks with one id are a file error before any certification work,
// and nothing is written.
func TestSynthCertifyDuplicateIDs(t *testing.T) {
	a := "[" + fmt.Sprintf(okAtomic, `{"kind":"changed_rows"}`) + "]"
	file := `{"format":"weft.tasks/v1","tasks":[` + certifyTaskJSON("x", `["tau2-retail"]`, a) + "," + certifyTaskJSON("x", `["tau2-retail"]`, a) + `]}`
	dir := t.TempDir()
	in := filepath.Join(dir, "tasks.weft.json")
	if err := os.WriteFile(in, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "certified.weft.json")
	code, _, stderr := run(t, stamped, "synth", "certify", in, "--server", retailServer, "--out", out)
	if code != ExitError || !strings.Contains(stderr, `tasks[1] has the id "x" of tasks[0]`) {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming the duplicate", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("%s written on error (stat: %v)", out, err)
	}
}
