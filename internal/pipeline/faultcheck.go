package pipeline

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
)

// FaultCheck is the check of a run folder of the scripted policy against
// the faults it planted (report.Episode.Faults): each scored episode's
// failed checkpoints compared with the checkpoints its faults must and may
// fail (scripted.Expect, the rule of the scripted.Class* constants), and
// every failed checkpoint's attribution. Counts are episodes unless named
// otherwise.
type FaultCheck struct {
	Episodes int `json:"episodes"`
	// Scored excludes infrastructure failures (which are problems).
	Scored int `json:"scored"`
	// R1 counts the episodes with R = 1.
	R1 int `json:"r1"`
	// WithFaults counts the episodes with at least one planted fault;
	// Faults the planted faults, ByKind and ByClass them by kind and class.
	WithFaults int            `json:"with_faults"`
	Faults     int            `json:"faults"`
	ByKind     map[string]int `json:"by_kind,omitempty"`
	ByClass    map[string]int `json:"by_class,omitempty"`
	// Failed counts the episodes with a failed checkpoint,
	// FailedCheckpoints the failed checkpoints over all episodes.
	Failed            int `json:"failed"`
	FailedCheckpoints int `json:"failed_checkpoints"`
	// Matched counts the episodes whose failed set F satisfies
	// Must ⊆ F ⊆ Must ∪ May; Exact those with F = Must (a subset of
	// Matched); Mismatched = Scored - Matched.
	Matched    int `json:"matched"`
	Exact      int `json:"exact"`
	Mismatched int `json:"mismatched"`
	// MayFailed and MayPassed count the checkpoints the faults may fail
	// (Expectation.May) that failed and that passed.
	MayFailed int `json:"may_failed"`
	MayPassed int `json:"may_passed"`
	// Attributions counts the failed checkpoints' verdicts by class.
	Attributions map[string]int `json:"attributions,omitempty"`
	// Problems are the mismatches, infrastructure failures and
	// attributions not to the policy, one line each naming the episode.
	Problems []string `json:"problems,omitempty"`
}

// CheckFaults checks the episodes eps of a scripted run over tasks (see
// FaultCheck). An episode without faults must pass every checkpoint (the
// gold replay). Errors: an episode of a task not in tasks, or what
// scripted.Expect returns for a task and its faults.
func CheckFaults(tasks []*task.Task, eps []report.Episode) (*FaultCheck, error) {
	byID := map[string]*task.Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	fc := &FaultCheck{ByKind: map[string]int{}, ByClass: map[string]int{}, Attributions: map[string]int{}}
	for _, ep := range eps {
		fc.Episodes++
		t := byID[ep.Task]
		if t == nil {
			return nil, fmt.Errorf("episode %s: no task %q", ep.Key, ep.Task)
		}
		if !ep.Scored() {
			fc.Problems = append(fc.Problems, fmt.Sprintf("%s: not scored (infrastructure failure %v)", ep.Key, ep.Infra))
			continue
		}
		fc.Scored++
		if *ep.Score == 1 {
			fc.R1++
		}
		exp, err := scripted.Expect(t, ep.View, ep.Faults)
		if err != nil {
			return nil, fmt.Errorf("episode %s: %w", ep.Key, err)
		}
		if len(ep.Faults) > 0 {
			fc.WithFaults++
		}
		for _, o := range exp.Faults {
			fc.Faults++
			fc.ByKind[o.Fault.Kind]++
			fc.ByClass[o.Class]++
		}
		var failed []string
		bad := map[string]bool{}
		for _, c := range ep.Checkpoints {
			if c.Score < 1 {
				failed = append(failed, c.Name)
				bad[c.Name] = true
			}
		}
		if len(failed) > 0 {
			fc.Failed++
			fc.FailedCheckpoints += len(failed)
		}
		for _, cp := range exp.May {
			if bad[cp] {
				fc.MayFailed++
			} else {
				fc.MayPassed++
			}
		}
		ok, exact, problems := exp.Match(failed)
		if ok {
			fc.Matched++
		}
		if exact {
			fc.Exact++
		}
		for _, p := range problems {
			fc.Problems = append(fc.Problems, ep.Key+": "+p)
		}
		for _, a := range ep.Attributions {
			fc.Attributions[string(a.Class)]++
			if a.Class != "policy" || !bad[a.Checkpoint] {
				fc.Problems = append(fc.Problems, fmt.Sprintf("%s: checkpoint %s (failed: %v) blamed on %s, want the policy", ep.Key, a.Checkpoint, bad[a.Checkpoint], a.Class))
			}
		}
	}
	fc.Mismatched = fc.Scored - fc.Matched
	return fc, nil
}

// ComposeCheck is the check of `make compose-run`: a gold run and a run
// with planted faults of the same configuration (configs/synth-compose.hcl).
type ComposeCheck struct {
	Gold   *FaultCheck `json:"gold"`
	Faults *FaultCheck `json:"faults"`
	// SFTRecords counts the faults run's accepted SFT trajectories by
	// mode (the sft block's mode and the other one the stage runs for
	// comparison; sft.jsonl keys "mode/task"), GRPOGroups its GRPO groups
	// and GRPONonZero those with a non-zero advantage.
	SFTRecords  map[string]int `json:"sft_records"`
	GRPOGroups  int            `json:"grpo_groups"`
	GRPONonZero int            `json:"grpo_nonzero_groups"`
	// Problems are every check that failed (gold below R = 1, a fault
	// mismatch, no SFT or GRPO data), the FaultChecks' problems included.
	Problems []string `json:"problems,omitempty"`
}

// CheckComposeRuns checks the run folders gold (no faults) and faults
// (planted faults) of one configuration, each read with the tasks it
// ran (its tasks.weft.json): gold R = 1 on every episode and no planted
// fault; every faults episode's failed checkpoints as its faults predict
// (CheckFaults), some episode failing; accepted SFT records and GRPO groups
// with a non-zero advantage in the faults folder. Errors: a folder that
// does not read.
func CheckComposeRuns(gold, faults string) (*ComposeCheck, error) {
	out := &ComposeCheck{SFTRecords: map[string]int{}}
	var err error
	if out.Gold, err = checkFolder(gold); err != nil {
		return nil, err
	}
	if out.Faults, err = checkFolder(faults); err != nil {
		return nil, err
	}
	g, f := out.Gold, out.Faults
	if g.Episodes == 0 || g.R1 != g.Episodes {
		out.Problems = append(out.Problems, fmt.Sprintf("gold: %d of %d episodes at R = 1", g.R1, g.Episodes))
	}
	if g.Faults > 0 {
		out.Problems = append(out.Problems, fmt.Sprintf("gold: %d planted faults, want none (faults_scale = 0)", g.Faults))
	}
	if f.Failed == 0 {
		out.Problems = append(out.Problems, "faults: no episode failed (were the faults applied?)")
	}
	for _, p := range g.Problems {
		out.Problems = append(out.Problems, "gold: "+p)
	}
	for _, p := range f.Problems {
		out.Problems = append(out.Problems, "faults: "+p)
	}
	if _, err := openJournalRead(filepath.Join(faults, FileSFT), func(line []byte) error {
		var l sftLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		if l.Result != nil && l.Result.Accepted {
			mode, _, _ := strings.Cut(l.Key, "/")
			out.SFTRecords[mode]++
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := openJournalRead(filepath.Join(faults, FileGRPO), func(line []byte) error {
		var l grpoLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		if l.Result == nil {
			return nil
		}
		for _, gr := range l.Result.Groups {
			out.GRPOGroups++
			for _, c := range gr.Candidates {
				if math.Abs(c.Advantage) > 0 {
					out.GRPONonZero++
					break
				}
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if len(out.SFTRecords) == 0 {
		out.Problems = append(out.Problems, "faults: no accepted SFT record")
	}
	if out.GRPONonZero == 0 {
		out.Problems = append(out.Problems, "faults: no GRPO group with a non-zero advantage")
	}
	return out, nil
}

// checkFolder runs CheckFaults over a run folder's episodes and tasks.
func checkFolder(dir string) (*FaultCheck, error) {
	tasks, err := task.LoadFile(filepath.Join(dir, FileTasks))
	if err != nil {
		return nil, err
	}
	eps, err := ReadEpisodes(dir)
	if err != nil {
		return nil, err
	}
	return CheckFaults(tasks, eps)
}

// ReadEpisodes reads a run folder's episodes.jsonl (the last record of a
// key wins, as a resumed run leaves them), sorted by key. Errors: a line
// that does not decode.
func ReadEpisodes(dir string) ([]report.Episode, error) {
	by := map[string]report.Episode{}
	if _, err := openJournalRead(filepath.Join(dir, FileEpisodes), func(line []byte) error {
		var e report.Episode
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		by[e.Key] = e
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]report.Episode, 0, len(by))
	for _, e := range by {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
