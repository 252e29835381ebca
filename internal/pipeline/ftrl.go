package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/synth/ftrl"
	"github.com/weft-dev/weft/core/train"
)

// FTRLOptions builds the options of core/synth/ftrl.Run from a config
// with an ftrl block, writing into dir: the databases, scenarios, seed,
// mode and G of the block; the episode faults from the rollout policy's
// scripted faults plus empty_reply, the GRPO candidates' from
// group_policy's plus group_empty_reply, parallel_calls for both. Errors: no ftrl block, an
// unknown mode, a policy that is not declared or not scripted (config
// checks these; a hand-built Config may not).
func FTRLOptions(cfg *config.Config, dir string) (ftrl.Options, error) {
	f := cfg.FTRL
	if f == nil {
		return ftrl.Options{}, fmt.Errorf("pipeline: %s has no ftrl block", cfg.File)
	}
	mode, err := train.ParseFTRLMode(f.Mode)
	if err != nil {
		return ftrl.Options{}, fmt.Errorf("pipeline: ftrl: %w", err)
	}
	faults := func(name string, empty float64) (ftrl.Faults, error) {
		for _, p := range cfg.Policies {
			if p.Name == name {
				if p.Scripted == nil {
					return ftrl.Faults{}, fmt.Errorf("pipeline: ftrl: policy %q is not scripted", name)
				}
				return ftrl.Faults{Faults: p.Scripted.Faults, EmptyReply: empty, ParallelCalls: f.ParallelCalls}, nil
			}
		}
		return ftrl.Faults{}, fmt.Errorf("pipeline: ftrl: no policy %q", name)
	}
	ep, err := faults(f.Policy, f.EmptyReply)
	if err != nil {
		return ftrl.Options{}, err
	}
	gp, err := faults(f.GroupPolicy, f.GroupEmptyReply)
	if err != nil {
		return ftrl.Options{}, err
	}
	return ftrl.Options{
		RetailSeed: f.RetailSeed, AirlineSeed: f.AirlineSeed, Scenarios: f.Scenarios, Seed: f.Seed,
		Faults: ep, GroupFaults: gp, G: f.GroupSize, MaxTurns: f.MaxTurns, Mode: mode, Out: dir, NoServerDirs: !f.ServerDirs,
	}, nil
}

// RunFTRL is the ftrl stage: core/synth/ftrl.Run with FTRLOptions into
// dir (the run folder), the resolved config written beside the outputs
// as FileConfig. It returns the run's summary.
func RunFTRL(ctx context.Context, cfg *config.Config, dir string) (*ftrl.Summary, error) {
	o, err := FTRLOptions(cfg, dir)
	if err != nil {
		return nil, err
	}
	sum, err := ftrl.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(dir, FileConfig), cfg.Resolved()); err != nil {
		return nil, err
	}
	return sum, nil
}
