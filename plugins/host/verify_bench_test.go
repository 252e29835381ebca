package host_test

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/plugins/verifier/exec"
)

// BenchmarkVerifyEpisode verifies one finished tau2-retail episode (task
// 0, react harness, scripted policy: 2 checkpoints over the real states)
// the way the executor does: "typed" is the built-in path (verify.Verify
// on the host's values, no request), "exec-adapter" calls the exec plugin's
// Verifier in process through its protocol adapter (v2 request and
// response built and converted, no gRPC): the cost the in-process path
// used to pay (v1 paid JSON encode/decode of task, ledger and checks
// instead).
func BenchmarkVerifyEpisode(b *testing.B) {
	tasks, policy := retailTasks(b)
	tt := tasks[0]
	tk := retailWeftTasks(b)[0]
	srv := newServer(b)
	ctx := context.Background()
	pol, err := scripted.New(scripted.ScriptFromTau2(tt), scripted.Faults{}, 1)
	if err != nil {
		b.Fatal(err)
	}
	h, _ := builtin.Harness("react")
	info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: tk.Modules})
	if err != nil {
		b.Fatal(err)
	}
	initial, err := srv.Current(ctx, info.ID)
	if err != nil {
		b.Fatal(err)
	}
	res, err := host.Run(ctx, h, &host.Episode{TaskID: tk.ID, SystemPrompt: policy, Policy: pol,
		User: &host.OpeningUser{Opening: tt.Brief()}, Server: srv, Session: info.ID})
	if err != nil || res.Failure != nil {
		b.Fatalf("episode: %v %v", err, res)
	}
	final, err := srv.Current(ctx, info.ID)
	if err != nil {
		b.Fatal(err)
	}
	ex := &host.Executor{Server: srv}
	refs, err := ex.ReferenceVersions(ctx, tk)
	if err != nil {
		b.Fatal(err)
	}
	ledger, err := ex.Ledger(info.ID)
	if err != nil {
		b.Fatal(err)
	}
	versions := map[string]*state.Version{verify.Initial: initial, verify.Final: final}
	for k, v := range refs {
		versions[k] = v
	}
	ev := verify.NewStateEvidence(versions)
	for _, mode := range []struct {
		name string
		vf   *exec.Verifier
	}{{"typed", nil}, {"exec-adapter", &exec.Verifier{}}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				var vr *verify.Result
				var err error
				if mode.vf == nil {
					vr, err = host.VerifyEpisode(ctx, nil, ev, info.ID, tk, ledger, res.Trajectory)
				} else {
					vr, err = host.VerifyEpisode(ctx, *mode.vf, ev, info.ID, tk, ledger, res.Trajectory)
				}
				if err != nil || vr.Score != 1 {
					b.Fatalf("verify: %v %+v", err, vr)
				}
			}
		})
	}
}
