package host

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp"
)

// GoldReplay returns a task.Tau2Options.Replay that runs a tau2 task's gold
// actions in order on a fresh session of modules (registry references) on
// srv, from the group's seed state, and deletes the session afterwards. A
// call the tool answers with an error result (e.g. "Order not found"), or
// that is refused before the module (kinds "invalid_arguments",
// "unknown_tool"), is a failed action with the tool's text as the reason;
// any other failure (the session cannot be made, the module traps, times out
// or fails internally) is an error of the replay, so the conversion stops
// instead of dropping an action the benchmark's code would have run.
func GoldReplay(ctx context.Context, srv *megamcp.Server, modules []string) func(*task.Tau2Task, []task.Call) ([]task.ActionOutcome, error) {
	return func(t *task.Tau2Task, calls []task.Call) ([]task.ActionOutcome, error) {
		info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: modules})
		if err != nil {
			return nil, fmt.Errorf("session for the gold replay: %w", err)
		}
		defer srv.Delete(ctx, info.ID, 0)
		out := make([]task.ActionOutcome, len(calls))
		for i, c := range calls {
			res, err := srv.Call(ctx, info.ID, megamcp.CallRequest{Tool: c.Tool, Arguments: c.Arguments})
			if err != nil {
				switch kind := megamcp.ErrorKind(err); kind {
				case "invalid_arguments", "unknown_tool":
					out[i] = task.ActionOutcome{Failed: true, Reason: string(kind) + ": " + err.Error()}
					continue
				}
				return nil, fmt.Errorf("gold action %d (%s): %w", i, c.Tool, err)
			}
			if res.Result.IsError {
				out[i] = task.ActionOutcome{Failed: true, Reason: textContent(res.Result.Content)}
			}
		}
		return out, nil
	}
}
