package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// solverPolicy is the "trainer's policy" of the rollout-service tests: the
// local OpenAI-compatible test server answering each turn's request (the
// simulated user's atomic request, found in the last user message) with
// that atomic task's reference calls, one per request, then "Done." — for
// candidates whose sampling seed is even; odd seeds apologise and fail the
// turn. Candidates of a group get different seeds (the service mixes the
// batch's sampling seed with each candidate's), so groups have both.
func solverPolicy(t *testing.T) func(modeltest.Request) modeltest.Reply {
	t.Helper()
	tasks, err := task.LoadFile(repoFile("examples", "data", "tau2-retail", "tasks.weft.json"))
	if err != nil {
		t.Fatal(err)
	}
	byRequest := map[string][]task.Call{}
	for _, tk := range tasks {
		for _, a := range tk.Atomic {
			byRequest[a.Request] = a.Reference
		}
	}
	return func(r modeltest.Request) modeltest.Reply {
		msgs := r.Messages()
		last := -1
		for i, m := range msgs {
			if m["role"] == "user" {
				last = i
			}
		}
		if last < 0 {
			return modeltest.Text("Hello, how can I help?")
		}
		content, _ := msgs[last]["content"].(string)
		var calls []task.Call
		best := 0
		for req, c := range byRequest {
			if len(req) > best && strings.Contains(content, req) {
				calls, best = c, len(req)
			}
		}
		var body struct {
			Seed *json.Number `json:"seed"`
		}
		dec := json.NewDecoder(strings.NewReader(string(r.Raw)))
		dec.UseNumber()
		_ = dec.Decode(&body)
		odd := body.Seed != nil && strings.ContainsAny(body.Seed.String()[len(body.Seed.String())-1:], "13579")
		if calls == nil || odd {
			return modeltest.Text("I am sorry, I cannot help with that request.")
		}
		done := len(msgs) - 1 - last // tool results (and assistant calls) since the request
		n := done / 2
		if n < len(calls) {
			c := calls[n]
			return modeltest.Calls(modeltest.ToolCall(fmt.Sprintf("call_%d", n), c.Tool, string(c.Arguments)))
		}
		return modeltest.Text("Done. Is there anything else?")
	}
}

// startRolloutService runs `weft rollout-service` in process on a free
// loopback port over configs/tau2-retail.hcl (its first limit tasks) and
// returns its base URL; it stops at the end of the test. extra are more
// flags (a later --registry overrides the test's own).
func startRolloutService(t *testing.T, token string, limit int, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan struct{})
	sw := &syncWriter{}
	go func() {
		defer close(done)
		Run(ctx, append([]string{"rollout-service", repoFile("configs", "tau2-retail.hcl"), "--registry", t.TempDir(), "--cache-dir", megamcptest.CacheDir(),
			"--addr", "127.0.0.1:0", "--token", token, "--json", "--var", fmt.Sprintf("task_limit=%d", limit), "--concurrency", "4"}, extra...),
			Env{Stdout: pw, Stderr: sw})
		pw.Close()
	}()
	t.Cleanup(func() { cancel(); <-done })
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil {
		t.Fatalf("rollout-service did not start: %v\nstderr: %s", err, sw.String())
	}
	var info struct {
		Addr  string `json:"addr"`
		Tasks int    `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(line), &info); err != nil || info.Addr == "" {
		t.Fatalf("rollout-service printed %q: %v", line, err)
	}
	if info.Tasks != limit {
		t.Fatalf("rollout-service serves %d tasks, want %d", info.Tasks, limit)
	}
	return "http://" + info.Addr
}

// syncWriter is a strings.Builder safe for one writer and one reader.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// python3 is the interpreter the client tests run with: a skip when it is
// missing, a failure with WEFT_REQUIRE_PYTHON=1 (CI, .ci/run).
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("WEFT_REQUIRE_PYTHON") == "1" {
			t.Fatalf("python3 is required (WEFT_REQUIRE_PYTHON=1): %v", err)
		}
		t.Skipf("python3 not found: %v", err)
	}
	return p
}

// The standard-library Python client against a running weft
// rollout-service with the local test model server as the trainer's
// policy: the client's unit tests (shapes of groups, segments and verl
// rows, SFT lines, typed errors, cancel), then the trainer-loop
// simulation: 5 steps, each 16 tasks x G = 8, groups consumed as they
// stream, per-step wall time and group latency reported.
func TestRolloutServicePython(t *testing.T) {
	py := python3(t)
	skipUnderRace(t)
	const token = "rollout-test-token"
	policy := modeltest.NewServer(t, modeltest.WithModels("test-model"), modeltest.WithHandler(solverPolicy(t)))
	url := startRolloutService(t, token, 40)
	env := append(os.Environ(), "WEFT_ROLLOUT_URL="+url, "WEFT_TOKEN="+token, "POLICY_BASE_URL="+policy.URL(), "POLICY_MODEL=test-model")
	dir := repoFile("clients", "python")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	unit := exec.CommandContext(ctx, py, "-m", "unittest", "-v", "test_weft_rollout")
	unit.Dir, unit.Env = dir, env
	out, err := unit.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") || strings.Contains(string(out), "skipped") {
		t.Fatalf("python client tests: %v\n%s", err, out)
	}

	sim := exec.CommandContext(ctx, py, filepath.Join(dir, "trainer_sim.py"), "--steps", "5", "--tasks", "16", "--group-size", "8", "--json")
	sim.Env = env
	var simErr strings.Builder
	sim.Stderr = &simErr
	start := time.Now()
	simOut, err := sim.Output()
	if err != nil {
		t.Fatalf("trainer_sim.py: %v\nstdout: %s\nstderr: %s", err, simOut, simErr.String())
	}
	var raw struct {
		Steps []map[string]any `json:"steps"`
		Total map[string]any   `json:"total"`
	}
	if err := json.Unmarshal(simOut, &raw); err != nil {
		t.Fatalf("trainer_sim.py output %q: %v", simOut, err)
	}
	if len(raw.Steps) != 5 {
		t.Fatalf("%d steps, want 5", len(raw.Steps))
	}
	t.Logf("trainer loop: 5 steps x 16 tasks x G = 8 in %s", time.Since(start).Round(time.Millisecond))
	for _, s := range raw.Steps {
		num := func(k string) float64 { f, _ := s[k].(float64); return f }
		if num("tasks") != 16 || num("group_size") != 8 || num("tasks_failed") != 0 {
			t.Errorf("step %v: tasks %v, G %v, failed %v (errors %v); want 16, 8, 0", s["step"], s["tasks"], s["group_size"], s["tasks_failed"], s["task_errors"])
		}
		if num("groups") < 16 || num("segments") != 8*num("groups") {
			t.Errorf("step %v: %v groups, %v segments; want >= 16 groups of 8 segments", s["step"], s["groups"], s["segments"])
		}
		if num("nonzero_groups") == 0 {
			t.Errorf("step %v: no group carries a learning signal (the policy solves even seeds only)", s["step"])
		}
		if num("first_group_ms") >= num("wall_ms") {
			t.Errorf("step %v: the first group came at %v ms of %v: groups did not stream", s["step"], s["first_group_ms"], s["wall_ms"])
		}
		t.Logf("step %v: %v groups (%v nonzero), %v segments, mean reward %.3f, wall %.0f ms, first group %.0f ms, group latency p50 %.0f p90 %.0f max %.0f ms",
			s["step"], s["groups"], s["nonzero_groups"], s["segments"], num("mean_reward"), num("wall_ms"), num("first_group_ms"),
			num("group_latency_p50_ms"), num("group_latency_p90_ms"), num("group_latency_max_ms"))
	}
}
