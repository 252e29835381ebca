package report

import (
	"github.com/weft-dev/weft/sdk/failure"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/rollout"
)

// TestDiagnose: infrastructure failures grouped by kind (most frequent
// first, the first episode as the example), the tasks a task-class
// attribution blames with their distinct revise targets, the detectors of
// the GRPO stage.
func TestDiagnose(t *testing.T) {
	infra := func(key string, c failure.Component, kind failure.Kind, msg string) Episode {
		return Episode{Key: key, Task: "t", Infra: &rollout.InfraError{Component: c, Kind: kind, Message: msg}}
	}
	blamed := func(key, task string, as ...attribute.Attribution) Episode {
		return Episode{Key: key, Task: task, Score: f(0), Attributions: as}
	}
	taskAtt := func(cp, revise, ev string) attribute.Attribution {
		return attribute.Attribution{Checkpoint: cp, Class: attribute.ClassTask, Revise: revise, Evidence: ev}
	}
	eps := []Episode{
		infra("t/agentic/react/p/0", failure.Model, failure.Timeout, "deadline exceeded after 2m0s"),
		blamed("105/agentic/react/p/0", "105", taskAtt("a1", "task:105/atomic:a1", "reference call 0 of atomic task a1 failed"),
			taskAtt("overall", "task:105/atomic:a1", "second")),
		infra("t/agentic/react/p/1", failure.Plugin, failure.Exited, "harness exited with status 2"),
		blamed("9/agentic/native/p/0", "9", attribute.Attribution{Checkpoint: "a1", Class: attribute.ClassPolicy, Revise: "policy"}),
		infra("t/agentic/react/p/2", failure.Plugin, failure.Exited, "harness exited with status 1"),
		blamed("105/simuser/react/p/0", "105", taskAtt("a2", "task:105/atomic:a2", "third")),
	}
	got := Diagnose(eps, &GRPOStats{Detectors: map[string]int{"repeated_call": 2}})
	want := Diagnosis{
		InfraReasons: []InfraReason{
			{Kind: "plugin_exited", Episodes: 2, Example: "t/agentic/react/p/1", Message: "harness exited with status 2"},
			{Kind: "model_timeout", Episodes: 1, Example: "t/agentic/react/p/0", Message: "deadline exceeded after 2m0s"},
		},
		TaskAttributions: []TaskBlame{{Task: "105", Attributions: 3, Revise: []string{"task:105/atomic:a1", "task:105/atomic:a2"},
			Evidence: "reference call 0 of atomic task a1 failed"}},
		Detectors: map[string]int{"repeated_call": 2},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Diagnose (-want +got):\n%s", d)
	}
	rows := attributionRows(eps)
	var order []string
	for _, r := range rows {
		order = append(order, r.Episode+" "+r.Checkpoint+" "+string(r.Class))
	}
	if d := cmp.Diff([]string{"105/agentic/react/p/0 a1 task", "105/agentic/react/p/0 overall task", "105/simuser/react/p/0 a2 task",
		"9/agentic/native/p/0 a1 policy"}, order); d != "" {
		t.Errorf("attribution rows (-want +got):\n%s", d)
	}
}

func TestPolicyText(t *testing.T) {
	for _, tc := range []struct {
		p    PolicySettings
		want string
	}{
		{PolicySettings{Name: "scripted", Kind: "scripted", FaultSeed: 1, Faults: map[string]float64{"wrong_argument": 0.08, "early_stop": 0.03, "skip_step": 0}},
			`"scripted" is weft's scripted fault injector, not a model: it follows each task's reference solution and plants faults (per-step fault rates early_stop 0.03, wrong_argument 0.08; seed 1). Every policy failure in this report is a planted fault.`},
		{PolicySettings{Name: "perfect", Kind: "scripted", Faults: map[string]float64{"skip_step": 0}},
			`"perfect" is weft's scripted fault injector, not a model: it follows each task's reference solution and plants faults (no faults; seed 0). Every policy failure in this report is a planted fault.`},
		{PolicySettings{Name: "model", Kind: "endpoint", Model: "Qwen/Qwen3-8B", BaseURL: "http://gpu:8000/v1"},
			`"model" is the model Qwen/Qwen3-8B at http://gpu:8000/v1.`},
	} {
		if got := tc.p.PolicyText(); got != tc.want {
			t.Errorf("PolicyText = %q, want %q", got, tc.want)
		}
	}
}
