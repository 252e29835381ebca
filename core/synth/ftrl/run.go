package ftrl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/weft-dev/weft/core/dataset"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/train"
)

// Options configure Run. Zero values take the defaults noted.
type Options struct {
	// RetailSeed and AirlineSeed are the databases questions are grounded
	// in (examples/servers/tau2-*/seed.json); an empty path skips the
	// domain, and at least one is needed.
	RetailSeed, AirlineSeed string
	// Scenarios per domain (default 8); the types cycle through
	// ScenarioTypes, so a multiple of 4 gives every type equally.
	Scenarios int
	// Seed drives every random choice: the same Options give byte-identical
	// outputs.
	Seed uint64
	// Faults of the episode rollouts, and of the GRPO candidates.
	Faults, GroupFaults Faults
	// G is the GRPO group size (default 16, FTRL's rollout.n).
	G int
	// MaxTurns bounds an episode (default 20, FTRL's --max_turns).
	MaxTurns int
	// Mode is the reward's parsing and matching mode (train.FTRLCompatible
	// by default, the zero value).
	Mode train.FTRLMode
	// Out is the output directory (created).
	Out string
	// Writer, when set, rewrites scenario questions and tool descriptions
	// (the endpoint variant); nil keeps the templated text.
	Writer Writer
	// NoServerDirs skips writing each deployed server's spec directory.
	NoServerDirs bool
}

// Writer rewrites stage (a) and (b) text in natural language: the question
// of a scenario and the descriptions of its tool documents. It must keep
// every answer, id and tool name (Run checks the question still names the
// entities it asks about).
type Writer interface {
	Rewrite(ctx context.Context, sc *Scenario, docs []Tool) error
}

// TypeCounts are the per-scenario-type figures of a run.
type TypeCounts struct {
	Scenarios     int            `json:"scenarios"`
	SubQuestions  int            `json:"sub_questions"`
	Documents     int            `json:"documents"`  // n, stage (b)
	Integrated    int            `json:"integrated"` // m, stage (c)
	MergeRatio    float64        `json:"merge_ratio"`
	Variants      int            `json:"variants"`       // stage (d)
	Servers       int            `json:"servers"`        // stage (e)
	DeployedTools int            `json:"deployed_tools"` // stage (e), tools over all servers
	ToolsPassed   int            `json:"tools_passed"`   // of DeployedTools, on a server that passed validation
	Episodes      int            `json:"episodes"`
	Correct       int            `json:"correct"`
	Samples       int            `json:"samples"`
	Groups        int            `json:"groups"`
	NonZero       int            `json:"groups_nonzero_advantage"`
	Rewards       map[string]int `json:"reward_histogram"` // candidate solve-F1 -> count
}

// ScaleCounts are the per-scaling-kind figures of stage (d).
type ScaleCounts struct {
	Variants int `json:"variants"`
	Changes  int `json:"changes"`
}

// Summary is summary.json: the counts of every stage, per scenario type
// ("all" sums them) and per scaling kind, the reward branches of every
// scored turn, and the GRPO group figures.
type Summary struct {
	Seed            uint64                     `json:"seed"`
	Mode            string                     `json:"mode"`
	G               int                        `json:"group_size"`
	Types           map[string]*TypeCounts     `json:"types"`
	Scale           map[ScaleKind]*ScaleCounts `json:"scale"`
	Branches        map[train.FTRLBranch]int   `json:"branches"`
	Faults          map[string]int             `json:"faults"`
	ValidationCalls int                        `json:"validation_calls"`
	ServersFailed   []string                   `json:"servers_failed"`
	NonZeroShare    float64                    `json:"groups_nonzero_share"`
}

// Output files of Run, in Out.
const (
	FileScenarios  = "1-scenarios.jsonl"
	FileDocuments  = "2-documents.jsonl"
	FileIntegrated = "3-integrated.jsonl"
	FileScaled     = "4-scaled.jsonl"
	FileDeployed   = "5-deployed.jsonl"
	FileEpisodes   = "episodes.jsonl"
	FileSamples    = "samples.jsonl"     // FTRL's per-prefix JSONL (data_sample.py's records)
	FileParquet    = "ftrl.parquet"      // FTRL's verl parquet
	FileSegments   = "rl_segments.jsonl" // weft's GRPO segments
	FileVerlRL     = "verl_rl.parquet"   // weft's verl RL rows (one per prefix)
	FileSummary    = "summary.json"
	DirServers     = "servers"
)

func (o *Options) defaults() error {
	if o.Scenarios <= 0 {
		o.Scenarios = 8
	}
	if o.G <= 0 {
		o.G = 16
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = 20
	}
	if o.RetailSeed == "" && o.AirlineSeed == "" {
		return errors.New("ftrl: no database: set the retail or airline seed")
	}
	if o.Out == "" {
		return errors.New("ftrl: no output directory")
	}
	for _, f := range []Faults{o.Faults, o.GroupFaults} {
		if err := f.Faults.Validate(); err != nil {
			return err
		}
		for _, r := range []struct {
			name string
			v    float64
		}{{"empty_reply", f.EmptyReply}, {"parallel_calls", f.ParallelCalls}} {
			if !(r.v >= 0 && r.v <= 1) {
				return fmt.Errorf("ftrl: fault rate %s = %v, want a probability in [0, 1]", r.name, r.v)
			}
		}
	}
	return nil
}

// stream derives the random stream of one named part of a run from the
// seed, so adding draws to one stage never shifts another.
func stream(seed uint64, parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

func seedOf(seed uint64, parts ...string) uint64 { return stream(seed, parts...).Uint64() }

type jsonl struct {
	f *os.File
	w *bufio.Writer
	e *json.Encoder
}

func newJSONL(path string) (*jsonl, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return &jsonl{f: f, w: w, e: e}, nil
}

func (j *jsonl) close() error {
	if err := j.w.Flush(); err != nil {
		j.f.Close()
		return err
	}
	return j.f.Close()
}

// pyJSON renders v as Python's json.dumps(v, ensure_ascii=False) would:
// FTRL's tools, codes and unsolved_set columns are that text.
func pyJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return train.FTRLRenderJSON(string(b))
}

// Run is the whole FTRL pipeline offline: the five stages per domain, an
// episode per deployed variant, the per-prefix samples, the GRPO groups
// over them and every export, written to o.Out (the File* names). It
// returns the summary (also written). Errors: bad options, unreadable
// databases, an environment failure (an internal error of a deployed
// server), a file that cannot be written.
func Run(ctx context.Context, o Options) (*Summary, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	var worlds []*World
	if o.RetailSeed != "" {
		w, err := RetailWorld(o.RetailSeed)
		if err != nil {
			return nil, err
		}
		worlds = append(worlds, w)
	}
	if o.AirlineSeed != "" {
		w, err := AirlineWorld(o.AirlineSeed)
		if err != nil {
			return nil, err
		}
		worlds = append(worlds, w)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("ftrl: %w", err)
	}
	sum := &Summary{Seed: o.Seed, Mode: o.Mode.String(), G: o.G, Types: map[string]*TypeCounts{}, Scale: map[ScaleKind]*ScaleCounts{},
		Branches: map[train.FTRLBranch]int{}, Faults: map[string]int{}, ServersFailed: []string{}}
	tc := func(t ScenarioType) []*TypeCounts {
		for _, k := range []string{string(t), "all"} {
			if sum.Types[k] == nil {
				sum.Types[k] = &TypeCounts{Rewards: map[string]int{}}
			}
		}
		return []*TypeCounts{sum.Types[string(t)], sum.Types["all"]}
	}
	files := map[string]*jsonl{}
	for _, n := range []string{FileScenarios, FileDocuments, FileIntegrated, FileScaled, FileDeployed, FileEpisodes, FileSamples, FileSegments} {
		j, err := newJSONL(filepath.Join(o.Out, n))
		if err != nil {
			return nil, fmt.Errorf("ftrl: %w", err)
		}
		defer j.f.Close()
		files[n] = j
	}
	put := func(name string, v any) error { return files[name].e.Encode(v) }

	var records []dataset.FTRLRecord
	var verl []train.VerlRLRecord
	for _, w := range worlds {
		scs, err := Decompose(w, o.Scenarios, "ftrl-"+w.Domain, stream(o.Seed, "decompose", w.Domain))
		if err != nil {
			return nil, err
		}
		for i := range scs {
			sc := &scs[i]
			var docs []Tool
			for _, q := range sc.SubQuestions {
				docs = append(docs, Document(w, q))
			}
			if o.Writer != nil {
				if err := o.Writer.Rewrite(ctx, sc, docs); err != nil {
					return nil, fmt.Errorf("ftrl: rewriting %s: %w", sc.ID, err)
				}
			}
			for _, c := range tc(sc.Type) {
				c.Scenarios++
				c.SubQuestions += len(sc.SubQuestions)
			}
			if err := put(FileScenarios, sc); err != nil {
				return nil, err
			}
			for j, d := range docs {
				if err := put(FileDocuments, map[string]any{"scenario": sc.ID, "sub_question": sc.SubQuestions[j].ID, "tool": d, "function": d.Function()}); err != nil {
					return nil, err
				}
			}
			in := Integrate(w, sc.ID, docs)
			for _, c := range tc(sc.Type) {
				c.Documents += in.Documents
				c.Integrated += len(in.Tools)
			}
			if err := put(FileIntegrated, in); err != nil {
				return nil, err
			}
			variants := Scale(w, sc, in, stream(o.Seed, "scale", sc.ID))
			for vi := range variants {
				v := &variants[vi]
				if sum.Scale[v.Scale] == nil {
					sum.Scale[v.Scale] = &ScaleCounts{}
				}
				sum.Scale[v.Scale].Variants++
				sum.Scale[v.Scale].Changes += v.Changes
				for _, c := range tc(sc.Type) {
					c.Variants++
				}
				if err := put(FileScaled, v); err != nil {
					return nil, err
				}
				dep, err := Deploy(ctx, w, sc, v, stream(o.Seed, "deploy", v.ID))
				if err != nil {
					return nil, err
				}
				sum.ValidationCalls += dep.Report.Calls
				for _, c := range tc(sc.Type) {
					c.Servers++
					c.DeployedTools += len(dep.Server.Tools)
					if dep.Report.Passed {
						c.ToolsPassed += len(dep.Server.Tools)
					}
				}
				tools := make([]string, len(dep.Server.Tools))
				for ti, t := range dep.Server.Tools {
					tools[ti] = t.Name
				}
				if err := put(FileDeployed, map[string]any{"variant": v.ID, "server": dep.Server.Name, "program_digest": dep.Server.ProgramRef().Digest,
					"tools": tools, "passed": dep.Report.Passed, "validation_calls": dep.Report.Calls, "findings": dep.Report.Findings}); err != nil {
					return nil, err
				}
				if !o.NoServerDirs {
					if err := synth.WriteDir(filepath.Join(o.Out, DirServers, dep.Server.Name), dep.Server, dep.Report); err != nil {
						return nil, err
					}
				}
				if !dep.Report.Passed {
					sum.ServersFailed = append(sum.ServersFailed, dep.Server.Name)
					continue
				}
				recs, vrecs, err := episodes(ctx, o, sum, tc(sc.Type), files, sc, dep, "weft-ftrl/"+w.Domain, int64(len(records)))
				if err != nil {
					return nil, err
				}
				records = append(records, recs...)
				verl = append(verl, vrecs...)
			}
		}
	}
	for _, c := range sum.Types {
		if c.Documents > 0 {
			c.MergeRatio = float64(c.Integrated) / float64(c.Documents)
		}
	}
	if all := sum.Types["all"]; all != nil && all.Groups > 0 {
		sum.NonZeroShare = float64(all.NonZero) / float64(all.Groups)
	}
	for _, n := range []string{FileScenarios, FileDocuments, FileIntegrated, FileScaled, FileDeployed, FileEpisodes, FileSamples, FileSegments} {
		if err := files[n].close(); err != nil {
			return nil, fmt.Errorf("ftrl: %w", err)
		}
	}
	if err := dataset.WriteFTRLParquetFile(filepath.Join(o.Out, FileParquet), records); err != nil {
		return nil, fmt.Errorf("ftrl: %w", err)
	}
	if err := dataset.WriteVerlRLParquetFile(filepath.Join(o.Out, FileVerlRL), verl); err != nil {
		return nil, fmt.Errorf("ftrl: %w", err)
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Out, FileSummary), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("ftrl: %w", err)
	}
	return sum, nil
}

// FTRLRecord is sample s as a row of FTRL's parquet (index: its row).
func FTRLRecord(s *Sample, index int64) (dataset.FTRLRecord, error) {
	tools, err := pyJSON(s.Tools)
	if err != nil {
		return dataset.FTRLRecord{}, err
	}
	codes, err := pyJSON(s.Codes)
	if err != nil {
		return dataset.FTRLRecord{}, err
	}
	uns, err := pyJSON(s.Unsolved)
	if err != nil {
		return dataset.FTRLRecord{}, err
	}
	return dataset.FTRLRecord{
		Messages: s.Messages, Tools: tools, Codes: codes, UnsolvedSet: uns, SolveRate: s.SolveRate,
		DataSource: s.DataSource, Split: s.Split, Answer: s.Answer,
		ExtraInfo: dataset.FTRLExtraInfo{Index: index, SampleID: s.ID, Scenario: s.Scenario, ScenarioType: string(s.Type), Variant: s.Variant, Step: int64(s.Step)},
	}, nil
}

// ftrlJSONL is one line of samples.jsonl: exactly the keys FTRL's
// data_sample.py writes (tools, codes and unsolved_set as JSON text).
type ftrlJSONL struct {
	Messages    []model.Message `json:"messages"`
	Tools       string          `json:"tools"`
	Codes       string          `json:"codes"`
	UnsolvedSet string          `json:"unsolved_set"`
	SolveRate   float64         `json:"solve_rate"`
	DataSource  string          `json:"data_source"`
	Split       string          `json:"split"`
	Answer      string          `json:"answer"`
}

// episodes rolls out deployment dep once, saves its prefixes and builds a
// GRPO group over each.
func episodes(ctx context.Context, o Options, sum *Summary, counts []*TypeCounts, files map[string]*jsonl, sc *Scenario, dep *Deployment, source string, base int64) ([]dataset.FTRLRecord, []train.VerlRLRecord, error) {
	env, err := NewEnv(ctx, dep)
	if err != nil {
		return nil, nil, err
	}
	defer env.Close()
	s0 := InitialSample(sc, dep, source)
	ep, samples, err := Rollout(ctx, env, sc, s0, o.Faults, seedOf(o.Seed, "rollout", dep.Variant.ID), o.MaxTurns, o.Mode)
	if err != nil {
		return nil, nil, err
	}
	for _, st := range ep.Steps {
		sum.Branches[st.Branch]++
		if st.Fault != "" {
			sum.Faults[st.Fault]++
		}
	}
	for _, c := range counts {
		c.Episodes++
		c.Samples += len(samples)
		if ep.Correct {
			c.Correct++
		}
	}
	if err := files[FileEpisodes].e.Encode(ep); err != nil {
		return nil, nil, err
	}
	var recs []dataset.FTRLRecord
	var verl []train.VerlRLRecord
	tools := train.ToolDefs(toolDefs(&s0))
	for i := range samples {
		s := &samples[i]
		r, err := FTRLRecord(s, base+int64(i))
		if err != nil {
			return nil, nil, err
		}
		recs = append(recs, r)
		if err := files[FileSamples].e.Encode(ftrlJSONL{Messages: s.Messages, Tools: r.Tools, Codes: r.Codes, UnsolvedSet: r.UnsolvedSet,
			SolveRate: s.SolveRate, DataSource: s.DataSource, Split: s.Split, Answer: s.Answer}); err != nil {
			return nil, nil, err
		}
		g, err := Group(ctx, env, sc, s, o.GroupFaults, o.G, seedOf(o.Seed, "group", s.ID), o.Mode)
		if err != nil {
			return nil, nil, err
		}
		nonzero := false
		for _, seg := range g {
			if seg.Advantage != 0 {
				nonzero = true
			}
			for _, c := range counts {
				c.Rewards[strconv.FormatFloat(seg.Reward, 'g', 4, 64)]++
			}
			seg.Tools = tools
			if err := files[FileSegments].e.Encode(seg); err != nil {
				return nil, nil, err
			}
		}
		for _, c := range counts {
			c.Groups++
			if nonzero {
				c.NonZero++
			}
		}
		gt, _ := pyJSON(map[string]any{"unsolved_set": s.Unsolved, "answer": s.Answer, "solve_rate": s.SolveRate})
		verl = append(verl, train.VerlRLRecord{DataSource: source, Prompt: s.Messages, Ability: "tool_use",
			RewardModel: train.VerlRewardModel{Style: "rule", GroundTruth: gt},
			ExtraInfo:   train.VerlExtraInfo{Split: "train", Index: base + int64(i), TaskID: s.Variant, Turn: s.Step, GroupID: s.ID, Tools: tools}})
	}
	return recs, verl, nil
}

// Group is the atomic-turn GRPO group of prefix s: G candidate next turns
// (NextTurn, candidate g with its own seed, faults f), each scored with train.FTRLScore
// from s's unsolved_set on its own fork of the environment; reward =
// solve-F1, advantage = train.GroupAdvantages over the group. Segments
// are in candidate order, GroupID = s.ID.
func Group(ctx context.Context, env *Env, sc *Scenario, s *Sample, f Faults, g int, seed uint64, mode train.FTRLMode) ([]train.RLSegment, error) {
	tools := toolDefs(s)
	rewards := make([]float64, g)
	segs := make([]train.RLSegment, g)
	for i := 0; i < g; i++ {
		resp, _, err := NextTurn(ctx, sc, env.Dep.Variant, s.Messages, s.Unsolved, tools, f, seedOf(seed, "candidate", strconv.Itoa(i)))
		if err != nil {
			return nil, err
		}
		answer := s.Answer
		r, err := train.FTRLScore(ctx, train.FTRLStep{Response: resp, Unsolved: s.Unsolved, SolveRate: s.SolveRate, Answer: &answer, Run: env.Runner()}, mode)
		if err != nil {
			return nil, fmt.Errorf("ftrl: group %s candidate %d: %w", s.ID, i, err)
		}
		rewards[i] = r.Scores.F1
		segs[i] = train.RLSegment{GroupID: s.ID, TaskID: s.Variant, Turn: s.Step, Prompt: s.Messages,
			Completion: assistantMessages(fmt.Sprintf("%s_g%d", s.ID, i), s.Step, r), Reward: r.Scores.F1}
	}
	for i, a := range train.GroupAdvantages(rewards, 0) {
		segs[i].Advantage = a
	}
	return segs, nil
}
