package module

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkServerFirstCall is the first call of a new session (a fresh
// fork of the seed) on a synthesized server (the bank spec's get_account
// on the wasm interpreter), against a warm second call in the same run
// (docs/benchmarks.md, "Many servers in one process"):
//
//   - second-call: a call in a session that already made one (the peer);
//   - new-session: the first call of a new session on a server called
//     before (its program held by the pooled instance): the warm first
//     call;
//   - new-server: the first call of a server never called, its program
//     sent compiled by the host (sdk/interp.Compile) and decoded by the
//     instance;
//   - new-server-source: the same with the program sent as source and
//     compiled by the instance (what every first call of a server cost
//     before the host compiled programs).
//
// Each reports cpu-µs/op (process CPU per call) and x-second-call (its
// wall time per call over second-call's).
//
//	go test -run '^$' -bench 'ServerFirstCall' -benchtime 300x ./core/module
func BenchmarkServerFirstCall(b *testing.B) {
	ctx := context.Background()
	base := loadBank(b)
	st, seed := bankSeed(b, base)
	rt := newRuntime(b, Config{})
	in, err := rt.Compile(ctx, interpWasm(b))
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(synthReadArgs)
	call := func(m *Module, sess *Session) {
		res, err := m.Call(ctx, sess, "get_account", args)
		if err != nil || res.IsError {
			b.Fatalf("get_account: %v %+v", err, res)
		}
	}
	m0, err := rt.LoadServer(ctx, in, base)
	if err != nil {
		b.Fatal(err)
	}
	call(m0, &Session{Workspace: st.Fork(seed)})
	var peer float64 // ns per second call
	report := func(b *testing.B, cpu, wall time.Duration) {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		if peer > 0 {
			b.ReportMetric(float64(wall.Nanoseconds())/float64(b.N)/peer, "x-second-call")
		}
	}
	timed := func(m *Module, sess *Session) (cpu, wall time.Duration) {
		c0, t0 := processCPU(), time.Now()
		call(m, sess)
		return processCPU() - c0, time.Since(t0)
	}
	b.Run("second-call", func(b *testing.B) {
		sess := &Session{Workspace: st.Fork(seed)}
		call(m0, sess)
		var cpu, wall time.Duration
		for b.Loop() {
			c, w := timed(m0, sess)
			cpu, wall = cpu+c, wall+w
		}
		peer = float64(wall.Nanoseconds()) / float64(b.N)
		report(b, cpu, wall)
	})
	b.Run("new-session", func(b *testing.B) {
		var cpu, wall time.Duration
		for b.Loop() {
			c, w := timed(m0, &Session{Workspace: st.Fork(seed)})
			cpu, wall = cpu+c, wall+w
		}
		report(b, cpu, wall)
	})
	n := 0
	newServer := func(source bool) func(b *testing.B) {
		return func(b *testing.B) {
			var cpu, wall time.Duration
			for b.Loop() {
				b.StopTimer()
				m, err := rt.LoadServer(ctx, in, variant(base, n))
				n++
				if err != nil {
					b.Fatal(err)
				}
				if source {
					m.srv.withProgram = m.srv.withSource
				}
				sess := &Session{Workspace: st.Fork(seed)}
				b.StartTimer()
				c, w := timed(m, sess)
				cpu, wall = cpu+c, wall+w
			}
			report(b, cpu, wall)
		}
	}
	b.Run("new-server", newServer(false))
	b.Run("new-server-source", newServer(true))
}
