package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/weft-dev/weft/sdk/failure"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// gatePolicy passes requests to the scripted policy and, from the n-th
// request on, reports on entered and blocks until its context ends.
type gatePolicy struct {
	inner   model.Policy
	n       int
	mu      sync.Mutex
	seen    int
	entered chan struct{}
}

func (g *gatePolicy) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	g.mu.Lock()
	g.seen++
	block := g.seen >= g.n
	g.mu.Unlock()
	if block {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return g.inner.Generate(ctx, req)
}

// TestPluginKilledMidEpisode: the harness process dies while the episode
// waits on the model. Run returns a typed plugin error (ErrPluginExited),
// the session's ledger and state keep exactly the call made before the
// crash, and the launcher starts a fresh process with which a retry of
// the episode completes.
func TestPluginKilledMidEpisode(t *testing.T) {
	tasks, policy := retailTasks(t)
	tk := tasks[0]
	srv := newServer(t)
	l := newLauncher(t)
	ctx := context.Background()
	h, err := l.Builtin(ctx, "native")
	if err != nil {
		t.Fatal(err)
	}
	inner, err := scripted.New(scripted.ScriptFromTau2(tk), scripted.Faults{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	gate := &gatePolicy{inner: inner, n: 2, entered: make(chan struct{}, 1)}
	info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: []string{"retail"}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-gate.entered
		l.Kill("builtin:native")
	}()
	res, err := host.Run(ctx, h, &host.Episode{TaskID: tk.ID, SystemPrompt: policy, Policy: gate,
		User: &host.OpeningUser{Opening: tk.Brief()}, Server: srv, Session: info.ID})
	var pe *plugin.PluginError
	if !errors.As(err, &pe) || !errors.Is(err, plugin.ErrPluginExited) {
		t.Fatalf("Run after the plugin died = %v, %v; want a *plugin.PluginError matching ErrPluginExited", res, err)
	}
	recs, err := srv.Ledger(ctx, info.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Tool != tk.Actions[0].Name || recs[0].Error != nil {
		t.Fatalf("ledger after the crash = %+v, want exactly the first gold call %s", recs, tk.Actions[0].Name)
	}
	// The state is the one after that call: replaying the ledger agrees.
	rr, err := srv.Replay(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Equal {
		t.Fatalf("replay of the ledger does not match the live state: %+v", rr)
	}

	// Retry on a fresh session with a fresh process.
	h2, err := l.Builtin(ctx, "native")
	if err != nil {
		t.Fatal(err)
	}
	res2, got := runTask(t, srv, h2, tk, policy)
	if res2.Failure != nil || res2.Trajectory.Termination != plugin.TerminationDone {
		t.Fatalf("retry: failure %v, termination %q", res2.Failure, res2.Trajectory.Termination)
	}
	if want := reference(t, srv, tk); got != want {
		t.Fatalf("retry final state %s, reference %s", got, want)
	}
}

// TestModelEndpointDown: an OpenAI-compatible endpoint that is gone ends
// the episode with a model failure (an infrastructure failure with its
// kind, not a crash and not a trajectory the policy is blamed for), and no
// tool call reached the ledger.
func TestModelEndpointDown(t *testing.T) {
	tasks, policy := retailTasks(t)
	tk := tasks[0]
	srv := newServer(t)
	l := newLauncher(t)
	ctx := context.Background()
	ms := modeltest.NewServer(t)
	url := ms.URL()
	ms.Close()
	client, err := model.NewClient(model.ClientConfig{BaseURL: url, Model: "m", MaxRetries: 1,
		InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"react", "hermes", "native"} {
		h, err := l.Builtin(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: []string{"retail"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := host.Run(ctx, h, &host.Episode{TaskID: tk.ID, SystemPrompt: policy, Policy: client,
			User: &host.OpeningUser{Opening: tk.Brief()}, Server: srv, Session: info.ID})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c, k := plugin.FailureParts(res.Failure); res.Failure == nil || c != failure.Model || k != failure.Unavailable {
			t.Fatalf("%s: failure %v, want kind model_unavailable", name, res.Failure)
		}
		if res.Trajectory.Termination != plugin.TerminationFailure {
			t.Errorf("%s: termination %q", name, res.Trajectory.Termination)
		}
		if recs, _ := srv.Ledger(ctx, info.ID, 0, 10); len(recs) != 0 {
			t.Errorf("%s: %d ledger records, want 0", name, len(recs))
		}
	}
}

// TestModuleTrap: a module that traps ends the episode with an env
// failure of kind "trap"; the trapped call is in the ledger as a failure
// and left no trace in the state.
func TestModuleTrap(t *testing.T) {
	srv := newServer(t)
	l := newLauncher(t)
	ctx := context.Background()
	// The fx fixture owns items and reads ro: a version with both tables.
	st := state.NewStore()
	v, err := st.Load(ctx, "CREATE TABLE items (id VARCHAR(40) PRIMARY KEY, n BIGINT NOT NULL); CREATE TABLE ro (id INT PRIMARY KEY, v VARCHAR(10))")
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := v.Export(&doc); err != nil {
		t.Fatal(err)
	}
	vid, err := srv.ImportVersion(ctx, doc.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pol, err := scripted.New(scripted.Script{Steps: []scripted.Step{
		{Tool: "put", Arguments: json.RawMessage(`{"id":"a","n":1}`)},
		{Tool: "put_then_crash", Arguments: json.RawMessage(`{"id":"b","n":2}`)},
		{Say: "done"},
	}}, scripted.Faults{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"react", "hermes", "native"} {
		h, err := l.Builtin(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: []string{"fx"}, Version: vid})
		if err != nil {
			t.Fatal(err)
		}
		res, err := host.Run(ctx, h, &host.Episode{TaskID: "trap", Policy: pol,
			User: &host.OpeningUser{Opening: "put a then b"}, Server: srv, Session: info.ID})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c, k := plugin.FailureParts(res.Failure); res.Failure == nil || c != failure.Env || k != failure.Trap {
			t.Fatalf("%s: failure %v, want env_trap", name, res.Failure)
		}
		recs, err := srv.Ledger(ctx, info.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 || recs[0].Error != nil || recs[1].Error == nil || recs[1].Error.Kind != "trap" {
			t.Fatalf("%s: ledger %+v, want put ok then a trap", name, recs)
		}
		cur, err := srv.Current(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		n, err := cur.RowCount("items")
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%s: %d items after the trap, want 1 (the trapped insert rolled back)", name, n)
		}
	}
}
