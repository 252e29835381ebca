package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Stage names, in the only order they may run.
const (
	StageImport    = "import"
	StageRollout   = "rollout"
	StageVerify    = "verify"
	StageAttribute = "attribute"
	StageSFT       = "sft"
	StageGRPO      = "grpo"
	StageExport    = "export"
	StageReport    = "report"
)

// Stages lists every stage in pipeline order.
var Stages = []string{StageImport, StageRollout, StageVerify, StageAttribute, StageSFT, StageGRPO, StageExport, StageReport}

// Spec is a resolved experiment: what `weft run` builds from a config
// (core/config) and hands to Run. Every field is plain Go; Run validates
// the cross-references it needs.
type Spec struct {
	// Name names the experiment (report title).
	Name string
	// Config is the resolved config, written to DIR/config.json as is.
	Config []byte
	// Stages to run, a subsequence of Stages.
	Stages []string
	// Tasks are the composed tasks, in order; their Modules name modules
	// the Server can load.
	Tasks []*task.Task
	// SystemPrompt is the domain policy the harnesses put in their system
	// prompt, per task.
	SystemPrompt func(t *task.Task) string
	Server       *megamcp.Server
	Launcher     *host.Launcher
	// Policies by name.
	Policies map[string]Policy
	// Harnesses by name.
	Harnesses map[string]Harness
	// Verifier and Attributor replace the built-in exec verifier and rules
	// attributor (nil = built-in, in process).
	Verifier   plugin.Verifier
	Attributor plugin.Attributor
	// Judge scores rubric items beside the executable score (nil = none);
	// the consistency filter needs it.
	Judge verify.Judge
	// Mix weights the view x harness pairs of the rollout stage.
	Mix []Pair
	// Rollout configures the rollout stage (verification and attribution
	// run inside it).
	Rollout RolloutSpec
	// SFT configures rejection sampling (nil = no sft stage settings).
	SFT *SFTSpec
	// GRPO configures the GRPO stage (nil = none).
	GRPO *GRPOSpec
	// Formats are the dataset formats the export stage writes (see
	// Formats); empty = all.
	Formats []string
	// PassK caps the k of pass^k and pass@k in metrics.json at its largest
	// value; empty (weft run): every k the samples allow, k = 1..n for a
	// task or view x harness cell of n scored episodes (report.KAll).
	PassK []int
	// Settings are the experiment's settings as metrics.json and the
	// report state them (nil = not stated).
	Settings *report.Settings
}

// Policy is a configured policy: how to build it for a whole episode and
// for one candidate atomic turn.
type Policy struct {
	// Episode builds the policy of a rollout episode of t under view.
	Episode func(t *task.Task, view string, seed uint64) (model.Policy, error)
	// Turn builds the policy of one candidate atomic turn (host.TrainEnv's
	// Policy).
	Turn func(in host.TurnInput) (model.Policy, error)
	// Model is the endpoint client of an endpoint policy (nil for a
	// scripted one); the judge uses it.
	Model model.Policy
}

// Harness is a configured harness: a built-in name or a plugin binary,
// and its settings JSON.
type Harness struct {
	Builtin  string
	Binary   string
	Args     []string
	Settings string
}

// RolloutSpec configures the rollout stage.
type RolloutSpec struct {
	// Policy names the policy of every rollout episode.
	Policy string
	// EpisodesPerTask is the number of episodes per task, spread over the
	// mix pairs by weight (Assign).
	EpisodesPerTask int
	// Concurrency caps episodes in flight (>= 1).
	Concurrency int
	// Retries of an episode after a retryable infrastructure failure.
	Retries int
	// EpisodeTimeout bounds one attempt (0 = none).
	EpisodeTimeout time.Duration
	// Backoff is the wait before each retry (0 = none).
	Backoff time.Duration
	// Seed is the run seed; episode seeds derive from it and the job.
	Seed uint64
	// Limits of every episode (nil = none).
	Limits *plugin.Limits
}

// SFTSpec configures the sft stage: rejection sampling with a teacher
// policy.
type SFTSpec struct {
	// Policy names the teacher.
	Policy  string
	View    string
	Harness string
	// Mode is "prefix" or "end_to_end"; Retries the retry budget k.
	Mode    string
	Retries int
	// Threshold is the least reward an accepted turn has (0 = 1).
	Threshold float64
	// Compare also runs the other mode at the same budget and records it
	// in metrics (the prefix vs end-to-end figures).
	Compare bool
	// Concurrency caps tasks sampled at once (>= 1).
	Concurrency int
	Seed        uint64
}

// GRPOSpec configures the grpo stage.
type GRPOSpec struct {
	Policy   string
	View     string
	Harness  string
	G        int
	Eps      float64
	Level    string // "atomic_turn" or "trajectory"
	Continue string // "first", "random" or "reference"
	Mask     bool
	// Reward is "binary" (atomic-task completion), "score" (the mean
	// checkpoint score after the turn) or an FTRL variant ("ftrl_f1",
	// "ftrl_p", "ftrl_r", "ftrl_precision").
	Reward string
	// Filter, when set, drops tasks whose executable and rubric scores
	// disagree before the stage runs (needs rollout episodes).
	Filter *train.FilterConfig
	// Concurrency caps tasks in flight (>= 1); forks within a group run
	// concurrently as the driver decides.
	Concurrency int
	Seed        uint64
}

func (s *Spec) has(stage string) bool {
	for _, st := range s.Stages {
		if st == stage {
			return true
		}
	}
	return false
}

func (s *Spec) validate() error {
	pos := map[string]int{}
	for i, st := range Stages {
		pos[st] = i
	}
	last := -1
	for _, st := range s.Stages {
		p, ok := pos[st]
		if !ok {
			return fmt.Errorf("pipeline: unknown stage %q", st)
		}
		if p <= last {
			return fmt.Errorf("pipeline: stage %q out of order or repeated (order: %v)", st, Stages)
		}
		last = p
	}
	if s.Server == nil || s.Launcher == nil {
		return fmt.Errorf("pipeline: a server and a launcher are required")
	}
	if s.has(StageRollout) {
		if _, ok := s.Policies[s.Rollout.Policy]; !ok {
			return fmt.Errorf("pipeline: rollout policy %q is not declared", s.Rollout.Policy)
		}
		if len(s.Mix) == 0 {
			return fmt.Errorf("pipeline: the rollout stage needs a mix of view x harness pairs")
		}
		for _, p := range s.Mix {
			if _, ok := s.Harnesses[p.Harness]; !ok {
				return fmt.Errorf("pipeline: mix names harness %q, which is not declared", p.Harness)
			}
		}
		if s.Rollout.EpisodesPerTask < 1 {
			return fmt.Errorf("pipeline: episodes per task must be at least 1, got %d", s.Rollout.EpisodesPerTask)
		}
	}
	if s.has(StageSFT) {
		if s.SFT == nil {
			return fmt.Errorf("pipeline: the sft stage needs sft settings")
		}
		if _, ok := s.Policies[s.SFT.Policy]; !ok {
			return fmt.Errorf("pipeline: sft policy %q is not declared", s.SFT.Policy)
		}
		if _, ok := s.Harnesses[s.SFT.Harness]; !ok {
			return fmt.Errorf("pipeline: sft harness %q is not declared", s.SFT.Harness)
		}
	}
	if s.has(StageGRPO) {
		if s.GRPO == nil {
			return fmt.Errorf("pipeline: the grpo stage needs grpo settings")
		}
		if _, ok := s.Policies[s.GRPO.Policy]; !ok {
			return fmt.Errorf("pipeline: grpo policy %q is not declared", s.GRPO.Policy)
		}
		if _, ok := s.Harnesses[s.GRPO.Harness]; !ok {
			return fmt.Errorf("pipeline: grpo harness %q is not declared", s.GRPO.Harness)
		}
	}
	return nil
}

// harness resolves a configured harness name to a running plugin.
func (s *Spec) harness(ctx context.Context, name string) (plugin.Harness, error) {
	h, ok := s.Harnesses[name]
	if !ok {
		return nil, fmt.Errorf("harness %q is not declared", name)
	}
	if h.Binary != "" {
		return s.Launcher.Binary(ctx, h.Binary, h.Args...)
	}
	return s.Launcher.Builtin(ctx, h.Builtin)
}

func (s *Spec) settings() map[string]string {
	out := map[string]string{}
	for name, h := range s.Harnesses {
		if h.Settings != "" {
			out[name] = h.Settings
		}
	}
	return out
}
