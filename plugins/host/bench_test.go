package host_test

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// BenchmarkEpisode runs tau2-retail task 0 (5 tool calls, 6 model turns,
// scripted policy) per built-in harness, once with the harness called
// in-process and once as its own plugin process over gRPC with broker
// callbacks. The difference of the two ns/op in one run is the plugin
// transport's overhead per episode; both include the session's creation,
// the Wasm tool calls and the ledger.
func BenchmarkEpisode(b *testing.B) {
	tasks, policy := retailTasks(b)
	tk := tasks[0]
	srv := newServer(b)
	l := newLauncher(b)
	pol, err := scripted.New(scripted.ScriptFromTau2(tk), scripted.Faults{}, 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range builtin.Names() {
		inproc, _ := builtin.Harness(name)
		proc, err := l.Builtin(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name string
			h    plugin.Harness
		}{{"inprocess", inproc}, {"process", proc}} {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				for b.Loop() {
					info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: []string{"retail"}})
					if err != nil {
						b.Fatal(err)
					}
					res, err := host.Run(ctx, mode.h, &host.Episode{TaskID: tk.ID, SystemPrompt: policy, Policy: pol,
						User: &host.OpeningUser{Opening: tk.Brief()}, Server: srv, Session: info.ID})
					if err != nil || res.Failure != nil || res.Trajectory.Termination != plugin.TerminationDone {
						b.Fatalf("episode: %v %v", err, res)
					}
					if err := srv.Delete(ctx, info.ID, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
