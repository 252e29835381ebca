package module

import (
	"context"
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/weft-dev/weft/sdk/spec"
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
	benchSpec(b, bankDir, wasm, tool, args, fresh)
}

// benchSpec benchmarks tool of the spec in dir, through the wasm
// interpreter or natively.
func benchSpec(b *testing.B, dir string, wasm bool, tool, args string, fresh bool) {
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no spec at %s (the airline domain lands with issue 17's airline work)", dir)
	}
	s, err := spec.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
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

// The tau2 airline domain in the synthesized-server format
// (examples/servers/tau2-airline): get_reservation_details (one
// reservation with its flights, passengers and payments) and
// cancel_reservation (refunds per payment, status change; a fresh fork per
// iteration).
const (
	airlineDir        = "../../examples/servers/tau2-airline"
	airlineReadArgs   = `{"reservation_id":"0QOP4M"}`
	airlineCancelArgs = `{"reservation_id":"9NIYYJ"}`
)

func BenchmarkSynthAirlineReadWasm(b *testing.B) {
	benchSpec(b, airlineDir, true, "get_reservation_details", airlineReadArgs, false)
}

func BenchmarkSynthAirlineReadNative(b *testing.B) {
	benchSpec(b, airlineDir, false, "get_reservation_details", airlineReadArgs, false)
}

func BenchmarkSynthAirlineCancelWasm(b *testing.B) {
	benchSpec(b, airlineDir, true, "cancel_reservation", airlineCancelArgs, true)
}

func BenchmarkSynthAirlineCancelNative(b *testing.B) {
	benchSpec(b, airlineDir, false, "cancel_reservation", airlineCancelArgs, true)
}

// export(): the airline program's whole-state export (about 2,000 flight
// dates, 500 users, 2,000 reservations), what `weft module test` compares
// final states by.
func BenchmarkSynthAirlineExportWasm(b *testing.B) {
	benchSpec(b, airlineDir, true, ExportTool, `{}`, false)
}

func BenchmarkSynthAirlineExportNative(b *testing.B) {
	benchSpec(b, airlineDir, false, ExportTool, `{}`, false)
}
