package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// serveEnv makes the test binary serve a built-in harness (the launcher
// re-executes it, as weft re-executes itself).
const serveEnv = "WEFT_TEST_SERVE_HARNESS"

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == serveNoResume {
		h, _ := builtin.Harness("native")
		plugin.Serve(&plugin.ServeConfig{Harness: noResume{h}})
		os.Exit(0)
	}
	if name := os.Getenv(serveEnv); name != "" {
		if err := host.ServeBuiltin(name); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	for i := len(fixClose) - 1; i >= 0; i-- {
		fixClose[i]()
	}
	os.Exit(code)
}

// serveNoResume makes the test binary serve the native harness without
// the resume capability (a harness written before it existed).
const serveNoResume = "serve-noresume"

type noResume struct{ plugin.Harness }

func (h noResume) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	if err := h.Harness.Describe(ctx, req, resp); err != nil {
		return err
	}
	resp.Name = "old-native"
	resp.Capabilities = slices.DeleteFunc(resp.Capabilities, func(c string) bool { return c == plugin.CapabilityResume })
	return nil
}

var (
	fixOnce     sync.Once
	fixErr      error
	fixServer   *megamcp.Server
	fixLauncher *host.Launcher
	fixClose    []func()
)

// fixture is one MegaMCP server over the test modules and one launcher
// serving the built-in harnesses from this test binary, shared by the
// package's tests (each costs seconds under -race).
func fixture(t *testing.T) (*megamcp.Server, *host.Launcher) {
	t.Helper()
	fixOnce.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "weft-pipeline-test-")
		if err != nil {
			fixErr = err
			return
		}
		fixClose = append(fixClose, func() { os.RemoveAll(dir) })
		reg, err := module.OpenRegistry(dir)
		if err != nil {
			fixErr = err
			return
		}
		for _, name := range []string{"retail"} {
			d, err := reg.PutTar(megamcptest.Bundle(t, name), "")
			if err != nil {
				fixErr = err
				return
			}
			if err := reg.Tag(name, "latest", d); err != nil {
				fixErr = err
				return
			}
		}
		rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
		if err != nil {
			fixErr = err
			return
		}
		fixClose = append(fixClose, func() { rt.Close(ctx) })
		fixServer, fixErr = megamcp.Open(ctx, megamcp.Config{Runtime: rt, Registry: reg, CheckpointInterval: -1})
		if fixErr != nil {
			return
		}
		fixClose = append(fixClose, func() { fixServer.Close() })
		fixLauncher = &host.Launcher{Command: func(name string) (*exec.Cmd, error) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), serveEnv+"="+name)
			return cmd, nil
		}}
		fixClose = append(fixClose, fixLauncher.Close)
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixServer, fixLauncher
}

// retailTasks converts the first n tau2-retail tasks that have at least
// two atomic tasks or not, in file order.
func retailTasks(t *testing.T, ids ...string) []*task.Task {
	t.Helper()
	root := megamcptest.Root()
	all, err := task.ConvertTau2File(filepath.Join(root, "examples/data/tau2-retail/tasks.json"),
		task.Tau2Options{Modules: []string{"retail"}, ReadOnly: task.RetailReadOnly, Source: "tau2-retail"})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*task.Task{}
	for _, tk := range all {
		byID[tk.ID] = tk
	}
	var out []*task.Task
	for _, id := range ids {
		tk := byID[id]
		if tk == nil {
			t.Fatalf("no tau2-retail task %q", id)
		}
		out = append(out, tk)
	}
	return out
}

var testFaults = scripted.Faults{WrongArgument: 0.15, SkipStep: 0.05, ExtraCall: 0.1, HallucinatedTool: 0.05, MalformedCall: 0.05, EarlyStop: 0.05}

// testSpec is a small experiment over a few retail tasks: a faulty
// scripted policy, two harnesses, both views, SFT with the end-to-end
// comparison and atomic-turn GRPO with G = 4.
func testSpec(t *testing.T, tasks []*task.Task) *Spec {
	srv, l := fixture(t)
	pol := Policy{
		Episode: func(tk *task.Task, view string, seed uint64) (model.Policy, error) {
			sc, err := scripted.ScriptForView(tk, view)
			if err != nil {
				return nil, err
			}
			return scripted.New(sc, testFaults, seed)
		},
		Turn: host.ScriptedTurnPolicy(testFaults),
	}
	return &Spec{
		Name:         "test",
		Config:       []byte(`{"test": true}`),
		Stages:       Stages,
		Tasks:        tasks,
		SystemPrompt: func(*task.Task) string { return "You are a retail agent." },
		Server:       srv,
		Launcher:     l,
		Policies:     map[string]Policy{"scripted": pol},
		Harnesses:    map[string]Harness{"native": {Builtin: "native"}, "hermes": {Builtin: "hermes"}},
		Mix:          []Pair{{"agentic", "native", 1}, {"simuser", "hermes", 1}},
		Rollout:      RolloutSpec{Policy: "scripted", EpisodesPerTask: 4, Concurrency: 2, Retries: 1, Seed: 7},
		SFT:          &SFTSpec{Policy: "scripted", View: "simuser", Harness: "native", Mode: train.ModePrefix, Retries: 2, Compare: true, Concurrency: 2, Seed: 7},
		GRPO:         &GRPOSpec{Policy: "scripted", View: "simuser", Harness: "native", G: 4, Level: train.LevelAtomicTurn, Continue: train.ContinueFirst, Mask: true, Reward: RewardBinary, Concurrency: 2, Seed: 7},
		PassK:        []int{2},
	}
}

func readMetrics(t *testing.T, dir string) report.Metrics {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	var m report.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunFolder runs every stage on three retail tasks and checks each
// file of the run folder against the others.
func TestRunFolder(t *testing.T) {
	tasks := retailTasks(t, "16", "30", "5")
	spec := testSpec(t, tasks)
	dir := t.TempDir()
	var stages []string
	res, err := Run(context.Background(), spec, Options{Dir: dir, GeneratedAt: "test", Progress: func(e Event) {
		if e.End {
			stages = append(stages, e.Stage)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{StageImport, StageRollout, StageSFT, StageGRPO, StageExport}, stages); diff != "" {
		t.Errorf("stages that reported an end (-want +got):\n%s", diff)
	}
	m := readMetrics(t, dir)
	if diff := cmp.Diff(res.Metrics, m); diff != "" {
		t.Errorf("metrics.json differs from Run's result (-result +file):\n%s", diff)
	}
	// 3 tasks x 4 episodes, spread 2/2 over the two pairs.
	if m.Episodes != 12 || len(m.PassRateBy) != 2 || m.PassRateBy[0].Episodes != 6 || m.PassRateBy[1].Episodes != 6 {
		t.Fatalf("episodes %d, by pair %+v; want 12 = 6 + 6", m.Episodes, m.PassRateBy)
	}
	eps, err := os.ReadFile(filepath.Join(dir, FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(eps, []byte("\n")); n != 12 {
		t.Errorf("episodes.jsonl has %d lines, want 12", n)
	}
	trs, err := os.ReadFile(filepath.Join(dir, FileTrajectories))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(trs, []byte("\n")); n != 12 {
		t.Errorf("trajectories.jsonl has %d lines, want 12", n)
	}
	if bytes.Contains(trs, []byte(`"prompt"`)) {
		t.Error("trajectories.jsonl still holds per-turn prompts")
	}
	saved, err := task.LoadFile(filepath.Join(dir, FileTasks))
	if err != nil || len(saved) != 3 {
		t.Fatalf("tasks.weft.json: %d tasks, %v", len(saved), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, FileConfig)); string(b) != `{"test": true}` {
		t.Errorf("config.json = %q", b)
	}

	// SFT: the figures match the datasets.
	if m.SFTMode != train.ModePrefix || m.SFTTasks != 3 || m.SFTCompare == nil || m.SFTCompare.Mode != train.ModeEndToEnd || m.SFTCompare.Tasks != 3 {
		t.Fatalf("sft metrics: mode %q tasks %d compare %+v", m.SFTMode, m.SFTTasks, m.SFTCompare)
	}
	f, err := os.Open(filepath.Join(dir, DirDatasets, datasetTRL))
	if err != nil {
		t.Fatal(err)
	}
	sft, err := train.ReadSFTJSONL(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := m.SFTTrajectories
	if r := res.Metrics; r.SFTTasks > 0 {
		// Records include verified prefixes of rejected trajectories.
		want = countRecords(t, dir)
	}
	if len(sft) != want || len(sft) == 0 {
		t.Errorf("sft.trl.jsonl has %d records, want %d (> 0)", len(sft), want)
	}
	for i, rec := range sft {
		if len(rec.Messages) < 3 || rec.Messages[0].Role != model.RoleSystem || len(rec.Tools) == 0 {
			t.Errorf("sft record %d: %d messages, first role %q, %d tools", i, len(rec.Messages), rec.Messages[0].Role, len(rec.Tools))
		}
	}
	pq, err := train.ReadSFTParquetFile(filepath.Join(dir, DirDatasets, datasetVerlSFT))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sft, pq); diff != "" {
		t.Errorf("verl SFT parquet differs from the TRL JSONL (-jsonl +parquet):\n%s", diff)
	}

	// GRPO: segments = candidates, one verl row per group.
	f, err = os.Open(filepath.Join(dir, DirDatasets, datasetRLSegments))
	if err != nil {
		t.Fatal(err)
	}
	segs, err := train.ReadRLJSONL(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != m.GRPOSegments || m.GRPOSegments != 4*m.GRPOGroups || m.GRPOGroups < 3 {
		t.Errorf("rl segments %d, metrics segments %d, groups %d; want segments = 4 x groups, groups >= 3", len(segs), m.GRPOSegments, m.GRPOGroups)
	}
	masked := 0
	for _, s := range segs {
		if s.Masked {
			masked++
			if s.Advantage > 0 {
				t.Errorf("segment %s/%d: masked with advantage %v > 0", s.GroupID, s.Turn, s.Advantage)
			}
		}
	}
	if masked != m.GRPOMaskedSegments {
		t.Errorf("masked segments %d, metrics %d", masked, m.GRPOMaskedSegments)
	}
	verl, err := train.ReadVerlRLParquetFile(filepath.Join(dir, DirDatasets, datasetVerlRL))
	if err != nil {
		t.Fatal(err)
	}
	if len(verl) != m.GRPOGroups {
		t.Errorf("verl RL rows %d, want one per group (%d)", len(verl), m.GRPOGroups)
	}
	html, err := os.ReadFile(filepath.Join(dir, FileReport))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{report.ChartPassRate, report.ChartScoreHistogram, report.ChartToolErrorRate, report.ChartAttributions, report.ChartRejectionAttempts, "table-sft-compare"} {
		if !bytes.Contains(html, []byte(`id="`+id+`"`)) {
			t.Errorf("report.html has no element %q", id)
		}
	}
}

// countRecords counts the SFT records sft.jsonl yields in the configured
// mode.
func countRecords(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	if _, err := openJournalRead(filepath.Join(dir, FileSFT), func(line []byte) error {
		var l sftLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		if l.Result.Mode == train.ModePrefix {
			if _, ok := l.Result.SFT(); ok {
				n++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRunResumeSameMetrics interrupts a run in the middle of each work
// stage and resumes it; the metrics and the datasets equal those of an
// uninterrupted run with the same seeds.
func TestRunResumeSameMetrics(t *testing.T) {
	tasks := retailTasks(t, "16", "30", "5", "0")
	whole := t.TempDir()
	if _, err := Run(context.Background(), testSpec(t, tasks), Options{Dir: whole, GeneratedAt: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, stop := range []struct {
		stage string
		after int
	}{{StageRollout, 5}, {StageSFT, 2}, {StageGRPO, 1}} {
		t.Run(stop.stage, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			_, err := Run(ctx, testSpec(t, tasks), Options{Dir: dir, GeneratedAt: "test", Progress: func(e Event) {
				if e.Stage == stop.stage && e.Done >= stop.after {
					cancel()
				}
			}})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
			}
			if _, err := os.Stat(filepath.Join(dir, FileMetrics)); err == nil {
				t.Fatal("an interrupted run wrote metrics.json")
			}
			var skipped int
			if _, err := Run(context.Background(), testSpec(t, tasks), Options{Dir: dir, GeneratedAt: "test", Progress: func(e Event) {
				if e.Stage == stop.stage && !e.End && e.Done == 0 {
					skipped = e.Skipped
				}
			}}); err != nil {
				t.Fatal(err)
			}
			if skipped < stop.after {
				t.Errorf("resumed %s stage skipped %d finished items, want >= %d", stop.stage, skipped, stop.after)
			}
			if diff := cmp.Diff(readMetrics(t, whole), readMetrics(t, dir)); diff != "" {
				t.Errorf("metrics after resume differ (-whole +resumed):\n%s", diff)
			}
			for _, name := range []string{datasetTRL, datasetRLSegments} {
				a, _ := os.ReadFile(filepath.Join(whole, DirDatasets, name))
				b, _ := os.ReadFile(filepath.Join(dir, DirDatasets, name))
				if !bytes.Equal(a, b) || len(a) == 0 {
					t.Errorf("%s differs after resume (%d vs %d bytes)", name, len(a), len(b))
				}
			}
		})
	}
}

func TestSpecValidate(t *testing.T) {
	srv, l := fixture(t)
	base := func() *Spec {
		s := testSpec(t, retailTasks(t, "0"))
		s.Server, s.Launcher = srv, l
		return s
	}
	for _, c := range []struct {
		name string
		mut  func(*Spec)
		want string
	}{
		{"unknown stage", func(s *Spec) { s.Stages = []string{"rollout", "train"} }, `unknown stage "train"`},
		{"out of order", func(s *Spec) { s.Stages = []string{"grpo", "sft"} }, `stage "sft" out of order`},
		{"undeclared policy", func(s *Spec) { s.Rollout.Policy = "gpt" }, `rollout policy "gpt" is not declared`},
		{"undeclared harness", func(s *Spec) { s.Mix = []Pair{{"agentic", "plan-act", 1}} }, `mix names harness "plan-act"`},
		{"no episodes", func(s *Spec) { s.Rollout.EpisodesPerTask = 0 }, "episodes per task must be at least 1"},
		{"sft harness", func(s *Spec) { s.SFT.Harness = "x" }, `sft harness "x" is not declared`},
		{"grpo settings", func(s *Spec) { s.GRPO = nil }, "the grpo stage needs grpo settings"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.mut(s)
			dir := t.TempDir()
			_, err := Run(context.Background(), s, Options{Dir: dir})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("an invalid spec wrote %d files", len(entries))
			}
		})
	}
}

// TestTrainingFailureRecorded: a task whose SFT and GRPO turns keep
// failing is recorded in failures.json and counted in metrics, the other
// tasks finish, and a rerun with the failure gone fills in the task.
func TestTrainingFailureRecorded(t *testing.T) {
	tasks := retailTasks(t, "16", "30")
	spec := testSpec(t, tasks)
	spec.Stages = []string{StageSFT, StageGRPO, StageExport}
	spec.SFT.Compare = false
	good := spec.Policies["scripted"].Turn
	broken := Policy{Turn: func(in host.TurnInput) (model.Policy, error) {
		if in.Task.ID == "30" {
			return nil, errors.New("planted: no policy for task 30")
		}
		return good(in)
	}}
	spec.Policies["scripted"] = broken
	dir := t.TempDir()
	res, err := Run(context.Background(), spec, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 2 || res.Failures[0].TaskID != "30" || res.Failures[1].TaskID != "30" ||
		res.Failures[0].Stage != StageSFT || res.Failures[1].Stage != StageGRPO ||
		!strings.Contains(res.Failures[0].Message, "planted: no policy for task 30") {
		t.Fatalf("failures = %+v, want task 30 in sft and grpo with the planted error", res.Failures)
	}
	var onDisk []Failure
	b, _ := os.ReadFile(filepath.Join(dir, FileFailures))
	if err := json.Unmarshal(b, &onDisk); err != nil || !cmp.Equal(onDisk, res.Failures) {
		t.Fatalf("failures.json = %s (%v), want %+v", b, err, res.Failures)
	}
	m := res.Metrics
	if m.SFTFailedTasks != 1 || m.GRPOFailedTasks != 1 || m.SFTTasks != 1 || m.GRPOGroups == 0 {
		t.Fatalf("metrics: sft failed %d tasks %d, grpo failed %d groups %d; want 1, 1, 1, > 0", m.SFTFailedTasks, m.SFTTasks, m.GRPOFailedTasks, m.GRPOGroups)
	}
	spec.Policies["scripted"] = Policy{Turn: good}
	res, err = Run(context.Background(), spec, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 0 || res.Metrics.SFTFailedTasks != 0 || res.Metrics.GRPOFailedTasks != 0 || res.Metrics.SFTTasks != 2 {
		t.Fatalf("rerun: failures %+v, sft failed %d, grpo failed %d, sft tasks %d; want none and 2 tasks",
			res.Failures, res.Metrics.SFTFailedTasks, res.Metrics.GRPOFailedTasks, res.Metrics.SFTTasks)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, FileFailures)); string(b) != "[]\n" {
		t.Fatalf("failures.json after a clean rerun = %q, want []", b)
	}
}

// constJudge scores every rubric item score (or fails with err).
type constJudge struct {
	score float64
	err   error
}

func (j constJudge) Score(context.Context, task.RubricItem, []model.Message) (float64, string, error) {
	return j.score, "test judge", j.err
}

// TestRolloutJudge: with a judge, episodes of tasks with rubric items
// carry a rubric score beside the executable score; a failing judge is an
// infrastructure failure of the episode, not a score.
func TestRolloutJudge(t *testing.T) {
	tasks := retailTasks(t, "16", "0") // 16 has rubric items, 0 has none
	spec := testSpec(t, tasks)
	spec.Stages = []string{StageRollout, StageVerify}
	spec.Rollout.EpisodesPerTask, spec.Rollout.Retries = 1, 0
	spec.Mix = []Pair{{"agentic", "native", 1}}
	spec.Judge = constJudge{score: 0.75}
	dir := t.TempDir()
	if _, err := Run(context.Background(), spec, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	eps := (&runner{opts: Options{Dir: dir}}).loadEpisodesOnly()
	if len(eps) != 2 {
		t.Fatalf("%d episodes, want 2", len(eps))
	}
	for _, e := range eps {
		switch e.Task {
		case "16":
			if e.Score == nil || e.RubricScore == nil || *e.RubricScore != 0.75 {
				t.Errorf("task 16: score %v rubric %v infra %+v, want a score and rubric 0.75", e.Score, e.RubricScore, e.Infra)
			}
		case "0":
			if e.Score == nil || e.RubricScore != nil {
				t.Errorf("task 0 (no rubric items): score %v rubric %v, want a score and no rubric", e.Score, e.RubricScore)
			}
		}
	}
	spec.Judge = constJudge{err: errors.New("judge endpoint down")}
	spec.Config = []byte(`{"test": "judge down"}`)
	dir = t.TempDir()
	res, err := Run(context.Background(), spec, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.InfraFailures != 1 || res.Metrics.ScoredEpisodes != 1 {
		t.Fatalf("judge down: %d infra failures, %d scored; want 1 and 1 (task 0 has no rubric)", res.Metrics.InfraFailures, res.Metrics.ScoredEpisodes)
	}
	for _, e := range (&runner{opts: Options{Dir: dir}}).loadEpisodesOnly() {
		if e.Task == "16" && (e.Infra == nil || e.Infra.Code() != "judge" || !strings.Contains(e.Infra.Message, "judge endpoint down")) {
			t.Errorf("task 16 with the judge down: infra %+v, want kind judge with the cause", e.Infra)
		}
	}
}

// TestConsistencyFilter: the grpo stage drops the tasks whose executable
// and rubric scores disagree, records every decision in filter.json, and
// keeps tasks without rubric scores (not judged).
func TestConsistencyFilter(t *testing.T) {
	tasks := retailTasks(t, "16", "30", "5")
	spec := testSpec(t, tasks)
	spec.Stages = []string{StageGRPO}
	spec.GRPO.Filter = &train.FilterConfig{MinCorrelation: 0.5, MinAgreement: 0.8, RubricPass: 0.5, MinRollouts: 4}
	dir := t.TempDir()
	// Rollout episodes as an earlier run left them: task 16's verifiers
	// agree, task 30's disagree, task 5 has no rubric scores.
	var lines []byte
	add := func(taskID string, i int, score, rubric float64, judged bool) {
		e := report.Episode{Key: taskID + "/agentic/native/scripted/" + string(rune('0'+i)), Task: taskID, View: "agentic",
			Harness: "native", Policy: "scripted", Sample: i, Score: &score, Pass: score == 1, Attempts: 1}
		if judged {
			e.RubricScore = &rubric
		}
		b, _ := json.Marshal(e)
		lines = append(append(lines, b...), '\n')
	}
	for i, s := range []float64{1, 0, 1, 0} {
		add("16", i, s, s*0.9, true)
		add("30", i, s, 1-s, true)
		add("5", i, s, 0, false)
	}
	if err := os.WriteFile(filepath.Join(dir, FileEpisodes), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), spec, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var decisions []struct {
		TaskID string `json:"task_id"`
		Keep   bool   `json:"keep"`
		Judged bool   `json:"judged"`
		Reason string `json:"reason"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileFilter))
	if err := json.Unmarshal(b, &decisions); err != nil || len(decisions) != 3 {
		t.Fatalf("filter.json = %s (%v), want 3 decisions", b, err)
	}
	want := map[string][2]bool{"16": {true, true}, "30": {false, true}, "5": {true, false}}
	for _, d := range decisions {
		if w := want[d.TaskID]; d.Keep != w[0] || d.Judged != w[1] {
			t.Errorf("task %s: keep %v judged %v (%s), want keep %v judged %v", d.TaskID, d.Keep, d.Judged, d.Reason, w[0], w[1])
		}
	}
	var got []string
	gr, err := (&runner{spec: spec, opts: Options{Dir: dir}}).loadGRPO()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range gr {
		got = append(got, r.TaskID)
	}
	if diff := cmp.Diff([]string{"16", "5"}, got); diff != "" {
		t.Errorf("tasks with GRPO groups (-want +got):\n%s", diff)
	}
	if res.Metrics.GRPOFailedTasks != 0 {
		t.Errorf("grpo_failed_tasks = %d: a filtered task is not a failure", res.Metrics.GRPOFailedTasks)
	}
}

// TestTrainingHarnessWithoutResume: a training stage whose harness cannot
// resume conversations fails once, before any task, naming the harness and
// the capability; nothing is journaled.
func TestTrainingHarnessWithoutResume(t *testing.T) {
	spec := testSpec(t, retailTasks(t, "16", "30"))
	spec.Stages = []string{StageSFT, StageGRPO}
	spec.Harnesses["old"] = Harness{Binary: os.Args[0], Args: []string{serveNoResume}}
	spec.SFT.Harness = "old"
	dir := t.TempDir()
	var started []string
	_, err := Run(context.Background(), spec, Options{Dir: dir, Progress: func(e Event) {
		if !e.End && e.Done == 0 {
			started = append(started, e.Stage)
		}
	}})
	if err == nil || !strings.Contains(err.Error(), `sft: harness "old" (old-native) does not declare the "resume" capability`) {
		t.Fatalf("err = %v, want the sft stage to name the harness and the capability", err)
	}
	if len(started) != 0 {
		t.Errorf("stages started %v, want none", started)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, FileSFT)); len(b) != 0 {
		t.Errorf("sft.jsonl has %d bytes, want none", len(b))
	}
}
