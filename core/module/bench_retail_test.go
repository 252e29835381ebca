package module

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
)

// The retail module (examples/modules/retail) through wasm, against the same
// tools run natively on the same state. Run both together for the ratio:
//
//	go test -run '^$' -bench 'Retail' ./core/module
//
// The ...Native benchmarks run the module's own native benchmarks
// (examples/modules/retail/bench_test.go: the SDK's Dispatch with
// NewNativeHost on a core/state fork of db.json, one unit per call) in the
// retail package's test binary, since a main package cannot be linked into
// this one, and report that binary's ns/op.

const (
	retailPkg       = "../../examples/modules/retail"
	retailDB        = "../../examples/data/tau2-retail/db.json"
	retailGetArgs   = `{"order_id":"#W2417020"}`
	retailModifyArg = `{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`
	retailCancelArg = `{"order_id":"#W4776164","reason":"no longer needed"}`
)

// WEFT_BENCH_BASE names a checkout of an earlier weft (its root, e.g.
// from git archive): the ...WasmBase benchmarks build that checkout's
// retail module (SDK and tools as they were there: weft_sql_v1 only, one
// host call per statement) and run it on this host, beside the current
// module, for before/after figures in one run; the calls must succeed,
// so they also show that a module of the older ABI surface still works.
var (
	baseOnce sync.Once
	baseWasm []byte
	baseErr  error
)

func baseSetup(b *testing.B) []byte {
	dir := os.Getenv("WEFT_BENCH_BASE")
	if dir == "" {
		b.Skip("WEFT_BENCH_BASE not set")
	}
	baseOnce.Do(func() {
		out := filepath.Join(fixtureDir, "retail-base.wasm")
		cmd := exec.Command(goCommand(), "build", "-trimpath", "-buildmode=c-shared", "-o", out, "./examples/modules/retail")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			baseErr = fmt.Errorf("building the base retail.wasm: %v\n%s", err, msg)
			return
		}
		baseWasm, baseErr = os.ReadFile(out)
	})
	if baseErr != nil {
		b.Fatal(baseErr)
	}
	return baseWasm
}

var (
	retailOnce  sync.Once
	retailWasm  []byte
	retailTest  string // the retail package's test binary
	retailStore *state.Store
	retailBase  *state.Version
	retailErr   error
)

func retailSetup(b *testing.B) {
	b.Helper()
	retailOnce.Do(func() {
		gobin := goCommand()
		out := filepath.Join(fixtureDir, "retail.wasm")
		cmd := exec.Command(gobin, "build", "-trimpath", "-buildmode=c-shared", "-o", out, retailPkg)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			retailErr = fmt.Errorf("building retail.wasm: %v\n%s", err, msg)
			return
		}
		if retailWasm, retailErr = os.ReadFile(out); retailErr != nil {
			return
		}
		retailTest = filepath.Join(fixtureDir, "retail.test")
		cmd = exec.Command(gobin, "test", "-c", "-o", retailTest, retailPkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			retailErr = fmt.Errorf("building the retail test binary: %v\n%s", err, msg)
			return
		}
		f, err := os.Open(retailDB)
		if err != nil {
			retailErr = err
			return
		}
		defer f.Close()
		retailStore = state.NewStore()
		retailBase, retailErr = retaildb.Load(context.Background(), retailStore, f)
	})
	if retailErr != nil {
		b.Fatal(retailErr)
	}
}

func benchRetailWasm(b *testing.B, tool, args string, fresh bool) {
	retailSetup(b)
	benchWasmModule(b, retailWasm, tool, args, fresh)
}

// benchWasmModule times calls of one tool of a retail module build,
// reporting the process CPU per call (cpu-µs/op) beside ns/op.
func benchWasmModule(b *testing.B, wasm []byte, tool, args string, fresh bool) {
	ctx := context.Background()
	m, err := newRuntime(b, Config{}).Compile(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	s := &Session{Workspace: retailStore.Fork(retailBase)}
	call := func() {
		res, err := m.Call(ctx, s, tool, json.RawMessage(args))
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	call() // a warm instance
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		if fresh {
			b.StopTimer()
			s = &Session{Workspace: retailStore.Fork(retailBase)}
			b.StartTimer()
		}
		c0 := processCPU()
		call()
		cpu += processCPU() - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

var (
	nsPerOp     = regexp.MustCompile(`\s([0-9.]+) ns/op`)
	cpuPerOp    = regexp.MustCompile(`\s([0-9.]+) cpu-µs/op`)
	allocsPerOp = regexp.MustCompile(`\s([0-9]+) allocs/op`)
)

func benchRetailNative(b *testing.B, name string) {
	retailSetup(b)
	cmd := exec.Command(retailTest, "-test.run", "^$", "-test.bench", "^"+name+"$",
		"-test.benchtime", strconv.Itoa(b.N)+"x", "-test.benchmem=true")
	cmd.Dir = retailPkg
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	mm := nsPerOp.FindSubmatch(out)
	if mm == nil {
		b.Fatalf("%s: no ns/op in\n%s", name, out)
	}
	ns, _ := strconv.ParseFloat(string(mm[1]), 64)
	b.ReportMetric(ns, "ns/op")
	if mm := cpuPerOp.FindSubmatch(out); mm != nil {
		us, _ := strconv.ParseFloat(string(mm[1]), 64)
		b.ReportMetric(us, "cpu-µs/op")
	}
	if mm := allocsPerOp.FindSubmatch(out); mm != nil {
		n, _ := strconv.ParseFloat(string(mm[1]), 64)
		b.ReportMetric(n, "native-allocs/op") // the native binary's own allocations per call
	}
}

func BenchmarkRetailGetOrderDetailsWasm(b *testing.B) {
	benchRetailWasm(b, "get_order_details", retailGetArgs, false)
}

func BenchmarkRetailGetOrderDetailsNative(b *testing.B) {
	benchRetailNative(b, "BenchmarkNativeGetOrderDetails")
}

// modify_pending_order_items changes the order's status: every iteration
// runs on a fresh fork (made outside the timer).
func BenchmarkRetailModifyPendingOrderItemsWasm(b *testing.B) {
	benchRetailWasm(b, "modify_pending_order_items", retailModifyArg, true)
}

func BenchmarkRetailModifyPendingOrderItemsNative(b *testing.B) {
	benchRetailNative(b, "BenchmarkNativeModifyPendingOrderItems")
}

// cancel_pending_order changes the order's status: a fresh fork per call.
func BenchmarkRetailCancelPendingOrderWasm(b *testing.B) {
	benchRetailWasm(b, "cancel_pending_order", retailCancelArg, true)
}

func BenchmarkRetailCancelPendingOrderNative(b *testing.B) {
	benchRetailNative(b, "BenchmarkNativeCancelPendingOrder")
}

// The three hot tools of the base module (WEFT_BENCH_BASE) on this host.
func BenchmarkRetailGetOrderDetailsWasmBase(b *testing.B) {
	w := baseSetup(b)
	retailSetup(b)
	benchWasmModule(b, w, "get_order_details", retailGetArgs, false)
}

func BenchmarkRetailModifyPendingOrderItemsWasmBase(b *testing.B) {
	w := baseSetup(b)
	retailSetup(b)
	benchWasmModule(b, w, "modify_pending_order_items", retailModifyArg, true)
}

func BenchmarkRetailCancelPendingOrderWasmBase(b *testing.B) {
	w := baseSetup(b)
	retailSetup(b)
	benchWasmModule(b, w, "cancel_pending_order", retailCancelArg, true)
}

// BenchmarkRetailCalculateWasm is the per-call overhead: a tool without SQL.
func BenchmarkRetailCalculateWasm(b *testing.B) {
	benchRetailWasm(b, "calculate", `{"expression":"(19.99 * 3 + 5) / 2"}`, false)
}

func BenchmarkRetailCalculateNative(b *testing.B) {
	benchRetailNative(b, "BenchmarkNativeCalculate")
}

// BenchmarkRetailExportWasm is the export hook (the whole db in db.json's
// shape), which `weft module test` calls once per case.
func BenchmarkRetailExportWasm(b *testing.B) {
	benchRetailWasm(b, ExportTool, `{}`, false)
}

func BenchmarkRetailExportNative(b *testing.B) {
	benchRetailNative(b, "BenchmarkNativeExport")
}

func BenchmarkRetailExportWasmBase(b *testing.B) {
	w := baseSetup(b)
	retailSetup(b)
	benchWasmModule(b, w, ExportTool, `{}`, false)
}
