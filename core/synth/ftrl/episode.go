package ftrl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/sdk/pyvalue"
)

// Sample is one FTRL training sample, the record Code/data_sample/
// data_sample.py saves for every intermediate prefix: the conversation so
// far (Messages: the user question, then each assistant turn and its tool
// messages), the tools offered (OpenAI function schemas), each tool's
// implementation (Codes, the synthesized-server form: see docs/ftrl.md),
// the answers still expected per tool (Unsolved, after the prefix's
// turns), the final answer and SolveRate = 1 - |Unsolved| / |Unsolved at
// step 0|. The other fields are weft's provenance.
type Sample struct {
	ID         string            `json:"id"`
	Scenario   string            `json:"scenario"`
	Type       ScenarioType      `json:"type"`
	Variant    string            `json:"variant"`
	Scale      ScaleKind         `json:"scale"`
	Step       int               `json:"step"` // tool-call turns in the prefix
	Messages   []model.Message   `json:"messages"`
	Tools      []map[string]any  `json:"tools"`
	Codes      map[string]string `json:"codes"`
	Unsolved   train.UnsolvedSet `json:"unsolved_set"`
	Answer     string            `json:"answer"`
	SolveRate  float64           `json:"solve_rate"`
	DataSource string            `json:"data_source"`
	Split      string            `json:"split"`
}

// Env runs one deployment's tools for episodes: a core/state store with
// the server's seed and the server on module.NewNativeServer (the same
// interpreter and sandbox as served servers). Calls are read-only; each
// episode still gets its own fork.
type Env struct {
	Dep   *Deployment
	mod   *module.Module
	store *state.Store
	seed  *state.Version
}

// NewEnv loads d's server.
func NewEnv(ctx context.Context, d *Deployment) (*Env, error) {
	st := state.NewStore()
	b := &module.Bundle{Schema: d.Server.Schema, Seed: d.Server.Seed}
	if _, err := st.Load(ctx, d.Server.Schema); err != nil {
		return nil, fmt.Errorf("ftrl: %s: schema: %w", d.Server.Name, err)
	}
	seed, err := b.SeedVersion(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("ftrl: %s: seed: %w", d.Server.Name, err)
	}
	mod, err := module.NewNativeServer(d.Server, module.Config{})
	if err != nil {
		return nil, fmt.Errorf("ftrl: %s: %w", d.Server.Name, err)
	}
	return &Env{Dep: d, mod: mod, store: st, seed: seed}, nil
}

// Close releases the store.
func (e *Env) Close() error { return e.store.Close() }

// Runner returns the FTRLStep.Run of one episode (its own fork): each
// call's output as FTRL's get_feedback would give it. A tool's JSON result
// renders as json.dumps(result, ensure_ascii=False) (train.FTRLRenderJSON);
// a call FTRL's exec would raise on — an unknown tool (KeyError: 'name'),
// arguments that are not an object, a refused argument, a tool error —
// renders as train.FTRLErrorFeedback with the error's text. Only a failure
// of the environment itself (an internal error) is an error.
func (e *Env) Runner() func(ctx context.Context, calls []train.FTRLCall) ([]string, error) {
	ws := e.store.Fork(e.seed)
	return func(ctx context.Context, calls []train.FTRLCall) ([]string, error) {
		out := make([]string, len(calls))
		for i, c := range calls {
			name := c.NameString()
			if c.Name.Kind != pyvalue.Str || e.Dep.Server.Tool(name) == nil {
				out[i] = train.FTRLErrorFeedback(c.Name, "'"+name+"'")
				continue
			}
			if c.Args.Kind != pyvalue.Dict {
				out[i] = train.FTRLErrorFeedback(c.Name, name+"() argument after ** must be a mapping")
				continue
			}
			res, err := e.mod.Call(ctx, &module.Session{Workspace: ws}, name, json.RawMessage(c.Arguments))
			var ae *module.ArgumentError
			switch {
			case errors.As(err, &ae):
				out[i] = train.FTRLErrorFeedback(c.Name, ae.Error())
				continue
			case err != nil:
				return nil, fmt.Errorf("ftrl: %s: call %s: %w", e.Dep.Server.Name, name, err)
			}
			text := ""
			for _, ct := range res.Content {
				text += ct.Text
			}
			if res.IsError {
				out[i] = train.FTRLErrorFeedback(c.Name, text)
				continue
			}
			if r, err := train.FTRLRenderJSON(text); err == nil {
				text = r
			}
			out[i] = text
		}
		return out, nil
	}
}

// Faults are the scripted policy's fault rates for FTRL episodes: the
// core/model/scripted faults (extra calls, hallucinated i.e. wrong tools,
// early stops i.e. early answers, malformed calls, wrong arguments, skipped
// steps) plus EmptyReply, the probability that a turn's whole reply is
// empty (FTRL's -0.5 branch), and ParallelCalls, the probability that a
// turn with two or more sub-questions ready (independent branches of a
// parallel scenario) calls all of them at once, as FTRL's parallel
// scenarios expect (p > 1 calls in one turn).
type Faults struct {
	scripted.Faults
	EmptyReply    float64 `json:"empty_reply"`
	ParallelCalls float64 `json:"parallel_calls"`
}

// Step is one scored assistant turn of an episode.
type Step struct {
	Turn     int               `json:"turn"`
	Response string            `json:"response"`
	Fault    string            `json:"fault,omitempty"`
	Branch   train.FTRLBranch  `json:"branch"`
	Scores   train.FTRLScores  `json:"scores"`
	Feedback []string          `json:"feedback,omitempty"`
	Solved   int               `json:"solved"`
	Unsolved train.UnsolvedSet `json:"unsolved_after"`
}

// Episode is one rollout of a sample: its scored steps and whether the
// last turn gave the final answer.
type Episode struct {
	ID       string       `json:"id"`
	Sample   string       `json:"sample"`
	Scenario string       `json:"scenario"`
	Type     ScenarioType `json:"type"`
	Variant  string       `json:"variant"`
	Steps    []Step       `json:"steps"`
	Correct  bool         `json:"correct"`
	Solved   float64      `json:"solve_rate"`
}

// Script is the reference solution from a prefix whose unsolved_set is
// unsolved: the gold call of every sub-question whose answer its tool
// still expects, in order, then the final answer. Ready are the calls of
// those sub-questions whose dependency is solved (the first open one of
// each branch), in order.
func Script(sc *Scenario, v *Variant, unsolved train.UnsolvedSet) (s scripted.Script, ready []scripted.Step) {
	left := map[string][]string{}
	for _, t := range unsolved {
		left[t.Tool] = append([]string(nil), t.Answers...)
	}
	open := map[string]bool{}
	for _, q := range sc.SubQuestions {
		tool := v.ToolOf[q.ID]
		i := indexOf(left[tool], q.Answer)
		if i < 0 {
			continue
		}
		left[tool] = append(left[tool][:i:i], left[tool][i+1:]...)
		open[q.ID] = true
		st := scripted.Step{Tool: tool, Arguments: goldArgs(v, q, tool)}
		s.Steps = append(s.Steps, st)
		if q.DependsOn == "" || !open[q.DependsOn] {
			ready = append(ready, st)
		}
	}
	s.Steps = append(s.Steps, scripted.Step{Say: "The answer is: " + sc.Answer + "."})
	return s, ready
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func goldArgs(v *Variant, q SubQuestion, tool string) json.RawMessage {
	var t *Tool
	for i := range v.Tools {
		if v.Tools[i].Name == tool {
			t = &v.Tools[i]
		}
	}
	var b strings.Builder
	b.WriteString("{")
	for i, k := range t.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(q.Key[i])
		b.Write(kb)
		b.WriteString(": ")
		b.Write(vb)
	}
	if t.Selector {
		fb, _ := json.Marshal(q.Attr)
		b.WriteString(`, "field": ` + string(fb))
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

// InitialSample is step 0 of a scenario variant: the question alone, every
// sub-question's answer expected from the tool that answers it.
func InitialSample(sc *Scenario, d *Deployment, dataSource string) Sample {
	v := d.Variant
	s := Sample{
		ID: v.ID + "-s0", Scenario: sc.ID, Type: sc.Type, Variant: v.ID, Scale: v.Scale,
		Messages: []model.Message{{Role: model.RoleUser, Content: sc.Question}},
		Codes:    d.Codes, Answer: sc.Answer, DataSource: dataSource, Split: "train",
	}
	for i := range v.Tools {
		s.Tools = append(s.Tools, v.Tools[i].Function())
	}
	for _, q := range sc.SubQuestions {
		tool := v.ToolOf[q.ID]
		found := false
		for i := range s.Unsolved {
			if s.Unsolved[i].Tool == tool {
				s.Unsolved[i].Answers = append(s.Unsolved[i].Answers, q.Answer)
				found = true
			}
		}
		if !found {
			s.Unsolved = append(s.Unsolved, train.UnsolvedTool{Tool: tool, Answers: []string{q.Answer}})
		}
	}
	return s
}

func toolDefs(s *Sample) []model.Tool {
	out := make([]model.Tool, 0, len(s.Tools))
	for _, f := range s.Tools {
		fn := f["function"].(map[string]any)
		params, _ := json.Marshal(fn["parameters"])
		out = append(out, model.Tool{Name: fn["name"].(string), Description: fn["description"].(string), Parameters: params})
	}
	return out
}

// FaultEmptyReply and ParallelTurn name the empty-reply fault and a
// turn of parallel calls in Step.Fault.
const (
	FaultEmptyReply = "empty_reply"
	ParallelTurn    = "parallel_calls"
)

// NextTurn is the raw text of the policy's next turn after the prefix
// (messages msgs, unsolved_set unsolved) in the Hermes/Qwen <tool_call>
// format FTRL parses, and what it did (a scripted Fault* name,
// FaultEmptyReply, ParallelTurn or ""). The turn is planned from the
// prefix's state: the scripted policy (core/model/scripted, faults f,
// seed) over Script(sc, v, unsolved), answering its plan's first entry;
// before that, with seed's own draws, an empty reply (rate f.EmptyReply),
// with two or more calls ready all of them in one turn (rate
// f.ParallelCalls), or, after earlier calls, a repeat of one of them
// (rate f.ExtraCall: the scripted policy's extra call, which it only ever
// inserts after a step, so never as a plan's first entry).
func NextTurn(ctx context.Context, sc *Scenario, v *Variant, msgs []model.Message, unsolved train.UnsolvedSet, tools []model.Tool, f Faults, seed uint64) (string, string, error) {
	script, ready := Script(sc, v, unsolved)
	r := rand.New(rand.NewPCG(seed, 0x7475726e))
	uEmpty, uPar, uExtra := r.Float64(), r.Float64(), r.Float64()
	if uEmpty < f.EmptyReply {
		return "", FaultEmptyReply, nil
	}
	var earlier []model.ToolCall
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			earlier = append(earlier, m.ToolCalls...)
		}
	}
	if len(earlier) > 0 && uExtra < f.ExtraCall {
		c := earlier[r.IntN(len(earlier))]
		nb, _ := json.Marshal(c.Function.Name)
		return "<tool_call>\n{\"name\": " + string(nb) + ", \"arguments\": " + c.Function.Arguments + "}\n</tool_call>", scripted.FaultExtraCall, nil
	}
	if len(ready) >= 2 && uPar < f.ParallelCalls {
		var b strings.Builder
		for i, st := range ready {
			if i > 0 {
				b.WriteString("\n")
			}
			nb, _ := json.Marshal(st.Tool)
			b.WriteString("<tool_call>\n{\"name\": " + string(nb) + ", \"arguments\": " + string(st.Arguments) + "}\n</tool_call>")
		}
		return b.String(), ParallelTurn, nil
	}
	sf := f.Faults
	sf.ExtraCall = 0 // a repeat of an earlier call: drawn above
	p, err := scripted.New(script, sf, seed)
	if err != nil {
		return "", "", err
	}
	offset := 0
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			offset++
		}
	}
	resp, err := scripted.Offset(p, offset).Generate(ctx, &model.Request{Messages: msgs, Tools: tools, Format: model.FormatHermes})
	if err != nil {
		return "", "", err
	}
	return resp.Message.Content, p.Plan()[0].Fault, nil
}

// assistantMessage is the parsed turn as FTRL stores it: the content and
// the parsed calls (ids deterministic: "call_<sample>_<turn>_<i>", where
// FTRL hashes the wall clock), then one tool message per call.
func assistantMessages(id string, turn int, r train.FTRLResult) []model.Message {
	m := model.Message{Role: model.RoleAssistant, Content: r.Content}
	var tools []model.Message
	for i, c := range r.Calls {
		cid := fmt.Sprintf("call_%s_%d_%d", id, turn, i)
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: cid, Type: "function", Function: model.FunctionCall{Name: c.NameString(), Arguments: c.Arguments}})
		tools = append(tools, model.Message{Role: model.RoleTool, Content: r.Feedback[i], ToolCallID: cid})
	}
	return append([]model.Message{m}, tools...)
}

// Rollout runs one episode of sample s0 (a step-0 sample) with FTRL's
// data_sample loop, the accounting train.FTRLEpisode's: each turn is
// planned from the prefix's state by NextTurn (seed per turn), its calls
// (train.ParseFTRLResponse in mode) run on env, the turn is scored from
// the unsolved_set before it (train.FTRLScore through FTRLEpisode.Step),
// and every turn with a tool call appends a Sample of the new prefix with
// the updated unsolved_set and solve_rate; a turn without calls ends the
// episode.
// maxTurns bounds the turns (FTRL's --max_turns, default 20).
func Rollout(ctx context.Context, env *Env, sc *Scenario, s0 Sample, f Faults, seed uint64, maxTurns int, mode train.FTRLMode) (*Episode, []Sample, error) {
	run := env.Runner()
	tools := toolDefs(&s0)
	ep := &Episode{ID: s0.Variant + "-e" + fmt.Sprint(seed%1000), Sample: s0.ID, Scenario: sc.ID, Type: sc.Type, Variant: s0.Variant}
	answer := sc.Answer
	acc, err := train.NewFTRLEpisode(s0.Unsolved, &answer, mode)
	if err != nil {
		return nil, nil, fmt.Errorf("ftrl: %s: %w", s0.ID, err)
	}
	cur := s0
	samples := []Sample{s0}
	for turn := 0; turn < maxTurns; turn++ {
		resp, fault, err := NextTurn(ctx, sc, env.Dep.Variant, cur.Messages, cur.Unsolved, tools, f, seedOf(seed, "turn", strconv.Itoa(turn)))
		if err != nil {
			return nil, nil, err
		}
		var outputs []string
		if calls := train.ParseFTRLResponse(resp, mode).Calls; len(calls) > 0 {
			if outputs, err = run(ctx, calls); err != nil {
				return nil, nil, err
			}
		}
		r, err := acc.Step(ctx, resp, outputs)
		if err != nil {
			return nil, nil, fmt.Errorf("ftrl: %s turn %d: %w", ep.ID, turn, err)
		}
		ep.Steps = append(ep.Steps, Step{Turn: turn, Response: resp, Fault: fault, Branch: r.Branch, Scores: r.Scores,
			Feedback: r.Feedback, Solved: len(r.Solved), Unsolved: acc.Unsolved()})
		if acc.Done() {
			ep.Correct = r.Branch == train.BranchAnswer
			break
		}
		next := cur
		next.Step = cur.Step + 1
		next.ID = fmt.Sprintf("%s-s%d", s0.Variant, next.Step)
		next.Messages = append(append([]model.Message(nil), cur.Messages...), assistantMessages(s0.Variant, turn, r)...)
		next.Unsolved = acc.Unsolved()
		next.SolveRate = acc.SolveRate()
		samples = append(samples, next)
		cur = next
	}
	ep.Solved = cur.SolveRate
	return ep, samples, nil
}
