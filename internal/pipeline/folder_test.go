package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJournalTornLine: a line cut by an interrupted write is dropped and
// truncated away on open; complete records are kept and skipped.
func TestJournalTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	if err := os.WriteFile(path, []byte(`{"key":"a","v":1}`+"\n"+`{"key":"b","v":2}`+"\n"+`{"key":"c","v`), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []string
	j, err := openJournal(path, "key", func(key string, _ []byte) error { seen = append(seen, key); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, seen); diff != "" {
		t.Fatalf("records read (-want +got):\n%s", diff)
	}
	if !j.has("a") || !j.has("b") || j.has("c") {
		t.Fatalf("has a/b/c = %v/%v/%v, want true/true/false", j.has("a"), j.has("b"), j.has("c"))
	}
	if err := j.add("c", map[string]any{"key": "c", "v": 3}); err != nil {
		t.Fatal(err)
	}
	if err := j.add("a", map[string]any{"key": "a", "v": 9}); err != nil {
		t.Fatal(err)
	}
	j.close()
	b, _ := os.ReadFile(path)
	want := `{"key":"a","v":1}` + "\n" + `{"key":"b","v":2}` + "\n" + `{"key":"c","v":3}` + "\n"
	if string(b) != want {
		t.Fatalf("file after reopen and add:\n%s\nwant:\n%s", b, want)
	}
}

func TestJournalBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	os.WriteFile(path, []byte(`{"key":"a"}`+"\n"+`not json`+"\n"), 0o644)
	_, err := openJournal(path, "key", func(string, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "j.jsonl: line at byte 12") {
		t.Fatalf("err = %v, want the file and the byte offset of the bad line", err)
	}
}

// A folder that holds a run of another config is refused, untouched.
func TestRunRefusesOtherConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileConfig), []byte(`{"other": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := testSpec(t, retailTasks(t, "0"))
	_, err := Run(context.Background(), spec, Options{Dir: dir})
	if !errors.Is(err, ErrOtherRun) || !strings.Contains(err.Error(), "use a new --out") {
		t.Fatalf("err = %v, want ErrOtherRun with advice", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the folder has %d entries after the refusal, want only config.json", len(entries))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, FileConfig)); string(b) != `{"other": 1}` {
		t.Fatalf("config.json rewritten: %s", b)
	}
}

func TestConfigConflicts(t *testing.T) {
	old := `{"file": "/a/x.hcl", "output": {"dir": "/r", "formats": ["trl_jsonl"]}, "stages": ["rollout"],
		"rollout": {"policy": "p", "concurrency": 8, "retries": 1, "seed": 1}, "sft": null, "tasks": [{"limit": 5}]}`
	// Trial F9: a changed fault rate was reported as "policies" alone; the
	// leaves are named, a list element by its name.
	oldWithPolicy := strings.Replace(old, `"sft": null`, `"sft": null, "policies": [{"name": "p", "scripted": {"seed": 1, "faults": {"wrong_args": 1, "hallucinate": 0.2}}}]`, 1)
	if diff := cmp.Diff([]string{"policies.p.scripted.faults.hallucinate", "policies.p.scripted.faults.wrong_args"},
		configConflicts([]byte(oldWithPolicy), []byte(strings.Replace(old, `"sft": null`, `"sft": null, "policies": [{"name": "p", "scripted": {"seed": 1, "faults": {"wrong_args": 0.5, "hallucinate": 0.1}}}]`, 1)), nil)); diff != "" {
		t.Errorf("policy fault rates (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		name, cur string
		want      []string
	}{
		{"same", old, nil},
		{"free fields", `{"file": "/b/y.hcl", "output": {"dir": "/s", "formats": ["rl_jsonl"]}, "stages": ["rollout", "sft"],
			"rollout": {"policy": "p", "concurrency": 2, "retries": 3, "seed": 1}, "sft": {"retries": 3}, "tasks": [{"limit": 5}]}`, nil},
		{"results change", `{"rollout": {"policy": "q", "concurrency": 8, "retries": 1, "seed": 2}, "tasks": [{"limit": 6}]}`,
			[]string{"rollout.policy", "rollout.seed", "tasks.0.limit"}},
		{"list length changes", `{"rollout": {"policy": "p", "concurrency": 8, "retries": 1, "seed": 1}, "tasks": [{"limit": 5}, {"limit": 1}]}`,
			[]string{"tasks"}},
		{"not json", `nope`, []string{"config"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, configConflicts([]byte(old), []byte(c.cur), nil)); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
	// A stage with no results yet may change; one with results may not.
	oldSFT := `{"rollout": {"seed": 1}, "sft": {"retries": 3}, "grpo": {"group_size": 8}}`
	curSFT := `{"rollout": {"seed": 1}, "sft": {"retries": 5}, "grpo": {"group_size": 4}}`
	noGRPO := func(k string) bool { return k == "grpo" }
	if diff := cmp.Diff([]string{"sft.retries"}, configConflicts([]byte(oldSFT), []byte(curSFT), noGRPO)); diff != "" {
		t.Errorf("conflicts with grpo empty (-want +got):\n%s", diff)
	}
}

// TestRunStageWithoutResultsMayChange: a folder whose rollout ran but whose
// grpo stage has no results yet accepts a changed grpo block (it is the
// same experiment), and still refuses a changed rollout seed.
func TestRunStageWithoutResultsMayChange(t *testing.T) {
	dir := t.TempDir()
	spec := testSpec(t, retailTasks(t, "0"))
	spec.Stages = []string{StageImport, StageRollout}
	spec.Rollout.EpisodesPerTask = 1
	spec.Config = []byte(`{"rollout": {"seed": 7}, "grpo": {"group_size": 4}}`)
	if _, err := Run(context.Background(), spec, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	spec.Config = []byte(`{"rollout": {"seed": 7}, "grpo": {"group_size": 8}}`)
	if _, err := Run(context.Background(), spec, Options{Dir: dir}); err != nil {
		t.Fatalf("changed grpo block without grpo results: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, FileConfig)); string(b) != `{"rollout": {"seed": 7}, "grpo": {"group_size": 8}}` {
		t.Errorf("config.json = %s, want the new config", b)
	}
	spec.Config = []byte(`{"rollout": {"seed": 8}, "grpo": {"group_size": 8}}`)
	_, err := Run(context.Background(), spec, Options{Dir: dir})
	if !errors.Is(err, ErrOtherRun) || !strings.Contains(err.Error(), "rollout.seed") {
		t.Fatalf("changed rollout seed with episodes in the folder: err = %v, want ErrOtherRun naming rollout.seed", err)
	}
}
