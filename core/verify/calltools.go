package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weft-dev/weft/core/task"
)

// CheckCallTools checks that every required_call and forbidden_call check
// of t (the overall ones and each atomic task's) names a tool the task's
// lifecycle group exposes, given its exposed names (module.ToolNames: a
// tool two modules share is exposed only as module__tool). A bare name the
// group exposes only namespaced would never match a ledger call (a
// required call would always fail, a forbidden one always pass); the
// error (wrapping ErrBadTask) names the check and the namespaced
// candidates to pick from. Names neither exposed nor namespaced are left
// alone (a forbidden call of a tool the agent might invent is a fair
// check).
func CheckCallTools(t *task.Task, exposed []string) error {
	if t == nil {
		return fmt.Errorf("%w: no task", ErrBadTask)
	}
	have := map[string]bool{}
	for _, n := range exposed {
		have[n] = true
	}
	check := func(where string, cs []task.Check) error {
		for i, c := range cs {
			if c.Kind != task.CheckRequiredCall && c.Kind != task.CheckForbiddenCall || c.Tool == "" || have[c.Tool] {
				continue
			}
			var cands []string
			for _, n := range exposed {
				if strings.HasSuffix(n, "__"+c.Tool) {
					cands = append(cands, n)
				}
			}
			if len(cands) == 0 {
				continue
			}
			slices.Sort(cands)
			what := "name it so"
			if len(cands) > 1 {
				what = "name one"
			}
			return fmt.Errorf("%w: task %s, %s check %d (%s): tool %q is exposed in this group only as %s (modules share the name); %s",
				ErrBadTask, t.ID, where, i, c.Kind, c.Tool, strings.Join(cands, " and "), what)
		}
		return nil
	}
	for _, a := range t.Atomic {
		if err := check("atomic "+a.ID, a.Checks); err != nil {
			return err
		}
	}
	return check("overall", t.Checks)
}
