// Command synthscale registers every Toucan server that passes validation
// in ONE `weft serve` process and measures it (issue 17 must-show 3, issue
// 16 item 5a; docs/benchmarks.md, "Many servers in one process"):
//
//	go run ./core/synth/cmd/synthscale [-data DIR] [-weft bin/weft] [-interp bin/weft-interp.bundle] [-n N] [-json]
//
// Steps: every server of DIR/toucan-mcp/servers.jsonl synthesized by the
// deterministic synthesizer and validated (all five stages); the passing
// ones, plus generated variants of them when fewer than N pass (each its
// own name, description "generated variant k of S" and program, marked
// variant in the output), stored as server bundles in a fresh registry
// over the interpreter bundle `make build` writes; then a real `weft
// serve` process on loopback with --preload-all (every server loaded,
// seed imported, before it listens) and, over its admin API (HTTP):
//
//   - registration: servers loaded (GET /v1/modules) and the time;
//   - memory: VmRSS and VmHWM of /proc/PID/status after registration and
//     after one session per server made its first call; per server;
//   - cold first call: a new session on every server in random order and
//     its first call (the server's program never run before: sent compiled
//     to the interpreter instance);
//   - warm first call: again a new session on every server in a new random
//     order and its first call (the program held by an interpreter
//     instance); each such session deleted after its call.
//
// The call of a server is one its normal validation stage made that
// succeeded (a read-only tool's when there is one). `make scale-servers`
// runs it; `make scale-servers SCALE_N=10000` is issue 16's 10,000.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/sdk/spec"
)

func main() {
	o := options{}
	flag.StringVar(&o.data, "data", "../shared/data", "the shared data folder holding toucan-mcp/servers.jsonl")
	flag.StringVar(&o.weft, "weft", "bin/weft", "the weft binary (make build)")
	flag.StringVar(&o.interp, "interp", "bin/weft-interp.bundle", "the interpreter module's bundle (make build writes it)")
	flag.StringVar(&o.work, "work", "", "working directory for the registry and compilation cache (default: a new temporary directory, removed after)")
	flag.IntVar(&o.n, "n", 1000, "servers to register at least: passing servers, then generated variants of them")
	flag.IntVar(&o.limit, "limit", 0, "synthesize only the first LIMIT documented servers (0: all)")
	flag.IntVar(&o.workers, "workers", 2, "servers synthesized and validated in parallel")
	flag.BoolVar(&o.json, "json", false, "print the figures as one JSON object")
	flag.BoolVar(&o.reuse, "reuse", false, "reuse the passing servers a previous run kept under WORK/passing (needs -work): skips synthesis and validation")
	flag.DurationVar(&o.callTimeout, "call-timeout", 30*time.Second, "weft serve --call-timeout (the figure is latency, not the deadline)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "synthscale:", err)
		os.Exit(1)
	}
}

type options struct {
	data, weft, interp, work string
	n, limit, workers        int
	json, reuse              bool
	callTimeout              time.Duration
}

// Figures is the output (JSON field names are the interface).
type Figures struct {
	Documented   int            `json:"documented"`
	Synthesized  int            `json:"synthesized"`
	Passed       int            `json:"passed_validation"`
	NoCall       int            `json:"passed_without_successful_call"`
	Failed       map[string]int `json:"not_registered"` // why, by first failed stage or step
	Variants     int            `json:"generated_variants"`
	Registered   int            `json:"registered"`
	Loaded       int            `json:"loaded_servers"` // GET /v1/modules
	SynthSeconds float64        `json:"synthesize_validate_s"`
	RegisterMS   int64          `json:"register_ms"`      // server-side preload time
	StartMS      int64          `json:"process_start_ms"` // exec to listening
	RSSStartMiB  float64        `json:"rss_registered_mib"`
	RSSMiB       float64        `json:"rss_after_calls_mib"`
	HWMMiB       float64        `json:"hwm_mib"`
	PerServerKiB float64        `json:"rss_per_server_kib"`       // (rss_after_calls - rss_interpreter_only) / registered
	BaseRSSMiB   float64        `json:"rss_interpreter_only_mib"` // weft serve with the interpreter loaded, no server`
	Cold         Latency        `json:"cold_first_call"`
	Warm         Latency        `json:"warm_first_call"`
	Second       Latency        `json:"second_call"`
	ToolErrors   int            `json:"tool_errors"`
	CallFailures int            `json:"call_failures"`
	FirstFailure string         `json:"first_failure,omitempty"`
}

// Latency is a distribution of wall times in milliseconds, measured by
// the client around one admin API request, and the serve process's CPU
// time (user + system, /proc/PID/stat) per request of the phase:
// session creations, calls and deletions together.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	CPU float64 `json:"server_cpu_ms_per_session"`
}

func latency(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return Latency{N: len(s), P50: ms(q(0.5)), P99: ms(q(0.99)), Max: ms(s[len(s)-1])}
}

// entry is one registered server and the call made on it.
type entry struct {
	name    string
	call    *synth.ServingCall
	variant bool
}

func run(ctx context.Context, o options) error {
	fig := &Figures{Failed: map[string]int{}}
	work := o.work
	if work == "" {
		d, err := os.MkdirTemp("", "weft-synthscale-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	reg, err := module.OpenRegistry(filepath.Join(work, "registry"))
	if err != nil {
		return err
	}
	ib, err := os.ReadFile(o.interp)
	if err != nil {
		return fmt.Errorf("%w (run make build)", err)
	}
	interp, err := reg.PutTar(ib, "")
	if err != nil {
		return err
	}
	if err := reg.Tag(module.InterpreterName, "latest", interp); err != nil {
		return err
	}

	t0 := time.Now()
	keep := filepath.Join(work, "passing")
	var servers []passing
	if o.reuse {
		servers, err = loadPassing(keep)
	} else if servers, err = synthesizeAll(ctx, o, fig); err == nil {
		err = savePassing(keep, servers)
	}
	if err != nil {
		return err
	}
	fig.SynthSeconds = time.Since(t0).Seconds()
	fig.Passed = len(servers)
	entries, err := register(reg, interp, servers, o.n, fig)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "synthscale: %d passed validation, %d generated variants, %d registered; starting weft serve\n", fig.Passed, fig.Variants, fig.Registered)

	// The same weft serve on a registry holding the interpreter only, which
	// it preloads (compiled, into the compilation cache the measured run
	// then reads), is the fixed cost.
	empty, err := module.OpenRegistry(filepath.Join(work, "empty"))
	if err != nil {
		return err
	}
	if _, err := empty.PutTar(ib, ""); err != nil {
		return err
	}
	if err := empty.Tag(module.InterpreterName, "latest", interp); err != nil {
		return err
	}
	cache := filepath.Join(work, "cache")
	for i := range 2 { // the first run fills the cache, the second is measured
		base, err := startServe(ctx, o.weft, empty.Dir(), cache, true, o.callTimeout)
		if err != nil {
			return err
		}
		if i == 1 {
			fig.BaseRSSMiB, _ = base.rss()
		}
		base.stop()
	}

	srv, err := startServe(ctx, o.weft, reg.Dir(), cache, true, o.callTimeout)
	if err != nil {
		return err
	}
	defer srv.stop()
	fig.StartMS, fig.RegisterMS = srv.startMS, srv.preloadMS
	var mods struct {
		Servers int `json:"servers"`
	}
	if err := srv.get("/v1/modules", &mods); err != nil {
		return err
	}
	fig.Loaded = mods.Servers
	if fig.Loaded != len(entries) {
		return fmt.Errorf("weft serve loaded %d servers, %d registered", fig.Loaded, len(entries))
	}
	fig.RSSStartMiB, _ = srv.rss()

	rng := rand.New(rand.NewPCG(17, 16))
	c0 := srv.cpu()
	cold, second, err := firstCalls(srv, entries, rng.Perm(len(entries)), false, fig)
	if err != nil {
		return err
	}
	fig.Cold, fig.Second = latency(cold), latency(second)
	fig.Cold.CPU = (srv.cpu() - c0).Seconds() * 1000 / float64(len(entries))
	fig.RSSMiB, fig.HWMMiB = srv.rss()
	fig.PerServerKiB = (fig.RSSMiB - fig.BaseRSSMiB) * 1024 / float64(len(entries))
	c0 = srv.cpu()
	warm, _, err := firstCalls(srv, entries, rng.Perm(len(entries)), true, fig)
	if err != nil {
		return err
	}
	fig.Warm = latency(warm)
	fig.Warm.CPU = (srv.cpu() - c0).Seconds() * 1000 / float64(len(entries))
	_, fig.HWMMiB = srv.rss()

	if o.json {
		b, _ := json.Marshal(fig)
		fmt.Println(string(b))
		return nil
	}
	fmt.Print(fig.text())
	return nil
}

// synthesizeAll synthesizes and validates every documented server with
// o.workers goroutines and returns the passing ones (with their call) in
// documentation order.
func synthesizeAll(ctx context.Context, o options, fig *Figures) ([]passing, error) {
	path := filepath.Join(o.data, "toucan-mcp", "servers.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	docs, bad, _ := synth.LoadToucanFile(f, path)
	f.Close()
	if o.limit > 0 && len(docs) > o.limit {
		docs, bad = docs[:o.limit], 0
	}
	fig.Documented = len(docs) + bad
	if bad > 0 {
		fig.Failed["docs_refused"] = bad
	}
	out := make([]*passing, len(docs))
	why := make([]string, len(docs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, o.workers) {
		wg.Go(func() {
			for i := range next {
				out[i], why[i] = synthesizeOne(ctx, &docs[i])
			}
		})
	}
	for i := range docs {
		next <- i
		if (i+1)%100 == 0 {
			fmt.Fprintf(os.Stderr, "synthscale: %d/%d servers synthesized and validated\n", i+1, len(docs))
		}
	}
	close(next)
	wg.Wait()
	var res []passing
	for i, p := range out {
		if why[i] != "synthesize" {
			fig.Synthesized++
		}
		switch {
		case p != nil:
			res = append(res, *p)
		case why[i] == "no_call":
			fig.NoCall++
			fallthrough
		default:
			fig.Failed[why[i]]++
		}
	}
	return res, nil
}

type passing struct {
	srv  *spec.Server
	call *synth.ServingCall
}

// savePassing writes each passing server as a spec directory
// dir/NNNNN/ (synth.WriteDir) with its call in call.json.
func savePassing(dir string, servers []passing) error {
	for i, p := range servers {
		d := filepath.Join(dir, fmt.Sprintf("%05d", i))
		if err := synth.WriteDir(d, p.srv, nil); err != nil {
			return err
		}
		b, err := json.Marshal(p.call)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, "call.json"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// loadPassing reads what savePassing wrote.
func loadPassing(dir string) ([]passing, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []passing
	for _, e := range ents {
		d := filepath.Join(dir, e.Name())
		s, err := spec.Load(d)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(d, "call.json"))
		if err != nil {
			return nil, err
		}
		var c synth.ServingCall
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, err
		}
		out = append(out, passing{srv: s, call: &c})
	}
	return out, nil
}

// synthesizeOne is one server through synthesis, the serving checks and
// validation; nil and the first step it failed when it is not registered.
func synthesizeOne(ctx context.Context, d *synth.Docs) (*passing, string) {
	s, err := (&synth.Deterministic{}).Synthesize(ctx, &synth.Request{Docs: *d})
	if err != nil {
		return nil, "synthesize"
	}
	var first string
	if err := synth.CheckServed(ctx, s, &synth.ScaleReport{Failures: map[string]int{}}, func(stage string, _ error) { first = stage }); err != nil {
		return nil, first
	}
	rep, call, err := synth.ValidateServing(ctx, s, synth.ValidateOptions{Synthesizer: "deterministic"})
	if err != nil {
		return nil, "validate"
	}
	if !rep.Passed {
		return nil, "validation_" + string(rep.FirstFailed())
	}
	if call == nil {
		return nil, "no_call"
	}
	return &passing{srv: s, call: call}, ""
}

// register stores the passing servers (renamed when a name repeats) and,
// while fewer than n, generated variants of them round robin.
func register(reg *module.Registry, interp string, servers []passing, n int, fig *Figures) ([]entry, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("no server passed validation")
	}
	seen := map[string]bool{}
	var out []entry
	put := func(s *spec.Server, call *synth.ServingCall, variant bool) error {
		b, err := module.ServerBundle(s, interp)
		if err != nil {
			return fmt.Errorf("server %s: %w", s.Name, err)
		}
		if _, err := reg.Put(b); err != nil {
			return err
		}
		seen[s.Name] = true
		out = append(out, entry{name: s.Name, call: call, variant: variant})
		return nil
	}
	for i, p := range servers {
		s := *p.srv
		s.Name = regName(p.srv.Name)
		for k := 2; seen[s.Name]; k++ {
			s.Name = fmt.Sprintf("%s-%d", regName(p.srv.Name), k)
		}
		servers[i].srv = &s
		if err := put(&s, p.call, false); err != nil {
			return nil, err
		}
	}
	for k := 0; len(out) < n; k++ {
		p := servers[k%len(servers)]
		v := *p.srv
		v.Name = fmt.Sprintf("%s-v%05d", p.srv.Name, k)
		v.Description = fmt.Sprintf("generated variant %d of %s (a stand-in for the scale figure): %s", k, p.srv.Name, p.srv.Description)
		v.Program = fmt.Sprintf("# generated variant %d of %s\n%s", k, p.srv.Name, p.srv.Program)
		if err := put(&v, p.call, true); err != nil {
			return nil, err
		}
		fig.Variants++
	}
	fig.Registered = len(out)
	return out, nil
}

// regName is a server name as a registry name: lower case, characters
// other than letters, digits, '.', '_' and '-' replaced by '-', at most 48
// bytes (the registry allows 64; variants add a suffix).
func regName(n string) string {
	if len(n) > 48 {
		n = n[:48]
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, n)
}

// firstCalls makes, for each server in order, a new session and its first
// call (the wall time of the call request alone); without del it also
// times a second call in the same session and keeps the session.
func firstCalls(s *serve, entries []entry, order []int, del bool, fig *Figures) (first, second []time.Duration, err error) {
	for _, i := range order {
		e := entries[i]
		var sess struct {
			ID string `json:"id"`
		}
		b, err := s.post("/v1/sessions", map[string]any{"modules": []string{e.name}})
		if err != nil {
			return nil, nil, fmt.Errorf("session on %s: %w", e.name, err)
		}
		if err := json.Unmarshal(b, &sess); err != nil {
			return nil, nil, err
		}
		call := map[string]any{"tool": e.call.Tool, "arguments": e.call.Arguments}
		for k := range 2 {
			t0 := time.Now()
			b, err := s.post("/v1/sessions/"+sess.ID+"/calls", call)
			d := time.Since(t0)
			if err != nil {
				// Counted and reported, not fatal: the figure is the
				// distribution, failures included.
				fig.CallFailures++
				if fig.FirstFailure == "" {
					fig.FirstFailure = fmt.Sprintf("%s %s: %v", e.name, e.call.Tool, err)
				}
			}
			var res struct {
				Result struct {
					IsError bool `json:"isError"`
				} `json:"result"`
			}
			if json.Unmarshal(b, &res) == nil && res.Result.IsError {
				fig.ToolErrors++
			}
			if k == 0 {
				first = append(first, d)
			} else {
				second = append(second, d)
			}
			if del {
				break
			}
		}
		if del {
			if _, err := s.do(http.MethodDelete, "/v1/sessions/"+sess.ID, nil); err != nil {
				return nil, nil, err
			}
		}
	}
	return first, second, nil
}

// serve is a running weft serve process.
type serve struct {
	cmd                *exec.Cmd
	base, token        string
	client             *http.Client
	startMS, preloadMS int64
}

func startServe(ctx context.Context, weft, registry, cache string, preload bool, callTimeout time.Duration) (*serve, error) {
	token := "synthscale-" + strconv.Itoa(os.Getpid())
	args := []string{"serve", "--json", "--addr", "127.0.0.1:0", "--registry", registry, "--cache-dir", cache,
		"--token", token, "--fsync", "never", "--checkpoint-interval", "0", "--max-sessions", "-1", "--log-level", "warn", "--call-timeout", callTimeout.String()}
	if preload {
		args = append(args, "--preload-all")
	}
	cmd := exec.CommandContext(ctx, weft, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("weft serve did not start: %v", err)
	}
	var info struct {
		Addr      string `json:"addr"`
		PreloadMS int64  `json:"preload_ms"`
	}
	if err := json.Unmarshal(line, &info); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("weft serve printed %q: %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return &serve{cmd: cmd, base: "http://" + info.Addr, token: token,
		client:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: time.Minute},
		startMS: time.Since(t0).Milliseconds(), preloadMS: info.PreloadMS}, nil
}

func (s *serve) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

func (s *serve) do(method, path string, body any) ([]byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

func (s *serve) post(path string, body any) ([]byte, error) { return s.do(http.MethodPost, path, body) }

func (s *serve) get(path string, v any) error {
	b, err := s.do(http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// cpu is the process's user + system CPU time (/proc/PID/stat fields 14
// and 15, in clock ticks of 1/100 s: Linux's USER_HZ).
func (s *serve) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

// rss reads VmRSS and VmHWM of the process (/proc/PID/status), in MiB.
func (s *serve) rss() (rss, hwm float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		}
	}
	return rss, hwm
}

func (f *Figures) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "documented %d, synthesized %d, passed validation %d (%d of them without a successful normal call, not registered)\n", f.Documented, f.Synthesized, f.Passed+f.NoCall, f.NoCall)
	keys := make([]string, 0, len(f.Failed))
	for k := range f.Failed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  not registered, %s: %d\n", k, f.Failed[k])
	}
	fmt.Fprintf(&b, "synthesis + validation: %.1f s (GOMAXPROCS %d)\n", f.SynthSeconds, runtime.GOMAXPROCS(0))
	fmt.Fprintf(&b, "registered %d servers (%d passing Toucan servers + %d generated variants), loaded by weft serve: %d\n", f.Registered, f.Registered-f.Variants, f.Variants, f.Loaded)
	fmt.Fprintf(&b, "registration (weft serve --preload-all): %d ms (%.2f ms/server); exec to listening %d ms\n", f.RegisterMS, float64(f.RegisterMS)/float64(max(1, f.Registered)), f.StartMS)
	fmt.Fprintf(&b, "RSS: interpreter only %.1f MiB; registered %.1f MiB; after one session + 2 calls per server %.1f MiB (%.1f KiB/server); VmHWM %.1f MiB\n", f.BaseRSSMiB, f.RSSStartMiB, f.RSSMiB, f.PerServerKiB, f.HWMMiB)
	l := func(name string, x Latency) {
		fmt.Fprintf(&b, "%s: p50 %.2f ms, p99 %.2f ms, max %.2f ms (n %d)", name, x.P50, x.P99, x.Max, x.N)
		if x.CPU > 0 {
			fmt.Fprintf(&b, "; serve CPU %.2f ms per session (create, call(s), delete)", x.CPU)
		}
		b.WriteString("\n")
	}
	l("cold first call (new session, program never run)", f.Cold)
	l("second call, same session", f.Second)
	l("warm first call (new session, server called before)", f.Warm)
	fmt.Fprintf(&b, "tool errors among the calls: %d; failed calls: %d %s\n", f.ToolErrors, f.CallFailures, f.FirstFailure)
	return b.String()
}
