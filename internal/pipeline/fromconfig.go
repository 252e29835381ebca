package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/spec"
)

// Env is what FromConfig needs from its caller.
type Env struct {
	// Runtime compiles and runs the modules (the caller closes it).
	Runtime *module.Runtime
	// Registry is used for modules without a registry of their own (nil =
	// module.DefaultRegistryDir()).
	Registry *module.Registry
	// Launcher starts harness plugins (nil = host.DefaultCommand, weft
	// re-executing itself).
	Launcher *host.Launcher
	// Log receives module build output (nil = discarded).
	Log io.Writer
	// Getenv reads API keys (nil = os.Getenv).
	Getenv func(string) string
}

// Built is a Spec with the resources FromConfig opened.
type Built struct {
	*Spec
	// Dir is the run folder the config names.
	Dir string
	// Modules maps each module block's name to its bundle's digest in the
	// registry (what a weft worker pins the same modules by).
	Modules map[string]string
	// Close releases the server, the launcher and the verifier and
	// attributor plugin processes.
	Close func() error
}

// FromConfig builds the modules, opens a MegaMCP server over them, loads
// the tasks and makes the policies and harnesses of cfg. Errors name the
// config block at fault.
func FromConfig(ctx context.Context, cfg *config.Config, env Env) (*Built, error) {
	// Task ids are checked (with source ranges) before anything is built.
	if diags := checkTaskIDs(cfg); diags.HasErrors() {
		return nil, diagError(diags)
	}
	if env.Runtime == nil {
		return nil, errors.New("pipeline: FromConfig: no module runtime")
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	fail := func(err error) (*Built, error) {
		closeAll()
		return nil, err
	}

	reg := env.Registry
	if reg == nil {
		var err error
		if reg, err = module.OpenRegistry(module.DefaultRegistryDir()); err != nil {
			return nil, err
		}
	}
	names := map[string]string{} // module block name -> registry ref
	digests := map[string]string{}
	for _, m := range cfg.Modules {
		ref, err := installModule(ctx, env, reg, m)
		if err != nil {
			return fail(fmt.Errorf("module %q: %w", m.Name, err))
		}
		names[m.Name] = ref
		if digests[m.Name], err = reg.Resolve(ref); err != nil {
			return fail(fmt.Errorf("module %q: %w", m.Name, err))
		}
	}
	srv, err := megamcp.Open(ctx, megamcp.Config{Runtime: env.Runtime, Registry: reg, CheckpointInterval: -1})
	if err != nil {
		return fail(err)
	}
	closers = append(closers, srv.Close)

	spec := &Spec{
		Name:      filepath.Base(cfg.File),
		Config:    cfg.Resolved(),
		Stages:    cfg.Stages,
		Server:    srv,
		Policies:  map[string]Policy{},
		Harnesses: map[string]Harness{},
		Formats:   cfg.Output.Formats,
	}
	if ext := filepath.Ext(spec.Name); ext != "" {
		spec.Name = spec.Name[:len(spec.Name)-len(ext)]
	}
	if env.Launcher != nil {
		spec.Launcher = env.Launcher
	} else {
		spec.Launcher = &host.Launcher{}
		closers = append(closers, func() error { spec.Launcher.Close(); return nil })
	}

	prompts := map[*task.Task]string{}
	for _, ts := range cfg.Tasks {
		tasks, prompt, err := loadTaskSet(ctx, ts, names, reg, srv)
		if err != nil {
			return fail(fmt.Errorf("tasks %q: %w", ts.Name, err))
		}
		for _, t := range tasks {
			prompts[t] = prompt
			spec.Tasks = append(spec.Tasks, t)
		}
	}
	spec.SystemPrompt = func(t *task.Task) string { return prompts[t] }

	for _, p := range cfg.Policies {
		pol, err := makePolicy(p, getenv)
		if err != nil {
			return fail(fmt.Errorf("policy %q: %w", p.Name, err))
		}
		spec.Policies[p.Name] = pol
	}
	if j := cfg.Verifier.Judge; j != "" {
		m := spec.Policies[j].Model
		if m == nil {
			return fail(fmt.Errorf("verifier: judge %q must be an endpoint policy (a scripted policy cannot judge rubric items)", j))
		}
		spec.Judge = verify.NewModelJudge(m)
	}
	if v := cfg.Verifier; v.Binary != "" {
		c, err := plugin.Start(ctx, plugin.StartConfig{Cmd: exec.Command(v.Binary, v.Args...), Name: "verifier"})
		if err != nil {
			return fail(fmt.Errorf("verifier %s: %w", v.Binary, err))
		}
		closers = append(closers, func() error { c.Kill(); return nil })
		if spec.Verifier, err = c.Verifier(); err != nil {
			return fail(fmt.Errorf("verifier %s: %w", v.Binary, err))
		}
	}
	if a := cfg.Attributor; a.Binary != "" {
		c, err := plugin.Start(ctx, plugin.StartConfig{Cmd: exec.Command(a.Binary, a.Args...), Name: "attributor"})
		if err != nil {
			return fail(fmt.Errorf("attributor %s: %w", a.Binary, err))
		}
		closers = append(closers, func() error { c.Kill(); return nil })
		if spec.Attributor, err = c.Attributor(); err != nil {
			return fail(fmt.Errorf("attributor %s: %w", a.Binary, err))
		}
	}
	for _, h := range cfg.Harnesses {
		settings := string(h.Settings)
		if settings == "{}" {
			settings = ""
		}
		spec.Harnesses[h.Name] = Harness{Builtin: h.Builtin, Binary: h.Binary, Args: h.Args, Settings: settings}
	}
	for _, e := range cfg.Mix {
		spec.Mix = append(spec.Mix, Pair{View: e.View, Harness: e.Harness, Weight: e.Weight})
	}
	ro := cfg.Rollout
	spec.Rollout = RolloutSpec{Policy: ro.Policy, EpisodesPerTask: ro.EpisodesPerTask, Concurrency: ro.Concurrency,
		Retries: ro.Retries, EpisodeTimeout: ro.EpisodeTimeout, Backoff: ro.Backoff, Seed: ro.Seed}
	if ro.MaxTurns > 0 || ro.MaxToolCalls > 0 || ro.TurnTimeout > 0 || ro.EpisodeTimeout > 0 {
		spec.Rollout.Limits = &plugin.Limits{MaxTurns: int32(ro.MaxTurns), MaxToolCalls: int32(ro.MaxToolCalls),
			TurnTimeoutMs: ro.TurnTimeout.Milliseconds(), EpisodeTimeoutMs: ro.EpisodeTimeout.Milliseconds()}
	}
	spec.SFT, spec.GRPO = trainSpecs(cfg)
	if cfg.Verifier.Basis == task.BasisTau2 {
		for _, t := range spec.Tasks {
			if err := task.ApplyTau2Basis(t); err != nil {
				return fail(fmt.Errorf("verifier: basis %q: %w", task.BasisTau2, err))
			}
		}
	}
	spec.Settings = settingsOf(cfg, spec.Tasks)
	return &Built{Spec: spec, Dir: cfg.Output.Dir, Modules: digests, Close: closeAll}, nil
}

// trainSpecs are the sft and grpo blocks of cfg as stage specs (nil for a
// block the config has not): each block's own concurrency, the rollout's
// seed.
func trainSpecs(cfg *config.Config) (*SFTSpec, *GRPOSpec) {
	var sft *SFTSpec
	var grpo *GRPOSpec
	seed := cfg.Rollout.Seed
	if s := cfg.SFT; s != nil {
		sft = &SFTSpec{Policy: s.Policy, View: s.View, Harness: s.Harness, Mode: s.Mode, Retries: s.Retries,
			Threshold: s.Threshold, Compare: true, Concurrency: s.Concurrency, Seed: seed}
	}
	if g := cfg.GRPO; g != nil {
		grpo = &GRPOSpec{Policy: g.Policy, View: g.View, Harness: g.Harness, G: g.GroupSize, Eps: g.Eps,
			Level: g.Level, Continue: g.Continue, Mask: g.Mask, Reward: g.Reward, Concurrency: g.Concurrency, Seed: seed}
		if f := g.Filter; f != nil {
			fc := *f // the spec owns its copy
			grpo.Filter = &fc
		}
	}
	return sft, grpo
}

// installModule builds or reads module m into reg and tags it
// "<name>:latest"; it returns the reference sessions use.
func installModule(ctx context.Context, env Env, reg *module.Registry, m config.Module) (string, error) {
	switch {
	case m.Docs != "":
		return installDocs(ctx, reg, m)
	case m.Digest != "":
		if _, _, err := reg.Get(m.Digest); err != nil {
			return "", err
		}
		return m.Digest, reg.Tag(m.Name, "latest", m.Digest)
	case m.Bundle != "":
		b, err := os.ReadFile(m.Bundle)
		if err != nil {
			return "", err
		}
		d, err := reg.PutTar(b, "")
		if err != nil {
			return "", err
		}
		return m.Name, reg.Tag(m.Name, "latest", d)
	}
	if module.IsServerDir(m.Path) {
		return installServer(reg, m)
	}
	// The seed file first (the config check, again: it may have changed
	// since the config was loaded), so a bad one is named as a seed file,
	// not reported as an invalid module bundle after the compile.
	if m.Seed != "" {
		if err := config.CheckSeedFile(m.Seed); err != nil {
			return "", err
		}
	}
	opts := module.BuildOptions{Schema: m.Schema, Seed: m.Seed, Log: env.Log}
	b, err := module.Build(ctx, env.Runtime, m.Path, opts)
	if err != nil {
		if m.Seed != "" && errors.Is(err, module.ErrInvalidBundle) && strings.Contains(err.Error(), ": seed: ") {
			// Rows that do not fit the schema: say which file they are in.
			return "", fmt.Errorf("seed file %s: %s", m.Seed, strings.TrimPrefix(err.Error(), module.ErrInvalidBundle.Error()+": seed: "))
		}
		return "", err
	}
	d, err := reg.Put(b)
	if err != nil {
		return "", err
	}
	return m.Name, reg.Tag(m.Name, "latest", d)
}

// installDocs synthesizes module m from its documentation (core/synth:
// validated, revised, stored only when it passes) and tags it m.Name.
func installDocs(ctx context.Context, reg *module.Registry, m config.Module) (string, error) {
	all, err := synth.LoadDocs(m.Docs)
	if err != nil {
		return "", err
	}
	docs := all[0]
	if len(all) > 1 {
		found := false
		for _, d := range all {
			if d.Name == m.Name {
				docs, found = d, true
			}
		}
		if !found {
			return "", fmt.Errorf("%s holds the docs of %d servers and none is named %q (the module's label)", m.Docs, len(all), m.Name)
		}
	}
	var syn synth.Synthesizer = &synth.Deterministic{}
	if m.Synthesizer == "scripted" {
		if syn, err = synth.LoadScript(m.Script); err != nil {
			return "", err
		}
	}
	_, _, d, err := synth.Register(ctx, syn, docs, reg, synth.ReviseOptions{})
	if err != nil {
		return "", err
	}
	return m.Name, reg.Tag(m.Name, "latest", d)
}

// installServer bundles the synthesized server of spec directory m.Path
// (server.json, sdk/spec) on reg's interpreter module and tags it
// "<name>:latest": nothing is compiled. The spec carries its own schema
// and seed, so a seed attribute (or a schema other than the directory's
// own schema.sql, the config's default) is an error; so is a registry
// without the interpreter (module.ErrNoInterpreter says how to store it).
func installServer(reg *module.Registry, m config.Module) (string, error) {
	if m.Seed != "" || (m.Schema != "" && filepath.Clean(m.Schema) != filepath.Join(filepath.Clean(m.Path), "schema.sql")) {
		return "", fmt.Errorf("%s is a synthesized server's spec directory (server.json): its schema and seed come from server.json, not the module block", m.Path)
	}
	s, err := spec.Load(m.Path)
	if err != nil {
		return "", err
	}
	interp, err := module.ResolveInterpreter(reg)
	if err != nil {
		return "", err
	}
	b, err := module.ServerBundle(s, interp)
	if err != nil {
		return "", err
	}
	d, err := reg.Put(b)
	if err != nil {
		return "", err
	}
	return m.Name, reg.Tag(m.Name, "latest", d)
}

// Tau2Tools is the tool set of modules (registry references) for the
// tau2 conversion: every tool of their manifests, read-only when it has
// MCP's readOnlyHint annotation. A tool two modules declare with different
// hints is an error; so is a set of modules with no tools.
func Tau2Tools(reg *module.Registry, refs []string) (task.Tau2Tools, error) {
	out := task.Tau2Tools{}
	from := map[string]string{}
	for _, ref := range refs {
		b, _, err := reg.Get(ref)
		if err != nil {
			return nil, err
		}
		for _, t := range b.Manifest.Tools {
			ro := t.Annotations != nil && t.Annotations.ReadOnlyHint
			if prev, seen := out[t.Name]; seen && prev != ro {
				return nil, fmt.Errorf("tool %q: module %s gives readOnlyHint %v, module %s %v", t.Name, from[t.Name], prev, ref, ro)
			}
			out[t.Name], from[t.Name] = ro, ref
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("modules %v declare no tools to convert tau2 tasks against (give tau2_tools)", refs)
	}
	return out, nil
}

// loadTaskSet loads and filters the tasks of ts. tau2 tasks are converted
// with the read-only tools of ts.Tau2Tools, or else of the task set's
// modules' manifests (Tau2Tools), and, when srv is not nil, with their gold
// actions replayed on srv (a gold action the module refuses starts no atomic
// task, as tau2 ignores it; see task.FromTau2).
func loadTaskSet(ctx context.Context, ts config.TaskSet, names map[string]string, reg *module.Registry, srv *megamcp.Server) ([]*task.Task, string, error) {
	var mods []string
	for _, m := range ts.Modules {
		mods = append(mods, names[m])
	}
	var out []*task.Task
	if ts.Tau2 != "" {
		var tools task.Tau2Tools
		var err error
		if ts.Tau2Tools != "" {
			tools, err = task.LoadTau2Tools(ts.Tau2Tools)
		} else {
			tools, err = Tau2Tools(reg, mods)
		}
		if err != nil {
			return nil, "", err
		}
		opts := task.Tau2Options{Modules: mods, Tools: tools, Source: ts.Name}
		if srv != nil {
			opts.Replay = host.GoldReplay(ctx, srv, mods)
		}
		tasks, err := task.ConvertTau2File(ts.Tau2, opts)
		if err != nil {
			return nil, "", err
		}
		out = append(out, tasks...)
	}
	for _, f := range ts.Weft {
		tasks, err := task.LoadFile(f)
		if err != nil {
			return nil, "", err
		}
		for _, t := range tasks {
			if len(t.Modules) == 0 {
				t.Modules = mods
			}
			// A task with its own starting state (task.Task.InitialState)
			// starts from that state, imported as a version.
			if len(t.InitialState) > 0 && srv != nil {
				vid, err := srv.ImportVersion(ctx, t.InitialState)
				if err != nil {
					return nil, "", fmt.Errorf("task %s: initial_state: %w", t.ID, err)
				}
				t.InitialVersion = vid
			}
		}
		out = append(out, tasks...)
	}
	out, missing := filterTasks(out, func(t *task.Task) string { return t.ID }, ts.IDs, ts.Limit)
	if len(missing) > 0 {
		return nil, "", fmt.Errorf("ids: no task %q", ts.IDs[missing[0]])
	}
	if srv != nil {
		if err := checkCallTools(ctx, srv, out); err != nil {
			return nil, "", err
		}
	}
	prompt := ""
	if ts.SystemPrompt != "" {
		b, err := os.ReadFile(ts.SystemPrompt)
		if err != nil {
			return nil, "", err
		}
		prompt = string(b)
	}
	return out, prompt, nil
}

// checkCallTools refuses, at load, a task whose call check names a tool
// its group exposes only namespaced (verify.CheckCallTools), learning each
// distinct group's exposed names from one session on srv.
func checkCallTools(ctx context.Context, srv *megamcp.Server, ts []*task.Task) error {
	groups := map[string][]string{}
	for _, t := range ts {
		key := strings.Join(t.Modules, "\x00")
		names, ok := groups[key]
		if !ok {
			info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: t.Modules})
			if err != nil {
				return fmt.Errorf("task %s: modules %v: %w", t.ID, t.Modules, err)
			}
			ss, err := srv.Session(info.ID)
			if err == nil {
				for _, gt := range ss.Group().Tools() {
					names = append(names, gt.Name)
				}
			}
			srv.Delete(ctx, info.ID, 0)
			if err != nil {
				return err
			}
			groups[key] = names
		}
		if err := verify.CheckCallTools(t, names); err != nil {
			return err
		}
	}
	return nil
}

func makePolicy(p config.Policy, getenv func(string) string) (Policy, error) {
	if s := p.Scripted; s != nil {
		f := s.Faults
		base := s.Seed
		return Policy{
			Episode: func(t *task.Task, view string, seed uint64) (model.Policy, error) {
				sc, err := scripted.ScriptForView(t, view)
				if err != nil {
					return nil, err
				}
				return scripted.New(sc, f, base^seed)
			},
			Turn: host.ScriptedTurnPolicy(f),
		}, nil
	}
	e := p.Endpoint
	if e == nil {
		return Policy{}, errors.New("neither scripted nor endpoint")
	}
	c, err := endpointClient(e, getenv)
	if err != nil {
		return Policy{}, err
	}
	smp := samplingOf(p.Sampling)
	pol := sampled{c, smp}
	// A configured sampling seed would make every episode of a task, and
	// every candidate of a group, the same draw: each gets its own, the
	// configured seed XOR half its episode or candidate seed.
	seeded := func(seed uint64) model.Policy {
		if smp.Seed == nil {
			return pol
		}
		s := smp
		v := *smp.Seed ^ int64(seed>>1)
		s.Seed = &v
		return sampled{c, s}
	}
	return Policy{
		Model:   pol,
		Episode: func(_ *task.Task, _ string, seed uint64) (model.Policy, error) { return seeded(seed), nil },
		Turn:    func(in host.TurnInput) (model.Policy, error) { return seeded(in.Seed), nil },
	}, nil
}

// endpointClient is the model client of an endpoint block, its API key
// read with getenv.
func endpointClient(e *config.Endpoint, getenv func(string) string) (*model.Client, error) {
	cc := model.ClientConfig{BaseURL: e.BaseURL, Model: e.Model, RequestTimeout: e.Timeout, MaxRetries: e.MaxRetries,
		MaxConcurrency: e.MaxConcurrency}
	if e.APIKeyEnv != "" {
		cc.APIKey = getenv(e.APIKeyEnv)
	}
	if len(e.ExtraBody) > 0 {
		if err := json.Unmarshal(e.ExtraBody, &cc.ExtraBody); err != nil {
			return nil, fmt.Errorf("extra_body: %w", err)
		}
	}
	return model.NewClient(cc)
}

func samplingOf(s config.Sampling) model.Sampling {
	return model.Sampling{Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens, Seed: s.Seed,
		Stop: s.Stop, Logprobs: s.Logprobs}
}

// sampled fills each request's unset sampling fields from the policy
// block's sampling.
type sampled struct {
	p model.Policy
	s model.Sampling
}

func (s sampled) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r := *req
	if r.Sampling.Temperature == nil {
		r.Sampling.Temperature = s.s.Temperature
	}
	if r.Sampling.TopP == nil {
		r.Sampling.TopP = s.s.TopP
	}
	if r.Sampling.MaxTokens == 0 {
		r.Sampling.MaxTokens = s.s.MaxTokens
	}
	if r.Sampling.Seed == nil {
		r.Sampling.Seed = s.s.Seed
	}
	if len(r.Sampling.Stop) == 0 {
		r.Sampling.Stop = s.s.Stop
	}
	r.Sampling.Logprobs = r.Sampling.Logprobs || s.s.Logprobs
	return s.p.Generate(ctx, &r)
}
