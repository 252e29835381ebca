package config

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/train"
)

// Config is a decoded, validated experiment config. Paths are absolute
// (relative paths in the file are resolved against the directory of the
// config file), durations are time.Duration, and every default documented
// on the fields is filled in. Slices keep the order of the file.
type Config struct {
	// File is the absolute path of the config file.
	File string `json:"file"`
	// Dir is the directory relative paths were resolved against.
	Dir string `json:"dir"`
	// Variables are the final values of the config's variables (defaults
	// overridden by LoadOptions.Vars), each as JSON.
	Variables map[string]json.RawMessage `json:"variables"`

	Modules   []Module  `json:"modules"`
	Tasks     []TaskSet `json:"tasks"`
	Policies  []Policy  `json:"policies"`
	Harnesses []Harness `json:"harnesses"`
	// Views are the declared task views, "agentic" and/or "simuser".
	Views []string `json:"views"`
	// Mix is the rollout mix over view x harness pairs. When the file has
	// no mix block it is every declared view with every declared harness,
	// weight 1, views outer and harnesses inner, in file order.
	Mix        []MixEntry `json:"mix"`
	Verifier   Plugin     `json:"verifier"`
	Attributor Plugin     `json:"attributor"`
	Rollout    Rollout    `json:"rollout"`
	// SFT is nil when the file has no sft block.
	SFT *SFT `json:"sft,omitempty"`
	// GRPO is nil when the file has no grpo block.
	GRPO *GRPO `json:"grpo,omitempty"`
	// FTRL is nil when the file has no ftrl block.
	FTRL *FTRL `json:"ftrl,omitempty"`
	// Evolve is nil when the file has no evolve block.
	Evolve *Evolve `json:"evolve,omitempty"`
	// Compose is nil when the file has no compose block.
	Compose *Compose `json:"compose,omitempty"`
	// Stages are the pipeline stages to run, a subsequence of AllStages in
	// that order; with an ftrl block, exactly [StageFTRL].
	Stages []string `json:"stages"`
	Output Output   `json:"output"`
}

// Module is one tool module of the experiment (a `module "NAME"` block).
// Exactly one of Path, Bundle, Digest and Docs is set.
type Module struct {
	// Name is the block label: the name tasks reference the module by and
	// the name it is stored under in the registry.
	Name string `json:"name"`
	// Path is the directory of a Go tool-module package, compiled with
	// `weft module build` (GOOS=wasip1).
	Path string `json:"path,omitempty"`
	// Schema is the DDL file of the tables the module owns; with Path, ""
	// means Path/schema.sql if it exists.
	Schema string `json:"schema,omitempty"`
	// Seed is the seed-rows file, in the one generic seed format of
	// `weft module build --seed` (a weft.state/v1 export, or {table: [rows]}
	// JSON over the module's schema); "" = none. A domain's own data (a
	// tau2 db.json, say) is converted by the domain's converter first
	// (docs/design/011-domain-adapters.md).
	Seed string `json:"seed,omitempty"`
	// Bundle is a bundle tar written by `weft module build -o`.
	Bundle string `json:"bundle,omitempty"`
	// Digest is "sha256:" + 64 lowercase hex digits: a module already in
	// the registry.
	Digest string `json:"digest,omitempty"`
	// Registry is the module registry directory; "" = the default
	// ($WEFT_REGISTRY or the user cache dir).
	Registry string `json:"registry,omitempty"`
	// Docs is tool documentation the module is synthesized from
	// (core/synth: synthesized, validated, revised, registered as a
	// server bundle when it passes); Synthesizer is "deterministic" or
	// "scripted", Script the scripted synthesizer's answers.
	Docs        string `json:"docs,omitempty"`
	Synthesizer string `json:"synthesizer,omitempty"`
	Script      string `json:"script,omitempty"`
}

// TaskSet is one `tasks "NAME"` block: tasks read from a tau2-bench tasks
// file and/or weft.tasks/v1 files.
type TaskSet struct {
	Name string `json:"name"`
	// Tau2 is a tau2-bench tasks.json, converted with task.FromTau2 (one
	// atomic task per state-changing gold action); "" = none.
	Tau2 string `json:"tau2,omitempty"`
	// Tau2Tools is the domain's tau2 tools.json (task.LoadTau2Tools), whose
	// read_only flags say which gold actions change the state; "" = the
	// readOnlyHint annotations of the task set's modules' manifests.
	Tau2Tools string `json:"tau2_tools,omitempty"`
	// Weft are weft.tasks/v1 files.
	Weft []string `json:"weft,omitempty"`
	// Modules name the module blocks the tasks run on (tau2 tasks get them
	// as task.Tau2Options.Modules). Default: every declared module.
	Modules []string `json:"modules"`
	// SystemPrompt is a file holding the domain policy the harness puts in
	// the agent's system prompt; "" = none.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// IDs keeps only the tasks with these ids (the tau2 id for tau2 tasks);
	// empty = all.
	IDs []string `json:"ids,omitempty"`
	// Limit keeps the first Limit tasks after the IDs filter; 0 = all.
	Limit int `json:"limit"`
	// Source is where the block is in the file, for errors found after
	// decoding (a duplicate task id across files, an unknown id).
	Source *Source `json:"-"`
}

// Source is where a block is in the config file, kept so that problems
// found after decoding (by loading the files it names, or asking a plugin)
// are diagnostics with source ranges like the decoder's own.
type Source struct {
	// Block is the block's header.
	Block hcl.Range
	// Attrs are the ranges of the attributes' values.
	Attrs map[string]hcl.Range
	// Elems are the element ranges of list attributes written as list
	// literals.
	Elems map[string][]hcl.Range
}

// Attr is the range of attribute name's value, else the block's header
// (also for a nil Source: the zero range).
func (s *Source) Attr(name string) hcl.Range {
	if s == nil {
		return hcl.Range{}
	}
	if r, ok := s.Attrs[name]; ok {
		return r
	}
	return s.Block
}

// Elem is the range of element i of list attribute name, else Attr(name).
func (s *Source) Elem(name string, i int) hcl.Range {
	if s != nil && i < len(s.Elems[name]) {
		return s.Elems[name][i]
	}
	return s.Attr(name)
}

// Policy is one `policy "NAME"` block. Exactly one of Endpoint and Scripted
// is set.
type Policy struct {
	Name     string    `json:"name"`
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	Scripted *Scripted `json:"scripted,omitempty"`
	// Sampling applies to every request of an endpoint policy.
	Sampling Sampling `json:"sampling"`
	// Source is where the block is in the file.
	Source *Source `json:"-"`
}

// Endpoint is an OpenAI-compatible chat-completions endpoint (vLLM, SGLang,
// Ollama, llama.cpp server); its fields map to model.ClientConfig.
type Endpoint struct {
	// BaseURL is the API root including the version path, e.g.
	// "http://127.0.0.1:8000/v1". Required, http or https.
	BaseURL string `json:"base_url"`
	// Model is the request's "model" field. Required.
	Model string `json:"model"`
	// APIKeyEnv names the environment variable `weft run` reads the API key
	// from; "" = no key. The key itself is never in the config.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Timeout bounds each HTTP attempt (ClientConfig.RequestTimeout);
	// 0 = the client's default.
	Timeout time.Duration `json:"timeout"`
	// MaxRetries of a retryable failure (ClientConfig.MaxRetries);
	// 0 = the client's default, -1 = none.
	MaxRetries int `json:"max_retries"`
	// MaxConcurrency caps requests in flight; 0 = no cap.
	MaxConcurrency int `json:"max_concurrency"`
	// ExtraBody is a JSON object merged into every request body
	// (ClientConfig.ExtraBody); nil = none.
	ExtraBody json.RawMessage `json:"extra_body,omitempty"`
	// Source is where the endpoint block is in the file, for the
	// preflight's probe of the endpoint (internal/pipeline.Preflight).
	Source *Source `json:"-"`
}

// Scripted is the offline scripted policy (core/model/scripted): it
// follows each task's reference solution with seeded faults.
type Scripted struct {
	// Seed of the fault draws (scripted.New's seed). Default 1.
	Seed uint64 `json:"seed"`
	// Faults are the per-step fault probabilities of the faults block,
	// each in [0, 1], default 0: the block decodes into scripted.Faults,
	// the policy's own type.
	Faults scripted.Faults `json:"faults"`
}

// Sampling mirrors model.Sampling; nil pointers and zero values mean the
// endpoint's default.
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// MaxTokens caps each completion, in tokens; 0 = endpoint default.
	MaxTokens int      `json:"max_tokens"`
	Seed      *int64   `json:"seed,omitempty"`
	Stop      []string `json:"stop,omitempty"`
	Logprobs  bool     `json:"logprobs"`
}

// Check reports the first field of s outside the range a config's
// sampling block allows (config.Bounds of policy.sampling.*: temperature
// in [0, 2], top_p in (0, 1], max_tokens >= 0), as "FIELD must be ...,
// got V". The rollout service checks a batch's sampling with it, so a
// request and a config are held to the same bounds.
func (s Sampling) Check() error {
	if t := s.Temperature; t != nil {
		lo, hi := Bounds("policy.sampling.temperature")
		if math.IsNaN(*t) || *t < *lo || *t > *hi {
			return fmt.Errorf("temperature must be in [%g, %g], got %v", *lo, *hi, *t)
		}
	}
	if p := s.TopP; p != nil && (math.IsNaN(*p) || *p <= 0 || *p > 1) {
		return fmt.Errorf("top_p must be in (0, 1], got %v", *p)
	}
	if lo, _ := Bounds("policy.sampling.max_tokens"); float64(s.MaxTokens) < *lo {
		return fmt.Errorf("max_tokens must be at least %g (0 = the endpoint's default), got %d", *lo, s.MaxTokens)
	}
	return nil
}

// Harness is one `harness "NAME"` block. Exactly one of Builtin and Binary
// is set.
type Harness struct {
	// Name is the block label, the harness name in rollout jobs.
	Name string `json:"name"`
	// Builtin is one of BuiltinHarnesses.
	Builtin string `json:"builtin,omitempty"`
	// Binary is a harness plugin executable (sdk/plugin.Serve).
	Binary string `json:"binary,omitempty"`
	// Args are extra arguments for Binary.
	Args []string `json:"args,omitempty"`
	// Settings is the harness settings JSON object (host.Executor.Settings);
	// "{}" when not set.
	Settings json.RawMessage `json:"settings"`
	// Source is where the block is in the file, for the check of Settings
	// against the harness's settings_schema.
	Source *Source `json:"-"`
}

// Plugin is the verifier or the attributor: a built-in plugin or a plugin
// binary. Exactly one of Builtin and Binary is set.
type Plugin struct {
	// Builtin is "exec" (verifier) or "rules" (attributor), the default.
	Builtin string   `json:"builtin,omitempty"`
	Binary  string   `json:"binary,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Judge names the policy that scores rubric items (verifier only);
	// "" = rubric items are not scored.
	Judge string `json:"judge,omitempty"`
	// Basis is the verifier's basis for tau2 tasks (verifier only):
	// "weft" (the default) or "tau2" (task.ApplyTau2Basis).
	Basis string `json:"basis,omitempty"`
	// Source is where the block is in the file; nil when the file has no
	// such block.
	Source *Source `json:"-"`
}

// MixEntry is one view x harness pair of the rollout mix.
type MixEntry struct {
	View    string `json:"view"`
	Harness string `json:"harness"`
	// Weight is relative (weights need not sum to 1), >= 0; the sum over
	// the mix is > 0. `weft run` spreads the episodes over the mix by
	// weight (internal/pipeline.Assign: smooth weighted round-robin over all
	// episode slots, task-major).
	Weight float64 `json:"weight"`
}

// Rollout is the `rollout` block: how episodes run.
type Rollout struct {
	// Policy names the policy block that acts in the episodes. Required.
	Policy string `json:"policy"`
	// EpisodesPerTask is how many episodes each task gets (k of pass@k),
	// spread over the mix by weight. Default 1.
	EpisodesPerTask int `json:"episodes_per_task"`
	// Concurrency is the hard cap on episodes in flight
	// (rollout.Options.Concurrency). Default 1.
	Concurrency int `json:"concurrency"`
	// EpisodeTimeout bounds each attempt of an episode; 0 = none.
	EpisodeTimeout time.Duration `json:"episode_timeout"`
	// TurnTimeout bounds each model turn (plugin Limits); 0 = none.
	TurnTimeout time.Duration `json:"turn_timeout"`
	// Retries of an episode after a retryable infrastructure failure
	// (rollout.Options.Retries). Default 0.
	Retries int `json:"retries"`
	// Backoff is the wait before each retry; 0 = none.
	Backoff time.Duration `json:"backoff"`
	// MaxTurns and MaxToolCalls cap an episode (plugin Limits); 0 = none.
	MaxTurns     int `json:"max_turns"`
	MaxToolCalls int `json:"max_tool_calls"`
	// Seed is the base of the episode seeds. Default 1.
	Seed uint64 `json:"seed"`
	// Queue is where jobs run: "" in process, "nats://host:port" a NATS
	// JetStream work queue served by `weft worker`, "embedded" an
	// in-process NATS server. Not part of the resolved config: results do
	// not depend on it.
	Queue string `json:"-"`
	// Source is where the block is in the file.
	Source *Source `json:"-"`
}

// SFT is the `sft` block: prefix-preserving rejection sampling.
type SFT struct {
	// Policy names the teacher policy whose accepted turns become SFT data.
	Policy string `json:"policy"`
	// Mode is "prefix" (resample one atomic turn at a time from the kept
	// prefix) or "end_to_end" (resample whole episodes). Default "prefix".
	Mode string `json:"mode"`
	// Retries is how many extra candidates a turn (or episode) gets before
	// it is abandoned. Default 3.
	Retries int `json:"retries"`
	// Threshold: a candidate is accepted when its reward >= Threshold,
	// in [0, 1]. Default 1.
	Threshold float64 `json:"threshold"`
	// View and Harness of the sampled episodes. Default: "simuser" when
	// declared, else the first view; the first harness.
	View    string `json:"view"`
	Harness string `json:"harness"`
	// Concurrency caps the tasks sampled at once, >= 1. Default: the
	// rollout's Concurrency (stated in the resolved config, not implied).
	// Results do not depend on it.
	Concurrency int `json:"concurrency"`
	// Source is where the block is in the file (the preflight's resume
	// check of Harness).
	Source *Source `json:"-"`
}

// GRPO is the `grpo` block: atomic-turn GRPO data.
type GRPO struct {
	// Policy names the policy whose candidates are sampled. Default: the
	// rollout policy.
	Policy string `json:"policy"`
	// GroupSize is G, the candidates sampled per group, >=
	// train.MinGroupSize (2). Default 8.
	GroupSize int `json:"group_size"`
	// Concurrency caps the tasks whose groups are built at once, >= 1
	// (the G candidates of a group run in parallel either way). Default 1.
	// Results do not depend on it.
	Concurrency int `json:"concurrency"`
	// Eps is the epsilon of the advantage normalisation, > 0.
	// Default 1e-6.
	Eps float64 `json:"eps"`
	// Level is "atomic_turn" (a group per atomic turn from restored state)
	// or "trajectory" (a group of whole episodes). Default "atomic_turn".
	Level string `json:"level"`
	// Continue picks the prefix the next turn's group starts from: "first"
	// (the first candidate), "random" (a seeded random candidate) or
	// "reference" (the reference solution's turn). Default "first".
	Continue string `json:"continue"`
	// Mask removes positive credit from candidates an undesirable-pattern
	// detector fired on (A := min(A, 0)). Default true.
	Mask bool `json:"mask"`
	// Reward is one of GRPORewards. Default "binary".
	Reward string `json:"reward"`
	// View and Harness of the sampled episodes; defaults as in SFT.
	View    string `json:"view"`
	Harness string `json:"harness"`
	// Filter is the task-verifier consistency filter, decoded into the
	// filter's own type; nil when the block has no consistency_filter.
	// Defaults: min_correlation 0.5 (in [-1, 1]), min_agreement 0.8 (in
	// [0, 1]), rubric_pass 0.5 (in [0, 1]), min_rollouts 4 (>= 2).
	Filter *train.FilterConfig `json:"consistency_filter,omitempty"`
	// Source is where the block is in the file.
	Source *Source `json:"-"`
}

// Output is the `output` block: the run folder.
type Output struct {
	// Dir is the run folder. Default "runs/<config file name without
	// .hcl>" next to the config file.
	Dir string `json:"dir"`
	// Formats are the export formats (ExportFormats), in file order.
	// Default ["trl_jsonl", "rl_jsonl"].
	Formats []string `json:"formats"`
}

// FTRL is the ftrl block: FTRL's environment pipeline and data
// (core/synth/ftrl), run by the ftrl stage. RetailSeed and AirlineSeed
// are absolute paths ("" = that database is not used; at least one is
// set); Policy is the rollout policy (scripted) and GroupPolicy the one
// the GRPO candidates draw faults from (default Policy); Mode is
// "compatible" or "default".
type FTRL struct {
	RetailSeed      string  `json:"retail_seed,omitempty"`
	AirlineSeed     string  `json:"airline_seed,omitempty"`
	Scenarios       int     `json:"scenarios"`
	Seed            uint64  `json:"seed"`
	Mode            string  `json:"mode"`
	GroupSize       int     `json:"group_size"`
	Policy          string  `json:"policy"`
	GroupPolicy     string  `json:"group_policy"`
	MaxTurns        int     `json:"max_turns"`
	EmptyReply      float64 `json:"empty_reply"`
	GroupEmptyReply float64 `json:"group_empty_reply"`
	ParallelCalls   float64 `json:"parallel_calls"`
	ServerDirs      bool    `json:"server_dirs"`
	Source          *Source `json:"-"`
}

// Evolve is the evolve block: self-evolution (core/synth/evolve), run by
// the evolve stage. Paths are absolute ("" = not set); exactly one of
// BenchmarkDocs and Server is set, Server with one of Tau2Tasks and Tasks.
// Policy is the rollout policy (scripted).
type Evolve struct {
	Rounds           int      `json:"rounds"`
	Budget           int      `json:"budget"`
	Classes          []string `json:"classes"`
	Synthesizer      string   `json:"synthesizer"`
	Script           string   `json:"script,omitempty"`
	Episodes         int      `json:"episodes"`
	BenchmarkDocs    string   `json:"benchmark_docs,omitempty"`
	BenchmarkServers int      `json:"benchmark_servers"`
	Seed             uint64   `json:"seed"`
	Server           string   `json:"server,omitempty"`
	Tau2Tasks        string   `json:"tau2_tasks,omitempty"`
	Tasks            string   `json:"tasks,omitempty"`
	Policy           string   `json:"policy"`
	Source           *Source  `json:"-"`
}

// Compose is the compose block: cross-server task composition
// (core/synth/compose, compose.Options), run by the compose stage.
// Servers are absolute server spec directories; Out and Report absolute
// file paths (defaults filled in). Distractors 0 means none.
type Compose struct {
	Servers        []string `json:"servers"`
	Seed           uint64   `json:"seed"`
	Tasks          int      `json:"tasks"`
	Turns          int      `json:"turns"`
	Spread         int      `json:"spread"`
	GenSeeds       int      `json:"gen_seeds"`
	PerTool        int      `json:"per_tool"`
	Rounds         int      `json:"rounds"`
	Distractors    int      `json:"distractors"`
	SharedEntities int      `json:"shared_entities"`
	MaxAttempts    int      `json:"max_attempts"`
	Out            string   `json:"out"`
	Report         string   `json:"report"`
	Source         *Source  `json:"-"`
}

// StageCompose is the one stage of a config with a compose block.
const StageCompose = "compose"

// StageEvolve is the one stage of a config with an evolve block.
const StageEvolve = "evolve"

// EvolveClasses are the values of evolve.classes.
var EvolveClasses = []string{"environment", "task", "verifier"}

// StageFTRL is the one stage of a config with an ftrl block.
const StageFTRL = "ftrl"

// Names the schema accepts.
var (
	// AllStages are the pipeline stages in the only order they run.
	AllStages = []string{"import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report"}
	// BuiltinHarnesses are plugins/builtin.Names().
	BuiltinHarnesses = []string{"hermes", "native", "react"}
	// Views are the task views (task.ViewAgentic, task.ViewSimUser).
	Views = []string{"agentic", "simuser"}
	// ExportFormats are the output formats: TRL SFT JSONL, verl SFT
	// parquet, RL JSONL, verl RL parquet and OpenAI chat JSONL.
	ExportFormats = []string{"trl_jsonl", "verl_sft_parquet", "rl_jsonl", "verl_rl_parquet", "openai_jsonl"}
	// GRPORewards: "binary" (1 when the turn's checkpoint passes, else 0),
	// "score" (the checkpoint score R in [0, 1]) and the FTRL per-turn
	// variants (train.SolveF1, SolveP, SolveR, SolvePrecision).
	GRPORewards = []string{"binary", "score", "ftrl_f1", "ftrl_p", "ftrl_r", "ftrl_precision"}
	// SFTModes are sft.mode's values, core/train's rejection-sampling
	// modes (their owner).
	SFTModes = []string{train.ModePrefix, train.ModeEndToEnd}
	// GRPOLevels are grpo.level's values, core/train's GRPO levels.
	GRPOLevels = []string{train.LevelAtomicTurn, train.LevelTrajectory}
	// GRPOContinuations are grpo.continue's values, core/train's.
	GRPOContinuations = []string{train.ContinueFirst, train.ContinueRandom, train.ContinueReference}
)

// Resolved returns the config as indented JSON (durations as integer
// nanoseconds, the encoding of time.Duration), for the run folder: what the run
// actually used, after variables, defaults and path resolution.
func (c *Config) Resolved() []byte {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		// Every field is a plain value or valid JSON; this cannot happen.
		panic("config: encoding the resolved config: " + err.Error())
	}
	return append(b, '\n')
}
