package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Tau2Options configure FromTau2.
type Tau2Options struct {
	// Modules are copied into Task.Modules (e.g. "retail@1.0.0").
	Modules []string
	// Tools is the domain's tool set (tool -> read-only), from its tau2
	// tools.json or its modules' manifests; a gold action whose tool is not
	// read-only starts an atomic task, and one whose tool is not in Tools is
	// an error. Required.
	Tools Tau2Tools
	// Source names the task set; Task.Source is Source + ":" + the tau2 id
	// ("tau2-retail:12"), or just the id when Source is "".
	Source string
	// Replay, when set, runs the task's gold actions (calls, in gold
	// order) from its initial state in the benchmark's tool code (e.g. the
	// module on a fresh session) and returns one outcome per call. tau2
	// ignores a gold action its own tool code refuses; FromTau2 does the
	// same with the outcomes (see FromTau2). An error aborts the
	// conversion: the replay could not run, which is not a failed action.
	// nil = every gold action counts as succeeding.
	Replay func(t *Tau2Task, calls []Call) ([]ActionOutcome, error)
}

// ActionOutcome is what one gold action did in a replay of the gold
// actions from the task's initial state.
type ActionOutcome struct {
	// Failed: the tool refused the call (an error result, e.g. "Order not
	// found"); the call changed nothing.
	Failed bool
	// Reason is the tool's error text when Failed.
	Reason string
}

// MetaFailedActions is the Task.Meta key under which FromTau2 records the
// gold actions that failed in the replay ([]FailedAction; FailedActions
// reads it back).
const MetaFailedActions = "tau2_failed_actions"

// FailedAction is a gold action that failed in the benchmark's own tool
// code, as FromTau2 records it in Task.Meta[MetaFailedActions].
type FailedAction struct {
	// Action is the 0-based index of the action in the tau2 task's gold
	// actions (action_id "<task>_<Action>").
	// (Fields in JSON key order, so that a task file read back saves to
	// the same bytes.)
	Action int `json:"action"`
	// DroppedAtomic: the action changes state (ReadOnly false), so it
	// would have started an atomic task; that atomic task was dropped
	// (an agent could not do it, and it would have scored 1 for free). A
	// failed read drops nothing: it stays one of its atomic task's
	// reference calls.
	DroppedAtomic bool `json:"dropped_atomic"`
	// Error is the tool's error text.
	Error string `json:"error"`
	Tool  string `json:"tool"`
}

// FailedActions returns the failed gold actions recorded in t.Meta (nil
// when there are none), whether Meta holds the []FailedAction FromTau2 put
// there or its JSON form read back from a task file. Errors: the entry is
// not a list of FailedAction objects.
func FailedActions(t *Task) ([]FailedAction, error) {
	v, ok := t.Meta[MetaFailedActions]
	if !ok || v == nil {
		return nil, nil
	}
	if fa, ok := v.([]FailedAction); ok {
		return fa, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("task %s: meta %s: %w", t.ID, MetaFailedActions, err)
	}
	var out []FailedAction
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("task %s: meta %s is not a list of failed actions: %w", t.ID, MetaFailedActions, err)
	}
	return out, nil
}

// FromTau2 converts a tau2 task into a composed task.
//
// Atomic tasks: one per state-changing gold action (Tools false), in
// gold order, with ids "a1", "a2", ...; the read calls before an action
// belong to its atomic task and reads after the last action go to the last
// one. Each has Reference = those calls (Compare from compare_args),
// Checks = [changed_rows], After = [the previous atomic id] (a chain), and
// Bindings = the action's arguments whose names end in "_id" or "_ids"
// (a list's items joined with ","), and Request = RenderRequest(action).
// A task whose actions are all reads gets one atomic task holding them, its
// request and bindings from the last call and its check a required_call of
// it; a task without actions gets no atomic task.
//
// Failed gold actions (opts.Replay set): as tau2 ignores a gold action its
// tool code refuses, a state-changing action that failed starts no atomic
// task (its checkpoint would score 1 for any agent, and no agent could do
// it); its call stays in the reference solution, among the calls of the
// next atomic task (or the last one's trailing calls), so the reference
// replay is still tau2's gold sequence. When no state-changing action
// succeeded, the task is treated as all reads, and the required_call is of
// the last call that did not fail (no atomic task when every call failed).
// Every failed action is recorded in Meta[MetaFailedActions]
// ([]FailedAction, in gold order).
//
// Overall: Checks = [state_equal] + one communicate check per
// communicate_info string; Rubric = one item per nl_assertion ("nl1", ...);
// Brief = t.Brief(); Identity = known_info in the first person ("You are
// X" -> "I am X"); Meta["tau2_reward_basis"] = reward_basis when given.
// The result passes Validate; errors are a nil task or empty Tools, an
// action whose tool is not in Tools, or an action whose arguments are not
// a JSON object.
func FromTau2(t *Tau2Task, opts Tau2Options) (*Task, error) {
	if t == nil {
		return nil, errors.New("task: FromTau2: nil task")
	}
	if len(opts.Tools) == 0 {
		return nil, errors.New("task: FromTau2: Tau2Options.Tools is empty")
	}
	out := &Task{
		ID:       t.ID,
		Source:   t.ID,
		Modules:  append([]string{}, opts.Modules...),
		Brief:    t.Brief(),
		Identity: firstPerson(t.Scenario.KnownInfo),
		Atomic:   []Atomic{},
		Checks:   []Check{{Kind: CheckStateEqual, Note: "final state equals the reference replay's (tau2 DB check)"}},
	}
	if opts.Source != "" {
		out.Source = opts.Source + ":" + t.ID
	}
	if strings.TrimSpace(out.Brief) == "" {
		out.Brief = "(no brief)"
	}
	for _, info := range t.CommunicateInfo {
		out.Checks = append(out.Checks, Check{Kind: CheckCommunicate, Text: info})
	}
	for i, a := range t.NLAssertions {
		out.Rubric = append(out.Rubric, RubricItem{ID: fmt.Sprintf("nl%d", i+1), Criterion: a})
	}
	if t.RewardBasis != nil {
		out.Meta = map[string]any{MetaRewardBasis: append([]string{}, t.RewardBasis...)}
	}

	calls := make([]Call, len(t.Actions))
	changes := make([]bool, len(t.Actions))
	for i, a := range t.Actions {
		args := a.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if !isObject(args) {
			return nil, &Error{Task: t.ID, Field: fmt.Sprintf("evaluation_criteria.actions[%d].arguments", i), Err: errors.New("not a JSON object")}
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, args); err != nil {
			return nil, &Error{Task: t.ID, Field: fmt.Sprintf("evaluation_criteria.actions[%d].arguments", i), Err: err}
		}
		calls[i] = Call{Tool: a.Name, Arguments: buf.Bytes()}
		if a.CompareArgs != nil {
			calls[i].Compare = append([]string{}, a.CompareArgs...)
		}
		ro, known := opts.Tools[a.Name]
		if !known {
			return nil, &Error{Task: t.ID, Field: fmt.Sprintf("evaluation_criteria.actions[%d].name", i),
				Err: fmt.Errorf("tool %q is not one of the domain's tools (%s)", a.Name, strings.Join(opts.Tools.Names(), ", "))}
		}
		changes[i] = !ro
	}
	failed := make([]bool, len(calls))
	if opts.Replay != nil && len(calls) > 0 {
		outs, err := opts.Replay(t, calls)
		if err != nil {
			return nil, &Error{Task: t.ID, Field: "evaluation_criteria.actions", Err: fmt.Errorf("replaying the gold actions: %w", err)}
		}
		if len(outs) != len(calls) {
			return nil, &Error{Task: t.ID, Field: "evaluation_criteria.actions", Err: fmt.Errorf("the replay returned %d outcomes for %d gold actions", len(outs), len(calls))}
		}
		var rec []FailedAction
		for i, o := range outs {
			if !o.Failed {
				continue
			}
			failed[i] = true
			rec = append(rec, FailedAction{Action: i, Tool: calls[i].Tool, Error: o.Reason, DroppedAtomic: changes[i]})
			changes[i] = false
		}
		if rec != nil {
			if out.Meta == nil {
				out.Meta = map[string]any{}
			}
			out.Meta[MetaFailedActions] = rec
		}
	}

	start := 0
	for i := range calls {
		if !changes[i] {
			continue
		}
		id := fmt.Sprintf("a%d", len(out.Atomic)+1)
		at := Atomic{
			ID:        id,
			Request:   RenderRequest(calls[i]),
			Bindings:  bindings(calls[i].Arguments),
			Reference: append([]Call{}, calls[start:i+1]...),
			Checks:    []Check{{Kind: CheckChangedRows}},
		}
		if n := len(out.Atomic); n > 0 {
			at.After = []string{out.Atomic[n-1].ID}
		}
		out.Atomic = append(out.Atomic, at)
		start = i + 1
	}
	switch {
	case len(out.Atomic) > 0:
		last := &out.Atomic[len(out.Atomic)-1]
		last.Reference = append(last.Reference, calls[start:]...)
	default:
		last := -1
		for i := range calls {
			if !failed[i] {
				last = i
			}
		}
		if last < 0 {
			break
		}
		c := calls[last]
		out.Atomic = append(out.Atomic, Atomic{
			ID:        "a1",
			Request:   RenderRequest(c),
			Bindings:  bindings(c.Arguments),
			Reference: calls,
			Checks:    []Check{{Kind: CheckRequiredCall, Tool: c.Tool, Arguments: c.Arguments, Compare: c.Compare}},
		})
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// ConvertTau2File loads a tau2 tasks file (LoadTau2File) and converts every
// task with FromTau2, in file order.
func ConvertTau2File(path string, opts Tau2Options) ([]*Task, error) {
	raw, err := LoadTau2File(path)
	if err != nil {
		return nil, err
	}
	out := make([]*Task, 0, len(raw))
	for _, t := range raw {
		c, err := FromTau2(t, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// bindings collects the arguments named *_id or *_ids: strings as they are,
// lists of strings joined with ",", other values as compact JSON. nil when
// there are none.
func bindings(args json.RawMessage) map[string]string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out map[string]string
	for k, v := range m {
		if !strings.HasSuffix(k, "_id") && !strings.HasSuffix(k, "_ids") {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = valueText(v)
	}
	return out
}

func valueText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(v, &list) == nil && list != nil {
		return strings.Join(list, ",")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return buf.String()
	}
	return string(v)
}

var youRE = regexp.MustCompile(`\b([Yy]ou(?:'re|r)?)\b(\s+(?:are|name)\b)?`)

// firstPerson turns tau2's second-person known_info into what the customer
// says: "You are X" -> "I am X", "Your"/"You name" -> "My", "you're" ->
// "I'm", other "you" -> "I".
func firstPerson(s string) string {
	s = strings.TrimSpace(s)
	return youRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := youRE.FindStringSubmatch(m)
		word, next := sub[1], strings.TrimSpace(sub[2])
		upper := word[0] == 'Y'
		my := "my"
		if upper {
			my = "My"
		}
		switch strings.ToLower(word) {
		case "you're":
			return "I'm"
		case "your":
			return my + sub[2]
		}
		switch next {
		case "are":
			return "I am"
		case "name":
			return my + " name"
		}
		return "I"
	})
}

// RenderRequest renders what a customer says to ask for a call: a fixed
// sentence per tau2 retail tool with the argument values filled in (e.g.
// cancel_pending_order: "Please cancel my order #W2378156 — reason: no
// longer needed."), and for any other tool, or a retail call missing an
// argument the sentence needs, "Please run TOOL with K: V, ..." with the
// arguments in key order. The same call always renders the same text.
func RenderRequest(c Call) string {
	var m map[string]json.RawMessage
	if len(c.Arguments) > 0 {
		_ = json.Unmarshal(c.Arguments, &m)
	}
	ok := true
	str := func(k string) string {
		var s string
		if v, found := m[k]; !found || json.Unmarshal(v, &s) != nil {
			ok = false
		}
		return s
	}
	list := func(k string) []string {
		var l []string
		if v, found := m[k]; !found || json.Unmarshal(v, &l) != nil || len(l) == 0 {
			ok = false
		}
		return l
	}
	var s string
	switch c.Tool {
	case "cancel_pending_order":
		s = fmt.Sprintf("Please cancel my order %s — reason: %s.", str("order_id"), str("reason"))
	case "modify_pending_order_address":
		s = fmt.Sprintf("Please change the shipping address of my order %s to %s.", str("order_id"), address(str))
	case "modify_user_address":
		s = fmt.Sprintf("Please change the default address of my account (user %s) to %s.", str("user_id"), address(str))
	case "modify_pending_order_items":
		old, nw := list("item_ids"), list("new_item_ids")
		s = fmt.Sprintf("Please change the items of my pending order %s: %s; use payment method %s for any price difference.",
			str("order_id"), pairs(old, nw, &ok), str("payment_method_id"))
	case "modify_pending_order_payment":
		s = fmt.Sprintf("Please switch the payment of my order %s to payment method %s.", str("order_id"), str("payment_method_id"))
	case "return_delivered_order_items":
		s = fmt.Sprintf("I would like to return %s from my order %s, refunded to payment method %s.",
			items(list("item_ids")), str("order_id"), str("payment_method_id"))
	case "exchange_delivered_order_items":
		old, nw := list("item_ids"), list("new_item_ids")
		s = fmt.Sprintf("I would like to exchange items of my delivered order %s: %s; use payment method %s for any price difference.",
			str("order_id"), pairs(old, nw, &ok), str("payment_method_id"))
	case "transfer_to_human_agents":
		s = fmt.Sprintf("Please transfer me to a human agent. In short: %s", strings.TrimSpace(str("summary")))
	case "get_order_details":
		s = fmt.Sprintf("Can you look up order %s?", str("order_id"))
	case "get_user_details":
		s = fmt.Sprintf("Can you look up my account, user %s?", str("user_id"))
	case "get_product_details":
		s = fmt.Sprintf("Can you tell me about product %s and its variants?", str("product_id"))
	case "get_item_details":
		s = fmt.Sprintf("Can you look up item %s?", str("item_id"))
	case "find_user_id_by_name_zip":
		s = fmt.Sprintf("Can you find my account? I am %s %s, zip code %s.", str("first_name"), str("last_name"), str("zip"))
	case "find_user_id_by_email":
		s = fmt.Sprintf("Can you find my account? My email is %s.", str("email"))
	case "list_all_product_types":
		s = "Which product types do you sell?"
	case "calculate":
		s = fmt.Sprintf("Can you calculate %s for me?", str("expression"))
	default:
		ok = false
	}
	if ok {
		return s
	}
	return genericRequest(c.Tool, m)
}

func address(str func(string) string) string {
	parts := []string{str("address1")}
	if a2 := strings.TrimSpace(str("address2")); a2 != "" {
		parts = append(parts, a2)
	}
	parts = append(parts, str("city"), str("state")+" "+str("zip"), str("country"))
	return strings.Join(parts, ", ")
}

func pairs(old, nw []string, ok *bool) string {
	if len(old) != len(nw) {
		*ok = false
		return ""
	}
	ps := make([]string, len(old))
	for i := range old {
		ps[i] = fmt.Sprintf("item %s for item %s", old[i], nw[i])
	}
	return strings.Join(ps, ", ")
}

func items(ids []string) string {
	if len(ids) == 1 {
		return "item " + ids[0]
	}
	return "items " + strings.Join(ids, ", ")
}

func genericRequest(tool string, m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return fmt.Sprintf("Please run %s.", tool)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + valueText(m[k])
	}
	return fmt.Sprintf("Please run %s with %s.", tool, strings.Join(parts, ", "))
}

// Verifier bases: which checks the overall checkpoint of a converted tau2
// task holds.
const (
	// BasisWeft is weft's default, stricter than tau2 on its own retail
	// tasks: state_equal plus one communicate check per communicate_info
	// string, whatever the task's reward_basis (FromTau2's output).
	BasisWeft = "weft"
	// BasisTau2 follows the task's own reward_basis (ApplyTau2Basis).
	BasisTau2 = "tau2"
)

// MetaRewardBasis is the Task.Meta key holding tau2's reward_basis
// ([]string), set by FromTau2.
const MetaRewardBasis = "tau2_reward_basis"

// RewardBasis returns the tau2 reward_basis recorded in t.Meta, nil when
// the task has none (not converted from tau2, or tau2 gave none).
func RewardBasis(t *Task) []string {
	switch v := t.Meta[MetaRewardBasis].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// ApplyTau2Basis rewrites the overall checks of a task converted by
// FromTau2 to score as tau2 does, by the task's reward_basis:
//
//   - DB: state_equal (tau2's database check);
//   - COMMUNICATE: one communicate check per communicate_info string (the
//     ones FromTau2 made);
//   - ACTION: one required_call per reference call that did not fail (tau2's
//     action check: each gold call is made, compared on compare_args);
//   - NL_ASSERTION: no executable check: the nl_assertions are the task's
//     rubric items ("nl1", ...), scored by the verifier's judge beside R
//     (rubric_score); without a judge they are not scored.
//
// Atomic tasks are kept (their checkpoints are weft's per-step credit; a
// final state equal to the reference satisfies them). Meta["verifier_basis"]
// is set to "tau2". A task without a reward_basis (a weft task file) is left
// as it is, and so is the basis of a task already rewritten. Errors: a basis
// name tau2 defines that weft cannot score ("ENV_ASSERTION", or an unknown
// one), naming the task; t is then unchanged.
func ApplyTau2Basis(t *Task) error {
	basis := RewardBasis(t)
	if basis == nil || t.Meta["verifier_basis"] == BasisTau2 {
		return nil
	}
	var checks []Check
	var communicate []Check
	for _, c := range t.Checks {
		if c.Kind == CheckCommunicate {
			communicate = append(communicate, c)
		}
	}
	for _, b := range basis {
		switch b {
		case "DB":
			checks = append(checks, Check{Kind: CheckStateEqual, Note: "final state equals the reference replay's (tau2 DB)"})
		case "COMMUNICATE":
			checks = append(checks, communicate...)
		case "ACTION":
			failed := map[int]bool{}
			fa, err := FailedActions(t)
			if err != nil {
				return err
			}
			for _, f := range fa {
				failed[f.Action] = true
			}
			i := 0
			for _, a := range t.Atomic {
				for _, c := range a.Reference {
					if !failed[i] {
						checks = append(checks, Check{Kind: CheckRequiredCall, Tool: c.Tool, Arguments: c.Arguments, Compare: c.Compare, Note: "gold action (tau2 ACTION)"})
					}
					i++
				}
			}
		case "NL_ASSERTION":
			// Rubric items, scored by the judge beside R.
		default:
			return &Error{Task: t.ID, Field: "meta." + MetaRewardBasis, Err: fmt.Errorf("reward basis %q cannot be scored by weft (use verifier basis %q)", b, BasisWeft)}
		}
	}
	if checks == nil {
		checks = []Check{}
	}
	t.Checks = checks
	t.Meta["verifier_basis"] = BasisTau2
	return nil
}
