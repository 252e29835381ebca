package compose

import (
	"bytes"
	"context"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
)

// BenchmarkCertifyComposite certifies one composed task of about 20
// atomic turns (tau2 retail + airline) from its grounded initial state:
// "reuse" resumes every dropped-step variant from the snapshot before the
// dropped call and builds each init_k's value index from the first
// state's plus the diff; "fresh" (tasks.Options.Fresh, the peer) reruns
// each variant from init_k and exports every init_k. Same verdicts
// (TestComposeSlice, TestPlantedDefects compare the reports).
func BenchmarkCertifyComposite(b *testing.B) {
	ctx := context.Background()
	servers := loadServers(b)
	res, err := Run(ctx, servers, Options{Seed: 1, Tasks: 1, Turns: 20, GenSeeds: 1})
	if err != nil || len(res.Tasks) != 1 {
		b.Fatal(err, len(res.Tasks))
	}
	tk := res.Tasks[0]
	env, err := tasks.SpecEnv(ctx, module.Config{}, servers...)
	if err != nil {
		b.Fatal(err)
	}
	defer env.Store.Close()
	v, err := env.Store.Import(ctx, bytes.NewReader(tk.InitialState))
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name  string
		fresh bool
	}{{"reuse", false}, {"fresh", true}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				// A new Env per iteration: no index survives between runs.
				e, err := tasks.NewEnv(env.Store, v, env.Modules...)
				if err != nil {
					b.Fatal(err)
				}
				rep, _, err := tasks.Certify(ctx, []*task.Task{tk}, func([]string) (*tasks.Env, error) { return e, nil },
					tasks.Options{Fresh: mode.fresh, Initial: func(*task.Task, *tasks.Env) (*state.Version, error) { return v, nil }})
				if err != nil || rep.TasksCertified != 1 {
					b.Fatal(err, rep.Rejections())
				}
			}
		})
	}
}
