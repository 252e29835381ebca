package wire

import (
	"encoding/json"
	"fmt"
	"github.com/weft-dev/weft/sdk/plugin"
	"strings"

	"github.com/weft-dev/weft/core/task"
	pb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// CheckKind maps a core/task check kind ("state_equal", ...) to the enum.
// Errors: a kind the protocol does not know.
func CheckKind(k string) (pb.CheckKind, error) {
	v, ok := pb.CheckKind_value["CHECK_KIND_"+strings.ToUpper(k)]
	if !ok || v == 0 {
		return 0, fmt.Errorf("wire: unknown check kind %q", k)
	}
	return pb.CheckKind(v), nil
}

// FromCheckKind maps the enum back ("" for unspecified).
func FromCheckKind(k pb.CheckKind) string {
	if k == pb.CheckKind_CHECK_KIND_UNSPECIFIED {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(k.String(), "CHECK_KIND_"))
}

func names(compare []string) *pb.ArgumentNames {
	if compare == nil {
		return nil
	}
	return &pb.ArgumentNames{Names: append([]string{}, compare...)}
}

func fromNames(n *pb.ArgumentNames) []string {
	if n == nil {
		return nil
	}
	return append([]string{}, n.GetNames()...)
}

// Task converts a task. Errors: an unknown check kind, arguments, expect
// or meta that are not JSON.
func Task(t *task.Task) (*pb.Task, error) {
	if t == nil {
		return nil, nil
	}
	out := &pb.Task{Id: t.ID, Source: t.Source, Modules: append([]string(nil), t.Modules...),
		InitialVersion: t.InitialVersion, Brief: t.Brief, Identity: t.Identity, Rubric: rubric(t.Rubric)}
	var err error
	if out.Checks, err = checks(t.Checks); err != nil {
		return nil, fmt.Errorf("task %s: %w", t.ID, err)
	}
	if t.Meta != nil {
		if out.Meta, err = plugin.ValueOf(map[string]any(t.Meta)); err != nil {
			return nil, fmt.Errorf("task %s: meta: %w", t.ID, err)
		}
	}
	for _, a := range t.Atomic {
		pa := &pb.AtomicTask{Id: a.ID, Request: a.Request, Bindings: a.Bindings, After: append([]string(nil), a.After...), Rubric: rubric(a.Rubric)}
		for i, c := range a.Reference {
			args, err := plugin.JSONValue(c.Arguments)
			if err != nil {
				return nil, fmt.Errorf("task %s atomic %s reference %d: %w", t.ID, a.ID, i, err)
			}
			pa.Reference = append(pa.Reference, &pb.ReferenceCall{Tool: c.Tool, Arguments: args, Compare: names(c.Compare)})
		}
		if pa.Checks, err = checks(a.Checks); err != nil {
			return nil, fmt.Errorf("task %s atomic %s: %w", t.ID, a.ID, err)
		}
		out.Atomic = append(out.Atomic, pa)
	}
	return out, nil
}

func rubric(items []task.RubricItem) []*pb.RubricItem {
	var out []*pb.RubricItem
	for _, r := range items {
		out = append(out, &pb.RubricItem{Id: r.ID, Criterion: r.Criterion, Weight: r.Weight})
	}
	return out
}

func fromRubric(items []*pb.RubricItem) []task.RubricItem {
	var out []task.RubricItem
	for _, r := range items {
		out = append(out, task.RubricItem{ID: r.GetId(), Criterion: r.GetCriterion(), Weight: r.GetWeight()})
	}
	return out
}

func checks(cs []task.Check) ([]*pb.Check, error) {
	var out []*pb.Check
	for i, c := range cs {
		pc, err := Check(c)
		if err != nil {
			return nil, fmt.Errorf("check %d: %w", i, err)
		}
		out = append(out, pc)
	}
	return out, nil
}

// Check converts one check.
func Check(c task.Check) (*pb.Check, error) {
	k, err := CheckKind(c.Kind)
	if err != nil {
		return nil, err
	}
	out := &pb.Check{Kind: k, Sql: c.SQL, Tool: c.Tool, Compare: names(c.Compare), Text: c.Text, Path: c.Path, Note: c.Note, Overwritten: c.Overwritten}
	if out.Arguments, err = plugin.JSONValue(c.Arguments); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	if len(c.Expect) > 0 {
		ev, err := plugin.JSONValue(c.Expect)
		if err != nil {
			return nil, fmt.Errorf("expect: %w", err)
		}
		rows, ok := ev.GetKind().(*pb.Value_ListValue)
		if !ok {
			return nil, fmt.Errorf("expect: not an array of rows")
		}
		out.HasExpect = true
		for i, r := range rows.ListValue.GetValues() {
			l, ok := r.GetKind().(*pb.Value_ListValue)
			if !ok {
				return nil, fmt.Errorf("expect: row %d is not an array", i)
			}
			out.Expect = append(out.Expect, l.ListValue)
		}
	}
	return out, nil
}

// FromCheck converts a check back (Arguments and Expect as compact JSON).
func FromCheck(c *pb.Check) (task.Check, error) {
	out := task.Check{Kind: FromCheckKind(c.GetKind()), SQL: c.GetSql(), Tool: c.GetTool(), Compare: fromNames(c.GetCompare()), Text: c.GetText(), Path: c.GetPath(), Note: c.GetNote(),
		Overwritten: c.GetOverwritten()}
	var err error
	if out.Arguments, err = plugin.ValueJSON(c.GetArguments()); err != nil {
		return out, err
	}
	if c.GetHasExpect() {
		rows := &pb.ValueList{}
		for _, r := range c.GetExpect() {
			rows.Values = append(rows.Values, &pb.Value{Kind: &pb.Value_ListValue{ListValue: r}})
		}
		if out.Expect, err = plugin.ValueJSON(&pb.Value{Kind: &pb.Value_ListValue{ListValue: rows}}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// FromTask converts a task back.
func FromTask(p *pb.Task) (*task.Task, error) {
	if p == nil {
		return nil, nil
	}
	t := &task.Task{ID: p.GetId(), Source: p.GetSource(), Modules: append([]string(nil), p.GetModules()...),
		InitialVersion: p.GetInitialVersion(), Brief: p.GetBrief(), Identity: p.GetIdentity(), Rubric: fromRubric(p.GetRubric())}
	var err error
	if t.Checks, err = fromChecks(p.GetChecks()); err != nil {
		return nil, err
	}
	if m, ok := plugin.GoValue(p.GetMeta()).(map[string]any); ok {
		t.Meta = m
	}
	for _, a := range p.GetAtomic() {
		ta := task.Atomic{ID: a.GetId(), Request: a.GetRequest(), Bindings: a.GetBindings(), After: append([]string(nil), a.GetAfter()...), Rubric: fromRubric(a.GetRubric())}
		for _, c := range a.GetReference() {
			args, err := plugin.ValueJSON(c.GetArguments())
			if err != nil {
				return nil, err
			}
			ta.Reference = append(ta.Reference, task.Call{Tool: c.GetTool(), Arguments: json.RawMessage(args), Compare: fromNames(c.GetCompare())})
		}
		if ta.Checks, err = fromChecks(a.GetChecks()); err != nil {
			return nil, err
		}
		t.Atomic = append(t.Atomic, ta)
	}
	return t, nil
}

func fromChecks(cs []*pb.Check) ([]task.Check, error) {
	var out []task.Check
	for _, c := range cs {
		tc, err := FromCheck(c)
		if err != nil {
			return nil, err
		}
		out = append(out, tc)
	}
	return out, nil
}
