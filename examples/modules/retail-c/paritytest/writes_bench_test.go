package paritytest

import (
	"encoding/json"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
)

// processCPU is the process's user + system CPU time (getrusage).
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// benchInterleaved measures CPU per call of one tool in the C and the Go
// module interleaved: blocks of 100 calls, C then Go, each call on a fresh
// fork of the seed (made outside the timed CPU), so that a loaded machine
// stretches both alike. It reports each module's median block
// (c-cpu-µs/call, go-cpu-µs/call) and their ratio; b.N is the number of
// block pairs.
//
//	go test -run '^$' -bench Interleaved -benchtime 11x ./examples/modules/retail-c/paritytest
func benchInterleaved(b *testing.B, tool, args string) {
	f := setup(b)
	const per = 100
	mods := []*module.Module{f.c, f.gomod}
	var blocks [2][]float64
	for b.Loop() {
		for k, m := range mods {
			var cpu time.Duration
			for i := 0; i < per; i++ {
				s := f.session()
				c0 := processCPU()
				a := call(m, s, tool, json.RawMessage(args))
				cpu += processCPU() - c0
				if a.Err != "" || a.IsError {
					b.Fatalf("%s: %+v", tool, a)
				}
			}
			blocks[k] = append(blocks[k], float64(cpu.Microseconds())/per)
		}
	}
	med := func(v []float64) float64 {
		sort.Float64s(v)
		return v[len(v)/2]
	}
	c, g := med(blocks[0]), med(blocks[1])
	b.ReportMetric(c, "c-cpu-µs/call")
	b.ReportMetric(g, "go-cpu-µs/call")
	b.ReportMetric(c/g, "c/go")
}

// The arguments of core/module's retail benchmarks (bench_retail_test.go).
func BenchmarkInterleavedModifyPendingOrderItems(b *testing.B) {
	benchInterleaved(b, "modify_pending_order_items",
		`{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`)
}

func BenchmarkInterleavedCancelPendingOrder(b *testing.B) {
	benchInterleaved(b, "cancel_pending_order", `{"order_id":"#W4776164","reason":"no longer needed"}`)
}

func BenchmarkInterleavedGetOrderDetails(b *testing.B) {
	benchInterleaved(b, "get_order_details", `{"order_id":"#W2417020"}`)
}
