package module

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// The C retail module (examples/modules/retail-c: the same 16 tools, answers
// byte for byte the Go module's) beside the Go module in wasm, the same Go
// tools native and the SQLite peer, in one run (docs/benchmarks.md, "CPU
// per call: the retail module in C"):
//
//	GOMAXPROCS=2 go test -run '^$' -benchtime 3000x -benchmem \
//	  -bench 'RetailGetOrderDetails(Wasm|WasmC|Native|SQLite)$' ./core/module
//	GOMAXPROCS=2 go test -run '^$' -benchtime 1000x -benchmem \
//	  -bench 'Retail(ModifyPendingOrderItems|CancelPendingOrder)(Wasm|WasmC|Native|SQLite)$' ./core/module
//
// The C module is built with its Makefile (clang, lld, wasi-libc) or taken
// from RETAIL_C_WASM. The ...SQLite benchmarks run bench/sqlitepeer's
// BenchmarkPeerCall (its own Go module, modernc.org/sqlite: the same
// statements on SQLite in-process, no wasm) in that module's test binary
// for b.N calls and report its cpu-µs/op and allocs.

const retailCDir = "../../examples/modules/retail-c"

var (
	retailCOnce sync.Once
	retailCWasm []byte
	retailCErr  error

	peerOnce sync.Once
	peerTest string // bench/sqlitepeer's test binary
	peerErr  error
)

func retailCSetup(b *testing.B) []byte {
	b.Helper()
	retailCOnce.Do(func() {
		if p := os.Getenv("RETAIL_C_WASM"); p != "" {
			retailCWasm, retailCErr = os.ReadFile(p)
			return
		}
		if _, err := exec.LookPath("clang"); err != nil {
			retailCErr = fmt.Errorf("clang not installed (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32): %v", err)
			return
		}
		if msg, err := exec.Command("make", "--no-print-directory", "-C", retailCDir).CombinedOutput(); err != nil {
			retailCErr = fmt.Errorf("building the C retail module: %v\n%s", err, msg)
			return
		}
		retailCWasm, retailCErr = os.ReadFile(filepath.Join(retailCDir, "retail.wasm"))
	})
	if retailCErr != nil {
		b.Fatal(retailCErr)
	}
	return retailCWasm
}

func benchRetailC(b *testing.B, tool, args string, fresh bool) {
	w := retailCSetup(b)
	retailSetup(b)
	benchWasmModule(b, w, tool, args, fresh)
}

func BenchmarkRetailGetOrderDetailsWasmC(b *testing.B) {
	benchRetailC(b, "get_order_details", retailGetArgs, false)
}

func BenchmarkRetailModifyPendingOrderItemsWasmC(b *testing.B) {
	benchRetailC(b, "modify_pending_order_items", retailModifyArg, true)
}

func BenchmarkRetailCancelPendingOrderWasmC(b *testing.B) {
	benchRetailC(b, "cancel_pending_order", retailCancelArg, true)
}

// benchRetailSQLite runs the SQLite engine of bench/sqlitepeer's
// BenchmarkPeerCall for one tool, b.N calls.
func benchRetailSQLite(b *testing.B, tool string) {
	peerOnce.Do(func() {
		peerTest = filepath.Join(fixtureDir, "sqlitepeer.test")
		cmd := exec.Command(goCommand(), "test", "-c", "-o", peerTest, ".")
		cmd.Dir = "../../bench/sqlitepeer"
		if msg, err := cmd.CombinedOutput(); err != nil {
			peerErr = fmt.Errorf("building the sqlitepeer test binary: %v\n%s", err, msg)
		}
	})
	if peerErr != nil {
		b.Fatal(peerErr)
	}
	cmd := exec.Command(peerTest, "-test.run", "^$", "-test.bench", "^BenchmarkPeerCall$/^"+tool+"$/^engine=sqlite$",
		"-test.benchtime", strconv.Itoa(b.N)+"x", "-test.benchmem=true")
	cmd.Dir = "../../bench/sqlitepeer"
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("sqlitepeer %s: %v\n%s", tool, err, out)
	}
	mm := nsPerOp.FindSubmatch(out)
	if mm == nil {
		b.Fatalf("sqlitepeer %s: no ns/op in\n%s", tool, out)
	}
	ns, _ := strconv.ParseFloat(string(mm[1]), 64)
	b.ReportMetric(ns, "ns/op")
	if mm := cpuPerOp.FindSubmatch(out); mm != nil {
		us, _ := strconv.ParseFloat(string(mm[1]), 64)
		b.ReportMetric(us, "cpu-µs/op")
	}
	if mm := allocsPerOp.FindSubmatch(out); mm != nil {
		n, _ := strconv.ParseFloat(string(mm[1]), 64)
		b.ReportMetric(n, "peer-allocs/op")
	}
}

func BenchmarkRetailGetOrderDetailsSQLite(b *testing.B) { benchRetailSQLite(b, "get_order_details") }
func BenchmarkRetailModifyPendingOrderItemsSQLite(b *testing.B) {
	benchRetailSQLite(b, "modify_pending_order_items")
}
func BenchmarkRetailCancelPendingOrderSQLite(b *testing.B) {
	benchRetailSQLite(b, "cancel_pending_order")
}
