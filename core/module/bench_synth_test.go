package module

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

// CPU per call of a synthesized server's read and write tool (the bank spec
// of testdata/servers/bank on the interpreter module, and natively with
// NewNativeServer), to be run in the same process as the hand-written Go
// retail module's benchmarks (bench_retail_test.go) for the ratios:
//
//	go test -run '^$' -bench 'Retail(GetOrderDetails|ModifyPendingOrderItems)|Synth' -benchtime 2s ./core/module
//
// docs/benchmarks.md ("Synthesized servers") has the figures.

const (
	synthReadArgs  = `{"account_id":"a1"}`
	synthWriteArgs = `{"from_id":"a1","to_id":"a2","amount":7}`
)

func benchSynth(b *testing.B, wasm bool, tool, args string, fresh bool) {
	s := loadBank(b)
	st, seed := bankSeed(b, s)
	ctx := context.Background()
	var m *Module
	if wasm {
		rt := newRuntime(b, Config{})
		in, err := rt.Compile(ctx, interpWasm(b))
		if err != nil {
			b.Fatal(err)
		}
		if m, err = rt.LoadServer(ctx, in, s); err != nil {
			b.Fatal(err)
		}
	} else {
		var err error
		if m, err = NewNativeServer(s, Config{}); err != nil {
			b.Fatal(err)
		}
	}
	sess := &Session{Workspace: st.Fork(seed)}
	call := func() {
		res, err := m.Call(ctx, sess, tool, json.RawMessage(args))
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	call() // a warm instance holding the program
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		if fresh {
			b.StopTimer()
			sess = &Session{Workspace: st.Fork(seed)}
			b.StartTimer()
		}
		c0 := processCPU()
		call()
		cpu += processCPU() - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the user+system CPU time of this process (all threads):
// on a loaded shared machine wall time per call stretches with the load,
// CPU time much less.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// get_account: one SELECT by primary key, a dict back.
func BenchmarkSynthReadWasm(b *testing.B) { benchSynth(b, true, "get_account", synthReadArgs, false) }
func BenchmarkSynthReadNative(b *testing.B) {
	benchSynth(b, false, "get_account", synthReadArgs, false)
}

// transfer: three SELECTs, two UPDATEs and an INSERT in one unit, on a
// fresh fork per iteration (made outside the timer).
func BenchmarkSynthWriteWasm(b *testing.B) { benchSynth(b, true, "transfer", synthWriteArgs, true) }
func BenchmarkSynthWriteNative(b *testing.B) {
	benchSynth(b, false, "transfer", synthWriteArgs, true)
}
