package host

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/attributor/rules"
	"github.com/weft-dev/weft/plugins/verifier"
	"github.com/weft-dev/weft/plugins/verifier/exec"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Executor runs rollout jobs (core/rollout.Executor): per job it opens a
// MegaMCP session from the task's initial state, runs the job's harness
// with the job's policy and the view's user, verifies the episode
// server-side (the verifier sees the initial, final and reference states and
// the ledger; the agent never does) and attributes failed checkpoints.
//
// Infrastructure failures are returned as *rollout.InfraError, never as a
// score: a plugin process that died ("plugin_exited", retryable), a host
// service failure the harness reported (its Failure kind, e.g.
// "model_unavailable", "env_trap"; retryable), a harness that refused the
// request ("harness", not retryable), a verifier or attributor that could not
// read its evidence ("verifier", "attributor"; retryable), a reference replay
// that could not run ("reference"; retryable).
//
// The reference solution of a task is replayed once per task (cached) on a
// session of its own: the states after each atomic task's reference calls
// are the verifier's ReferenceAfter(k) and the report of its calls is the
// attributor's ReferenceReport.
type Executor struct {
	Server   *megamcp.Server
	Launcher *Launcher
	// Harness resolves a job's harness; nil = Launcher.Builtin(name).
	Harness func(ctx context.Context, name string) (plugin.Harness, error)
	// Policy builds the policy of a job (e.g. a scripted policy for the
	// job's task and view, or a shared model.Client).
	Policy func(job rollout.Job) (model.Policy, error)
	// SystemPrompt is the domain policy the harness puts in its system
	// prompt, per task.
	SystemPrompt func(t *task.Task) string
	// Limits of every episode (nil = none).
	Limits *plugin.Limits
	// Settings maps a harness name to its settings JSON.
	Settings map[string]string
	// UserOptions configure the views' users.
	UserOptions task.UserOptions
	// Verifier scores episodes; nil = the built-in exec verifier in process.
	Verifier plugin.Verifier
	// Judge, when set, scores the task's rubric items on the episode's
	// conversation (Outcome.Rubric, Outcome.RubricScore), beside the
	// executable score; a judge failure is an infrastructure failure
	// ("judge", retryable).
	Judge verify.Judge
	// Attributor attributes failed checkpoints; nil = the built-in rules
	// attributor in process.
	Attributor plugin.Attributor
	// Modules overrides the modules an episode's session is made of (nil =
	// the task's); the reference replay always uses the task's. Tests plant
	// environment faults with it (a broken module version).
	Modules func(job rollout.Job) []string
	// OnSession, if set, is called with each episode's session id when it
	// is created (tests use it to plant faults in one episode).
	OnSession func(job rollout.Job, attempt int, session string)
	// References caches the reference replays; nil = a cache of the
	// Executor's own. Set the same cache on a TrainEnv over the same
	// Server to replay each reference once for both.
	References *ReferenceCache

	own ReferenceCache
}

// ReferenceCache holds reference replays (the states after each atomic
// task's reference calls, the report of the calls), one per distinct
// reference solution (task modules, initial version and reference calls),
// replayed on first use. A replay that failed is forgotten so a later use
// tries again. One cache serves one megamcp.Server. The zero value is
// ready; safe for concurrent use.
type ReferenceCache struct {
	mu   sync.Mutex
	refs map[string]*referenceRun
}

type referenceRun struct {
	once     sync.Once
	versions map[string]*state.Version // verify.ReferenceAfter(k), verify.Reference
	report   attribute.ReferenceReport
	modules  map[string]string // tool -> module
	err      error
}

// Execute implements rollout.Executor.
func (e *Executor) Execute(ctx context.Context, job rollout.Job, attempt int) (*rollout.Outcome, error) {
	t := job.Task
	ref, err := e.reference(ctx, t)
	if errors.Is(err, verify.ErrBadTask) {
		return nil, &rollout.InfraError{Component: failure.Task, Kind: failure.Failed, Message: err.Error()}
	}
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Reference, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	user, err := task.NewUser(t, job.View, e.UserOptions)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Task, Kind: failure.Failed, Message: err.Error()}
	}
	pol, err := e.Policy(job)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Policy, Kind: failure.Failed, Message: err.Error()}
	}
	h, err := e.harness(ctx, job.Harness)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Plugin, Kind: failure.Start, Message: err.Error(), Retryable: true}
	}
	mods := t.Modules
	if e.Modules != nil {
		mods = e.Modules(job)
	}
	info, err := e.Server.Create(ctx, megamcp.CreateOptions{Modules: mods, Version: t.InitialVersion, Seed: job.Seed})
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	out := &rollout.Outcome{Session: info.ID, Ledger: "session:" + info.ID, Faults: plantedFaults(pol)}
	if e.OnSession != nil {
		e.OnSession(job, attempt, info.ID)
	}
	defer e.Server.Delete(ctx, info.ID, 0)
	initial, err := e.Server.Current(ctx, info.ID)
	if err != nil {
		return out, &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	prompt := ""
	if e.SystemPrompt != nil {
		prompt = e.SystemPrompt(t)
	}
	res, err := Run(ctx, h, &Episode{ID: info.ID, TaskID: t.ID, SystemPrompt: prompt, Limits: e.Limits,
		Settings: e.Settings[job.Harness], Seed: job.Seed, Policy: pol, User: &viewUser{u: user},
		Server: e.Server, Session: info.ID, Tools: t.Tools})
	if err != nil {
		return out, runError(ctx, err)
	}
	tr := res.Trajectory
	if tr != nil {
		out.Termination = tr.Termination
		out.Turns = len(tr.Turns)
		out.ToolCalls = int(tr.ToolCalls)
		if b, err := json.Marshal(tr); err == nil {
			out.Trajectory = b
		}
	}
	if res.Failure != nil {
		out.Attributions = e.infraAttribution(info.ID, res.Failure)
		return out, failureError(res.Failure)
	}
	final, err := e.Server.Current(ctx, info.ID)
	if err != nil {
		return out, &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	ledger, err := e.ledger(info.ID)
	if err != nil {
		return out, &rollout.InfraError{Component: failure.LedgerPart, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	versions := map[string]*state.Version{verify.Initial: initial, verify.Final: final}
	for k, v := range ref.versions {
		versions[k] = v
	}
	ev := verify.NewStateEvidence(versions)
	host := &plugin.HostSet{StateService: verifier.EvidenceState(ev)}
	vr, err := verifyEpisode(ctx, e.Verifier, ev, info.ID, t, ledger, tr)
	if err != nil {
		return out, err
	}
	score := vr.Score
	out.Score = &score
	out.Checkpoints = vr.Checkpoints

	if e.Judge != nil {
		var msgs []model.Message
		if tr != nil {
			msgs = ModelMessages(tr.Messages)
		}
		items, mean, err := verify.ScoreRubric(ctx, t, msgs, e.Judge)
		if err != nil {
			return out, &rollout.InfraError{Component: failure.Judge, Kind: failure.Failed, Message: err.Error(), Retryable: true}
		}
		out.Rubric, out.RubricScore = items, mean
	}

	if score < 1 {
		in := attribute.Input{Task: t, Result: vr, Ledger: ledger, Reference: ref.report,
			Messages: toUserMessages(tr), Modules: ref.modules}
		var atts []attribute.Attribution
		if e.Attributor == nil {
			// The built-in rules in process: typed, no request at all.
			in.Evidence = ev
			if atts, err = attribute.Attribute(ctx, in); err != nil {
				return out, &rollout.InfraError{Component: failure.Attributor, Kind: failure.Of(err), Message: err.Error(), Retryable: true}
			}
		} else {
			areq, err := rules.Request(info.ID, in)
			if err != nil {
				return out, &rollout.InfraError{Component: failure.Attributor, Kind: failure.Failed, Message: err.Error()}
			}
			var aresp plugin.AttributeResponse
			if err := e.Attributor.Attribute(ctx, host, areq, &aresp); err != nil {
				return out, &rollout.InfraError{Component: failure.Attributor, Kind: failure.Failed, Message: err.Error(), Retryable: true}
			}
			if aresp.Failure != nil {
				return out, pluginFailure(failure.Attributor, aresp.Failure)
			}
			atts = rules.Attributions(&aresp)
		}
		if b, err := json.Marshal(atts); err == nil {
			out.Attributions = b
		}
	}
	return out, nil
}

// plantedFaults are the faults pol plants when it is a scripted policy
// (scripted.Policy.Faults), nil otherwise.
func plantedFaults(pol model.Policy) []scripted.Fault {
	if sp, ok := pol.(*scripted.Policy); ok {
		return sp.Faults()
	}
	return nil
}

// runError maps an error of Run to the episode's infrastructure failure:
// the context's error as is, a *plugin.PluginError as "plugin_<kind>"
// (retryable unless the plugin reported its own error), anything else as a
// "harness" refusal (not retryable).
func runError(ctx context.Context, err error) error {
	var pe *plugin.PluginError
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &pe):
		return &rollout.InfraError{Component: failure.Plugin, Kind: pe.Kind, Message: err.Error(), Retryable: pe.Kind != failure.OwnError}
	default:
		return &rollout.InfraError{Component: failure.Harness, Kind: failure.Failed, Message: err.Error()}
	}
}

// failureError maps a harness's Failure (a host service failed during the
// episode) to an infrastructure failure of the service's component and
// kind (plugin.FailureParts), retryable except the harness's own error
// (component harness, kind error).
func failureError(f *plugin.Failure) *rollout.InfraError {
	c, k := plugin.FailureParts(f)
	return &rollout.InfraError{Component: c, Kind: k, Message: f.Message, Retryable: !(c == failure.Harness && k == failure.OwnError)}
}

// pluginFailure maps the Failure a verifier or attributor (via) reported:
// its own error is component via; a host service's failure keeps the
// service and names via. Retryable.
func pluginFailure(via failure.Component, f *plugin.Failure) *rollout.InfraError {
	c, k := plugin.FailureParts(f)
	if c == failure.Harness {
		return &rollout.InfraError{Component: via, Kind: k, Message: f.Message, Retryable: true}
	}
	return &rollout.InfraError{Via: via, Component: c, Kind: k, Message: f.Message, Retryable: true}
}

// verifyEpisode scores episode id of t over the evidence ev (the
// episode's states) with vf, the ledger and the trajectory. Executor.Execute
// and the training turn (TrainEnv) both verify through it. A nil vf is the
// built-in exec verifier run in process on the typed values (verify.Verify:
// no request, no conversion); a plugin gets a weft.plugin.v2 VerifyRequest
// (task, ledger, trajectory and the initial -> final diff) and ev as its
// State service. Errors are *rollout.InfraError (component verifier, or a
// host service the verifier reported via verifier).
func verifyEpisode(ctx context.Context, vf plugin.Verifier, ev verify.Evidence, id string, t *task.Task, ledger []verify.LedgerCall, tr *plugin.Trajectory) (*verify.Result, error) {
	if vf == nil {
		res, err := verify.Verify(ctx, verify.Input{Task: t, Ledger: ledger, Messages: exec.Messages(tr)}, ev)
		switch {
		case err == nil:
			return res, nil
		case errors.Is(err, verify.ErrBadTask):
			return nil, &rollout.InfraError{Component: failure.Verifier, Kind: failure.BadRequest, Message: err.Error(), Retryable: true}
		case errors.Is(err, verify.ErrNoVersion):
			return nil, &rollout.InfraError{Via: failure.Verifier, Component: failure.State, Kind: failure.NoSuchVersion, Message: err.Error(), Retryable: true}
		default:
			return nil, &rollout.InfraError{Via: failure.Verifier, Component: failure.State, Kind: failure.Of(err), Message: err.Error(), Retryable: true}
		}
	}
	diff, err := ev.Diff(ctx, verify.Initial, verify.Final)
	if err != nil {
		return nil, &rollout.InfraError{Via: failure.Verifier, Component: failure.State, Kind: failure.Of(err), Message: err.Error(), Retryable: true}
	}
	vreq, err := exec.Request(t, ledger, tr, diff)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Verifier, Kind: failure.Failed, Message: err.Error()}
	}
	vreq.EpisodeId = id
	var vresp plugin.VerifyResponse
	host := &plugin.HostSet{StateService: verifier.EvidenceState(ev)}
	if err := vf.Verify(ctx, host, vreq, &vresp); err != nil {
		return nil, &rollout.InfraError{Component: failure.Verifier, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	if vresp.Failure != nil {
		return nil, pluginFailure(failure.Verifier, vresp.Failure)
	}
	vr, err := exec.Decode(&vresp)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Verifier, Kind: failure.Failed, Message: err.Error()}
	}
	return vr, nil
}

// infraAttribution blames the environment for an episode that ended on a
// module failure: the episode is not scored (an infrastructure failure),
// but the failing module and tool are named so the component can be
// revised. Nil for other failures.
func (e *Executor) infraAttribution(session string, f *plugin.Failure) json.RawMessage {
	if c, _ := plugin.FailureParts(f); c != failure.Env {
		return nil
	}
	ledger, err := e.Server.Ledger(context.Background(), session, 0, 1<<20)
	if err != nil {
		return nil
	}
	for i := len(ledger) - 1; i >= 0; i-- {
		r := ledger[i]
		if r.Kind != megamcp.KindCall || r.Error == nil || !failure.Kind(r.Error.Kind).InModule() {
			continue
		}
		b, _ := json.Marshal([]attribute.Attribution{{
			Checkpoint: EpisodeCheckpoint,
			Class:      attribute.ClassEnvironment,
			Evidence:   fmt.Sprintf("ledger call #%d %s failed in module %s (%s): %s; the episode ended as an infrastructure failure (%s), not a score", r.Index, r.Tool, r.Module, r.Error.Kind, r.Error.Message, f.Kind),
			Revise:     "module:" + r.Module + "/tool:" + r.Tool,
		}})
		return b
	}
	return nil
}

// EpisodeCheckpoint names the whole episode in the attribution of an
// episode that ended on an infrastructure failure (it has no checkpoints).
const EpisodeCheckpoint = "episode"

func (e *Executor) harness(ctx context.Context, name string) (plugin.Harness, error) {
	if e.Harness != nil {
		return e.Harness(ctx, name)
	}
	return e.Launcher.Builtin(ctx, name)
}

// ledger reads the session's tool-call records as verify.LedgerCalls.
func (e *Executor) ledger(id string) ([]verify.LedgerCall, error) {
	var out []verify.LedgerCall
	_, err := readLedger(e.Server, id, 0, func(r megamcp.Record) {
		if r.Kind == megamcp.KindCall {
			out = append(out, LedgerCall(r))
		}
	})
	return out, err
}

// readLedger calls f with every ledger record of session id from index
// from on, in order, and returns the index after the last record read
// (from when there is none).
func readLedger(srv *megamcp.Server, id string, from uint64, f func(megamcp.Record)) (uint64, error) {
	for {
		recs, err := srv.Ledger(context.Background(), id, from, 1000)
		if err != nil {
			return from, err
		}
		for _, r := range recs {
			f(r)
		}
		if len(recs) > 0 {
			from = recs[len(recs)-1].Index + 1
		}
		if len(recs) < 1000 {
			return from, nil
		}
	}
}

// LedgerCall converts a ledger call record.
func LedgerCall(r megamcp.Record) verify.LedgerCall {
	lc := verify.LedgerCall{Index: r.Index, Tool: r.ExposedTool(), Arguments: r.Arguments, RowsChanged: r.RowsChanged}
	if r.Error != nil {
		lc.ErrorKind = failure.Kind(r.Error.Kind)
	}
	if r.Result != nil {
		lc.IsError = r.Result.IsError
		lc.Output = textContent(r.Result.Content)
	}
	return lc
}

// textContent joins a result's text blocks with newlines.
func textContent(cs []module.Content) string {
	var texts []string
	for _, c := range cs {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// referenceKey identifies what a reference replay depends on: the task's
// modules, initial version and reference calls (not its id: two tasks, or
// two versions of one task, with the same id must not share a replay).
func referenceKey(t *task.Task) (string, error) {
	var refs [][]task.Call
	for _, a := range t.Atomic {
		refs = append(refs, a.Reference)
	}
	b, err := json.Marshal(struct {
		Modules []string
		Version string
		Refs    [][]task.Call
	}{t.Modules, t.InitialVersion, refs})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// reference replays t's reference solution once per distinct reference
// (referenceKey) on a session of the task's modules.
func (e *Executor) reference(ctx context.Context, t *task.Task) (*referenceRun, error) {
	c := e.References
	if c == nil {
		c = &e.own
	}
	return c.get(ctx, e.Server, t)
}

// get returns t's reference replay on srv, replaying it on first use.
func (c *ReferenceCache) get(ctx context.Context, srv *megamcp.Server, t *task.Task) (*referenceRun, error) {
	key, err := referenceKey(t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.refs == nil {
		c.refs = map[string]*referenceRun{}
	}
	r := c.refs[key]
	if r == nil {
		r = &referenceRun{}
		c.refs[key] = r
	}
	c.mu.Unlock()
	r.once.Do(func() { r.err = replay(ctx, srv, t, r) })
	if r.err != nil {
		// Let a later attempt try again (the failure may be transient).
		c.mu.Lock()
		if c.refs[key] == r {
			delete(c.refs, key)
		}
		c.mu.Unlock()
	}
	return r, r.err
}

func replay(ctx context.Context, srv *megamcp.Server, t *task.Task, r *referenceRun) error {
	info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: t.Modules, Version: t.InitialVersion})
	if err != nil {
		return fmt.Errorf("reference of task %s: %w", t.ID, err)
	}
	defer srv.Delete(ctx, info.ID, 0)
	ss, err := srv.Session(info.ID)
	if err != nil {
		return err
	}
	r.modules = map[string]string{}
	var names []string
	for _, gt := range ss.Group().Tools() {
		r.modules[gt.Name] = gt.Module
		names = append(names, gt.Name)
	}
	if err := verify.CheckCallTools(t, names); err != nil {
		return err
	}
	r.versions = map[string]*state.Version{}
	v, err := srv.Current(ctx, info.ID)
	if err != nil {
		return err
	}
	r.versions[verify.ReferenceAfter(0)] = v
	for k, a := range t.Atomic {
		for i, c := range a.Reference {
			rc := attribute.ReferenceCall{Atomic: a.ID, Index: i, Tool: c.Tool}
			res, err := srv.Call(ctx, info.ID, megamcp.CallRequest{Tool: c.Tool, Arguments: c.Arguments})
			if err != nil {
				if kind := megamcp.ErrorKind(err); kind != "" && kind != "no_such_session" && kind != "closed" && ctx.Err() == nil {
					// The module failed on the reference call: the task's
					// (or the module's) fault, recorded for attribution.
					rc.ErrorKind, rc.Output = kind, err.Error()
					r.report.Calls = append(r.report.Calls, rc)
					continue
				}
				return fmt.Errorf("reference of task %s, atomic %s, call %d (%s): %w", t.ID, a.ID, i, c.Tool, err)
			}
			rc.IsError = res.Result.IsError
			rc.RowsChanged = res.RowsChanged
			rc.Output = textContent(res.Result.Content)
			r.report.Calls = append(r.report.Calls, rc)
		}
		v, err := srv.Current(ctx, info.ID)
		if err != nil {
			return err
		}
		r.versions[verify.ReferenceAfter(k+1)] = v
	}
	v, err = srv.Current(ctx, info.ID)
	if err != nil {
		return err
	}
	r.versions[verify.Reference] = v
	return nil
}

// viewUser serves a core/task view as the plugin User service: the agent's
// messages to the user are the canonical assistant messages without tool
// calls.
type viewUser struct{ u task.User }

func (v *viewUser) Next(ctx context.Context, req *plugin.UserRequest, resp *plugin.UserResponse) error {
	var toUser []string
	for _, m := range req.Messages {
		if m.Role == plugin.RoleAssistant && len(m.ToolCalls) == 0 {
			toUser = append(toUser, m.Content)
		}
	}
	content, done, err := v.u.Next(ctx, toUser)
	if err != nil {
		return &plugin.HostError{Service: failure.User, Kind: failure.Internal, Message: err.Error()}
	}
	resp.Content, resp.Done = content, done
	return nil
}

// toUserMessages is the text of every assistant message, those with tool
// calls included (what the communicate check reads, as tau2 does).
func toUserMessages(tr *plugin.Trajectory) []string {
	if tr == nil {
		return nil
	}
	var out []string
	for _, m := range tr.Messages {
		if m.Role == plugin.RoleAssistant && m.Content != "" {
			out = append(out, m.Content)
		}
	}
	return out
}
