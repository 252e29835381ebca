package pipeline

import (
	"context"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/plugins/host"
)

// What a long-lived caller (the rollout service, internal/service) needs
// to run the sft and grpo stages' work for one task at a time over a
// built Spec, with a policy it chooses per request, exactly as Run's
// stages do.

// TrainEnvFor is the training environment over the spec's server,
// launcher, harnesses, system prompts, limits and harness settings, with
// turn building each candidate turn's policy. refs is the reference-replay
// cache shared by every caller over the same server (nil = the env's own).
func (s *Spec) TrainEnvFor(turn func(host.TurnInput) (model.Policy, error), refs *host.ReferenceCache) *host.TrainEnv {
	return &host.TrainEnv{
		Server:       s.Server,
		Launcher:     s.Launcher,
		Harness:      s.harness,
		Policy:       turn,
		References:   refs,
		SystemPrompt: s.SystemPrompt,
		Limits:       s.Rollout.Limits,
		Settings:     s.settings(),
	}
}

// GRPOConfigFor is the train.GRPOConfig the grpo stage runs task taskID
// with under gp: group size, eps, level, continuation, masking (Mask
// false = train.GRPOConfig.NoMask), the reward by name (see RewardNames),
// and the episode and continuation seeds derived from gp.Seed and the task
// id.
func GRPOConfigFor(gp *GRPOSpec, taskID string) train.GRPOConfig {
	cfg := train.GRPOConfig{
		G: gp.G, Eps: gp.Eps, Level: gp.Level, Continue: gp.Continue,
		Episode: train.EpisodeOptions{View: gp.View, Harness: gp.Harness, Seed: seedOf(gp.Seed, "grpo/"+taskID)},
		Seed:    seedOf(gp.Seed, "grpo-continue/"+taskID),
	}
	cfg.NoMask = !gp.Mask
	cfg.Reward = rewardFunc(gp.Reward)
	return cfg
}

// SamplingConfigFor is the train.SamplingConfig the sft stage runs task
// taskID with in mode (train.ModePrefix or train.ModeEndToEnd) under sp.
func SamplingConfigFor(sp *SFTSpec, mode, taskID string) train.SamplingConfig {
	return train.SamplingConfig{
		Mode:      mode,
		Retries:   sp.Retries,
		Threshold: sp.Threshold,
		Episode:   train.EpisodeOptions{View: sp.View, Harness: sp.Harness, Seed: seedOf(sp.Seed, "sft/"+taskID)},
	}
}

// EndpointPolicy is the policy of an endpoint block with its sampling, as
// a config's `policy "NAME" { endpoint {...} sampling {...} }` makes it:
// the OpenAI-compatible client (retries, timeout, concurrency cap, extra
// body), unset request sampling fields filled from s, and a configured
// sampling seed mixed with each episode's or candidate's seed. The API
// key is read with getenv from e.APIKeyEnv (nil getenv = none).
func EndpointPolicy(e *config.Endpoint, s config.Sampling, getenv func(string) string) (Policy, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return makePolicy(config.Policy{Endpoint: e, Sampling: s}, getenv)
}

// CheckResume fails when harness name cannot resume a conversation, which
// turn-by-turn sampling (sft, grpo) needs; stage names the caller in the
// error.
func (s *Spec) CheckResume(ctx context.Context, stage, name string) error {
	r := &runner{spec: s}
	return r.checkResume(ctx, stage, name)
}
