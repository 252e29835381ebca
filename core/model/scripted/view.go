package scripted

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/task"
)

// IntermediateSay ends an atomic task's turn in a simulated-user script
// before the last one: the simulated user then states the next request.
const IntermediateSay = "Done. Is there anything else I can help you with?"

// ScriptForView is a composed task's reference solution as a script for an
// episode under view, with atomic tasks in DAG order (t.Order()):
//
//   - task.ViewAgentic: every atomic task's reference calls, then one Say
//     that states every communicate check's text verbatim (the wording of
//     ScriptFromTau2's closing Say), so for a task converted from tau2 the
//     script equals ScriptFromTau2's.
//   - task.ViewSimUser: per atomic task its reference calls, then a Say
//     (IntermediateSay; the last one is the closing Say with the
//     communicate texts), so the simulated user, who states the next
//     request after each agent message, is answered request by request.
//
// Each tool step carries its atomic task's id (Step.Atomic). A task
// without atomic tasks gives the closing Say alone. Errors: a nil
// task, an invalid task (t.Validate) or an unknown view (wrapping
// task.ErrUnknownView).
func ScriptForView(t *task.Task, view string) (Script, error) {
	if t == nil {
		return Script{}, errors.New("scripted: ScriptForView: nil task")
	}
	if err := t.Validate(); err != nil {
		return Script{}, err
	}
	if view != task.ViewAgentic && view != task.ViewSimUser {
		return Script{}, fmt.Errorf("scripted: %w %q", task.ErrUnknownView, view)
	}
	var texts []string
	for _, c := range t.Checks {
		if c.Kind == task.CheckCommunicate {
			texts = append(texts, c.Text)
		}
	}
	var s Script
	order := t.Order()
	for k, i := range order {
		for _, c := range t.Atomic[i].Reference {
			args := json.RawMessage(`{}`)
			if len(c.Arguments) > 0 {
				args = append(json.RawMessage(nil), c.Arguments...)
			}
			s.Steps = append(s.Steps, Step{Tool: c.Tool, Arguments: args, Atomic: t.Atomic[i].ID})
		}
		if view == task.ViewSimUser && k < len(order)-1 {
			s.Steps = append(s.Steps, Step{Say: IntermediateSay})
		}
	}
	s.Steps = append(s.Steps, Step{Say: closingSay(texts)})
	return s, nil
}

// closingSay is the closing Say of a script (ScriptFromTau2, ScriptForView)
// carrying the communicate texts.
func closingSay(texts []string) string {
	if len(texts) == 0 {
		return "Done. Is there anything else I can help you with?"
	}
	return "Done. Here is what you asked about: " + strings.Join(texts, "; ") + ". Is there anything else I can help you with?"
}
