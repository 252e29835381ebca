package main

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/tool"
)

// Native baselines for core/module's BenchmarkRetail*Wasm (which runs
// these through this package's test binary for its ...Native
// counterparts): the module's tools through the SDK's native Dispatch,
// with module.NewNativeHost serving SQL on a core/state fork of db.json,
// one unit of work per call, as module.Call does for the wasm build.

// Arguments shared with core/module/bench_retail_test.go.
const (
	benchGetArgs    = `{"order_id":"#W2417020"}`
	benchModifyArgs = `{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`
	benchCancelArgs = `{"order_id":"#W4776164","reason":"no longer needed"}`
)

func benchNative(b *testing.B, name, args string, fresh bool) {
	ctx := context.Background()
	st, base := baseState(b)
	var man module.Manifest
	if err := json.Unmarshal(tool.ManifestJSON(), &man); err != nil {
		b.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"tool": name, "arguments": json.RawMessage(args)})
	s := &module.Session{Workspace: st.Fork(base)}
	b.ReportAllocs()
	var cpu time.Duration
	defer func() { b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op") }()
	for b.Loop() {
		if fresh {
			b.StopTimer()
			s = &module.Session{Workspace: st.Fork(base)}
			b.StartTimer()
		}
		c0 := processCPU()
		unit, err := s.Workspace.Begin()
		if err != nil {
			b.Fatal(err)
		}
		raw := tool.Dispatch(ctx, module.NewNativeHost(ctx, s, unit, &man), req)
		if resp, err := abi.DecodeAnswer(raw); err != nil || resp.IsError || resp.InternalError != nil {
			b.Fatalf("%s: %s", name, raw)
		}
		if err := unit.Commit(); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - c0
	}
}

// processCPU is the user+system CPU time of this process (all threads),
// reported per call as cpu-µs/op: on a loaded machine wall time stretches
// with the load, CPU time much less.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkNativeGetOrderDetails(b *testing.B) {
	benchNative(b, "get_order_details", benchGetArgs, false)
}

func BenchmarkNativeModifyPendingOrderItems(b *testing.B) {
	benchNative(b, "modify_pending_order_items", benchModifyArgs, true)
}

func BenchmarkNativeCancelPendingOrder(b *testing.B) {
	benchNative(b, "cancel_pending_order", benchCancelArgs, true)
}

func BenchmarkNativeCalculate(b *testing.B) {
	benchNative(b, "calculate", `{"expression":"(19.99 * 3 + 5) / 2"}`, false)
}

func BenchmarkNativeExport(b *testing.B) {
	benchNative(b, "weft.export", `{}`, false)
}
