package megamcp

// Benchmarks of the serving layer; docs/benchmarks.md ("MegaMCP") has the
// results and the command. Every figure that a goal compares is measured in
// the same run as the figure it is compared with:
//
//	create/...       session creation to the first tool result of a
//	                 three-module group (hello + retail + tally): warm, and
//	                 after a restart with a populated or an empty
//	                 compilation cache
//	memory           1,000 idle retail sessions in one server against 20
//	                 `weft mcp --module retail` processes (extrapolated)
//	throughput/...   tools/call over loopback MCP Streamable HTTP with 1,000
//	                 live sessions, and the same calls in process, with 32
//	                 and with GOMAXPROCS concurrent callers
//
// Under -short the runs that take tens of seconds (an empty compilation
// cache, building and starting weft processes) are skipped and the session
// counts are smaller; -benchtime=1x works for all of them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

const (
	benchSessions = 1000 // live sessions of the memory and throughput runs
	benchProcs    = 20   // weft mcp processes actually started
	benchWorkers  = 32   // concurrent callers of the throughput runs
)

// benchGroup is the three-module lifecycle group of the create runs; its
// first call writes (a unit of work committed on the forked workspace).
var (
	benchGroup     = []string{"hello", "retail", "tally"}
	benchFirstCall = CallRequest{Tool: "incr", Arguments: json.RawMessage(`{"name":"episodes"}`)}
	// retailWrite is the one call each session of the memory run makes.
	retailWrite = json.RawMessage(`{"user_id":"noah_brown_6181","address1":"1 Main St","address2":"","city":"Austin","state":"TX","country":"USA","zip":"78701"}`)
)

// benchFixture is what the sub-benchmarks share: the registry (megamcptest's
// modules plus megamcp/testdata/modules/tally) and a compilation cache
// directory populated on first use.
type benchFixture struct {
	reg       *module.Registry
	cacheDir  string
	cacheOnce sync.Once
	cacheErr  error
}

func newBenchFixture(b *testing.B) *benchFixture {
	reg := megamcptest.Registry(b)
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	bd, err := module.Build(ctx, rt, filepath.Join(megamcptest.Root(), "megamcp/testdata/modules/tally"), module.BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	d, err := reg.Put(bd)
	if err != nil {
		b.Fatal(err)
	}
	if err := reg.Tag("tally", "latest", d); err != nil {
		b.Fatal(err)
	}
	return &benchFixture{reg: reg, cacheDir: b.TempDir()}
}

// cache returns the compilation cache directory, compiling every module of
// the registry into it on first use.
func (f *benchFixture) cache(b *testing.B) string {
	f.cacheOnce.Do(func() {
		ctx := context.Background()
		rt, err := module.NewRuntime(ctx, module.Config{CacheDir: f.cacheDir})
		if err != nil {
			f.cacheErr = err
			return
		}
		defer rt.Close(ctx)
		for _, name := range append(slices.Clone(megamcptest.Modules), "tally") {
			bd, _, err := f.reg.Get(name)
			if err == nil {
				_, err = rt.Compile(ctx, bd.Wasm)
			}
			if err != nil {
				f.cacheErr = fmt.Errorf("%s: %w", name, err)
				return
			}
		}
	})
	if f.cacheErr != nil {
		b.Fatalf("populating the compilation cache: %v", f.cacheErr)
	}
	return f.cacheDir
}

// open starts a runtime (with cacheDir, "" for in-memory) and a server
// without a data directory; close stops both.
func (f *benchFixture) open(tb testing.TB, cacheDir string) (s *Server, close func()) {
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: cacheDir})
	if err != nil {
		tb.Fatal(err)
	}
	s, err = Open(ctx, Config{Runtime: rt, Registry: f.reg, CheckpointInterval: -1})
	if err != nil {
		rt.Close(ctx)
		tb.Fatal(err)
	}
	return s, func() { s.Close(); rt.Close(ctx) }
}

// firstResult creates a session of modules and makes its first call,
// returning the session id and the time taken by the creation alone.
func firstResult(ctx context.Context, s *Server, modules []string, req CallRequest) (string, time.Duration, error) {
	t0 := time.Now()
	info, err := s.Create(ctx, CreateOptions{Modules: modules})
	if err != nil {
		return "", 0, err
	}
	created := time.Since(t0)
	r, err := s.Call(ctx, info.ID, req)
	if err == nil && r.Result.IsError {
		err = fmt.Errorf("%s: tool error %+v", req.Tool, r.Result.Content)
	}
	return info.ID, created, err
}

// percentile returns the p-quantile (0 < p <= 1) of d by nearest rank.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// cpuTime returns the user+system CPU time this process has used (every
// thread: on this shared machine wall times stretch with the load, CPU
// time much less).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func reportLatency(b *testing.B, lat []time.Duration, prefix string) {
	b.ReportMetric(ms(percentile(lat, 0.50)), prefix+"p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), prefix+"p99-ms")
}

// procStatus returns a field of /proc/<pid>/<file> ("self" for this
// process) in bytes, for the "Name:   N kB" lines of status and
// smaps_rollup.
func procStatus(pid, file, field string) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", pid, file))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) == 0 {
			break
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return 0, err
		}
		if len(fs) > 1 && fs[1] == "kB" {
			n <<= 10
		}
		return n, nil
	}
	return 0, fmt.Errorf("/proc/%s/%s: no %s", pid, file, field)
}

// settled collects garbage, returns free memory to the OS and reports the
// live heap and the process's resident set.
func settled(b *testing.B) (heap, rss int64) {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss, err := procStatus("self", "status", "VmRSS")
	if err != nil {
		b.Fatal(err)
	}
	return int64(m.HeapAlloc), rss
}

// BenchmarkMegaMCP runs the sub-benchmarks over one fixture (the registry
// and its modules are built once).
func BenchmarkMegaMCP(b *testing.B) {
	f := newBenchFixture(b)
	b.Run("create", func(b *testing.B) { benchCreate(b, f) })
	b.Run("memory", func(b *testing.B) { benchMemory(b, f) })
	b.Run("throughput", func(b *testing.B) { benchThroughput(b, f) })
}

// benchCreate: a session of hello + retail + tally created and its first
// tool call (tally's incr, a write) answered. Metrics: p50/p99 of that time
// and of the creation alone.
func benchCreate(b *testing.B, f *benchFixture) {
	ctx := context.Background()

	// Warm: the group's modules are compiled and have pooled instances
	// (an earlier session made a call); each iteration is a new session.
	b.Run("warm", func(b *testing.B) {
		s, closeSrv := f.open(b, f.cache(b))
		defer closeSrv()
		if _, _, err := firstResult(ctx, s, benchGroup, benchFirstCall); err != nil {
			b.Fatal(err)
		}
		lat := make([]time.Duration, 0, b.N)
		create := make([]time.Duration, 0, b.N)
		next := make([]time.Duration, 0, b.N)
		var cpu time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c0, t0 := cpuTime(), time.Now()
			id, c, err := firstResult(ctx, s, benchGroup, benchFirstCall)
			lat = append(lat, time.Since(t0))
			cpu += cpuTime() - c0
			create = append(create, c)
			if err != nil {
				b.Fatal(err)
			}
			// For comparison, not in the timed region: the session's
			// second call.
			b.StopTimer()
			t1 := time.Now()
			if _, err := s.Call(ctx, id, benchFirstCall); err != nil {
				b.Fatal(err)
			}
			next = append(next, time.Since(t1))
			if err := s.Delete(ctx, id, 0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		reportLatency(b, lat, "")
		reportLatency(b, create, "create-")
		b.ReportMetric(ms(percentile(next, 0.5)), "next-call-p50-ms")
		b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms/op")
	})

	// Cold: a new runtime and server (a process restart), so every module
	// is loaded: read from the registry, compiled or read from the
	// compilation cache, instantiated, its seed imported.
	cold := func(b *testing.B, dir func() (string, func())) {
		lat := make([]time.Duration, 0, b.N)
		var cpu time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			d, done := dir()
			b.StartTimer()
			c0, t0 := cpuTime(), time.Now()
			s, closeSrv := f.open(b, d)
			_, _, err := firstResult(ctx, s, benchGroup, benchFirstCall)
			lat = append(lat, time.Since(t0))
			cpu += cpuTime() - c0
			b.StopTimer()
			closeSrv()
			done()
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		reportLatency(b, lat, "")
		b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms/op")
	}
	b.Run("cold-disk-cache", func(b *testing.B) {
		d := f.cache(b)
		cold(b, func() (string, func()) { return d, func() {} })
	})
	b.Run("cold-empty-cache", func(b *testing.B) {
		if testing.Short() {
			b.Skip("compiles three modules per iteration (tens of seconds); not under -short")
		}
		cold(b, func() (string, func()) {
			d, err := os.MkdirTemp("", "weft-bench-cache-")
			if err != nil {
				b.Fatal(err)
			}
			return d, func() { os.RemoveAll(d) }
		})
	})
}

// benchMemory: 1,000 idle retail sessions, each after one write, in one
// server, against `weft mcp --module retail` processes (20 started, each
// after initialize and the same call over stdio, their resident sets
// extrapolated to 1,000). The whole measurement runs once per iteration.
func benchMemory(b *testing.B, f *benchFixture) {
	ctx := context.Background()
	n := benchSessions
	if testing.Short() {
		n = 100
	}
	cache := f.cache(b)
	for it := 0; it < b.N; it++ {
		h0, r0 := settled(b)
		s, closeSrv := f.open(b, cache)
		// Fixed cost: the module loaded, a session and a call (instances).
		req := CallRequest{Tool: "modify_user_address", Arguments: retailWrite}
		if _, _, err := firstResult(ctx, s, []string{"retail"}, req); err != nil {
			closeSrv()
			b.Fatal(err)
		}
		h1, r1 := settled(b)
		for i := 1; i < n; i++ {
			if _, _, err := firstResult(ctx, s, []string{"retail"}, req); err != nil {
				closeSrv()
				b.Fatal(err)
			}
		}
		h2, r2 := settled(b)
		if got := len(s.Sessions()); got != n {
			b.Fatalf("%d sessions, want %d", got, n)
		}
		perHeap := float64(h2-h1) / float64(n-1)
		perRSS := float64(r2-r1) / float64(n-1)
		serverRSS := float64(r2 - r0)
		closeSrv()
		b.ReportMetric(perHeap, "heap-B/session")
		b.ReportMetric(perRSS, "rss-B/session")
		b.ReportMetric(float64(h1-h0)/(1<<20), "fixed-heap-MiB")
		b.ReportMetric(float64(r1-r0)/(1<<20), "fixed-rss-MiB")
		b.ReportMetric(serverRSS/(1<<20), "server-rss-MiB")
		b.Logf("server: %d sessions: heap %+.1f MiB fixed, %.0f B/session; RSS %+.1f MiB fixed, %.0f B/session; RSS growth in all %.1f MiB",
			n, float64(h1-h0)/(1<<20), perHeap, float64(r1-r0)/(1<<20), perRSS, serverRSS/(1<<20))

		if testing.Short() {
			b.Log("weft mcp processes: skipped under -short")
			continue
		}
		rss, pss := weftMCPProcesses(b, f.reg.Dir(), cache)
		perProc := float64(rss) / benchProcs
		all := perProc * float64(n)
		b.ReportMetric(perProc/(1<<20), "proc-rss-MiB")
		b.ReportMetric(float64(pss)/benchProcs/(1<<20), "proc-pss-MiB")
		b.ReportMetric(all/serverRSS, "ratio-x")
		b.ReportMetric(perProc/perRSS, "ratio-marginal-x")
		b.Logf("weft mcp: %d processes, mean VmRSS %.1f MiB (Pss %.1f MiB); ×%d = %.2f GiB (linear extrapolation); server RSS growth for %d sessions %.1f MiB: %.0f× less (%.0f× per marginal session)",
			benchProcs, perProc/(1<<20), float64(pss)/benchProcs/(1<<20), n, all/(1<<30), n, serverRSS/(1<<20), all/serverRSS, perProc/perRSS)
	}
}

// weftMCPProcesses builds bin/weft into a temporary directory, starts
// benchProcs `weft mcp --module retail` processes, drives each through
// initialize and one tools/call over stdio, and returns the sum of their
// VmRSS and Pss with all of them live.
func weftMCPProcesses(b *testing.B, regDir, cacheDir string) (rss, pss int64) {
	ctx := context.Background()
	bin := filepath.Join(b.TempDir(), "weft")
	build := exec.Command("go", "build", "-o", bin, "./cmd/weft")
	build.Dir = megamcptest.Root()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/weft: %v\n%s", err, out)
	}
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	var pids []int
	for i := 0; i < benchProcs; i++ {
		cmd := exec.Command(bin, "mcp", "--module", "retail", "--registry", regDir, "--cache-dir", cacheDir)
		cl := mcp.NewClient(&mcp.Implementation{Name: "weft-bench", Version: "0"}, nil)
		cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatalf("weft mcp: %v", err)
		}
		sessions = append(sessions, cs)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "modify_user_address", Arguments: retailWrite})
		if err != nil || res.IsError {
			b.Fatalf("weft mcp: tools/call: %v %+v", err, res)
		}
		pids = append(pids, cmd.Process.Pid)
	}
	for _, pid := range pids {
		p := strconv.Itoa(pid)
		r, err := procStatus(p, "status", "VmRSS")
		if err != nil {
			b.Fatal(err)
		}
		ps, err := procStatus(p, "smaps_rollup", "Pss")
		if err != nil {
			b.Fatal(err)
		}
		rss += r
		pss += ps
	}
	return rss, pss
}

// benchThroughput: tools/call (hello's list_notes) round-robin over 1,000
// live sessions by benchWorkers concurrent callers (and, for comparison, by
// GOMAXPROCS callers), over loopback MCP Streamable HTTP with one Go SDK
// client session per weft session (client and server share the process and
// its cores), and the same calls through Server.Call. Metrics: calls/s,
// CPU time per call, p50/p99 latency, calls that hit the call deadline.
func benchThroughput(b *testing.B, f *benchFixture) {
	ctx := context.Background()
	n := benchSessions
	if testing.Short() {
		n = 100
	}
	s, closeSrv := f.open(b, f.cache(b))
	defer closeSrv()
	h, err := s.Handler(ctx, HTTPOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * benchWorkers, MaxConnsPerHost: 0}}
	defer hc.CloseIdleConnections()

	// Sessions through the admin API, then one MCP client session each
	// (initialize, initialized, the standalone SSE stream).
	ids := make([]string, n)
	for i := range ids {
		resp, err := hc.Post(ts.URL+"/v1/sessions", "application/json", strings.NewReader(`{"modules":["hello"]}`))
		if err != nil {
			b.Fatal(err)
		}
		var body struct {
			ID string `json:"id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated || body.ID == "" {
			b.Fatalf("POST /v1/sessions: %d %v", resp.StatusCode, err)
		}
		ids[i] = body.ID
	}
	t0 := time.Now()
	clients := connectMCP(b, hc, n, func(i int) string { return ts.URL + "/mcp/sessions/" + ids[i] })
	b.Logf("%d sessions, %d MCP client sessions connected in %v", n, n, time.Since(t0).Round(time.Millisecond))

	run := func(b *testing.B, workers int, call func(i int) error) {
		var cpu time.Duration
		reportCalls(b, callPool(b, workers, call, func(start bool) {
			if start {
				cpu = cpuTime()
			} else {
				cpu = cpuTime() - cpu
			}
		}))
		b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms/call")
	}
	params := &mcp.CallToolParams{Name: "list_notes", Arguments: map[string]any{}}
	req := CallRequest{Tool: "list_notes", Arguments: json.RawMessage(`{}`)}
	for _, w := range []int{benchWorkers, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("http/workers=%d", w), func(b *testing.B) {
			run(b, w, func(i int) error {
				res, err := clients[i%n].CallTool(ctx, params)
				if err == nil && res.IsError {
					err = fmt.Errorf("list_notes: tool error %+v", res.Content)
				}
				return err
			})
		})
		b.Run(fmt.Sprintf("in-process/workers=%d", w), func(b *testing.B) {
			run(b, w, func(i int) error {
				r, err := s.Call(ctx, ids[i%n], req)
				if err == nil && r.Result.IsError {
					err = fmt.Errorf("list_notes: tool error %+v", r.Result.Content)
				}
				return err
			})
		})
	}
}

// poolRun is what callPool measured: each call's latency, the calls that
// ended at their deadline, the wall time of all.
type poolRun struct {
	lat      []time.Duration
	timeouts int
	elapsed  time.Duration
}

// callPool makes b.N calls call(0..b.N-1) by workers concurrent callers
// and returns their latencies; mark(true) runs as the timer starts,
// mark(false) as the last call ends (the caller's CPU reading). A call
// that ends at its deadline (isDeadline) is counted, not fatal: a call that
// waited past the call timeout under overload is a result too; any other
// error fails the benchmark.
func callPool(b *testing.B, workers int, call func(i int) error, mark func(start bool)) poolRun {
	lat := make([]time.Duration, b.N)
	var next, timeouts atomic.Int64
	var failed atomic.Pointer[error]
	b.ResetTimer()
	mark(true)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N || failed.Load() != nil {
					return
				}
				t := time.Now()
				err := call(i)
				lat[i] = time.Since(t)
				if err != nil && isDeadline(err) {
					timeouts.Add(1)
					continue
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	mark(false)
	b.StopTimer()
	if e := failed.Load(); e != nil {
		b.Fatal(*e)
	}
	return poolRun{lat: lat, timeouts: int(timeouts.Load()), elapsed: el}
}

// reportCalls reports calls/s (those that did not time out), timeouts
// and the p50/p99 latency of r.
func reportCalls(b *testing.B, r poolRun) {
	b.ReportMetric(float64(b.N-r.timeouts)/r.elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(r.timeouts), "timeouts")
	reportLatency(b, r.lat, "")
}

// connectMCP connects n Go SDK client sessions (initialize, initialized,
// the standalone SSE stream) to endpoint(i), 16 at a time, and closes them
// when the benchmark ends.
func connectMCP(b *testing.B, hc *http.Client, n int, endpoint func(i int) string) []*mcp.ClientSession {
	ctx := context.Background()
	clients := make([]*mcp.ClientSession, n)
	b.Cleanup(func() {
		var wg sync.WaitGroup
		for _, cs := range clients {
			if cs != nil {
				wg.Go(func() { cs.Close() })
			}
		}
		wg.Wait()
	})
	var next atomic.Int64
	var wg sync.WaitGroup
	var connErr atomic.Pointer[error]
	for range 16 {
		wg.Go(func() {
			cl := mcp.NewClient(&mcp.Implementation{Name: "weft-bench", Version: "0"}, nil)
			for {
				i := int(next.Add(1) - 1)
				if i >= n || connErr.Load() != nil {
					return
				}
				cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint(i), HTTPClient: hc}, nil)
				if err != nil {
					connErr.CompareAndSwap(nil, &err)
					return
				}
				clients[i] = cs
			}
		})
	}
	wg.Wait()
	if e := connErr.Load(); e != nil {
		b.Fatalf("connecting MCP clients: %v", *e)
	}
	return clients
}

// isDeadline reports a call that ended at its deadline: module.ErrDeadline
// in process, the MCP tool-failure error of kind "deadline" over HTTP.
func isDeadline(err error) bool {
	if errors.Is(err, module.ErrDeadline) {
		return true
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeToolFailure {
		return false
	}
	var data struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(je.Data, &data) == nil && data.Kind == "deadline"
}
