package host

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/sdk/plugin"
)

// TrainEnv is the training-data environment (core/train.Env): an episode
// is a MegaMCP session plus the canonical conversation so far, run one
// atomic turn at a time by a harness plugin that resumes conversations
// (plugin.CapabilityResume), and verified after every turn with the exec
// verifier against the reference replay (shared with the Executor through
// a ReferenceCache).
//
// Turn k (0-based, in Task.Order()) runs the harness with
// Episode.History = the canonical conversation so far (without the system
// message), Episode.Seed = the candidate seed (CandidateSeed) and a user
// that states the view's request for turn k and is done as soon as the
// agent addresses the user again. The request is what the view's
// (stateless) user says after k messages to the user: the history's
// messages to the user, padded with empty ones when an earlier turn ended
// without one (a limit), so under task.ViewSimUser it is atomic request k
// and under task.ViewAgentic the brief on turn 0 and nothing later (the
// turn ends at once, with no completion). The turn's reward is 1 when
// every checkpoint of the prefix task passes: atomic tasks 0..k verified
// against the reference replay up to atomic task k (Reference =
// ReferenceAfter(k+1)) with the episode's calls of all turns as the
// ledger, under the simuser view the state after the turn equal to the
// reference's (a state_equal check added to atomic task k: its changed_rows check alone does not see a
// wrong value in a column the reference leaves unchanged) and, on the last
// turn, the overall checks (which hold state_equal); else 0.
//
// TurnResult.Tools and Segment.Tools are the session's tools as the Env
// service lists them (a harness's own tool filter is not seen).
// Episode.Messages is empty until the first turn has run: the system
// message is the one the harness rendered (on the latest turn).
//
// Errors of Open and Turn that are infrastructure failures are
// *rollout.InfraError with the Executor's kinds ("reference",
// "plugin_start", "plugin_<kind>", "harness", a Failure's kind, "session",
// "ledger", "verifier"), plus "policy" when the Policy hook fails. A
// harness without the resume capability is ErrNoResume (wrapped), from
// Open.
//
// Each Episode must be used by one goroutine at a time; episodes and their
// forks are independent and run concurrently.
type TrainEnv struct {
	Server   *megamcp.Server
	Launcher *Launcher
	// Harness resolves an episode's harness; nil = Launcher.Builtin(name).
	// It is resolved at Open (to check the resume capability) and again
	// at every Turn (a launcher restarts a plugin process that died).
	Harness func(ctx context.Context, name string) (plugin.Harness, error)
	// Policy builds the candidate policy of a turn; nil =
	// ScriptedTurnPolicy(scripted.Faults{}) (the reference solution).
	// Turns with TurnOptions.Reference never call it: they run
	// ScriptedTurnPolicy with zero faults.
	Policy func(in TurnInput) (model.Policy, error)
	// SystemPrompt is the domain policy the harness puts in its system
	// prompt, per task (nil = none).
	SystemPrompt func(t *task.Task) string
	// Limits of every turn (nil = none): each turn is one harness run.
	Limits *plugin.Limits
	// Settings maps a harness name to its settings JSON.
	Settings map[string]string
	// UserOptions configure the views' users.
	UserOptions task.UserOptions
	// Verifier scores turns; nil = the built-in exec verifier in process.
	Verifier plugin.Verifier
	// References caches the reference replays (share one with an Executor
	// over the same Server); nil = a cache of the TrainEnv's own.
	References *ReferenceCache

	own ReferenceCache
}

var _ train.Env = (*TrainEnv)(nil)

// TurnInput is what a turn's candidate policy is built from.
type TurnInput struct {
	Task *task.Task
	View string
	// Turn is the 0-based index in Task.Order().
	Turn    int
	Options train.TurnOptions
	// Seed is the candidate seed, CandidateSeed(episode seed, Turn,
	// Options.Sample).
	Seed uint64
	// History is the canonical conversation before this turn, without the
	// system message (a copy): the harness renders it into the prompt
	// before the turn's user message.
	History []model.Message
}

// ErrNoResume is returned (wrapped, naming the harness) by TrainEnv.Open
// when the harness does not declare plugin.CapabilityResume.
var ErrNoResume = errors.New("harness does not declare the \"resume\" capability (RunEpisodeRequest.history), which turn-by-turn episodes need")

// ErrEpisodeClosed is returned by the methods of a closed training episode
// (other than Close and Messages).
var ErrEpisodeClosed = errors.New("training episode is closed")

// CandidateSeed mixes an episode seed, a turn index and a sample number
// into the seed of one candidate (SplitMix64 steps): deterministic, and
// different for different (turn, sample) of one episode in practice.
func CandidateSeed(episode uint64, turn int, sample uint64) uint64 {
	x := splitmix(episode ^ 0x7765667474726e)
	x = splitmix(x ^ uint64(turn))
	return splitmix(x ^ sample)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ScriptedTurnPolicy returns a TrainEnv.Policy that plays the turn's part
// of the reference solution (scripted.ScriptForTurn of the task, view and
// turn) with faults seeded by TurnInput.Seed (zero faults for a Reference
// turn), offset by the assistant messages of the history
// (scripted.Offset) so that its plan starts at the turn's first step
// whatever came before. Errors: those of ScriptForTurn and scripted.New
// (an invalid fault rate).
func ScriptedTurnPolicy(faults scripted.Faults) func(in TurnInput) (model.Policy, error) {
	return func(in TurnInput) (model.Policy, error) {
		s, err := scripted.ScriptForTurn(in.Task, in.View, in.Turn)
		if err != nil {
			return nil, err
		}
		f := faults
		if in.Options.Reference {
			f = scripted.Faults{}
		}
		p, err := scripted.New(s, f, in.Seed)
		if err != nil {
			return nil, err
		}
		return scripted.Offset(p, assistantMessages(in.History)), nil
	}
}

func assistantMessages(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			n++
		}
	}
	return n
}

func (env *TrainEnv) harness(ctx context.Context, name string) (plugin.Harness, error) {
	if env.Harness != nil {
		return env.Harness(ctx, name)
	}
	if env.Launcher == nil {
		return nil, errors.New("TrainEnv: neither Harness nor Launcher is set")
	}
	return env.Launcher.Builtin(ctx, name)
}

// trainShared is what an episode and its forks share: immutable after Open.
type trainShared struct {
	env       *TrainEnv
	t         *task.Task
	opts      train.EpisodeOptions
	order     []int
	user      task.User
	ref       *referenceRun
	initial   *state.Version
	prompt    string
	tools     []model.Tool
	specs     []train.ToolSpec
	forbidden []string
	// writes[k] are the tools of turn k's atomic task whose reference call
	// changed rows in the reference replay.
	writes [][]string
}

// Open implements train.Env: it replays t's reference (cached), checks
// that the harness opts.Harness declares the resume capability, and
// creates a session of t's modules at t's initial version seeded with
// opts.Seed. The episode starts with no conversation at turn 0. Errors: a
// nil or invalid task, an unknown view, ErrNoResume, or a
// *rollout.InfraError.
func (env *TrainEnv) Open(ctx context.Context, t *task.Task, opts train.EpisodeOptions) (train.Episode, error) {
	if t == nil {
		return nil, errors.New("TrainEnv.Open: nil task")
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("TrainEnv.Open: task %s: %w", t.ID, err)
	}
	user, err := task.NewUser(t, opts.View, env.UserOptions)
	if err != nil {
		return nil, fmt.Errorf("TrainEnv.Open: task %s: %w", t.ID, err)
	}
	refs := env.References
	if refs == nil {
		refs = &env.own
	}
	ref, err := refs.get(ctx, env.Server, t)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Reference, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	h, err := env.harness(ctx, opts.Harness)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Plugin, Kind: failure.Start, Message: err.Error(), Retryable: true}
	}
	var d plugin.DescribeResponse
	if err := h.Describe(ctx, &plugin.DescribeRequest{}, &d); err != nil {
		return nil, runError(ctx, fmt.Errorf("describe harness %s: %w", opts.Harness, err))
	}
	if !slices.Contains(d.Capabilities, plugin.CapabilityResume) {
		return nil, fmt.Errorf("TrainEnv.Open: harness %q (%s %s, capabilities %q): %w", opts.Harness, d.Name, d.Version, d.Capabilities, ErrNoResume)
	}
	info, err := env.Server.Create(ctx, megamcp.CreateOptions{Modules: t.Modules, Version: t.InitialVersion, Seed: opts.Seed})
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	sh := &trainShared{env: env, t: t, opts: opts, order: t.Order(), user: user, ref: ref}
	fail := func(err error) (train.Episode, error) {
		env.Server.Delete(ctx, info.ID, 0)
		return nil, &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	if sh.initial, err = env.Server.Current(ctx, info.ID); err != nil {
		return fail(err)
	}
	ss, err := env.Server.Session(info.ID)
	if err != nil {
		return fail(err)
	}
	for _, gt := range ss.Group().Tools() {
		if t.Tools != nil && !slices.Contains(t.Tools, gt.Name) {
			continue
		}
		sh.tools = append(sh.tools, model.Tool{Name: gt.Name, Description: gt.Tool.Description, Parameters: gt.Tool.InputSchema})
		sh.specs = append(sh.specs, train.ToolSpec{Name: gt.Name, InputSchema: gt.Tool.InputSchema})
	}
	if env.SystemPrompt != nil {
		sh.prompt = env.SystemPrompt(t)
	}
	sh.forbidden = forbiddenTools(t)
	sh.writes = make([][]string, len(sh.order))
	for k, i := range sh.order {
		id := t.Atomic[i].ID
		for _, rc := range ref.report.Calls {
			if rc.Atomic == id && rc.RowsChanged > 0 && !slices.Contains(sh.writes[k], rc.Tool) {
				sh.writes[k] = append(sh.writes[k], rc.Tool)
			}
		}
	}
	return &trainEpisode{sh: sh, session: info.ID, gen: info.Generation}, nil
}

// forbiddenTools are the tool names of t's forbidden_call checks (overall
// and atomic), in task order, without repeats.
func forbiddenTools(t *task.Task) []string {
	var out []string
	add := func(cs []task.Check) {
		for _, c := range cs {
			if c.Kind == task.CheckForbiddenCall && !slices.Contains(out, c.Tool) {
				out = append(out, c.Tool)
			}
		}
	}
	add(t.Checks)
	for _, a := range t.Atomic {
		add(a.Checks)
	}
	return out
}

// trainEpisode is TrainEnv's train.Episode.
type trainEpisode struct {
	sh      *trainShared
	session string
	gen     uint64
	// ledgerPos is where the session's ledger records not yet read start.
	ledgerPos uint64
	// conv is the canonical conversation, system message first (empty
	// before the first turn).
	conv []model.Message
	// calls are the episode's tool calls so far (earlier turns), indexed
	// from 0 across turns and forks.
	calls  []verify.LedgerCall
	next   int
	closed bool
	// vid is a version id of the session's current state when known (set
	// by Snapshot, Restore and Fork, cleared when a turn starts), so the
	// G forks of a group share one snapshot. vmu guards it: Fork may be
	// called concurrently on one episode.
	vmu sync.Mutex
	vid string
}

// trainSnapshot is a trainEpisode's Snapshot.
type trainSnapshot struct {
	train.SnapshotBase
	sh      *trainShared
	version string
	conv    []model.Message
	calls   []verify.LedgerCall
	next    int
}

func (e *trainEpisode) Next() int { return e.next }

func (e *trainEpisode) Messages() []model.Message { return slices.Clone(e.conv) }

// Turn implements train.Episode.Turn (see TrainEnv).
func (e *trainEpisode) Turn(ctx context.Context, opts train.TurnOptions) (*train.TurnResult, error) {
	e.setVersion("") // the state changes from here on, whatever happens
	if e.closed {
		return nil, ErrEpisodeClosed
	}
	sh := e.sh
	env := sh.env
	n := len(sh.order)
	if e.next >= n {
		return nil, fmt.Errorf("training episode of task %s is complete: all %d turns ran", sh.t.ID, n)
	}
	k := e.next
	a := &sh.t.Atomic[sh.order[k]]
	var history []model.Message
	if len(e.conv) > 0 {
		history = e.conv[1:]
	}
	in := TurnInput{Task: sh.t, View: sh.opts.View, Turn: k, Options: opts,
		Seed: CandidateSeed(sh.opts.Seed, k, opts.Sample), History: slices.Clone(history)}
	var pol model.Policy
	var err error
	if opts.Reference || env.Policy == nil {
		pol, err = ScriptedTurnPolicy(scripted.Faults{})(in)
	} else {
		pol, err = env.Policy(in)
	}
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Policy, Kind: failure.Failed, Message: fmt.Sprintf("task %s turn %d: %v", sh.t.ID, k, err)}
	}
	h, err := env.harness(ctx, sh.opts.Harness)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Plugin, Kind: failure.Start, Message: err.Error(), Retryable: true}
	}
	// The view's user speaks request k after k messages to the user.
	toUser := make([]string, k)
	i := 0
	for _, m := range history {
		if m.Role == model.RoleAssistant && len(m.ToolCalls) == 0 && i < k {
			toUser[i] = m.Content
			i++
		}
	}
	user := &segmentUser{u: sh.user, toUser: toUser}
	res, err := Run(ctx, h, &Episode{TaskID: sh.t.ID, SystemPrompt: sh.prompt, Limits: env.Limits,
		Settings: env.Settings[sh.opts.Harness], Seed: in.Seed, History: PluginMessages(history),
		Policy: pol, User: user, Server: env.Server, Session: e.session, Generation: e.gen})
	if err != nil {
		return nil, runError(ctx, err)
	}
	if res.Failure != nil {
		return nil, failureError(res.Failure)
	}
	tr := res.Trajectory
	msgs := ModelMessages(tr.GetMessages())
	if why := resumedFrom(msgs, history); why != "" {
		return nil, &rollout.InfraError{Component: failure.Harness, Kind: failure.Failed, Message: fmt.Sprintf("harness %s did not resume the conversation of task %s at turn %d: %s", sh.opts.Harness, sh.t.ID, k, why)}
	}
	system, turn := msgs[0], msgs[1+len(history):]

	var turnCalls []verify.LedgerCall
	pos, err := readLedger(env.Server, e.session, e.ledgerPos, func(r megamcp.Record) {
		if r.Kind == megamcp.KindCall && r.Generation == e.gen {
			lc := LedgerCall(r)
			lc.Index = uint64(len(e.calls) + len(turnCalls))
			turnCalls = append(turnCalls, lc)
		}
	})
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.LedgerPart, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	final, err := env.Server.Current(ctx, e.session)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	last := k == n-1
	calls := append(slices.Clone(e.calls), turnCalls...)
	versions := map[string]*state.Version{verify.Initial: sh.initial, verify.Final: final}
	for j := 0; j <= k+1; j++ {
		versions[verify.ReferenceAfter(j)] = sh.ref.versions[verify.ReferenceAfter(j)]
	}
	versions[verify.Reference] = sh.ref.versions[verify.ReferenceAfter(k+1)]
	if last {
		versions[verify.Reference] = sh.ref.versions[verify.Reference]
	}
	vr, err := verifyEpisode(ctx, env.Verifier, verify.NewStateEvidence(versions), e.session, prefixTask(sh.t, sh.order, k, sh.opts.View == task.ViewSimUser), calls, tr)
	if err != nil {
		return nil, err
	}
	cps := vr.Checkpoints
	if !last && len(cps) > 0 && cps[len(cps)-1].Name == verify.Overall {
		cps = cps[:len(cps)-1]
	}
	reward := 1.0
	for _, cp := range cps {
		if cp.Score < 1 {
			reward = 0
		}
	}

	out := &train.TurnResult{Turn: k, Atomic: a.ID, Reward: reward, Checkpoints: cps,
		Termination: tr.GetTermination(), Reference: opts.Reference, Tools: slices.Clone(sh.tools)}
	out.Prompt = append([]model.Message{system}, history...)
	if len(turn) > 0 {
		out.Prompt = append(out.Prompt, turn[0])
		out.Completion = slices.Clone(turn[1:])
	}
	seg := train.Segment{Tools: slices.Clone(sh.specs), Forbidden: slices.Clone(sh.forbidden)}
	for _, c := range turnCalls {
		seg.Calls = append(seg.Calls, segmentCall(c))
	}
	for _, c := range e.calls {
		seg.History = append(seg.History, segmentCall(c))
	}
	addressed := false
	if m := len(out.Completion); m > 0 && out.Completion[m-1].Role == model.RoleAssistant && len(out.Completion[m-1].ToolCalls) == 0 {
		seg.Content = out.Completion[m-1].Content
		addressed = true
	}
	if addressed {
		for _, w := range sh.writes[k] {
			// A write the turn never attempted: it stopped early. A write
			// attempted and failed (wrong arguments) is a wrong call, not a
			// stop; the reward already says it failed.
			if !slices.ContainsFunc(turnCalls, func(c verify.LedgerCall) bool { return c.Tool == w }) {
				seg.Stopped = true
				break
			}
		}
	}
	out.Segment = seg

	conv := make([]model.Message, 0, 1+len(history)+len(turn))
	conv = append(append(append(conv, system), history...), turn...)
	e.conv, e.calls, e.ledgerPos = conv, calls, pos
	e.next++
	return out, nil
}

func segmentCall(c verify.LedgerCall) train.Call {
	return train.Call{Tool: c.Tool, Arguments: c.Arguments, IsError: c.IsError, ErrorKind: string(c.ErrorKind)}
}

// resumedFrom says how msgs (a trajectory's canonical messages) fail to
// start with a system message followed by history ("" when they do).
func resumedFrom(msgs, history []model.Message) string {
	if len(msgs) == 0 || msgs[0].Role != model.RoleSystem {
		return "the trajectory does not start with a system message"
	}
	if len(msgs) < 1+len(history) {
		return fmt.Sprintf("the trajectory has %d messages, fewer than the system message and the %d of the history", len(msgs), len(history))
	}
	for i, h := range history {
		m := msgs[1+i]
		same := m.Role == h.Role && m.Content == h.Content && m.ToolCallID == h.ToolCallID && len(m.ToolCalls) == len(h.ToolCalls)
		for j := 0; same && j < len(h.ToolCalls); j++ {
			a, b := m.ToolCalls[j], h.ToolCalls[j]
			same = a.ID == b.ID && a.Function.Name == b.Function.Name && a.Function.Arguments == b.Function.Arguments
		}
		if !same {
			return fmt.Sprintf("message %d of the trajectory (%s) is not history message %d (%s)", 1+i, m.Role, i, h.Role)
		}
	}
	if rest := msgs[1+len(history):]; len(rest) > 0 && rest[0].Role != model.RoleUser {
		return fmt.Sprintf("the turn starts with a %s message, not the user's request", rest[0].Role)
	}
	return ""
}

// prefixTask is t cut after turn k: the atomic tasks order[0..k] (ids
// kept, After edges to dropped tasks removed) and, unless k is the last
// turn, no overall checks or rubric but (strict: one atomic task per
// turn, the simuser view) a state_equal check on atomic task k.
func prefixTask(t *task.Task, order []int, k int, strict bool) *task.Task {
	p := *t
	keep := map[string]bool{}
	p.Atomic = make([]task.Atomic, 0, k+1)
	for _, i := range order[:k+1] {
		keep[t.Atomic[i].ID] = true
	}
	for _, i := range order[:k+1] {
		a := t.Atomic[i]
		var after []string
		for _, dep := range a.After {
			if keep[dep] {
				after = append(after, dep)
			}
		}
		a.After = after
		p.Atomic = append(p.Atomic, a)
	}
	if k < len(order)-1 {
		p.Checks, p.Rubric = nil, nil
		// The turn's own checks (changed_rows) confirm the values its
		// reference sets; they do not see a wrong value written to a
		// column the reference leaves as it was (a typo in the city of an
		// address update). A turn completes its atomic task when the state
		// equals the reference's after it, as tau2 judges a whole task.
		// (The last turn has this in the overall checks.)
		cur := &p.Atomic[len(p.Atomic)-1]
		if strict && !slices.ContainsFunc(cur.Checks, func(c task.Check) bool { return c.Kind == task.CheckStateEqual }) {
			cur.Checks = append(slices.Clone(cur.Checks), task.Check{Kind: task.CheckStateEqual})
		}
	}
	return &p
}

// segmentUser is the user of one atomic turn: its first message is what
// the view's user says after toUser (request k after k messages to the
// user); once the agent addresses the user again, it is done.
type segmentUser struct {
	u      task.User
	toUser []string
	asked  atomic.Bool
}

func (s *segmentUser) Next(ctx context.Context, req *plugin.UserRequest, resp *plugin.UserResponse) error {
	if s.asked.Swap(true) {
		resp.Done = true
		return nil
	}
	content, done, err := s.u.Next(ctx, s.toUser)
	if err != nil {
		return &plugin.HostError{Service: failure.User, Kind: failure.Internal, Message: err.Error()}
	}
	resp.Content, resp.Done = content, done
	return nil
}

// Snapshot implements train.Episode: a MegaMCP version of the session's
// state, with copies of the conversation, the episode's calls and the turn
// index.
func (e *trainEpisode) Snapshot(ctx context.Context) (train.Snapshot, error) {
	if e.closed {
		return nil, ErrEpisodeClosed
	}
	vid, err := e.version()
	if err != nil {
		return nil, err
	}
	return &trainSnapshot{sh: e.sh, version: vid, conv: slices.Clone(e.conv), calls: slices.Clone(e.calls), next: e.next}, nil
}

// Restore implements train.Episode: the session is restored to the
// snapshot's version (its generation bumps, fencing calls of an abandoned
// turn). Errors: a snapshot of another TrainEnv episode family (or not a
// TrainEnv snapshot), ErrEpisodeClosed, or a *rollout.InfraError
// ("session").
func (e *trainEpisode) Restore(ctx context.Context, s train.Snapshot) error {
	if e.closed {
		return ErrEpisodeClosed
	}
	ts, ok := s.(*trainSnapshot)
	if !ok || ts == nil {
		return fmt.Errorf("TrainEnv: Restore: %T is not a snapshot of a TrainEnv episode", s)
	}
	if ts.sh != e.sh {
		return fmt.Errorf("TrainEnv: Restore: the snapshot was taken on an episode of task %s opened separately, not on this episode (task %s) or one it was forked from", ts.sh.t.ID, e.sh.t.ID)
	}
	gen, err := e.sh.env.Server.Restore(ctx, e.session, 0, ts.version)
	if err != nil {
		return &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	e.gen = gen
	e.conv, e.calls, e.next = slices.Clone(ts.conv), slices.Clone(ts.calls), ts.next
	e.setVersion(ts.version)
	return nil
}

func (e *trainEpisode) setVersion(vid string) {
	e.vmu.Lock()
	e.vid = vid
	e.vmu.Unlock()
}

// version returns a version id of the current state, snapshotting the
// session only when none is known.
func (e *trainEpisode) version() (string, error) {
	e.vmu.Lock()
	defer e.vmu.Unlock()
	if e.vid != "" {
		return e.vid, nil
	}
	vid, err := e.sh.env.Server.Snapshot(context.Background(), e.session, e.gen)
	if err != nil {
		return "", &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	e.vid = vid
	return vid, nil
}

// Fork implements train.Episode: a new session forked from a snapshot of
// this one's state (same modules, seed and clock), with copies of the
// conversation and calls.
func (e *trainEpisode) Fork(ctx context.Context) (train.Episode, error) {
	if e.closed {
		return nil, ErrEpisodeClosed
	}
	vid, err := e.version()
	if err != nil {
		return nil, err
	}
	info, err := e.sh.env.Server.Fork(ctx, e.session, e.gen, vid)
	if err != nil {
		return nil, &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	return &trainEpisode{sh: e.sh, session: info.ID, gen: info.Generation,
		conv: slices.Clone(e.conv), calls: slices.Clone(e.calls), next: e.next, vid: vid}, nil
}

// Hash implements train.Episode: the hex state hash of the session's
// current state (state.Version.Hash).
func (e *trainEpisode) Hash(ctx context.Context) (string, error) {
	if e.closed {
		return "", ErrEpisodeClosed
	}
	v, err := e.sh.env.Server.Current(ctx, e.session)
	if err != nil {
		return "", &rollout.InfraError{Component: failure.Session, Kind: failure.Failed, Message: err.Error(), Retryable: true}
	}
	return v.Hash().String(), nil
}

// Close implements train.Episode: it deletes the session. Idempotent; a
// session already gone is not an error.
func (e *trainEpisode) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if err := e.sh.env.Server.Delete(context.Background(), e.session, 0); err != nil && !errors.Is(err, megamcp.ErrNoSuchSession) {
		return err
	}
	return nil
}
