package megamcp_test

// The crash test: N concurrent clients write through their sessions of a
// real `weft serve` process (a quarter of them workspace files: every
// acknowledged add_note of notesfs must be a line of the recovered
// notes/log.txt), which is killed with SIGKILL mid-load and
// restarted on the same data directory. Every call a client saw
// acknowledged must be in the recovered ledger (same index, tool and
// arguments), the ledger must be exactly the calls the server answered plus
// at most the one call per session that was in flight (no gaps, nothing
// else), each session's state hash must equal a replay of its ledger from
// its initial version, and the sessions must go on taking calls at the next
// index. Run once with --fsync never (N sessions) and once with --fsync
// always (at most 16).
//
//	go test -run TestCrash ./megamcp/                            # N = 16 (CI)
//	WEFT_CRASH_N=1000 go test -run TestCrash -timeout 30m -v ./megamcp/
//
// Calls the server answers with a failure (a deadline under heavy load: 502
// on the admin API, an MCP tool-failure error) are recorded in the ledger
// too: they must be there, failed, at their place, having changed nothing.
//
// Environment: WEFT_CRASH_N (sessions, default 16), WEFT_CRASH_WORKERS
// (concurrent clients, default 64), WEFT_CRASH_LOAD (load time before the
// kill; default max(2 s, 30 ms × N) plus a random 0-1 s), WEFT_CRASH_SEED
// (the random seed, default the time), WEFT_CRASH_CALL_TIMEOUT (--call-timeout
// of the weft serve under load, e.g. 3ms to make calls fail with deadlines;
// the restart keeps the default).

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
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

	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

const crashToken = "crash-test-token"

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: builds and kills weft serve")
	}
	n := envInt(t, "WEFT_CRASH_N", 16)
	workers := envInt(t, "WEFT_CRASH_WORKERS", 64)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("WEFT_CRASH_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("WEFT_CRASH_SEED=%q", v)
		}
		seed = s
	}
	t.Logf("seed %d (WEFT_CRASH_SEED to repeat)", seed)

	start := time.Now()
	bin := filepath.Join(t.TempDir(), "weft")
	build := exec.Command("go", "build", "-o", bin, "./cmd/weft")
	build.Dir = megamcptest.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/weft: %v\n%s", err, out)
	}
	reg := megamcptest.Registry(t)
	t.Logf("weft and test modules built in %.1fs", time.Since(start).Seconds())
	env := &crashEnv{bin: bin, registry: reg.Dir(), cache: megamcptest.CacheDir(), callTimeout: os.Getenv("WEFT_CRASH_CALL_TIMEOUT")}

	t.Run("fsync=never", func(t *testing.T) {
		runCrash(t, env, crashConfig{n: n, workers: workers, fsync: "never", seed: seed})
	})
	t.Run("fsync=always", func(t *testing.T) {
		runCrash(t, env, crashConfig{n: min(n, 16), workers: workers, fsync: "always", seed: seed + 1})
	})
}

type crashEnv struct {
	bin      string // weft binary
	registry string // module registry directory
	cache    string // compiled-module cache, shared by the test processes
	// callTimeout, if set, is the --call-timeout of the weft serve under
	// load (a small one makes calls fail with recorded deadline errors; the
	// restart keeps the default, see TestRecoveryReplayDeadline).
	callTimeout string
}

type crashConfig struct {
	n, workers int
	fsync      string
	seed       uint64
}

// weftProc is a running `weft serve`.
type weftProc struct {
	cmd     *exec.Cmd
	base    string // http://addr
	startup time.Duration
	stderr  *bytes.Buffer
	errMu   *sync.Mutex
	exited  chan struct{}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (p *weftProc) logs() string {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.stderr.String()
}

// startWeft starts weft serve on dataDir and waits for its listening line;
// startup is the time from the start of the process to that line (for a
// restart: the recovery time).
func startWeft(t *testing.T, env *crashEnv, dataDir, fsync, callTimeout string) *weftProc {
	t.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir, "--json",
		"--fsync", fsync, "--registry", env.registry, "--cache-dir", env.cache, "--log-format", "json"}
	if callTimeout != "" {
		args = append(args, "--call-timeout", callTimeout)
	}
	cmd := exec.Command(env.bin, args...)
	cmd.Env = append(os.Environ(), "WEFT_TOKEN="+crashToken)
	p := &weftProc{cmd: cmd, stderr: &bytes.Buffer{}, errMu: &sync.Mutex{}, exited: make(chan struct{})}
	cmd.Stderr = lockedWriter{p.errMu, p.stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.kill() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			<-p.exited
			t.Fatalf("weft serve exited before listening: %v\n%s", cmd.ProcessState, p.logs())
		}
		p.startup = time.Since(t0)
		var info struct {
			Addr string `json:"addr"`
		}
		if err := json.Unmarshal([]byte(l), &info); err != nil || info.Addr == "" {
			t.Fatalf("weft serve printed %q: %v", l, err)
		}
		p.base = "http://" + info.Addr
	case <-time.After(10 * time.Minute):
		t.Fatalf("weft serve did not listen within 10 minutes\n%s", p.logs())
	}
	return p
}

// checkRefused starts a second weft serve on dataDir, held by the weft
// serve of pid holder, and checks that it exits at once with status 1 and
// the error naming the directory and the holder.
func checkRefused(t *testing.T, env *crashEnv, dataDir string, holder int) {
	t.Helper()
	cmd := exec.Command(env.bin, "serve", "--addr", "127.0.0.1:0", "--data", dataDir,
		"--registry", env.registry, "--cache-dir", env.cache)
	cmd.Env = append(os.Environ(), "WEFT_TOKEN="+crashToken)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("second weft serve on a held --data: %v, want exit status 1\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("second weft serve on a held --data still runs after 2 minutes\n%s", stderr.String())
	}
	want := fmt.Sprintf("%s is used by another weft serve (pid %d)", dataDir, holder)
	if !strings.Contains(stderr.String(), want) || stdout.Len() != 0 {
		t.Fatalf("second weft serve: stdout %q, stderr %q; want the error %q", stdout.String(), stderr.String(), want)
	}
}

// checkpointMetrics summarizes weft's checkpoint metrics (/metrics).
func checkpointMetrics(ctx context.Context, api *apiClient) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", api.base+"/metrics", nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+crashToken)
	resp, err := api.hc.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.HasPrefix(f[0], "weft_checkpoint") && !strings.Contains(f[0], "{") {
			m[f[0]], _ = strconv.ParseFloat(f[1], 64)
		}
	}
	n := m["weft_checkpoint_seconds_count"]
	return fmt.Sprintf("%.0f written (%.1f ms each on average), %.0f records not covered",
		m["weft_checkpoints_total"], 1000*m["weft_checkpoint_seconds_sum"]/max(n, 1), m["weft_checkpoint_lag_records"])
}

// procStats describes the process's open files and memory (Linux /proc;
// "" elsewhere).
func (p *weftProc) procStats() string {
	pid := p.cmd.Process.Pid
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return ""
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	var mem []string
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") || strings.HasPrefix(l, "VmHWM:") {
			mem = append(mem, strings.Join(strings.Fields(l), " "))
		}
	}
	return fmt.Sprintf("%d open files, %s", len(fds), strings.Join(mem, ", "))
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *weftProc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// recoveredLog returns the fields of the server's "sessions recovered" log
// line (nil if none).
func (p *weftProc) recoveredLog() map[string]any {
	for _, l := range strings.Split(p.logs(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "sessions recovered" {
			return m
		}
	}
	return nil
}

// httpError is a response other than the one expected: the server answered,
// so it is never the kill's doing.
type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

type apiClient struct {
	base string
	hc   *http.Client
}

func (c *apiClient) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+crashToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err // the connection broke before the whole answer arrived: not acknowledged
	}
	if resp.StatusCode != want {
		return &httpError{resp.StatusCode, strings.TrimSpace(string(b))}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decoding %q: %w", method, path, b, err)
		}
	}
	return nil
}

func newAPIClient(base string, conns int) *apiClient {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     30 * time.Second,
	}
	return &apiClient{base: base, hc: &http.Client{Transport: tr, Timeout: 5 * time.Minute}}
}

// Kinds of client sessions.
const (
	kindHello    = iota // hello, add_note through the admin API
	kindHelloMCP        // hello, add_note through MCP /mcp/sessions/{id}
	kindRetail          // retail, modify_user_address through the admin API
	kindFiles           // notesfs, add_note (a row and a line of the workspace file notes/log.txt) through the admin API
)

var retailUsers = []string{"noah_brown_6181", "ivan_santos_6635", "anya_garcia_3271"}

// call is one tool call a client made.
type call struct {
	tool string
	args json.RawMessage
	// failed is "" for an acknowledged call, else the error kind of a
	// failure the server answered with (a deadline under load: 502, or an
	// MCP tool-failure error), which the ledger records too.
	failed string
}

// client is one session's client: its calls run one at a time.
type client struct {
	i        int
	kind     int
	id       string
	mcp      *mcp.ClientSession
	answered []call // the calls the server answered, in ledger order
	acked    int    // of which acknowledged
	inflight *call  // the call that got no answer (the kill)
	n        int    // calls made
	lastErr  error  // why the last call got no answer
}

// A deadline that expires while the module waits for a SQL statement
// reaches the module as a statement error, which it returns as a tool error
// (isError result) instead of a deadline failure; the ledger records a
// tool error. toolErrorDeadline is its failed kind here.
const (
	deadlineText      = "context deadline exceeded"
	toolErrorDeadline = "tool_error(deadline)"
)

// codeRejected is the go-sdk's JSON-RPC code for a transport failure on the
// client side (jsonrpc2.ErrRejected): no answer from the server.
const codeRejected = -32005

func (c *client) nextCall() call {
	c.n++
	switch c.kind {
	case kindRetail:
		a := map[string]string{"user_id": retailUsers[c.i%len(retailUsers)], "address1": fmt.Sprintf("%d Crash Street", c.n),
			"address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": fmt.Sprintf("%05d", c.n%100000)}
		return call{tool: "modify_user_address", args: mustMarshal(a)}
	default:
		return call{tool: "add_note", args: mustMarshal(map[string]string{"text": fmt.Sprintf("session %d note %d", c.i, c.n)})}
	}
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (c *client) create(ctx context.Context, api *apiClient, seed uint64) error {
	mod := "hello"
	switch c.kind {
	case kindRetail:
		mod = "retail"
	case kindFiles:
		mod = "notesfs"
	}
	var info megamcp.SessionInfo
	if err := api.do(ctx, "POST", "/v1/sessions", map[string]any{"modules": []string{mod}, "seed": seed}, http.StatusCreated, &info); err != nil {
		return fmt.Errorf("create session %d: %w", c.i, err)
	}
	c.id = info.ID
	if c.kind == kindHelloMCP {
		cl := mcp.NewClient(&mcp.Implementation{Name: "crash-test", Version: "0"}, nil)
		cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: api.base + "/mcp/sessions/" + c.id, HTTPClient: api.hc, MaxRetries: -1, DisableStandaloneSSE: true,
		}, nil)
		if err != nil {
			return fmt.Errorf("session %d: MCP connect: %w", c.i, err)
		}
		c.mcp = cs
	}
	return nil
}

// do makes one call. answered reports whether the server answered it
// (acknowledged, or failed with a recorded error); err is an answer the
// test does not expect.
func (c *client) do(ctx context.Context, api *apiClient, cl call) (answered bool, err error) {
	var index uint64
	if c.mcp != nil {
		res, err := c.mcp.CallTool(ctx, &mcp.CallToolParams{Name: cl.tool, Arguments: cl.args})
		var je *jsonrpc.Error
		switch {
		case errors.As(err, &je) && je.Code == megamcp.CodeToolFailure:
			var data struct{ Kind string }
			_ = json.Unmarshal(je.Data, &data)
			cl.failed = cmp.Or(data.Kind, "tool_failure")
			c.answered = append(c.answered, cl)
			return true, nil
		case errors.As(err, &je) && je.Code != codeRejected:
			return true, fmt.Errorf("session %d: %s: MCP error %d: %s", c.i, cl.tool, je.Code, je.Message)
		case err != nil:
			c.lastErr = err
			return false, nil // no answer: the kill (checked by the caller)
		}
		if res.IsError {
			var text string
			for _, ct := range res.Content {
				if tc, ok := ct.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			if !strings.Contains(text, deadlineText) {
				return true, fmt.Errorf("session %d: %s: tool error %q", c.i, cl.tool, text)
			}
			cl.failed = toolErrorDeadline
			c.answered = append(c.answered, cl)
			return true, nil
		}
		idx, ok := res.Meta["weft/index"].(float64)
		if !ok {
			return true, fmt.Errorf("session %d: MCP result without weft/index: %+v", c.i, res.Meta)
		}
		index = uint64(idx)
	} else {
		var res megamcp.CallResult
		err := api.do(ctx, "POST", "/v1/sessions/"+c.id+"/calls", map[string]any{"tool": cl.tool, "arguments": cl.args}, http.StatusOK, &res)
		var he *httpError
		switch {
		case errors.As(err, &he) && he.status == http.StatusBadGateway:
			// A tool failure (deadline, trap...): recorded, not applied.
			var body struct{ Error struct{ Code string } }
			_ = json.Unmarshal([]byte(he.body), &body)
			cl.failed = cmp.Or(body.Error.Code, "tool_failure")
			c.answered = append(c.answered, cl)
			return true, nil
		case he != nil:
			return true, fmt.Errorf("session %d: %s: %w", c.i, cl.tool, err)
		case err != nil:
			c.lastErr = err
			return false, nil
		}
		if res.Result != nil && res.Result.IsError && len(res.Result.Content) > 0 && strings.Contains(res.Result.Content[0].Text, deadlineText) {
			cl.failed = toolErrorDeadline
			c.answered = append(c.answered, cl)
			return true, nil
		}
		if res.Result == nil || res.Result.IsError || res.RowsChanged == 0 {
			return true, fmt.Errorf("session %d: %s: acknowledged but not applied: index %d, rows %d, result %s", c.i, cl.tool, res.Index, res.RowsChanged, mustMarshal(res.Result))
		}
		index = res.Index
	}
	if want := uint64(len(c.answered)); index != want {
		return true, fmt.Errorf("session %d: call acknowledged with index %d, want %d", c.i, index, want)
	}
	c.answered = append(c.answered, cl)
	c.acked++
	return true, nil
}

type failures struct {
	mu   sync.Mutex
	errs []error
}

func (f *failures) add(err error) {
	f.mu.Lock()
	if len(f.errs) < 50 {
		f.errs = append(f.errs, err)
	}
	f.mu.Unlock()
}

func (f *failures) check(t *testing.T, what string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) > 0 {
		t.Fatalf("%s: %d failures, first:\n%v", what, len(f.errs), errors.Join(f.errs...))
	}
}

// parallel runs fn(i) for i in [0, n) on at most w goroutines.
func parallel(n, w int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, w) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func runCrash(t *testing.T, env *crashEnv, cfg crashConfig) {
	rng := rand.New(rand.NewPCG(cfg.seed, 0))
	dataDir := t.TempDir()
	ctx := context.Background()

	// 1. Serve; N sessions: a quarter retail, a quarter hello over MCP, a
	// quarter notesfs (workspace files: list_notes below reads the notes
	// back from the recovered file), the rest hello over the admin API.
	p1 := startWeft(t, env, dataDir, cfg.fsync, env.callTimeout)
	t.Logf("weft serve (--fsync %s) up in %v", cfg.fsync, p1.startup.Round(time.Millisecond))
	api := newAPIClient(p1.base, cfg.workers)
	clients := make([]*client, cfg.n)
	for i := range clients {
		kind := kindHello
		switch i % 4 {
		case 1:
			kind = kindHelloMCP
		case 2:
			kind = kindFiles
		case 3:
			kind = kindRetail
		}
		clients[i] = &client{i: i, kind: kind}
	}
	var fail failures
	t0 := time.Now()
	parallel(cfg.n, cfg.workers, func(i int) {
		if err := clients[i].create(ctx, api, cfg.seed+uint64(i)); err != nil {
			fail.add(err)
		}
	})
	fail.check(t, "creating sessions")
	t.Logf("%d sessions created in %v", cfg.n, time.Since(t0).Round(time.Millisecond))

	// 2. Load: each worker drives its own sessions round-robin, one call at
	// a time per session, until the kill.
	// A random 2-3 s (some checkpoints at the default 1 s interval), and at
	// least 30 ms a session so that a large N gets more than a call or two
	// per session.
	load := max(2*time.Second, time.Duration(cfg.n)*30*time.Millisecond) + time.Duration(rng.IntN(1000))*time.Millisecond
	if v := os.Getenv("WEFT_CRASH_LOAD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("WEFT_CRASH_LOAD=%q: %v", v, err)
		}
		load = d
	}
	var killed atomic.Bool
	var wg sync.WaitGroup
	w := min(cfg.workers, cfg.n)
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []*client
			for i := k; i < cfg.n; i += w {
				mine = append(mine, clients[i])
			}
			for j := 0; ; j++ {
				c := mine[j%len(mine)]
				cl := c.nextCall()
				answered, err := c.do(ctx, api, cl)
				if err != nil {
					fail.add(err)
					return
				}
				if !answered {
					if !killed.Load() {
						// Before the kill every call must be answered (the
						// kill may land between this call's failure and the
						// flag: recheck after a moment).
						time.Sleep(200 * time.Millisecond)
						if !killed.Load() {
							fail.add(fmt.Errorf("session %d: %s got no answer before the kill: %v", c.i, cl.tool, c.lastErr))
							return
						}
					}
					c.inflight = &cl
					return
				}
				if killed.Load() {
					return
				}
			}
		}()
	}
	time.Sleep(load)
	atKill := p1.procStats()
	ckStats := checkpointMetrics(ctx, api)
	killed.Store(true)
	_ = p1.cmd.Process.Signal(os.Kill)
	<-p1.exited
	wg.Wait()
	for _, c := range clients {
		if c.mcp != nil {
			_ = c.mcp.Close()
		}
	}
	api.hc.CloseIdleConnections()
	fail.check(t, "load")
	acked, failed, inflight := 0, 0, 0
	failKinds := map[string]int{}
	for _, c := range clients {
		acked += c.acked
		failed += len(c.answered) - c.acked
		for _, cl := range c.answered {
			if cl.failed != "" {
				failKinds[cl.failed]++
			}
		}
		if c.inflight != nil {
			inflight++
		}
	}
	t.Logf("killed (SIGKILL) after %v of load: %d calls acknowledged (%.0f/s), %d answered with a failure %v, %d in flight; weft at the kill: %s; checkpoints: %s",
		load, acked, float64(acked)/load.Seconds(), failed, failKinds, inflight, atKill, ckStats)
	if acked == 0 {
		t.Fatal("no call was acknowledged")
	}
	sizeAtKill, filesAtKill, tmpsAtKill := dirSize(t, dataDir)

	// 3. Restart on the same data; check every session.
	p2 := startWeft(t, env, dataDir, cfg.fsync, "")
	t.Logf("restarted: listening after %v", p2.startup.Round(time.Millisecond))
	// The killed server's lock died with it; the new one holds the data
	// directory: a third weft serve on it is refused before it recovers.
	checkRefused(t, env, dataDir, p2.cmd.Process.Pid)
	// Verification runs replays: CPU-bound, so on fewer goroutines.
	vworkers := min(cfg.workers, 2*runtime.NumCPU())
	api = newAPIClient(p2.base, vworkers)
	var records, extra, retries atomic.Int64
	var durMu sync.Mutex
	var durations []float64 // DurationMs of the recorded calls
	t0 = time.Now()
	parallel(cfg.n, vworkers, func(i int) {
		c := clients[i]
		nrec, err := verifySession(ctx, api, c)
		retries.Add(int64(nrec.deadlineRetries))
		if err != nil {
			fail.add(err)
			return
		}
		records.Add(int64(nrec.records))
		if nrec.records > len(c.answered) {
			extra.Add(1)
		}
		durMu.Lock()
		durations = append(durations, nrec.durations...)
		durMu.Unlock()
	})
	fail.check(t, "after recovery")
	verify := time.Since(t0)
	t.Logf("weft after recovery and verification: %s", p2.procStats())
	// A clean stop (SIGTERM: last checkpoints, ledgers closed), then the
	// size of what is on disk.
	_ = p2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p2.exited:
	case <-time.After(2 * time.Minute):
		t.Errorf("weft serve did not stop within 2 minutes of SIGTERM")
		p2.kill()
	}
	if !p2.cmd.ProcessState.Success() {
		t.Errorf("weft serve after SIGTERM: %v\n%s", p2.cmd.ProcessState, lastLines(p2.logs(), 20))
	}
	size, files, tmps := dirSize(t, dataDir)
	if tmps > 0 {
		t.Errorf("%d temporary files in the data directory after recovery and a clean stop", tmps)
	}
	// The server's own account: sessions, records replayed after their
	// checkpoints, seconds.
	t.Logf("recovery log: %v", p2.recoveredLog())
	if r := retries.Load(); r > 0 {
		t.Logf("%d replays or calls after recovery missed the call deadline and were retried", r)
	}
	slices.Sort(durations)
	q := func(f float64) float64 { return durations[min(len(durations)-1, int(f*float64(len(durations))))] }
	t.Logf("call duration in the ledger (server side, ms): p50 %.2f p90 %.2f p99 %.2f max %.2f", q(0.5), q(0.9), q(0.99), durations[len(durations)-1])
	t.Logf("fsync=%s sessions=%d acknowledged=%d all found (+%d failed calls answered, all recorded); records recovered=%d (in-flight calls recorded: %d of %d); "+
		"hash == replay for all %d; "+
		"recovery (start to listening) %v; verification %v; data dir %.1f MiB in %d files (%d *.tmp) at the kill, %.1f MiB in %d files (%d *.tmp) after a clean stop",
		cfg.fsync, cfg.n, acked, failed, records.Load(), extra.Load(), inflight, cfg.n,
		p2.startup.Round(time.Millisecond), verify.Round(time.Millisecond),
		float64(sizeAtKill)/(1<<20), filesAtKill, tmpsAtKill, float64(size)/(1<<20), files, tmps)
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

type verified struct {
	records         int
	durations       []float64
	deadlineRetries int // replays and calls retried after missing the call deadline
}

// isDeadline reports a 502 deadline answer of the admin API.
func isDeadline(err error) bool {
	var he *httpError
	return errors.As(err, &he) && he.status == http.StatusBadGateway && strings.Contains(he.body, `"deadline"`)
}

// verifySession checks one recovered session (see the file comment).
func verifySession(ctx context.Context, api *apiClient, c *client) (verified, error) {
	var v verified
	fail := func(format string, a ...any) (verified, error) {
		return v, fmt.Errorf("session %d (%s): %s", c.i, c.id, fmt.Sprintf(format, a...))
	}
	var recs []megamcp.Record
	for from := uint64(0); ; {
		var page struct {
			Records []megamcp.Record `json:"records"`
			Next    *uint64          `json:"next"`
		}
		if err := api.do(ctx, "GET", fmt.Sprintf("/v1/sessions/%s/ledger?from=%d&limit=1000", c.id, from), nil, http.StatusOK, &page); err != nil {
			return fail("ledger: %v", err)
		}
		recs = append(recs, page.Records...)
		if page.Next == nil || len(page.Records) == 0 {
			break
		}
		from = *page.Next
	}
	v.records = len(recs)
	// The ledger is exactly the answered calls (acknowledged, or failed
	// with a recorded error), then at most the call that was in flight at
	// the kill.
	n := len(c.answered)
	if len(recs) < n {
		return fail("ledger has %d records, %d calls were answered (%d acknowledged)", len(recs), n, c.acked)
	}
	if len(recs) > n+1 || len(recs) == n+1 && c.inflight == nil {
		return fail("ledger has %d records, %d calls were answered and %v was in flight", len(recs), n, c.inflight)
	}
	var notes []string // what list_notes must return
	for i := range recs {
		r := &recs[i]
		want := c.inflight
		if i < n {
			want = &c.answered[i]
		}
		if r.Index != uint64(i) || r.Session != c.id || r.Kind != megamcp.KindCall || r.Tool != want.tool || !sameJSON(r.Arguments, want.args) {
			return fail("record %d = {index %d, session %s, kind %s, tool %s, args %s}, want {index %d, tool %s, args %s}",
				i, r.Index, r.Session, r.Kind, r.Tool, r.Arguments, i, want.tool, want.args)
		}
		committed := r.Error == nil && r.Result != nil && !r.Result.IsError && r.RowsChanged > 0
		switch {
		case i < n && want.failed == "" && !committed:
			return fail("record %d of an acknowledged call did not commit: error %+v, rows %d", i, r.Error, r.RowsChanged)
		case i < n && want.failed == toolErrorDeadline && (r.Error != nil || r.Result == nil || !r.Result.IsError || r.RowsChanged != 0):
			return fail("record %d of a call answered with a tool error: error %+v, result %+v, rows %d", i, r.Error, r.Result, r.RowsChanged)
		case i < n && want.failed != "" && want.failed != toolErrorDeadline && (r.Error == nil || r.Error.Kind != want.failed || r.RowsChanged != 0):
			return fail("record %d of a call answered with %s: error %+v, rows %d", i, want.failed, r.Error, r.RowsChanged)
		case !committed && r.RowsChanged != 0:
			return fail("record %d failed but changed %d rows", i, r.RowsChanged)
		}
		if committed && c.kind != kindRetail {
			var a struct{ Text string }
			_ = json.Unmarshal(r.Arguments, &a)
			notes = append(notes, a.Text)
		}
		v.durations = append(v.durations, r.DurationMs)
	}
	var info megamcp.SessionInfo
	if err := api.do(ctx, "GET", "/v1/sessions/"+c.id, nil, http.StatusOK, &info); err != nil {
		return fail("info: %v", err)
	}
	if info.Ledger != uint64(len(recs)) || info.Calls != uint64(len(recs)) {
		return fail("info says %d records, %d calls; the ledger has %d", info.Ledger, info.Calls, len(recs))
	}
	var rp struct {
		ReplayHash string `json:"replay_hash"`
		Hash       string `json:"hash"`
		Equal      bool   `json:"equal"`
	}
	// Replay re-runs the ledger's committed calls under the per-call
	// deadline; under load one can miss it (TestRecoveryReplayDeadline):
	// retried, and counted.
	for attempt := 1; ; attempt++ {
		err := api.do(ctx, "POST", "/v1/sessions/"+c.id+"/replay", nil, http.StatusOK, &rp)
		if err == nil {
			break
		}
		if !isDeadline(err) || attempt == 5 {
			return fail("replay: %v", err)
		}
		v.deadlineRetries++
	}
	if !rp.Equal || rp.ReplayHash != rp.Hash || rp.Hash != info.Hash {
		return fail("state hash %s (info %s), replay of the ledger %s", rp.Hash, info.Hash, rp.ReplayHash)
	}
	// The session goes on at the next index, and its state holds what the
	// ledger says.
	next := c.nextCall()
	var res megamcp.CallResult
	want := uint64(len(recs))
	for attempt := 1; ; attempt++ {
		err := api.do(ctx, "POST", "/v1/sessions/"+c.id+"/calls", map[string]any{"tool": next.tool, "arguments": next.args}, http.StatusOK, &res)
		if err == nil && !(res.Result != nil && res.Result.IsError && len(res.Result.Content) > 0 && strings.Contains(res.Result.Content[0].Text, deadlineText)) {
			break
		}
		if err != nil && !isDeadline(err) || attempt == 5 {
			return fail("call after recovery: %v", cmp.Or(err, errors.New(res.Result.Content[0].Text)))
		}
		v.deadlineRetries++
		want++ // the failed call is recorded
	}
	if res.Index != want || res.Result == nil || res.Result.IsError || res.RowsChanged == 0 {
		return fail("call after recovery = index %d, rows %d, result %+v; want index %d", res.Index, res.RowsChanged, res.Result, want)
	}
	if c.kind == kindRetail {
		return v, nil
	}
	var a struct{ Text string }
	_ = json.Unmarshal(next.args, &a)
	notes = append(notes, a.Text)
	for attempt := 1; ; attempt++ {
		err := api.do(ctx, "POST", "/v1/sessions/"+c.id+"/calls", map[string]any{"tool": "list_notes"}, http.StatusOK, &res)
		if err == nil && !res.Result.IsError {
			break
		}
		if err != nil && !isDeadline(err) || attempt == 5 {
			return fail("list_notes: %v %+v", err, res.Result)
		}
		v.deadlineRetries++
	}
	var got struct {
		Notes []struct {
			Text string `json:"text"`
		} `json:"notes"`
	}
	if err := json.Unmarshal(res.Result.StructuredContent, &got); err != nil {
		return fail("list_notes: %s: %v", res.Result.StructuredContent, err)
	}
	if len(got.Notes) != len(notes) {
		return fail("list_notes has %d notes, the ledger %d committed add_note calls (+1 after recovery)", len(got.Notes), len(notes))
	}
	for i, want := range notes {
		if got.Notes[i].Text != want {
			return fail("note %d is %q, the ledger says %q", i, got.Notes[i].Text, want)
		}
	}
	return v, nil
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// dirSize sums the regular files under dir; tmps counts the *.tmp files
// among them (temporary files of atomic writes the kill interrupted).
func dirSize(t *testing.T, dir string) (size int64, files, tmps int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			size += fi.Size()
			files++
			if strings.HasSuffix(d.Name(), ".tmp") {
				tmps++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return size, files, tmps
}
