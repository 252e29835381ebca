package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/train"

	"github.com/zclconf/go-cty/cty"
)

// kind is the type of an attribute as the config writes it.
type kind int

const (
	kString   kind = iota
	kNumber        // any number
	kInt           // a whole number
	kBool          // true or false
	kDuration      // a duration string: "90s", "2m", "1h30m"
	kPath          // a path to a file or directory that must exist
	kOutPath       // a path that need not exist
	kStrings       // a list of strings
	kPaths         // a list of paths that must exist
	kObject        // any object, kept as JSON
	kAny           // any value
)

func (k kind) cty() cty.Type {
	switch k {
	case kNumber, kInt:
		return cty.Number
	case kBool:
		return cty.Bool
	case kStrings, kPaths:
		return cty.List(cty.String)
	case kObject, kAny:
		return cty.DynamicPseudoType
	}
	return cty.String
}

func (k kind) String() string {
	return [...]string{"string", "number", "int", "bool", "duration", "path", "path", "list(string)", "list(path)", "object", "any"}[k]
}

// attrSpec is one attribute of a block: its type, its default and its
// rules, once. The decoder (build.go) reads the default and checks the
// rules from here, and Docs renders both, so they cannot disagree.
type attrSpec struct {
	name     string
	kind     kind
	required bool
	// dflt is the typed default the decoder uses when the attribute is
	// absent: int (kInt), float64 (kNumber), bool (kBool) or string
	// (kString); nil = the zero value, or a default build.go derives.
	dflt any
	// def documents a default that is not a literal ("the first
	// harness"); "" = dflt's literal, or none.
	def string
	// min and max bound a kInt or kNumber value, inclusive; nil = none.
	min, max *float64
	// hint is added to a bound error after the limit: " (0 = no cap)".
	hint string
	// summary and detail replace a too-small error's summary and detail
	// (detail is a format of the minimum and the value, both ints).
	summary, detail string
	// enum is a kString's allowed values (their owner's list), what their
	// name in errors ("GRPO level").
	enum []string
	what string
	doc  string
}

func bound(x float64) *float64 { return &x }

// literal renders a typed default as the config writes it.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return strings.Replace(strconv.FormatFloat(x, 'g', -1, 64), "e-0", "e-", 1)
	}
	return fmt.Sprint(v)
}

// rule renders an attribute's bounds as the docs state them ("" = none).
func (a *attrSpec) rule() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch {
	case a.min != nil && a.max != nil:
		return "in [" + f(*a.min) + ", " + f(*a.max) + "]"
	case a.min != nil:
		return ">= " + f(*a.min)
	case a.max != nil:
		return "<= " + f(*a.max)
	}
	return ""
}

// meaning is the docs' Meaning cell: the doc text and the rule.
func (a *attrSpec) meaning() string {
	r := a.rule()
	switch {
	case r == "":
		return a.doc
	case a.doc == "":
		return strings.ToUpper(r[:1]) + r[1:] + "."
	}
	return strings.TrimSuffix(a.doc, ".") + "; " + r + "."
}

// attr returns the spec of attribute name of block s; a name the table
// does not have is a bug in build.go, and panics.
func (s *blockSpec) attr(name string) *attrSpec {
	for i := range s.attrs {
		if s.attrs[i].name == name {
			return &s.attrs[i]
		}
	}
	panic("config: block " + s.typ + " has no attribute " + name + " in schema.go")
}

// blockSpec is one block type.
type blockSpec struct {
	typ      string
	label    string // the label's name in the docs; "" = no label
	multi    bool   // may appear more than once (labelled blocks: one per label)
	required bool
	// exemptBy names a root block whose presence makes this required
	// block optional (an ftrl block needs no module, tasks, harness or
	// view: FTRL builds its own environments).
	exemptBy string
	doc      string
	attrs    []attrSpec
	blocks   []*blockSpec
	// removed are attributes an older weft accepted, each with what to
	// write instead: hcl still refuses them ("Unsupported argument"), and
	// the diagnostic's detail gets the hint.
	removed map[string]string
}

// exempted reports whether one of the blocks exemptBy names (separated by
// spaces) is present.
func (b *blockSpec) exempted(present map[string][]*node) bool {
	for _, e := range strings.Fields(b.exemptBy) {
		if len(present[e]) > 0 {
			return true
		}
	}
	return false
}

func (b *blockSpec) header() string {
	if b.label != "" {
		return fmt.Sprintf("%s \"%s\"", b.typ, strings.ToUpper(b.label))
	}
	return b.typ
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ", ")
}

// Synthesizers are the values of a module block's synthesizer (the
// endpoint synthesizer needs a model server: use weft synth env).
var Synthesizers = []string{"deterministic", "scripted"}

// FTRLModes are ftrl.mode's values (core/train's FTRLMode names).
var FTRLModes = []string{"compatible", "default"}

// variableSpec is the `variable "NAME"` block, decoded before the rest.
var variableSpec = &blockSpec{
	typ: "variable", label: "name", multi: true,
	doc: "A value the rest of the config reads as `var.NAME`. The caller may override it " +
		"(`weft validate FILE --var NAME=VALUE`, `config.LoadOptions.Vars`); a string given " +
		"on the command line is converted to the type of the default (number, bool), or parsed " +
		"as an HCL expression when the default is a list or an object. A variable with no " +
		"default must be given by the caller. Defaults may call functions but not read other variables.",
	attrs: []attrSpec{
		{name: "default", kind: kAny, doc: "The value when the caller gives none (any type)."},
		{name: "description", kind: kString, doc: "What the variable is for (documentation only)."},
	},
}

// rootSpec is the whole config body (besides variable blocks).
var rootSpec = &blockSpec{
	typ: "",
	blocks: []*blockSpec{
		{
			typ: "module", label: "name", multi: true, required: true, exemptBy: "ftrl evolve compose",
			doc: "A tool module the tasks run on. The label is the module's name: tasks reference it by " +
				"that name and it is stored under it in the registry. Give exactly one of `path`, `bundle`, `digest` and `docs`.",
			attrs: []attrSpec{
				{name: "path", kind: kPath, doc: "Directory of a Go tool-module package, compiled with `weft module build`, or a synthesized server's spec directory (server.json); `weft validate` refuses a directory with neither a .go file nor server.json."},
				{name: "schema", kind: kPath, def: "`path`/schema.sql if it exists", doc: "DDL file of the tables the module owns (with `path` only)."},
				{name: "seed", kind: kPath, doc: "Seed-rows file (with `path` only): a weft.state/v1 file (`weft state load --ddl SCHEMA.sql --data ROWS.json --out FILE`, a session's `GET /v1/sessions/{id}/state` on `weft serve`, or a domain's converter such as examples/modules/retail/retaildb/cmd/retail-seed) or {table: [rows]} JSON over the module's schema; `weft validate` checks that it is one well-formed JSON object (the rows are checked against the schema at the module build)."},
				{name: "bundle", kind: kPath, doc: "A bundle tar written by `weft module build -o`."},
				{name: "digest", kind: kString, doc: `A module already in the registry: "sha256:" followed by 64 lowercase hex digits.`},
				{name: "registry", kind: kPath, def: "$WEFT_REGISTRY or the user cache dir", doc: "Module registry directory."},
				{name: "docs", kind: kPath, doc: "Tool documentation to synthesize the module from, as `weft synth env` does (docs/synthesis.md): a Docs JSON object, tau2 tools.json or BFCL func docs; validated and revised (at most 3 rounds) and registered as a server bundle only when it passes validation."},
				{name: "synthesizer", kind: kString, dflt: "deterministic", enum: Synthesizers, what: "synthesizer", doc: `With docs: "deterministic" (from the documentation alone) or "scripted" (recorded answers, with script).`},
				{name: "script", kind: kPath, doc: "With docs and synthesizer = \"scripted\": the recorded answers (a weft.synth-script/v1 file)."},
			},
			removed: map[string]string{
				"seed_format": "seed_format was removed (docs/design/011-domain-adapters.md): a seed is always a weft.state/v1 export or {table: [rows]} JSON. " +
					"Point seed at the converted file instead of the domain's own data (for tau2 retail: seed = \"examples/data/tau2-retail/db.state.json\", " +
					"which make retail-seed writes from db.json) and delete seed_format.",
			},
		},
		{
			typ: "tasks", label: "name", multi: true, required: true, exemptBy: "ftrl evolve compose",
			doc: "A task set: a tau2-bench tasks file and/or weft task files. At least one of `tau2` and `weft`.",
			attrs: []attrSpec{
				{name: "tau2", kind: kPath, doc: "A tau2-bench tasks.json, converted to weft tasks (one atomic task per state-changing gold action)."},
				{name: "tau2_tools", kind: kPath, def: "the modules' read-only annotations", doc: "The domain's tau2 tools.json (a list of {name, read_only, ...}): which gold actions leave the state unchanged. Without it a tool is read-only when the manifest of one of `modules` gives it readOnlyHint; with `tau2` only."},
				{name: "weft", kind: kPaths, def: "[]", doc: "weft.tasks/v1 files."},
				{name: "modules", kind: kStrings, def: "every declared module", doc: "Names of the `module` blocks the tasks run on."},
				{name: "system_prompt", kind: kPath, doc: "File with the domain policy the harness puts in the agent's system prompt."},
				{name: "ids", kind: kStrings, def: "[] (all)", doc: "Keep only the tasks with these ids (tau2 ids for tau2 tasks)."},
				{name: "limit", kind: kInt, dflt: 0, def: "0 (all)", min: bound(0), doc: "Keep the first `limit` tasks after the `ids` filter."},
			},
			removed: map[string]string{
				"tau2_domain": "tau2_domain was removed (docs/design/011-domain-adapters.md): tau2 tasks convert the same way for every domain. " +
					"Which gold actions are read-only comes from tau2_tools = \"<the domain's tau2 tools.json>\" or, without it, from the readOnlyHint " +
					"annotations of the task set's modules. Delete tau2_domain.",
			},
		},
		{
			typ: "policy", label: "name", multi: true, required: true, exemptBy: "compose",
			doc: "A policy the rollout, SFT and GRPO stages refer to by name: an OpenAI-compatible endpoint " +
				"(an `endpoint` block) or the offline scripted policy (a `scripted` block), exactly one of the two.",
			blocks: []*blockSpec{
				{
					typ: "endpoint",
					doc: "An OpenAI-compatible chat-completions endpoint (vLLM, SGLang, Ollama, llama.cpp server).",
					attrs: []attrSpec{
						{name: "base_url", kind: kString, required: true, doc: `API root including the version path, e.g. "http://127.0.0.1:8000/v1"; http or https.`},
						{name: "model", kind: kString, required: true, doc: `The request's "model" field.`},
						{name: "api_key_env", kind: kString, doc: "Environment variable holding the API key (the key never goes in the config)."},
						{name: "timeout", kind: kDuration, def: "the client's default (60s)", doc: "Per-attempt HTTP timeout."},
						{name: "max_retries", kind: kInt, dflt: 0, def: "0 (the client's default)", min: bound(-1), hint: " (-1 = no retries)", doc: "Retries of a retryable failure (-1 = none)."},
						{name: "max_concurrency", kind: kInt, dflt: 0, def: "0 (no cap)", min: bound(0), hint: " (0 = no cap)", doc: "Cap on requests in flight."},
						{name: "extra_body", kind: kObject, doc: `Object merged into every request body (e.g. {top_k = 20} for vLLM).`},
					},
				},
				{
					typ: "scripted",
					doc: "The offline scripted policy: follows each task's reference solution and departs from it only through seeded faults.",
					attrs: []attrSpec{
						{name: "seed", kind: kInt, dflt: 1, min: bound(0), doc: "Seed of the fault draws."},
					},
					blocks: []*blockSpec{{
						typ: "faults",
						doc: "Per-step fault probabilities, each in [0, 1].",
						attrs: []attrSpec{
							{name: "wrong_argument", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "One argument value of a call is changed."},
							{name: "skip_step", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "A tool step is dropped."},
							{name: "extra_call", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "An additional call is inserted after a step."},
							{name: "hallucinated_tool", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "A call to a tool that does not exist is inserted."},
							{name: "malformed_call", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "A badly formed call is inserted before the correct one."},
							{name: "early_stop", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "The agent claims to be done and stops."},
						},
					}},
				},
				{
					typ: "sampling",
					doc: "Sampling parameters of every request (endpoint policies).",
					attrs: []attrSpec{
						{name: "temperature", kind: kNumber, def: "endpoint default", min: bound(0), max: bound(2)},
						{name: "top_p", kind: kNumber, def: "endpoint default", doc: "In (0, 1]."},
						{name: "max_tokens", kind: kInt, dflt: 0, def: "0 (endpoint default)", min: bound(0), hint: " (0 = the endpoint's default)", doc: "Cap on each completion, in tokens."},
						{name: "seed", kind: kInt, def: "none", doc: "Sampling seed sent to the endpoint."},
						{name: "stop", kind: kStrings, def: "[]", doc: "Stop sequences."},
						{name: "logprobs", kind: kBool, dflt: false, doc: "Ask for per-token logprobs."},
					},
				},
			},
		},
		{
			typ: "harness", label: "name", multi: true, required: true, exemptBy: "ftrl evolve compose",
			doc: "A harness: a built-in one (`builtin`) or a plugin binary (`binary`), exactly one. " +
				"`harness \"react\" {}` with neither means the built-in of the label's name.",
			attrs: []attrSpec{
				{name: "builtin", kind: kString, def: "the label, if it is a built-in name", doc: "One of " + quoted(BuiltinHarnesses) + "."},
				{name: "binary", kind: kPath, doc: "A harness plugin executable (built with sdk/plugin)."},
				{name: "args", kind: kStrings, def: "[]", doc: "Extra arguments for `binary`."},
				{name: "settings", kind: kObject, def: "{}", doc: "The harness's settings object, passed to it as JSON."},
			},
		},
		{
			typ: "view", label: "name", multi: true, required: true, exemptBy: "ftrl evolve compose",
			doc: "A task view episodes run under: \"agentic\" (the whole brief up front) or \"simuser\" " +
				"(a simulated user revealing one request at a time). The block has no attributes.",
		},
		{
			typ: "mix",
			doc: "Weights over view x harness pairs. Each task's `rollout.episodes_per_task` episodes are " +
				"spread over the entries in proportion to their weights: smooth weighted round-robin over all " +
				"episode slots, task by task, so every pair gets its share of the run even when a task has fewer " +
				"episodes than the mix has entries. Default: every declared view with every declared harness, weight 1.",
			blocks: []*blockSpec{{
				typ: "entry", multi: true,
				doc: "One view x harness pair.",
				attrs: []attrSpec{
					{name: "view", kind: kString, required: true, doc: "A declared `view`."},
					{name: "harness", kind: kString, required: true, doc: "A declared `harness`."},
					{name: "weight", kind: kNumber, def: "1", doc: "Relative weight, >= 0; the weights must not all be 0."},
				},
			}},
		},
		{
			typ: "verifier",
			doc: "The verifier that scores episodes server-side. Default: the built-in `exec`.",
			attrs: []attrSpec{
				{name: "builtin", kind: kString, def: `"exec"`, doc: `"exec" (executable checks over the states, ledger and conversation).`},
				{name: "binary", kind: kPath, doc: "A verifier plugin executable, instead of `builtin`."},
				{name: "args", kind: kStrings, def: "[]", doc: "Extra arguments for `binary`."},
				{name: "judge", kind: kString, def: "none", doc: "A declared `policy` that scores rubric items; none = rubric items are not scored."},
				{name: "basis", kind: kString, def: `"weft"`, doc: "Which checks the overall checkpoint of a tau2 task holds: \"weft\" (state_equal plus every communicate_info string, stricter) or \"tau2\" (the task's own reward_basis: DB = state_equal, COMMUNICATE = the communicate checks, ACTION = the gold calls; NL_ASSERTION = its rubric items, scored by `judge` beside R)."},
			},
		},
		{
			typ: "attributor",
			doc: "The attributor that assigns failed checkpoints to the policy, environment, task or verifier. Default: the built-in `rules`.",
			attrs: []attrSpec{
				{name: "builtin", kind: kString, def: `"rules"`, doc: `"rules".`},
				{name: "binary", kind: kPath, doc: "An attributor plugin executable, instead of `builtin`."},
				{name: "args", kind: kStrings, def: "[]", doc: "Extra arguments for `binary`."},
			},
		},
		{
			typ: "rollout", required: true, exemptBy: "compose",
			doc: "How episodes run.",
			attrs: []attrSpec{
				{name: "policy", kind: kString, required: true, doc: "A declared `policy`: the agent."},
				{name: "episodes_per_task", kind: kInt, dflt: 1, min: bound(1), doc: "Episodes per task (k of pass@k), split over the mix."},
				{name: "concurrency", kind: kInt, dflt: 1, min: bound(1), max: bound(MaxConcurrency), hint: " (each episode in flight holds a session, its state and a model request)", doc: "Hard cap on episodes in flight."},
				{name: "episode_timeout", kind: kDuration, def: `"0s" (none)`, doc: "Deadline of each attempt of an episode."},
				{name: "turn_timeout", kind: kDuration, def: `"0s" (none)`, doc: "Deadline of each model turn (the turn's generation and tool calls)."},
				{name: "retries", kind: kInt, dflt: 0, min: bound(0), hint: " (the number of extra attempts)", doc: "Extra attempts of an episode after a retryable infrastructure failure."},
				{name: "backoff", kind: kDuration, def: `"0s"`, doc: "Wait before each retry."},
				{name: "max_turns", kind: kInt, dflt: 0, def: "0 (none)", min: bound(0), hint: " (0 = no cap)", doc: "Cap on an episode's model turns."},
				{name: "max_tool_calls", kind: kInt, dflt: 0, def: "0 (none)", min: bound(0), hint: " (0 = no cap)", doc: "Cap on an episode's tool calls."},
				{name: "seed", kind: kInt, dflt: 1, min: bound(0), doc: "Base of the episode seeds."},
				{name: "queue", kind: kString, def: `"" (in process)`, doc: "Run rollout, SFT and GRPO jobs on a NATS JetStream work queue served by `weft worker` processes: `\"nats://host:4222\"`, or `\"embedded\"` (an in-process NATS server on 127.0.0.1:4222 for local multi-process runs). Results do not depend on it (not in the resolved config); `weft run --queue` overrides it."},
			},
		},
		{
			typ: "sft",
			doc: "Prefix-preserving rejection sampling: the teacher policy's accepted turns become SFT data. Required by the `sft` stage.",
			attrs: []attrSpec{
				{name: "policy", kind: kString, required: true, doc: "A declared `policy`: the teacher."},
				{name: "mode", kind: kString, dflt: train.ModePrefix, enum: SFTModes, what: "rejection-sampling mode", doc: `"prefix" (resample one atomic turn at a time from the kept prefix) or "end_to_end" (resample whole episodes).`},
				{name: "retries", kind: kInt, dflt: 3, min: bound(0), hint: " (the retry limit: extra candidates per turn)", doc: "Extra candidates a turn (or episode) gets before it is abandoned."},
				{name: "threshold", kind: kNumber, dflt: 1.0, min: bound(0), max: bound(1), doc: "A candidate is accepted when its reward is at least this."},
				{name: "view", kind: kString, def: `"simuser" if declared, else the first view`, doc: "A declared `view`."},
				{name: "harness", kind: kString, def: "the first harness", doc: "A declared `harness`."},
				{name: "concurrency", kind: kInt, def: "`rollout.concurrency`", min: bound(1), max: bound(MaxConcurrency), doc: "Cap on tasks sampled at once (results do not depend on it)."},
			},
		},
		{
			typ: "grpo",
			doc: "Atomic-turn GRPO data: groups of candidates from restored state, with group-normalised advantages. Required by the `grpo` stage.",
			attrs: []attrSpec{
				{name: "policy", kind: kString, def: "the rollout policy", doc: "A declared `policy` whose candidates are sampled."},
				{name: "group_size", kind: kInt, dflt: 8, min: bound(train.MinGroupSize), summary: "Group too small",
					detail: "group_size (G) must be at least %d: a group-normalised advantage compares each candidate with the others; got %d.",
					doc:    "G, candidates per group. `weft run` takes any G; the rollout service refuses a batch whose G exceeds its `--max-group-size` (default 64), so a config meant to be served keeps G at or below it."},
				{name: "eps", kind: kNumber, dflt: 1e-6, doc: "Epsilon of the advantage normalisation; > 0."},
				{name: "level", kind: kString, dflt: train.LevelAtomicTurn, enum: GRPOLevels, what: "GRPO level", doc: `"atomic_turn" (a group per atomic turn) or "trajectory" (a group of whole episodes).`},
				{name: "continue", kind: kString, dflt: train.ContinueFirst, enum: GRPOContinuations, what: "continuation", doc: `Prefix the next turn's group starts from: "first", "random" or "reference".`},
				{name: "mask", kind: kBool, dflt: true, doc: "Remove positive credit from candidates an undesirable-pattern detector fired on (A := min(A, 0)); detections are recorded either way."},
				{name: "reward", kind: kString, dflt: "binary", enum: GRPORewards, what: "GRPO reward", doc: "One of " + quoted(GRPORewards) + "."},
				{name: "view", kind: kString, def: `"simuser" if declared, else the first view`, doc: "A declared `view`."},
				{name: "harness", kind: kString, def: "the first harness", doc: "A declared `harness`."},
				{name: "concurrency", kind: kInt, dflt: 1, min: bound(1), max: bound(MaxConcurrency), doc: "Cap on tasks whose groups are built at once (a group's G candidates run in parallel either way; results do not depend on it)."},
			},
			blocks: []*blockSpec{{
				typ: "consistency_filter",
				doc: "Task-verifier consistency filter: drop tasks whose executable verifier disagrees with the rubric judge (needs `verifier.judge`).",
				attrs: []attrSpec{
					{name: "min_correlation", kind: kNumber, dflt: 0.5, min: bound(-1), max: bound(1), doc: "Least Pearson correlation of executable and rubric scores."},
					{name: "min_agreement", kind: kNumber, dflt: 0.8, min: bound(0), max: bound(1), doc: "Least share of agreeing rollouts."},
					{name: "rubric_pass", kind: kNumber, dflt: 0.5, min: bound(0), max: bound(1), doc: "A rubric score at or above it is a pass."},
					{name: "min_rollouts", kind: kInt, dflt: 4, min: bound(2), hint: " (a correlation needs two points)", doc: "Fewest rollouts a task needs to be judged."},
				},
			}},
		},
		{
			typ: "ftrl",
			doc: "FTRL's environment pipeline and training data (core/synth/ftrl, docs/ftrl.md), run offline by the `ftrl` stage: " +
				"scenarios grounded in the retail and/or airline database, the five stages (decomposition, documents, integration, " +
				"complexity scaling, deployment as validated synthesized servers), episodes of the rollout policy (a scripted policy " +
				"with faults) scored with FTRL's per-step rewards, the per-prefix samples, GRPO groups over them and FTRL's verl parquet. " +
				"With an ftrl block the module, tasks, harness and view blocks are not needed, and the pipeline's stages are exactly [\"ftrl\"].",
			attrs: []attrSpec{
				{name: "retail_seed", kind: kPath, doc: "The tau2 retail database the questions are grounded in (examples/servers/tau2-retail/seed.json); at least one of retail_seed and airline_seed."},
				{name: "airline_seed", kind: kPath, doc: "The tau2 airline database (examples/servers/tau2-airline/seed.json)."},
				{name: "scenarios", kind: kInt, dflt: 8, min: bound(1), doc: "Scenarios per database; the four scenario types take turns."},
				{name: "seed", kind: kInt, dflt: 1, min: bound(0), doc: "Seed of every random choice: the same seed gives byte-identical outputs."},
				{name: "mode", kind: kString, dflt: "compatible", enum: FTRLModes, what: "FTRL mode", doc: `How responses are parsed and matched: "compatible" (FTRL's Python code, quirks included) or "default" (weft's reading).`},
				{name: "group_size", kind: kInt, dflt: 16, min: bound(1), doc: "G, the candidates of each GRPO group (FTRL's rollout.n = 16)."},
				{name: "group_policy", kind: kString, def: "the rollout policy", doc: "A declared scripted `policy` whose faults the GRPO candidates draw."},
				{name: "max_turns", kind: kInt, dflt: 20, min: bound(1), doc: "Turns of an episode at most (FTRL's --max_turns)."},
				{name: "empty_reply", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "Probability that an episode turn's reply is empty (FTRL's -0.5 branch)."},
				{name: "group_empty_reply", kind: kNumber, dflt: 0.0, min: bound(0), max: bound(1), doc: "The same for the GRPO candidates."},
				{name: "parallel_calls", kind: kNumber, dflt: 0.5, min: bound(0), max: bound(1), doc: "Probability that a turn with two or more sub-questions ready (a parallel scenario's branches) calls them all at once, episodes and candidates alike."},
				{name: "server_dirs", kind: kBool, dflt: true, doc: "Write every deployed server's spec directory under servers/."},
			},
		},
		{
			typ: "evolve",
			doc: "Self-evolution (core/synth/evolve, docs/evolve.md), run offline by the `evolve` stage: rounds of rollouts of the rollout policy " +
				"(scripted, with faults), verification, attribution, revision of every non-policy finding (environment: the faulty tool re-synthesized; " +
				"task: rebound or dropped; verifier: the check regenerated from the reference's effect), re-certification and fresh rollouts. " +
				"The system is either the planted-defect benchmark (`benchmark_docs`) or a server as shipped with its tasks (`server` with `tau2_tasks` or `tasks`). " +
				"With an evolve block the module, tasks, harness and view blocks are not needed, and the pipeline's stages are exactly [\"evolve\"].",
			attrs: []attrSpec{
				{name: "rounds", kind: kInt, dflt: 3, min: bound(1), doc: "Rounds of rollouts and revisions; one more rollout pass measures the evolved system."},
				{name: "budget", kind: kInt, dflt: 0, min: bound(0), doc: "Revisions tried per round at most (0 = no cap)."},
				{name: "classes", kind: kStrings, def: `["environment", "task", "verifier"]`, doc: "The component classes that may be revised (`policy` never is: policy failures stay training signal)."},
				{name: "synthesizer", kind: kString, dflt: "deterministic", enum: Synthesizers, what: "synthesizer", doc: `The synthesizer of environment revisions: "deterministic" (from the documentation) or "scripted" (recorded answers, with script).`},
				{name: "script", kind: kPath, doc: "The scripted synthesizer's script (core/synth, docs/synthesis.md)."},
				{name: "episodes", kind: kInt, dflt: 2, min: bound(1), doc: "Episodes with faults per task per round (plus one faithful episode)."},
				{name: "benchmark_docs", kind: kPath, doc: "The planted-defect benchmark: tau2 tools.json the servers are synthesized from (examples/data/tau2-airline/tools.json)."},
				{name: "benchmark_servers", kind: kInt, dflt: 5, min: bound(1), doc: "Servers of the benchmark, each with its own seed rows and planted defects."},
				{name: "seed", kind: kInt, dflt: 1, min: bound(0), doc: "Seed of the benchmark's task generation."},
				{name: "server", kind: kPath, doc: "A weft.server/v1 server as shipped (examples/servers/tau2-retail); with tau2_tasks or tasks."},
				{name: "tau2_tasks", kind: kPath, doc: "tau2 tasks.json, converted on the server with the gold replay."},
				{name: "tasks", kind: kPath, doc: "A weft.tasks/v1 file over the server."},
			},
		},
		{
			typ: "compose",
			doc: "Composition of cross-server tasks (core/synth/compose, docs/certification.md \"Composition\"), run offline by the `compose` stage " +
				"(`weft run FILE` or `weft synth compose --config FILE`): certified atomic tasks generated per server, sampled into DAGs " +
				"across the servers, grounded in three rounds into each task's initial state and re-certified; writes a weft.tasks/v1 file " +
				"and a weft.synth-compose/v1 report. With a compose block the module, tasks, policy, rollout, harness and view blocks are " +
				"not needed, and the pipeline's stages are exactly [\"compose\"].",
			attrs: []attrSpec{
				{name: "servers", kind: kPaths, required: true, doc: "weft.server/v1 server spec directories (examples/servers/tau2-retail), at least two, each once: the lifecycle group of every composed task."},
				{name: "seed", kind: kInt, dflt: 1, min: bound(0), doc: "Seed of the atomic pool's bindings, the sampling and the distractors: the same seed gives byte-identical task and state files."},
				{name: "tasks", kind: kInt, dflt: 100, min: bound(1), max: bound(100000), doc: "Composed tasks to make."},
				{name: "turns", kind: kInt, dflt: 20, min: bound(2), max: bound(200), doc: "Median atomic turns (atomic tasks) per composed task (WEFT's median is 20)."},
				{name: "spread", kind: kInt, dflt: 0, def: "turns/4", min: bound(0), doc: "Each task draws its atomic turns uniformly from [turns-spread, turns+spread] (at least 2); must be less than turns."},
				{name: "gen_seeds", kind: kInt, dflt: 6, min: bound(1), max: bound(64), doc: "Binding seeds of the atomic pool per server (one `weft synth tasks` generation each)."},
				{name: "per_tool", kind: kInt, dflt: 0, def: "0 (the generator's 6)", min: bound(0), doc: "Candidates per tool per generation round."},
				{name: "rounds", kind: kInt, dflt: 0, def: "0 (the generator's 5)", min: bound(0), doc: "Generation rounds at most."},
				{name: "distractors", kind: kInt, dflt: 2, min: bound(0), max: bound(16), hint: " (0 = no context enrichment)", doc: "Near-miss distractor rows per bound entity in context enrichment (grounding round 3)."},
				{name: "shared_entities", kind: kInt, dflt: 0, min: bound(0), max: bound(1000), hint: " (0 = none)", doc: "People bound in two servers' users at once (the same name and email in both, grounded in round 1 in both): they give after edges across servers."},
				{name: "max_attempts", kind: kInt, dflt: 0, def: "0 (3 x tasks)", min: bound(0), doc: "Composed samples tried at most; a sample that fails re-certification is counted by reason and another drawn."},
				{name: "out", kind: kOutPath, def: "`output.dir`/tasks.weft.json", doc: "The weft.tasks/v1 file written."},
				{name: "report", kind: kOutPath, def: "`out` with .report.json", doc: "The weft.synth-compose/v1 report written."},
			},
		},
		{
			typ: "pipeline", required: true,
			doc: "The stages to run.",
			attrs: []attrSpec{
				{name: "stages", kind: kStrings, required: true, doc: "Stages in the order " + quoted(AllStages) + ", each at most once; a subsequence is fine."},
			},
		},
		{
			typ: "output",
			doc: "The run folder.",
			attrs: []attrSpec{
				{name: "dir", kind: kOutPath, def: `"runs/<config file name>"`, doc: "Run folder (created by `weft run`)."},
				{name: "formats", kind: kStrings, def: `["trl_jsonl", "rl_jsonl"]`, doc: "Export formats: " + quoted(ExportFormats) + "."},
			},
		},
	},
}

// MaxConcurrency bounds every concurrency attribute: far above what one
// machine runs (each episode holds a session and a model request), low
// enough that a typo (1000000000) is refused at validate rather than
// met as memory exhaustion.
const MaxConcurrency = 4096

// Bounds returns the inclusive range the schema gives the number attribute
// at path, block types and the attribute joined by dots
// ("compose.turns", "policy.sampling.temperature"); a nil end is
// unbounded. Commands whose flags or request fields mirror a config
// attribute check them with these bounds, so the two cannot disagree. An
// unknown path is a programming error and panics.
func Bounds(path string) (min, max *float64) {
	parts := strings.Split(path, ".")
	b := rootSpec
	for _, typ := range parts[:len(parts)-1] {
		var next *blockSpec
		for _, c := range b.blocks {
			if c.typ == typ {
				next = c
			}
		}
		if next == nil {
			panic("config.Bounds: no block " + typ + " in " + path)
		}
		b = next
	}
	a := b.attr(parts[len(parts)-1])
	return a.min, a.max
}

// Docs returns the schema reference as Markdown: every block and
// attribute with its type, default and meaning, the variables and the
// functions. docs/config.md is this text.
func Docs() string {
	var b strings.Builder
	b.WriteString("# Experiment config reference\n\n")
	b.WriteString("<!-- Generated by `weft config docs` from core/config/schema.go; do not edit. " +
		"Refresh with `go test ./core/config -run TestDocsUpToDate -update`. -->\n\n")
	b.WriteString("An experiment config is an HCL file (hashicorp/hcl/v2 native syntax) run with " +
		"`weft run FILE` and checked with `weft validate FILE`. Relative paths are resolved against " +
		"the directory of the config file. Durations are strings such as \"90s\", \"2m\" or \"1h30m\". " +
		"Every error is reported as `file:line:col: error: summary; detail`.\n\n")
	b.WriteString("Types: `string`; `number`; `int` (a whole number); `bool`; `duration` (a duration string); " +
		"`path` (a string, relative to the config file's directory; an input path must exist); " +
		"`list(...)`; `object` (an object, passed on as JSON); `any`.\n\n")
	b.WriteString("## Variables\n\n")
	writeBlock(&b, variableSpec, "###")
	b.WriteString("## Functions\n\n")
	b.WriteString("Expressions may call: ")
	names := functionNames()
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + n + "`")
	}
	b.WriteString(". `file(path)` reads a file relative to the config file's directory; " +
		"`env(name)` is the environment variable's value, \"\" when unset. The others are " +
		"the go-cty standard library functions of the same name.\n\n")
	b.WriteString("## Blocks\n\n")
	for _, s := range rootSpec.blocks {
		writeBlock(&b, s, "###")
	}
	return b.String()
}

func writeBlock(b *strings.Builder, s *blockSpec, level string) {
	fmt.Fprintf(b, "%s `%s`\n\n", level, s.header())
	var notes []string
	switch {
	case s.required && s.exemptBy != "":
		notes = append(notes, "required (not with a `"+strings.Join(strings.Fields(s.exemptBy), "` or `")+"` block)")
	case s.required:
		notes = append(notes, "required")
	default:
		notes = append(notes, "optional")
	}
	if s.multi {
		if s.label != "" {
			notes = append(notes, "repeatable, one per "+s.label)
		} else {
			notes = append(notes, "repeatable")
		}
	} else {
		notes = append(notes, "at most once")
	}
	fmt.Fprintf(b, "*%s.* %s\n\n", strings.Join(notes, ", "), s.doc)
	if len(s.attrs) > 0 {
		b.WriteString("| Attribute | Type | Default | Meaning |\n| --- | --- | --- | --- |\n")
		for _, a := range s.attrs {
			def := a.def
			switch {
			case a.required:
				def = "required"
			case def == "" && a.dflt != nil:
				def = literal(a.dflt)
			case def == "":
				def = "none"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", a.name, a.kind, def, strings.ReplaceAll(a.meaning(), "|", `\|`))
		}
		b.WriteString("\n")
	}
	for _, c := range s.blocks {
		writeBlock(b, c, level+"#")
	}
}
