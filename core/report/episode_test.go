package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

func TestEpisodeFromOutcome(t *testing.T) {
	job := rollout.Job{Task: &task.Task{ID: "tau2-retail:12"}, View: "agentic", Harness: "react", Policy: "qwen", Sample: 1}
	// The trajectory as the executor stores it: pluginpb.Trajectory through
	// encoding/json. Three calls, two of them errors, across two turns.
	traj, err := json.Marshal(&pluginpb.Trajectory{
		Termination: "done", ToolCalls: 3,
		Turns: []*pluginpb.Turn{
			{Index: 0, Results: []*pluginpb.ToolResult{{CallId: "c1", IsError: true}, {CallId: "c2"}}},
			{Index: 1, Results: []*pluginpb.ToolResult{{CallId: "c3", IsError: true}}},
			{Index: 2},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	attrs, _ := json.Marshal([]attribute.Attribution{{Checkpoint: "overall", Class: attribute.ClassPolicy, Evidence: "e", Revise: "policy"}})
	out := &rollout.Outcome{
		Key: job.Key(), TaskID: "tau2-retail:12", View: "agentic", Harness: "react", Policy: "qwen", Sample: 1,
		Score: f(0.5), Checkpoints: []verify.Checkpoint{{Name: "a1", Score: 1, Checks: []verify.CheckResult{{Kind: "row"}}}, {Name: "overall", Score: 0}},
		Attributions: attrs, Attempts: 2, Termination: "done", Turns: 3, ToolCalls: 3, Trajectory: traj, DurationMs: 1234,
		InfraErrors: []rollout.InfraError{{Kind: "deadline", Retryable: true}},
	}
	got := EpisodeFromOutcome(job, out, nil)
	want := Episode{
		Key: "tau2-retail:12/agentic/react/qwen/1", Task: "tau2-retail:12", View: "agentic", Harness: "react", Policy: "qwen",
		Sample: 1, Score: f(0.5), Checkpoints: []CheckpointScore{{"a1", 1}, {"overall", 0}},
		Attributions: []attribute.Attribution{{Checkpoint: "overall", Class: attribute.ClassPolicy, Evidence: "e", Revise: "policy"}},
		Attempts:     2, Termination: "done", Turns: 3, ToolCalls: 3, ToolErrors: 2, DurationMs: 1234,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("EpisodeFromOutcome (-want +got):\n%s", d)
	}

	// A passed episode.
	out.Score = f(1)
	if e := EpisodeFromOutcome(job, out, nil); !e.Pass || *e.Score != 1 {
		t.Fatalf("score 1: pass=%v", e.Pass)
	}
	// The scheduler's infrastructure failure: no score, the failure kept.
	out.Score, out.Infra = nil, &rollout.InfraError{Kind: "plugin_crash", Message: "exit 2", Retryable: true}
	e := EpisodeFromOutcome(job, out, nil)
	if e.Score != nil || e.Pass || e.Infra == nil || *e.Infra != *out.Infra {
		t.Fatalf("infra outcome: %+v", e)
	}
	// An executor error with no outcome: identity from the job, the wrapped
	// InfraError kept; a plain error becomes kind "internal".
	e = EpisodeFromOutcome(job, nil, fmt.Errorf("run: %w", &rollout.InfraError{Kind: "endpoint", Message: "down"}))
	if e.Key != job.Key() || e.Task != "tau2-retail:12" || e.Sample != 1 || e.Score != nil ||
		e.Infra == nil || e.Infra.Code() != "endpoint" || e.Infra.Message != "down" {
		t.Fatalf("infra error: %+v", e)
	}
	e = EpisodeFromOutcome(job, &rollout.Outcome{Key: job.Key(), Score: f(1)}, errors.New("boom"))
	if e.Score != nil || e.Pass || e.Infra == nil || e.Infra.Code() != string(rollout.KindInternal) || e.Infra.Message != "boom" {
		t.Fatalf("plain error: %+v", e)
	}
	// Undecodable attributions and trajectory leave the fields empty.
	e = EpisodeFromOutcome(job, &rollout.Outcome{Score: f(0), Attributions: json.RawMessage(`{`), Trajectory: json.RawMessage(`[`)}, nil)
	if e.Attributions != nil || e.ToolErrors != 0 || e.Infra != nil {
		t.Fatalf("undecodable fields: %+v", e)
	}
}

func TestEpisodesJSONLRoundTrip(t *testing.T) {
	eps := fixtureEpisodes()
	var buf bytes.Buffer
	for _, e := range eps {
		if err := WriteEpisode(&buf, e); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != len(eps) {
		t.Fatalf("%d lines for %d episodes", n, len(eps))
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	wantFirst := `{"key":"t1/simuser/native/p/1","task":"t1","view":"simuser","harness":"native","policy":"p","sample":1,` +
		`"score":0.25,"pass":false,"attributions":[{"checkpoint":"a1","class":"verifier","evidence":"ledger call #1","revise":"verifier"}],` +
		`"attempts":1,"termination":"done","turns":5,"tool_calls":4,"tool_errors":1,"duration_ms":200}`
	if first != wantFirst {
		t.Fatalf("first line\n got %s\nwant %s", first, wantFirst)
	}
	// Blank lines are skipped; a long line and no final newline are fine.
	in := "\n" + buf.String() + "\n" + strings.TrimSuffix(buf.String(), "\n")
	got, err := ReadEpisodes(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(append(eps, eps...), got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	// The infra episode keeps its null score.
	if !strings.Contains(buf.String(), `"score":null,"pass":false,"infra":{"kind":"plugin_crash"`) {
		t.Fatalf("infra line not as expected:\n%s", buf.String())
	}
}

func TestReadEpisodesBadLine(t *testing.T) {
	_, err := ReadEpisodes(strings.NewReader("{\"key\":\"a\"}\n\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "episodes line 3") {
		t.Fatalf("err = %v, want one naming line 3", err)
	}
}
