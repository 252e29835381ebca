package scripted

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

// ScriptForTurn is the part of ScriptForView(t, view) that atomic turn k
// (0-based, in t.Order()) runs when an episode is played one atomic task at
// a time (the training-data drivers):
//
//   - task.ViewSimUser: the k-th atomic task's reference calls, then
//     IntermediateSay, or for the last atomic task the closing Say with the
//     communicate texts (exactly as ScriptForView ends);
//   - task.ViewAgentic: the whole agentic script on turn 0 (the brief asks
//     for everything at once) and no steps on later turns.
//
// For a task with atomic tasks, concatenating ScriptForTurn(t, view, k)
// for k = 0 .. len(t.Atomic)-1 gives ScriptForView(t, view); a task
// without atomic tasks has no turns. Errors: those of ScriptForView (nil or
// invalid task, unknown view), and k outside [0, len(t.Atomic)) naming k
// and the task.
func ScriptForTurn(t *task.Task, view string, k int) (Script, error) {
	full, err := ScriptForView(t, view)
	if err != nil {
		return Script{}, err
	}
	order := t.Order()
	if k < 0 || k >= len(order) {
		return Script{}, fmt.Errorf("scripted: ScriptForTurn: turn %d of task %s is out of range: it has %d atomic tasks", k, t.ID, len(order))
	}
	if view == task.ViewAgentic {
		if k > 0 {
			return Script{}, nil
		}
		return full, nil
	}
	// Simuser: each atomic task is its reference calls and one Say.
	start := 0
	for j := 0; j < k; j++ {
		start += len(t.Atomic[order[j]].Reference) + 1
	}
	end := start + len(t.Atomic[order[k]].Reference) + 1
	return Script{Steps: append([]Step(nil), full.Steps[start:end]...)}, nil
}

// Offset returns a policy that answers every request as p would if the
// request's first n assistant messages were absent: p sees a copy of the
// request without them (the messages around them are kept). A scripted
// Policy, which answers with the plan entry indexed by the number of
// assistant messages, then starts its plan after a conversation of n
// assistant messages: a per-turn script (ScriptForTurn) resumes a
// conversation whose earlier turns hold n assistant messages. A request
// with fewer than n assistant messages reaches p without any. n <= 0
// returns p itself; a nil p is an error at Generate.
func Offset(p model.Policy, n int) model.Policy {
	if n <= 0 {
		return p
	}
	return offsetPolicy{p: p, n: n}
}

type offsetPolicy struct {
	p model.Policy
	n int
}

func (o offsetPolicy) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if o.p == nil {
		return nil, errors.New("scripted: Offset: nil policy")
	}
	if req == nil {
		return o.p.Generate(ctx, nil)
	}
	cp := *req
	cp.Messages = make([]model.Message, 0, len(req.Messages))
	dropped := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant && dropped < o.n {
			dropped++
			continue
		}
		cp.Messages = append(cp.Messages, m)
	}
	return o.p.Generate(ctx, &cp)
}
