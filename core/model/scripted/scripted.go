// Package scripted is an offline stand-in for a model: a Policy that follows
// a fixed script (typically a tau2 task's reference solution) and departs
// from it only through seeded, configurable faults. It keeps demos and tests
// runnable without an endpoint while still exercising the harness for real:
// it answers in whatever output format the request asks for (native
// function calling, Hermes <tool_call> blocks or tau-bench ReAct text), so
// the harness's parsing, tool execution and verification all run on its
// output.
//
// The plan (script plus faults) is fixed when the Policy is made, from the
// script, the fault rates and the seed alone. Generate keeps no per-episode
// state: it answers with plan entry k, where k is the number of assistant
// messages already in the request, so one Policy serves any number of
// concurrent episodes and a restored conversation resumes where it was.
package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

// Step is one assistant turn of a script: a tool call (Tool and its
// Arguments, a JSON object; empty Arguments means {}) or, when Tool is "",
// a message to the user (Say).
type Step struct {
	Tool      string
	Arguments json.RawMessage
	Say       string
	// Atomic is the id of the atomic task the step belongs to (set by
	// ScriptForView; "" for a tau2 script and for Says). It is not
	// rendered; it names the atomic task of a planted fault (Fault).
	Atomic string
}

// Script is the assistant turns a policy should take, in order.
type Script struct {
	Steps []Step
}

// Fault names used in PlannedStep.Fault.
const (
	FaultNone             = ""
	FaultWrongArgument    = "wrong_argument"
	FaultExtraCall        = "extra_call"
	FaultHallucinatedTool = "hallucinated_tool"
	FaultMalformedCall    = "malformed_call"
	FaultEarlyStop        = "early_stop"
)

// Faults are per-step probabilities, each in [0, 1], that the plan departs
// from the script at a step. They are tried in this order at every script
// step: EarlyStop (the plan ends here with a Say), SkipStep (the step is
// dropped), HallucinatedTool (a call to a tool that does not exist is
// inserted before the step), MalformedCall (a badly formed version of the
// call is inserted before it; the correct call follows), WrongArgument (one
// argument value of the call is changed) and ExtraCall (an additional call
// is inserted after it: a repeat of an earlier read-only-looking call, or of
// the step itself). SkipStep, MalformedCall, WrongArgument and ExtraCall
// apply to tool steps only; EarlyStop and HallucinatedTool to any step.
//
// It is also the faults block of an experiment config's scripted policy
// (core/config decodes into it; the json names are the HCL attributes and
// the Fault* constants).
type Faults struct {
	WrongArgument    float64 `json:"wrong_argument"`
	SkipStep         float64 `json:"skip_step"`
	ExtraCall        float64 `json:"extra_call"`
	HallucinatedTool float64 `json:"hallucinated_tool"`
	MalformedCall    float64 `json:"malformed_call"`
	EarlyStop        float64 `json:"early_stop"`
}

// Validate reports a rate outside [0, 1] or NaN.
func (f Faults) Validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{
		{"WrongArgument", f.WrongArgument}, {"SkipStep", f.SkipStep}, {"ExtraCall", f.ExtraCall},
		{"HallucinatedTool", f.HallucinatedTool}, {"MalformedCall", f.MalformedCall}, {"EarlyStop", f.EarlyStop},
	} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return fmt.Errorf("scripted: fault rate %s = %v, want a probability in [0, 1]", r.name, r.v)
		}
	}
	return nil
}

// PlannedStep is one assistant turn of the plan.
type PlannedStep struct {
	// Step is what the policy does. For a malformed call it is the call the
	// policy meant to make; the rendering breaks it.
	Step Step
	// Fault is "" for a faithful step, else one of the Fault* names.
	Fault string
	// Ref is the index of the script step this entry stands for, -1 for an
	// inserted entry (extra, hallucinated, malformed, early stop).
	Ref int
}

// Fault is one planted fault of a plan: what departs from the script, at
// which assistant turn, and which script step (and atomic task) it hits.
// It is what an episode record carries so that a checker can tell which
// checkpoints the fault should fail (docs/certification.md, "Planted
// faults and their checkpoints").
type Fault struct {
	// Turn is the 0-based assistant turn of the plan entry that carries
	// the fault (the plan index); for a skipped step, the turn the step
	// would have had (the index of the next plan entry).
	Turn int `json:"turn"`
	// Kind is one of the Fault* names, or "skip_step".
	Kind string `json:"kind"`
	// Step is the index of the script step the fault hits: the step
	// changed (wrong_argument), dropped (skip_step), repeated after
	// (extra_call) or preceded by the inserted call (hallucinated_tool,
	// malformed_call, early_stop).
	Step int `json:"step"`
	// Atomic is the atomic task of that script step ("" when the script
	// has none, e.g. ScriptFromTau2, or the step is a Say).
	Atomic string `json:"atomic,omitempty"`
	// Tool and Arguments are the call the policy makes at Turn (the
	// dropped call for skip_step; the repeated call for extra_call; "" for
	// early_stop).
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Want is the script's call at Step (wrong_argument: the arguments
	// before the change); empty for other kinds.
	Want json.RawMessage `json:"want,omitempty"`
	// Of is, for extra_call, the script step the repeated call copies.
	Of int `json:"of,omitempty"`
	// OfAtomic is the atomic task of Of.
	OfAtomic string `json:"of_atomic,omitempty"`
}

// FaultSkipStep names a dropped script step in Fault.Kind (it has no plan
// entry, so no PlannedStep carries it).
const FaultSkipStep = "skip_step"

// Texts the policy uses when it has to say something the script does not.
const (
	// EarlyStopSay ends a plan cut short by an early stop: the agent claims
	// to be done without having finished.
	EarlyStopSay = "I have taken care of your request. Is there anything else I can help you with?"
	// ClosingSay answers past the end of a plan that does not end with a Say.
	ClosingSay = "Is there anything else I can help you with?"
)

// hallucinatedTools are names of tools that tau2 retail does not have; one
// that the script does not use is chosen.
var hallucinatedTools = []string{"get_order_status", "lookup_customer", "check_refund_status", "update_order", "search_orders"}

// ErrFormat is returned (wrapped) by Generate for a request whose Format is
// not one of model.FormatNative, FormatHermes or FormatReAct.
var ErrFormat = errors.New("scripted: unsupported output format")

// Policy is the scripted model.Policy. It is immutable after New and safe
// for concurrent use.
type Policy struct {
	plan    []PlannedStep
	skipped []int
	faults  []Fault
}

var _ model.Policy = (*Policy)(nil)

// New validates the script and the fault rates and computes the plan from
// (script, faults, seed) with a PCG generator: the same inputs always give
// the same plan, and all-zero faults give exactly the script. A step must be
// either a tool call with a JSON object as arguments or a non-empty Say.
func New(script Script, faults Faults, seed uint64) (*Policy, error) {
	if err := faults.Validate(); err != nil {
		return nil, err
	}
	steps := make([]Step, len(script.Steps))
	for i, s := range script.Steps {
		switch {
		case s.Tool == "" && s.Say == "":
			return nil, fmt.Errorf("scripted: step %d: neither a tool call nor a Say", i)
		case s.Tool != "" && s.Say != "":
			return nil, fmt.Errorf("scripted: step %d: both a tool call (%s) and a Say", i, s.Tool)
		case s.Tool != "":
			args := s.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("scripted: step %d (%s): arguments are not a JSON object", i, s.Tool)
			}
			s.Arguments = append(json.RawMessage(nil), args...)
		case len(s.Arguments) > 0:
			return nil, fmt.Errorf("scripted: step %d: a Say with arguments", i)
		}
		steps[i] = s
	}
	p := &Policy{}
	p.plan, p.skipped, p.faults = makePlan(steps, faults, rand.New(rand.NewPCG(seed, 0x77656674)))
	return p, nil
}

// Plan returns a copy of the plan: the assistant turns in order.
func (p *Policy) Plan() []PlannedStep {
	out := make([]PlannedStep, len(p.plan))
	copy(out, p.plan)
	return out
}

// Faults returns the planted faults in plan order (a skipped step at the
// turn it would have had, before the entry now at that turn); nil for a
// plan without faults.
func (p *Policy) Faults() []Fault {
	if len(p.faults) == 0 {
		return nil
	}
	out := make([]Fault, len(p.faults))
	copy(out, p.faults)
	return out
}

// Skipped returns the indexes of the script steps the plan dropped
// (SkipStep faults), ascending. Steps after an early stop are not listed.
func (p *Policy) Skipped() []int {
	return append([]int(nil), p.skipped...)
}

func makePlan(steps []Step, f Faults, rng *rand.Rand) ([]PlannedStep, []int, []Fault) {
	used := map[string]bool{}
	for _, s := range steps {
		used[s.Tool] = true
	}
	var fakes []string
	for _, n := range hallucinatedTools {
		if !used[n] {
			fakes = append(fakes, n)
		}
	}
	var plan []PlannedStep
	var skipped []int
	var planted []Fault
	mark := func(kind string, i int, e Step) {
		planted = append(planted, Fault{Turn: len(plan), Kind: kind, Step: i, Atomic: steps[i].Atomic, Tool: e.Tool, Arguments: e.Arguments})
	}
	for i, s := range steps {
		// Six draws per step whatever happens, so that one rate does not
		// shift the others' outcomes at later steps.
		var u [6]float64
		for k := range u {
			u[k] = rng.Float64()
		}
		isTool := s.Tool != ""
		if u[0] < f.EarlyStop {
			mark(FaultEarlyStop, i, Step{})
			plan = append(plan, PlannedStep{Step: Step{Say: EarlyStopSay}, Fault: FaultEarlyStop, Ref: -1})
			return plan, skipped, planted
		}
		if isTool && u[1] < f.SkipStep {
			mark(FaultSkipStep, i, s)
			skipped = append(skipped, i)
			continue
		}
		if u[2] < f.HallucinatedTool && len(fakes) > 0 {
			args := json.RawMessage(`{}`)
			if isTool {
				args = s.Arguments
			}
			name := fakes[rng.IntN(len(fakes))]
			mark(FaultHallucinatedTool, i, Step{Tool: name, Arguments: args})
			plan = append(plan, PlannedStep{Step: Step{Tool: name, Arguments: args}, Fault: FaultHallucinatedTool, Ref: -1})
		}
		if isTool && u[3] < f.MalformedCall {
			mark(FaultMalformedCall, i, s)
			plan = append(plan, PlannedStep{Step: s, Fault: FaultMalformedCall, Ref: -1})
		}
		entry := PlannedStep{Step: s, Ref: i}
		if isTool && u[4] < f.WrongArgument {
			if args, ok := wrongArgument(s.Arguments, rng); ok {
				entry.Step.Arguments = args
				entry.Fault = FaultWrongArgument
				mark(FaultWrongArgument, i, entry.Step)
				planted[len(planted)-1].Want = s.Arguments
			}
		}
		plan = append(plan, entry)
		if isTool && u[5] < f.ExtraCall {
			var reads []int // plan indexes
			for j, e := range plan {
				if e.Ref >= 0 && readOnly(e.Step.Tool) {
					reads = append(reads, j)
				}
			}
			extra, of := entry.Step, i
			if len(reads) > 0 {
				j := reads[rng.IntN(len(reads))]
				extra, of = plan[j].Step, plan[j].Ref
			}
			mark(FaultExtraCall, i, extra)
			planted[len(planted)-1].Of, planted[len(planted)-1].OfAtomic = of, steps[of].Atomic
			plan = append(plan, PlannedStep{Step: extra, Fault: FaultExtraCall, Ref: -1})
		}
	}
	return plan, skipped, planted
}

// readOnly reports whether a tool name looks like a lookup.
func readOnly(tool string) bool {
	for _, p := range []string{"get_", "find_", "list_", "search_", "lookup_", "check_", "calculate"} {
		if strings.HasPrefix(tool, p) {
			return true
		}
	}
	return false
}

// ScriptFromTau2 is a task's reference solution as a script: every gold
// action in order, then a closing Say that states every communicate_info
// string verbatim.
func ScriptFromTau2(t *task.Tau2Task) Script {
	var s Script
	for _, a := range t.Actions {
		s.Steps = append(s.Steps, Step{Tool: a.Name, Arguments: append(json.RawMessage(nil), a.Arguments...)})
	}
	s.Steps = append(s.Steps, Step{Say: closingSay(t.CommunicateInfo)})
	return s
}

// Generate answers with the plan entry whose index is the number of
// assistant messages in req.Messages, rendered in req.Format; past the end
// of the plan it repeats the plan's final Say (or ClosingSay when the plan
// does not end with one). Usage counts whitespace-separated words, a rough
// stand-in for tokens. Errors: ErrFormat (wrapped) for an unknown Format, a
// nil request, or ctx's error when it is done.
func (p *Policy) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, errors.New("scripted: nil request")
	}
	switch req.Format {
	case model.FormatNative, model.FormatHermes, model.FormatReAct:
	default:
		return nil, fmt.Errorf("%w: %v (%d)", ErrFormat, req.Format, int(req.Format))
	}
	k := 0
	prompt := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			k++
		}
		prompt += words(m.Content)
		for _, c := range m.ToolCalls {
			prompt += words(c.Function.Name) + words(c.Function.Arguments)
		}
	}
	var e PlannedStep
	if k < len(p.plan) {
		e = p.plan[k]
	} else {
		e = PlannedStep{Step: Step{Say: ClosingSay}, Ref: -1}
		if n := len(p.plan); n > 0 && p.plan[n-1].Step.Tool == "" {
			e = p.plan[n-1]
		}
	}
	resp := render(req.Format, e, k)
	resp.Model = "scripted"
	completion := words(resp.Message.Content)
	for _, c := range resp.Message.ToolCalls {
		completion += words(c.Function.Name) + words(c.Function.Arguments)
	}
	resp.Usage = model.Usage{PromptTokens: int64(prompt), CompletionTokens: int64(completion)}
	return resp, nil
}

func words(s string) int { return len(strings.Fields(s)) }
