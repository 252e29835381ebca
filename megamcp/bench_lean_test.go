package megamcp

// BenchmarkServeMCPLean: issue 16's Streamable HTTP figure (1,000 sessions,
// a keyed read, >= 3,000 calls/s on 2 cores with the load generator on the
// same machine) driven by a lean load generator instead of the Go SDK
// client: raw HTTP/1.1 POSTs of pre-built JSON-RPC bodies on MCP sessions
// initialized by hand (initialize, notifications/initialized; no standalone
// SSE stream), so the generator leaves the cores to the server. The answer
// of every call is checked (the expected note text, no tool error).
//
// The server's CPU comes from /proc/PID/stat, the generator's from
// getrusage(RUSAGE_SELF) over the same interval (this test process, HTTP
// client included), so both figures are per call.

import (
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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// leanProtocol is the protocol version the lean generator initializes
// with: the newest of the stateful (initialize + Mcp-Session-Id)
// Streamable HTTP versions, the one the SDK's event store serves.
const leanProtocol = "2025-11-25"

// leanNotes is the number of notes seeded into the c-notes bundle of the
// benchmark (get_note reads id 1..leanNotes).
const leanNotes = 1000

// cNotesRegistry builds examples/modules/c-notes with clang (skipping b
// when clang or its wasm32-wasi sysroot is missing), bundles it with a
// seed of leanNotes notes ("note N"), and stores it in reg as
// c-notes:latest.
func cNotesRegistry(b *testing.B, reg *module.Registry) {
	b.Helper()
	if _, err := exec.LookPath("clang"); err != nil {
		b.Skip("clang not on PATH (c-notes needs Debian's clang, lld, wasi-libc)")
	}
	dir := filepath.Join(megamcptest.Root(), "examples/modules/c-notes")
	tmp := b.TempDir()
	wasmPath := filepath.Join(tmp, "notes.wasm")
	cc := exec.Command("clang", "--target=wasm32-wasi", "-O2", "-std=c11", "-mexec-model=reactor", "-Wl,--strip-all", "-o", wasmPath, filepath.Join(dir, "notes.c"))
	if out, err := cc.CombinedOutput(); err != nil {
		b.Skipf("clang cannot build c-notes here: %v\n%s", err, out)
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]map[string]any, leanNotes)
	for i := range rows {
		rows[i] = map[string]any{"id": i + 1, "text": "note " + strconv.Itoa(i+1)}
	}
	seed, err := json.Marshal(map[string]any{"notes": rows})
	if err != nil {
		b.Fatal(err)
	}
	seedPath := filepath.Join(tmp, "seed.json")
	if err := os.WriteFile(seedPath, seed, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	bd, err := module.BundleWasmFile(ctx, rt, wasm, dir, module.BuildOptions{Seed: seedPath})
	if err != nil {
		b.Fatal(err)
	}
	d, err := reg.Put(bd)
	if err != nil {
		b.Fatal(err)
	}
	if err := reg.Tag("c-notes", "latest", d); err != nil {
		b.Fatal(err)
	}
}

// leanSession is one MCP session of the lean generator.
type leanSession struct {
	url, mcpID string
}

// leanPost sends one JSON-RPC message with the headers of the Streamable
// HTTP transport and returns the status, the Mcp-Session-Id header and the
// body.
func leanPost(hc *http.Client, url, mcpID string, body []byte) (int, string, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header = http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
	if mcpID != "" {
		req.Header["Mcp-Session-Id"] = []string{mcpID}
		req.Header["Mcp-Protocol-Version"] = []string{leanProtocol}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), data, err
}

// leanMessage returns the JSON-RPC message of a response body: the body
// itself for application/json, the first non-empty data line for
// text/event-stream (an event store's priming event has an empty one).
func leanMessage(body []byte) []byte {
	if len(body) > 0 && body[0] == '{' {
		return body
	}
	for rest := body; len(rest) > 0; {
		line, tail, _ := bytes.Cut(rest, []byte("\n"))
		rest = tail
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(bytes.TrimSpace(d)) > 0 {
			return d
		}
	}
	return nil
}

// leanInit opens an MCP session on url: initialize (the answer must carry
// a result and an Mcp-Session-Id), then notifications/initialized (202).
func leanInit(hc *http.Client, url string) (leanSession, error) {
	initBody := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + leanProtocol +
		`","capabilities":{},"clientInfo":{"name":"weft-bench-lean","version":"0"}}}`
	st, id, body, err := leanPost(hc, url, "", []byte(initBody))
	if err != nil {
		return leanSession{}, err
	}
	msg := leanMessage(body)
	if st != http.StatusOK || id == "" || !bytes.Contains(msg, []byte(`"result"`)) {
		return leanSession{}, fmt.Errorf("initialize %s: %d, session id %q: %s", url, st, id, body)
	}
	st, _, body, err = leanPost(hc, url, id, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return leanSession{}, err
	}
	if st != http.StatusAccepted {
		return leanSession{}, fmt.Errorf("notifications/initialized %s: %d %s", url, st, body)
	}
	return leanSession{url: url, mcpID: id}, nil
}

// leanTool is the keyed read the lean benchmark calls: the module, the
// JSON arguments of call i and a text its answer must contain.
type leanTool struct {
	module, name string
	args         func(i int) string
	want         func(i int) string
}

var leanTools = []leanTool{
	{"c-notes", "get_note",
		func(i int) string { return `{"id":` + strconv.Itoa(i%leanNotes+1) + `}` },
		func(i int) string { return `note ` + strconv.Itoa(i%leanNotes+1) + `\"` }},
	{"hello", "list_notes",
		func(int) string { return `{}` },
		func(int) string { return `notes` }},
}

// leanModes are the weft serve transport settings the lean benchmark
// compares, with the builds they apply to ("base" predates the flags).
var leanModes = []struct {
	name string
	args []string
	env  []string
	base bool
}{
	{"default", nil, nil, true},
	{"json", []string{"--mcp-response", "json"}, nil, false},
	{"sse-noresume", []string{"--mcp-resumption=false"}, nil, false},
	{"json-noresume", []string{"--mcp-response", "json", "--mcp-resumption=false"}, nil, false},
	{"default-gogc400", nil, []string{"GOGC=400"}, false},
	{"json-noresume-gogc400", []string{"--mcp-response", "json", "--mcp-resumption=false"}, []string{"GOGC=400"}, false},
}

func BenchmarkServeMCPLean(b *testing.B) {
	n := benchSessions
	if testing.Short() {
		n = 100
	}
	if v, err := strconv.Atoi(os.Getenv("WEFT_BENCH_SERVE_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	workers := benchWorkers
	if v, err := strconv.Atoi(os.Getenv("WEFT_BENCH_LEAN_WORKERS")); err == nil && v > 0 {
		workers = v
	}
	for _, tl := range leanTools {
		for _, md := range leanModes {
			for _, bd := range serveBuilds() {
				if bd.name == "base" && !md.base {
					continue
				}
				b.Run(tl.module+"."+tl.name+"/"+md.name+"/build="+bd.name, func(b *testing.B) {
					reg := megamcptest.Registry(b)
					if tl.module == "c-notes" {
						cNotesRegistry(b, reg)
					}
					args := append([]string{"--checkpoint-interval", "0", "--max-connections", "4096"}, md.args...)
					w := startServeReg(b, bd.root, reg, md.env, args...)
					hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers + 16, MaxConnsPerHost: workers + 16}}
					b.Cleanup(hc.CloseIdleConnections)
					sess := make([]leanSession, n)
					var wg sync.WaitGroup
					var next atomic.Int64
					var initErr atomic.Pointer[error]
					for range 16 {
						wg.Go(func() {
							for {
								i := int(next.Add(1) - 1)
								if i >= n || initErr.Load() != nil {
									return
								}
								var s struct {
									ID string `json:"id"`
								}
								w.do(b, "POST", "/v1/sessions", `{"modules":["`+tl.module+`"]}`, http.StatusCreated, &s)
								ls, err := leanInit(hc, w.base+"/mcp/sessions/"+s.ID)
								if err != nil {
									initErr.CompareAndSwap(nil, &err)
									return
								}
								sess[i] = ls
							}
						})
					}
					wg.Wait()
					if e := initErr.Load(); e != nil {
						b.Fatal(*e)
					}
					prefix := []byte(`{"jsonrpc":"2.0","id":`)
					mid := []byte(`,"method":"tools/call","params":{"name":"` + tl.name + `","arguments":`)
					time.Sleep(100 * time.Millisecond)
					var srvCPU, genCPU time.Duration
					reportCalls(b, callPool(b, workers, func(i int) error {
						body := make([]byte, 0, 128)
						body = append(body, prefix...)
						body = strconv.AppendInt(body, int64(i+1), 10)
						body = append(body, mid...)
						body = append(body, tl.args(i)...)
						body = append(body, "}}"...)
						s := sess[i%n]
						st, _, resp, err := leanPost(hc, s.url, s.mcpID, body)
						if err != nil {
							return err
						}
						msg := leanMessage(resp)
						if st != http.StatusOK || !bytes.Contains(msg, []byte(`"result"`)) || bytes.Contains(msg, []byte(`"isError":true`)) ||
							!bytes.Contains(msg, []byte(tl.want(i))) {
							return fmt.Errorf("%s call %d: %d %s", tl.name, i, st, resp)
						}
						return nil
					}, func(start bool) {
						if start {
							srvCPU, genCPU = w.cpu(b), cpuTime()
						} else {
							srvCPU, genCPU = w.cpu(b)-srvCPU, cpuTime()-genCPU
						}
					}))
					b.ReportMetric(float64(srvCPU.Microseconds())/float64(b.N), "server-cpu-µs/call")
					b.ReportMetric(float64(genCPU.Microseconds())/float64(b.N), "gen-cpu-µs/call")
				})
			}
		}
	}
}
