package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/rollout"
)

// Episode is one finished rollout job: one line of episodes.jsonl.
type Episode struct {
	// Key is the job's rollout.Job.Key ("task/view/harness/policy/sample").
	Key     string `json:"key"`
	Task    string `json:"task"`
	View    string `json:"view"`
	Harness string `json:"harness"`
	Policy  string `json:"policy"`
	// Sample is the rollout index in 0..k-1.
	Sample int `json:"sample"`
	// Score is R in [0, 1]; nil when the episode ended on an
	// infrastructure failure (never 0 for one).
	Score *float64 `json:"score"`
	// Pass is Score == 1. Compute reads Score, not Pass.
	Pass bool `json:"pass"`
	// Checkpoints are the verifier's checkpoints in order, each with its
	// score r_k in [0, 1].
	Checkpoints []CheckpointScore `json:"checkpoints,omitempty"`
	// RubricScore is the judge's weighted rubric score in [0, 1], nil when
	// the task has no rubric items or no judge was configured.
	RubricScore *float64 `json:"rubric_score,omitempty"`
	// Attributions are the verdicts on the failed checkpoints.
	Attributions []attribute.Attribution `json:"attributions,omitempty"`
	// Infra is the infrastructure failure the episode ended on, nil for a
	// scored episode.
	Infra *rollout.InfraError `json:"infra,omitempty"`
	// Attempts is how many times the executor ran the job (>= 1).
	Attempts int `json:"attempts"`
	// Termination is why the harness stopped ("done", "max_turns", ...).
	Termination string `json:"termination,omitempty"`
	// Turns counts the harness's model turns, ToolCalls the tool calls it
	// made, ToolErrors those whose result was an error (is_error).
	Turns      int `json:"turns"`
	ToolCalls  int `json:"tool_calls"`
	ToolErrors int `json:"tool_errors"`
	// DurationMs is the job's wall time in milliseconds, all attempts
	// included.
	DurationMs int64 `json:"duration_ms"`
	// Faults are the faults the scripted policy planted in this episode
	// (step, kind, call, atomic task; core/model/scripted.Fault), in plan
	// order; empty for another policy or a plan without faults.
	Faults []scripted.Fault `json:"faults,omitempty"`
}

// CheckpointScore is one verifier checkpoint: the atomic task's id (or
// "overall") and its score in [0, 1].
type CheckpointScore struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// Scored reports whether the episode has a score (it did not end on an
// infrastructure failure).
func (e Episode) Scored() bool { return e.Score != nil }

// EpisodeFromOutcome builds the Episode of job from the scheduler's outcome
// out and the executor's error err (either may be nil).
//
// The identity comes from out when it is non-nil, else from job. The
// episode is an infrastructure failure (Score nil, Infra set) when out has
// no score, when out.Infra is set, or when err is non-nil: Infra is
// out.Infra, else the *rollout.InfraError err wraps, else one of kind
// rollout.KindInternal with err's message (or "no outcome" when both out
// and err are nil). Attributions are decoded from out.Attributions, and
// ToolErrors counts the tool results with is_error in out.Trajectory (the
// harness trajectory as JSON: turns[].results[].is_error); a field that does
// not decode leaves the episode's value empty (nil attributions, 0 tool
// errors) rather than failing.
func EpisodeFromOutcome(job rollout.Job, out *rollout.Outcome, err error) Episode {
	var e Episode
	if out != nil {
		e = Episode{
			Key: out.Key, Task: out.TaskID, View: out.View, Harness: out.Harness,
			Policy: out.Policy, Sample: out.Sample, Attempts: out.Attempts,
			Termination: out.Termination, Turns: out.Turns, ToolCalls: out.ToolCalls,
			DurationMs: out.DurationMs,
		}
		if out.Score != nil {
			s := *out.Score
			e.Score = &s
		}
		if out.RubricScore != nil {
			s := *out.RubricScore
			e.RubricScore = &s
		}
		for _, c := range out.Checkpoints {
			e.Checkpoints = append(e.Checkpoints, CheckpointScore{Name: c.Name, Score: c.Score})
		}
		if len(out.Attributions) > 0 {
			var as []attribute.Attribution
			if json.Unmarshal(out.Attributions, &as) == nil && len(as) > 0 {
				e.Attributions = as
			}
		}
		e.Faults = out.Faults
		e.ToolErrors = countToolErrors(out.Trajectory)
		if out.Infra != nil {
			ie := *out.Infra
			e.Infra = &ie
		}
	} else {
		e = Episode{Key: job.Key(), View: job.View, Harness: job.Harness, Policy: job.Policy, Sample: job.Sample}
		if job.Task != nil {
			e.Task = job.Task.ID
		}
	}
	if e.Infra == nil && err != nil {
		if ie, ok := rollout.IsInfra(err); ok {
			c := *ie
			e.Infra = &c
		} else {
			e.Infra = &rollout.InfraError{Kind: rollout.KindInternal, Message: err.Error()}
		}
	}
	if e.Infra == nil && e.Score == nil {
		msg := "no outcome"
		if out != nil {
			msg = "outcome has no score"
		}
		e.Infra = &rollout.InfraError{Kind: rollout.KindInternal, Message: msg}
	}
	if e.Infra != nil {
		e.Score = nil
	}
	e.Pass = e.Score != nil && *e.Score == 1
	return e
}

// trajectoryErrors is the part of the harness trajectory's JSON
// (pluginpb.Trajectory marshalled with encoding/json) that tool errors are
// counted from.
type trajectoryErrors struct {
	Turns []struct {
		Results []struct {
			IsError bool `json:"is_error"`
		} `json:"results"`
	} `json:"turns"`
}

func countToolErrors(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var t trajectoryErrors
	if json.Unmarshal(raw, &t) != nil {
		return 0
	}
	n := 0
	for _, turn := range t.Turns {
		for _, r := range turn.Results {
			if r.IsError {
				n++
			}
		}
	}
	return n
}

// WriteEpisode writes e as one JSON line (episodes.jsonl).
func WriteEpisode(w io.Writer, e Episode) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// ReadEpisodes reads episodes.jsonl: one JSON Episode per line, blank lines
// ignored, lines of any length. An invalid line is an error naming its
// 1-based line number. Unknown fields are ignored.
func ReadEpisodes(r io.Reader) ([]Episode, error) {
	br := bufio.NewReader(r)
	var eps []Episode
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return eps, err
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			var e Episode
			if uerr := json.Unmarshal(t, &e); uerr != nil {
				return eps, fmt.Errorf("episodes line %d: %w", line, uerr)
			}
			eps = append(eps, e)
		}
		if err != nil {
			return eps, nil
		}
	}
}
