package host_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// runTask runs one tau2 task with harness h, the scripted policy without
// faults and the agentic user, on a fresh retail session; it returns the
// result and the final state's hash.
func runTask(t testing.TB, srv *megamcp.Server, h plugin.Harness, tk *task.Tau2Task, policy string) (*host.Result, string) {
	t.Helper()
	ctx := context.Background()
	pol, err := scripted.New(scripted.ScriptFromTau2(tk), scripted.Faults{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: []string{"retail"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Delete(ctx, info.ID, 0)
	res, err := host.Run(ctx, h, &host.Episode{TaskID: tk.ID, SystemPrompt: policy, Policy: pol,
		User: &host.OpeningUser{Opening: tk.Brief()}, Server: srv, Session: info.ID,
		Limits: &plugin.Limits{MaxTurns: 60, MaxToolCalls: 60}})
	if err != nil {
		t.Fatalf("task %s: %v", tk.ID, err)
	}
	v, err := srv.Current(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	return res, v.Hash().String()
}

// TestTau2RetailAllTasks: each built-in harness, as its own process,
// driven by the scripted policy with no faults, completes all 114
// tau2-retail tasks through MegaMCP sessions of the retail module: the
// episode ends "done" with no failure and no format error, every gold
// action reached the environment, the final state equals the reference
// replay's, and the last message to the user carries every
// communicate_info string.
func TestTau2RetailAllTasks(t *testing.T) {
	skipVolumeUnderRace(t)
	tasks, policy := retailTasks(t)
	if len(tasks) != 114 {
		t.Fatalf("%d tasks, want 114", len(tasks))
	}
	srv := newServer(t)
	want := make([]string, len(tasks))
	for i, tk := range tasks {
		want[i] = reference(t, srv, tk)
	}
	l := newLauncher(t)
	for _, name := range builtin.Names() {
		t.Run(name, func(t *testing.T) {
			h, err := l.Builtin(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			sem := make(chan struct{}, 4)
			var mu sync.Mutex
			done := 0
			for i, tk := range tasks {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					res, got := runTask(t, srv, h, tk, policy)
					tr := res.Trajectory
					switch {
					case res.Failure != nil:
						t.Errorf("task %s: failure %s: %s", tk.ID, res.Failure.Kind, res.Failure.Message)
						return
					case tr.Termination != plugin.TerminationDone:
						t.Errorf("task %s: termination %q, want done", tk.ID, tr.Termination)
					case tr.FormatErrors != 0:
						t.Errorf("task %s: %d format errors", tk.ID, tr.FormatErrors)
					case int(tr.ToolCalls) != len(tk.Actions):
						t.Errorf("task %s: %d tool calls, want %d", tk.ID, tr.ToolCalls, len(tk.Actions))
					case got != want[i]:
						t.Errorf("task %s: final state %s, reference %s", tk.ID, got, want[i])
					}
					last := lastToUser(tr)
					for _, info := range tk.CommunicateInfo {
						if !strings.Contains(last, info) {
							t.Errorf("task %s: last message to the user %q lacks %q", tk.ID, last, info)
						}
					}
					mu.Lock()
					done++
					mu.Unlock()
				}()
			}
			wg.Wait()
			if done != len(tasks) {
				t.Fatalf("%d of %d episodes completed", done, len(tasks))
			}
		})
	}
}

// lastToUser is the content of the last assistant message without tool
// calls (the message to the user) of the canonical trajectory.
func lastToUser(tr *plugin.Trajectory) string {
	for i := len(tr.Messages) - 1; i >= 0; i-- {
		m := tr.Messages[i]
		if m.Role == plugin.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content
		}
	}
	return ""
}
