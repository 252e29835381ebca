package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
)

// Settings are the experiment's settings as the report states them
// (metrics.json "settings"); the caller (internal/pipeline) fills them from
// the config. Nil in Metrics when the caller gave none.
type Settings struct {
	// Config is the config file's name; Stages the stages run.
	Config string   `json:"config"`
	Stages []string `json:"stages"`
	// Tasks counts the tasks; EpisodesPerTask and Seed are the rollout's.
	Tasks           int    `json:"tasks"`
	EpisodesPerTask int    `json:"episodes_per_task"`
	Seed            uint64 `json:"seed"`
	// Policy is the rollout policy.
	Policy PolicySettings `json:"policy"`
	// Mix is the view x harness mix with weights.
	Mix []MixSetting `json:"mix"`
	// Verifier: "exec" or a plugin binary; Basis "weft" or "tau2"
	// (task.BasisWeft, task.BasisTau2); Judge the policy scoring rubric
	// items ("" = none).
	Verifier string `json:"verifier"`
	Basis    string `json:"basis"`
	Judge    string `json:"judge"`
	// Attributor: "rules" or a plugin binary.
	Attributor string `json:"attributor"`
	// FailedGoldActions lists, per task, the gold actions that failed in
	// the benchmark's own code when the task was converted
	// (task.FailedActions); those that changed state dropped their atomic
	// task. Empty when none.
	FailedGoldActions []TaskFailedActions `json:"failed_gold_actions"`
}

// PolicySettings describes the rollout policy.
type PolicySettings struct {
	Name string `json:"name"`
	// Kind is "scripted" (weft's scripted fault injector: it follows each
	// task's reference solution and plants faults at the Faults rates, so
	// every failure is planted, not a model's) or "endpoint" (a model).
	Kind string `json:"kind"`
	// Faults are the scripted policy's per-step fault probabilities by
	// name (wrong_argument, skip_step, ...); FaultSeed their seed.
	Faults    map[string]float64 `json:"faults,omitempty"`
	FaultSeed uint64             `json:"fault_seed,omitempty"`
	// Model and BaseURL of an endpoint policy.
	Model   string `json:"model,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
}

// MixSetting is one view x harness pair of the mix.
type MixSetting struct {
	View    string  `json:"view"`
	Harness string  `json:"harness"`
	Weight  float64 `json:"weight"`
}

// TaskFailedActions are one task's failed gold actions.
type TaskFailedActions struct {
	Task string `json:"task"`
	// Actions are "#<index> <tool>: <error>" in gold order;
	// DroppedAtomic counts those whose atomic task was dropped.
	Actions       []string `json:"actions"`
	DroppedAtomic int      `json:"dropped_atomic"`
}

// Diagnosis answers "why did it fail?" (metrics.json "why"): the
// infrastructure failures by kind, the tasks a task-class attribution
// blames, and the undesirable-pattern detectors that fired.
type Diagnosis struct {
	// InfraReasons has one entry per infrastructure failure kind, most
	// frequent first (then by kind).
	InfraReasons []InfraReason `json:"infra_reasons"`
	// TaskAttributions lists the tasks with at least one task-class
	// attribution, by task id order of first appearance.
	TaskAttributions []TaskBlame `json:"task_attributions"`
	// Detectors maps a detector name to the GRPO candidate turns it fired
	// on (GRPOStats.Detectors); empty when GRPO did not run or none fired.
	Detectors map[string]int `json:"detectors"`
}

// InfraReason is one kind of infrastructure failure.
type InfraReason struct {
	Kind string `json:"kind"`
	// Episodes counts the episodes that ended on it.
	Episodes int `json:"episodes"`
	// Example is the first such episode's key and Message its message.
	Example string `json:"example"`
	Message string `json:"message"`
}

// TaskBlame is a task blamed by task-class attributions.
type TaskBlame struct {
	Task string `json:"task"`
	// Attributions counts its task-class attributions; Revise lists the
	// distinct components they name, in order; Evidence is the first one's.
	Attributions int      `json:"attributions"`
	Revise       []string `json:"revise"`
	Evidence     string   `json:"evidence"`
}

// Diagnose computes the Diagnosis of episodes (in the given order) and the
// GRPO stage (nil = none).
func Diagnose(episodes []Episode, grpo *GRPOStats) Diagnosis {
	d := Diagnosis{InfraReasons: []InfraReason{}, TaskAttributions: []TaskBlame{}, Detectors: map[string]int{}}
	infra := map[string]*InfraReason{}
	blame := map[string]*TaskBlame{}
	for _, e := range episodes {
		if e.Infra != nil {
			code := e.Infra.Code()
			r := infra[code]
			if r == nil {
				r = &InfraReason{Kind: code, Example: e.Key, Message: e.Infra.Message}
				infra[code] = r
			}
			r.Episodes++
		}
		for _, a := range e.Attributions {
			if a.Class != attribute.ClassTask {
				continue
			}
			b := blame[e.Task]
			if b == nil {
				b = &TaskBlame{Task: e.Task, Revise: []string{}, Evidence: a.Evidence}
				blame[e.Task] = b
				d.TaskAttributions = append(d.TaskAttributions, TaskBlame{Task: e.Task})
			}
			b.Attributions++
			if !contains(b.Revise, a.Revise) {
				b.Revise = append(b.Revise, a.Revise)
			}
		}
	}
	for i := range d.TaskAttributions {
		d.TaskAttributions[i] = *blame[d.TaskAttributions[i].Task]
	}
	for _, r := range infra {
		d.InfraReasons = append(d.InfraReasons, *r)
	}
	sort.Slice(d.InfraReasons, func(i, j int) bool {
		a, b := d.InfraReasons[i], d.InfraReasons[j]
		if a.Episodes != b.Episodes {
			return a.Episodes > b.Episodes
		}
		return a.Kind < b.Kind
	})
	if grpo != nil {
		for k, v := range grpo.Detectors {
			d.Detectors[k] = v
		}
	}
	return d
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// PolicyText says in plain words what the policy is (the report's
// settings line).
func (p PolicySettings) PolicyText() string {
	switch p.Kind {
	case "scripted":
		names := make([]string, 0, len(p.Faults))
		for k := range p.Faults {
			names = append(names, k)
		}
		sort.Strings(names)
		var parts []string
		for _, k := range names {
			if p.Faults[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %g", k, p.Faults[k]))
			}
		}
		rates := "no faults"
		if len(parts) > 0 {
			rates = "per-step fault rates " + strings.Join(parts, ", ")
		}
		return fmt.Sprintf("%q is weft's scripted fault injector, not a model: it follows each task's reference solution and plants faults (%s; seed %d). Every policy failure in this report is a planted fault.", p.Name, rates, p.FaultSeed)
	case "endpoint":
		return fmt.Sprintf("%q is the model %s at %s.", p.Name, p.Model, p.BaseURL)
	}
	return fmt.Sprintf("%q", p.Name)
}

// AttributionRow is one attribution with its episode, for the report's
// evidence table.
type AttributionRow struct {
	Episode string
	attribute.Attribution
}

// attributionRows lists every attribution of episodes: non-policy classes
// first (in episode order), then the policy's.
func attributionRows(episodes []Episode) []AttributionRow {
	var first, policy []AttributionRow
	for _, e := range episodes {
		for _, a := range e.Attributions {
			row := AttributionRow{Episode: e.Key, Attribution: a}
			if a.Class == attribute.ClassPolicy {
				policy = append(policy, row)
			} else {
				first = append(first, row)
			}
		}
	}
	return append(first, policy...)
}

// basisText says what a verifier basis scores.
func basisText(basis string) string {
	switch basis {
	case "tau2":
		return "the overall checkpoint holds the checks of each tau2 task's own reward_basis (DB = state_equal, COMMUNICATE = communicate, ACTION = the gold calls); NL assertions are rubric items the judge scores beside R"
	case "weft", "":
		return "weft's default, stricter than tau2's reward_basis on its retail tasks: the overall checkpoint holds state_equal and every communicate_info string"
	}
	return basis
}
