package megamcp

// Benchmarks of a real `weft serve` process (built from ./cmd/weft and
// started as a child), driven from this process over loopback HTTP, with
// the SERVER's CPU time per call read from /proc/PID/stat (user + system;
// the load generator's own CPU is not counted):
//
//	BenchmarkServeAdminCall   POST /v1/sessions/{id}/calls, each the first
//	                          call of a fresh retail session (issue 16's
//	                          admin API goals)
//	BenchmarkServeMCP         tools/call over MCP Streamable HTTP round-
//	                          robin over 1,000 live sessions (hello's
//	                          list_notes, a keyed read; issue 16's
//	                          >= 3,000 calls/s goal)
//
// The child runs with GOMAXPROCS=2 (WEFT_BENCH_SERVE_PROCS overrides);
// with WEFT_BENCH_SERVE_PROFILE=DIR the head child writes its CPU profile
// (weft serve --cpuprofile) to DIR/<benchmark>.prof when it stops. The C
// retail module is served when examples/modules/retail-c builds
// (megamcptest.RetailC; WEFT_RETAIL_C_DIR points at another checkout's).
// docs/benchmarks.md has the command and results.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

var (
	weftBinMu sync.Mutex
	weftBins  = map[string]string{} // checkout root -> built binary
)

// builtWeft builds ./cmd/weft of the checkout at root once per test
// process.
func builtWeft(b *testing.B, root string) string {
	weftBinMu.Lock()
	defer weftBinMu.Unlock()
	if bin, ok := weftBins[root]; ok {
		return bin
	}
	dir, err := os.MkdirTemp("", "weft-bench-bin-")
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "weft")
	build := exec.Command("go", "build", "-o", bin, "./cmd/weft")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/weft in %s: %v\n%s", root, err, out)
	}
	weftBins[root] = bin
	return bin
}

// serveBuilds are the checkouts whose weft serve the benchmarks run: this
// one ("head") and, with WEFT_BENCH_BASE set to the root of an earlier
// checkout (git archive REV | tar -x -C DIR), that one ("base"), in the
// same run for a ratio.
func serveBuilds() []struct{ name, root string } {
	out := []struct{ name, root string }{{"head", megamcptest.Root()}}
	if base := os.Getenv("WEFT_BENCH_BASE"); base != "" {
		out = append(out, struct{ name, root string }{"base", base})
	}
	return out
}

// servedWeft is a running `weft serve` child.
type servedWeft struct {
	base, token string
	pid         int
	hc          *http.Client
}

const benchToken = "bench-token"

// startServe starts the weft serve of the checkout at root on a free
// loopback port over a fresh copy of the test registry with args added,
// and waits for its listening line.
func startServe(b *testing.B, root string, args ...string) *servedWeft {
	return startServeReg(b, root, benchRegistry(b), nil, args...)
}

// startServeReg is startServe over the registry reg, with env
// ("NAME=value") added to the child's environment.
func startServeReg(b *testing.B, root string, reg *module.Registry, env []string, args ...string) *servedWeft {
	bin := builtWeft(b, root)
	full := append([]string{"serve", "--json", "--addr", "127.0.0.1:0", "--token", benchToken,
		"--registry", reg.Dir(), "--cache-dir", megamcptest.CacheDir(), "--log-level", "error"}, args...)
	if dir := os.Getenv("WEFT_BENCH_SERVE_PROFILE"); dir != "" && root == megamcptest.Root() {
		// The head server's CPU profile, written when it shuts down.
		name := strings.NewReplacer("/", "_", "=", "-").Replace(b.Name())
		full = append(full, "--cpuprofile", filepath.Join(dir, name+".prof"))
	}
	cmd := exec.Command(bin, full...)
	procs := os.Getenv("WEFT_BENCH_SERVE_PROCS")
	if procs == "" {
		procs = "2"
	}
	cmd.Env = append(append(os.Environ(), "GOMAXPROCS="+procs), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		b.Fatalf("weft serve: no listening line: %v\nstderr: %s", err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	var info struct {
		Addr string `json:"addr"`
	}
	if err := json.Unmarshal(line, &info); err != nil || info.Addr == "" {
		b.Fatalf("weft serve: listening line %q: %v", line, err)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	b.Cleanup(hc.CloseIdleConnections)
	return &servedWeft{base: "http://" + info.Addr, token: benchToken, pid: cmd.Process.Pid, hc: hc}
}

// cpu is the child's user + system CPU time so far (/proc/PID/stat
// utime + stime, in clock ticks of 10 ms).
func (w *servedWeft) cpu(b *testing.B) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name in parentheses; utime and stime
	// are fields 14 and 15 (1-based), 12 and 13 after ") ".
	i := bytes.LastIndexByte(data, ')')
	fs := strings.Fields(string(data[i+1:]))
	ut, err1 := strconv.ParseInt(fs[11], 10, 64)
	st, err2 := strconv.ParseInt(fs[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", w.pid, data)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// do sends one admin API request and decodes a JSON answer into out (nil:
// discarded); a status other than want fails the benchmark.
func (w *servedWeft) do(b *testing.B, method, path, body string, want int, out any) {
	req, err := http.NewRequest(method, w.base+path, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			b.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// Retail calls of the admin API benchmark (the orders of
// core/module/bench_retail_test.go); the writes find their order pending
// because each call is the first of a fresh session.
var serveRetailCalls = []struct{ tool, args string }{
	{"get_order_details", `{"order_id":"#W2417020"}`},
	{"modify_pending_order_items", `{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`},
	{"cancel_pending_order", `{"order_id":"#W4776164","reason":"no longer needed"}`},
}

// retailC is the registry name of the C retail module
// (examples/modules/retail-c, megamcptest.RetailC) in the benchmarks'
// registries, when it builds.
const retailC = "retail-c"

// benchRegistry is megamcptest.Registry with the C retail module added
// (tagged retail-c:latest) when it builds in this tree.
func benchRegistry(b *testing.B) *module.Registry {
	reg := megamcptest.Registry(b)
	if tar, _ := megamcptest.RetailC(b); tar != nil {
		d, err := reg.PutTar(tar, "")
		if err == nil {
			err = reg.Tag(retailC, "latest", d)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return reg
}

// retailModules are the retail builds the admin benchmarks serve: the Go
// one (examples/modules/retail, GOOS=wasip1) and the C one; skip, when
// not empty, says why a build is missing from this tree.
func retailModules(b *testing.B) []struct{ name, skip string } {
	_, skip := megamcptest.RetailC(b)
	return []struct{ name, skip string }{{"retail", ""}, {retailC, skip}}
}

// BenchmarkServeAdminCall: issue 16's admin API figure. Per retail module
// (the Go build, "retail", and the C one, "retail-c", skipped with the
// reason when it does not build in this tree) and tool, b.N fresh
// retail sessions are created (not measured), then each gets one call
// (POST /v1/sessions/{id}/calls, in sequence) while the server's CPU is
// measured; then they are deleted. With WEFT_BENCH_BASE the base build's
// server runs beside this one, batches of 100 alternating between them
// (base-... metrics and head/base-cpu, the ratio). Sub-benchmarks: without a data
// directory (weft serve's default) and with --data --fsync never (every
// call appended to the session's ledger before it is acknowledged).
// Metrics: server-cpu-µs/call (the goal's figure: server process CPU, HTTP
// included), wall p50.
func BenchmarkServeAdminCall(b *testing.B) {
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"mem", []string{"--checkpoint-interval", "0"}},
		{"ledger", []string{"--data", "", "--fsync", "never", "--checkpoint-interval", "0"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			// Every build's server runs at once; the batches alternate
			// between them, so a ratio sees the same machine load.
			builds := serveBuilds()
			servers := make([]*servedWeft, len(builds))
			for k, bd := range builds {
				args := mode.args
				if mode.name == "ledger" {
					args = append([]string{}, args...)
					args[1] = b.TempDir()
				}
				servers[k] = startServe(b, bd.root, args...)
			}
			for _, rm := range retailModules(b) {
				b.Run("module="+rm.name, func(b *testing.B) {
					if rm.skip != "" {
						b.Skip(rm.skip)
					}
					for _, c := range serveRetailCalls {
						b.Run(c.tool, func(b *testing.B) {
							const batch = 100
							body := `{"tool":"` + c.tool + `","arguments":` + c.args + `}`
							cpu := make([]time.Duration, len(servers))
							lat := make([][]time.Duration, len(servers))
							b.ResetTimer()
							b.StopTimer()
							for done := 0; done < b.N; {
								n := min(batch, b.N-done)
								for k, w := range servers {
									ids := make([]string, n)
									for i := range ids {
										var s struct {
											ID string `json:"id"`
										}
										w.do(b, "POST", "/v1/sessions", `{"modules":["`+rm.name+`"]}`, http.StatusCreated, &s)
										ids[i] = s.ID
									}
									time.Sleep(20 * time.Millisecond) // let the creations' garbage collection finish
									if k == 0 {
										b.StartTimer()
									}
									c0 := w.cpu(b)
									for _, id := range ids {
										var res struct {
											Result struct {
												IsError bool `json:"isError"`
											} `json:"result"`
										}
										t := time.Now()
										w.do(b, "POST", "/v1/sessions/"+id+"/calls", body, http.StatusOK, &res)
										lat[k] = append(lat[k], time.Since(t))
										if res.Result.IsError {
											b.Fatalf("%s: tool error", c.tool)
										}
									}
									cpu[k] += w.cpu(b) - c0
									if k == 0 {
										b.StopTimer()
									}
									for _, id := range ids {
										w.do(b, "DELETE", "/v1/sessions/"+id, "", http.StatusNoContent, nil)
									}
								}
								done += n
							}
							for k, bd := range builds {
								prefix := ""
								if k > 0 {
									prefix = bd.name + "-"
								}
								b.ReportMetric(float64(cpu[k].Microseconds())/float64(b.N), prefix+"server-cpu-µs/call")
								reportLatency(b, lat[k], prefix)
							}
							if len(builds) > 1 {
								b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "head/base-cpu")
							}
						})
					}
				})
			}
		})
	}
}

// BenchmarkServeMCP: issue 16's Streamable HTTP figure against a real
// weft serve: 1,000 sessions (WEFT_BENCH_SERVE_SESSIONS overrides; 100
// under -short) made through the admin API, one Go SDK client session each
// on /mcp/sessions/{id}, then b.N tools/call of hello's list_notes
// round-robin by 32 concurrent callers. Sub-benchmarks: without a data
// directory, and with --data --fsync never (the ledger append per call).
// Metrics: calls/s, server-cpu-µs/call, gen-cpu-µs/call (this process, the
// SDK clients), p50/p99 (the client's wall time).
func BenchmarkServeMCP(b *testing.B) {
	n := benchSessions
	if testing.Short() {
		n = 100
	}
	if v, err := strconv.Atoi(os.Getenv("WEFT_BENCH_SERVE_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	for _, mode := range []string{"mem", "ledger"} {
		for _, bd := range serveBuilds() {
			b.Run(mode+"/build="+bd.name, func(b *testing.B) {
				args := []string{"--checkpoint-interval", "0", "--max-connections", "4096"}
				if mode == "ledger" {
					args = append(args, "--data", b.TempDir(), "--fsync", "never")
				}
				w := startServe(b, bd.root, args...)
				ctx := context.Background()
				ids := make([]string, n)
				for i := range ids {
					var s struct {
						ID string `json:"id"`
					}
					w.do(b, "POST", "/v1/sessions", `{"modules":["hello"]}`, http.StatusCreated, &s)
					ids[i] = s.ID
				}
				clients := connectMCP(b, w.hc, n, func(i int) string { return w.base + "/mcp/sessions/" + ids[i] })
				params := &mcp.CallToolParams{Name: "list_notes", Arguments: map[string]any{}}
				time.Sleep(100 * time.Millisecond)
				var cpu, gen time.Duration
				reportCalls(b, callPool(b, benchWorkers, func(i int) error {
					res, err := clients[i%n].CallTool(ctx, params)
					if err == nil && res.IsError {
						err = fmt.Errorf("list_notes: tool error %+v", res.Content)
					}
					return err
				}, func(start bool) {
					if start {
						cpu, gen = w.cpu(b), cpuTime()
					} else {
						cpu, gen = w.cpu(b)-cpu, cpuTime()-gen
					}
				}))
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-µs/call")
				// The SDK client's CPU (this process): the load generator's share of the cores.
				b.ReportMetric(float64(gen.Microseconds())/float64(b.N), "gen-cpu-µs/call")
			})
		}
	}
}
