package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

// fakeEnv is a deterministic in-memory Env. A turn's outcome comes from a
// table keyed by (task, turn, sample, reference); a missing entry is a
// success with one clean call to get_order. Like a real verifier, a turn's
// reward is 1 only when its own atomic task succeeded and no earlier turn
// of the episode failed (the checkpoints so far all pass).
//
// It counts open episodes, logs Snapshot/Restore/Fork, and tracks turns
// in flight. Episodes from Fork may run concurrently: shared counters are
// under mu, the table is read-only once the test starts.
type fakeEnv struct {
	out   map[fakeKey]fakeOutcome
	tools []model.Tool

	// forkErrAt fails the forkErrAt-th Fork call (1-based); 0 never.
	forkErrAt int
	// barrier makes policy turns wait until that many have started (0:
	// no barrier), proving they run concurrently.
	barrier int

	mu          sync.Mutex
	allIn       chan struct{} // closed when barrier turns have started
	ids         int
	open        int
	opened      int
	forkCalls   int
	forkOpen    []int    // open episodes at each Fork call
	snapshots   []string // "e<ep>:s<snap>@<turn>"
	restores    []string // "e<ep>:s<snap>"
	turns       []string // "e<ep>:t<turn>:s<sample>" or ":ref", in call order
	entered     int
	inflight    int
	maxInflight int
}

type fakeKey struct {
	task   string
	turn   int
	sample uint64
	ref    bool
}

// fakeOutcome is a turn's scripted outcome: fail (the atomic task not
// done), the tool calls made (nil: one get_order call), an infrastructure
// error.
type fakeOutcome struct {
	fail  bool
	calls []Call
	err   error
}

func newFakeEnv() *fakeEnv {
	e := &fakeEnv{
		out: map[fakeKey]fakeOutcome{},
		tools: []model.Tool{
			{Name: "get_order", Description: "read an order", Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)},
			{Name: "cancel_order", Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)},
		},
	}
	return e
}

// set scripts (task, turn, sample) for policy turns.
func (e *fakeEnv) set(taskID string, turn int, sample uint64, o fakeOutcome) {
	e.out[fakeKey{taskID, turn, sample, false}] = o
}

// failSamples makes the given samples of a turn fail.
func (e *fakeEnv) failSamples(taskID string, turn int, samples ...uint64) {
	for _, s := range samples {
		e.set(taskID, turn, s, fakeOutcome{fail: true})
	}
}

// setRef scripts the reference turn.
func (e *fakeEnv) setRef(taskID string, turn int, o fakeOutcome) {
	e.out[fakeKey{taskID, turn, 0, true}] = o
}

func (e *fakeEnv) openCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.open
}

func (e *fakeEnv) Open(ctx context.Context, t *task.Task, opts EpisodeOptions) (Episode, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ids++
	e.open++
	e.opened++
	return &fakeEpisode{env: e, id: e.ids, lineage: []int{e.ids}, task: t, n: len(t.Order()),
		msgs: []model.Message{{Role: model.RoleSystem, Content: "system " + t.ID}}}, nil
}

type fakeEpisode struct {
	env     *fakeEnv
	id      int
	lineage []int // this episode and the ones it was forked from
	task    *task.Task
	n       int
	next    int
	msgs    []model.Message
	history []Call
	broken  bool
	state   string
	closed  bool
}

type fakeSnap struct {
	SnapshotBase
	id      int
	ep      int
	next    int
	msgs    []model.Message
	history []Call
	broken  bool
	state   string
}

func (p *fakeEpisode) Next() int { return p.next }

func (p *fakeEpisode) Messages() []model.Message { return append([]model.Message(nil), p.msgs...) }

func (p *fakeEpisode) Hash(ctx context.Context) (string, error) { return p.state, nil }

func (p *fakeEpisode) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	p.env.mu.Lock()
	p.env.open--
	p.env.mu.Unlock()
	return nil
}

func (p *fakeEpisode) Snapshot(ctx context.Context) (Snapshot, error) {
	if p.closed {
		return nil, errors.New("fake: snapshot of a closed episode")
	}
	e := p.env
	e.mu.Lock()
	e.ids++
	s := &fakeSnap{id: e.ids, ep: p.id, next: p.next, msgs: p.Messages(),
		history: append([]Call(nil), p.history...), broken: p.broken, state: p.state}
	e.snapshots = append(e.snapshots, fmt.Sprintf("e%d:s%d@%d", p.id, s.id, p.next))
	e.mu.Unlock()
	return s, nil
}

func (p *fakeEpisode) Restore(ctx context.Context, s Snapshot) error {
	fs, ok := s.(*fakeSnap)
	if !ok {
		return fmt.Errorf("fake: foreign snapshot %T", s)
	}
	known := false
	for _, id := range p.lineage {
		known = known || id == fs.ep
	}
	if !known || p.closed {
		return fmt.Errorf("fake: snapshot s%d of e%d cannot restore e%d", fs.id, fs.ep, p.id)
	}
	p.next, p.msgs, p.broken, p.state = fs.next, append([]model.Message(nil), fs.msgs...), fs.broken, fs.state
	p.history = append([]Call(nil), fs.history...)
	p.env.mu.Lock()
	p.env.restores = append(p.env.restores, fmt.Sprintf("e%d:s%d", p.id, fs.id))
	p.env.mu.Unlock()
	return nil
}

func (p *fakeEpisode) Fork(ctx context.Context) (Episode, error) {
	if p.closed {
		return nil, errors.New("fake: fork of a closed episode")
	}
	e := p.env
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forkCalls++
	e.forkOpen = append(e.forkOpen, e.open)
	if e.forkCalls == e.forkErrAt {
		return nil, errors.New("fake: fork failed")
	}
	e.ids++
	e.open++
	return &fakeEpisode{env: e, id: e.ids, lineage: append(append([]int(nil), p.lineage...), e.ids), task: p.task, n: p.n,
		next: p.next, msgs: p.Messages(), history: append([]Call(nil), p.history...), broken: p.broken, state: p.state}, nil
}

var errInfra = errors.New("fake: infra failure")

func (p *fakeEpisode) Turn(ctx context.Context, opts TurnOptions) (*TurnResult, error) {
	if p.closed {
		return nil, errors.New("fake: turn on a closed episode")
	}
	if p.next >= p.n {
		return nil, fmt.Errorf("fake: turn %d past the end (%d)", p.next, p.n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e := p.env
	turn := p.next
	key := fakeKey{p.task.ID, turn, opts.Sample, opts.Reference}
	if opts.Reference {
		key.sample = 0
	}
	o := e.out[key]
	tag := fmt.Sprintf("t%d s%d", turn, opts.Sample)
	if opts.Reference {
		tag = fmt.Sprintf("t%d ref", turn)
	}

	e.mu.Lock()
	e.turns = append(e.turns, fmt.Sprintf("e%d:%s", p.id, strings.ReplaceAll(tag, " ", ":")))
	e.inflight++
	e.maxInflight = max(e.maxInflight, e.inflight)
	var wait chan struct{}
	if !opts.Reference && e.barrier > 0 {
		if e.allIn == nil {
			e.allIn = make(chan struct{})
		}
		e.entered++
		if e.entered == e.barrier {
			close(e.allIn)
		}
		wait = e.allIn
	}
	e.mu.Unlock()
	if wait != nil {
		// Not a timing assertion: a driver that serialises its candidates
		// would otherwise hang here; it fails instead.
		select {
		case <-wait:
		case <-time.After(time.Minute):
			return nil, fmt.Errorf("fake: barrier of %d never filled: candidates do not run concurrently", e.barrier)
		}
	}
	e.mu.Lock()
	e.inflight--
	e.mu.Unlock()

	if o.err != nil {
		p.broken = true
		return nil, o.err
	}
	calls := o.calls
	if calls == nil {
		calls = []Call{{Tool: "get_order", Arguments: json.RawMessage(fmt.Sprintf(`{"order_id":"%d-%d"}`, turn, opts.Sample))}}
	}
	atomic := p.task.Atomic[p.task.Order()[turn]]
	user := model.Message{Role: model.RoleUser, Content: atomic.Request}
	prompt := append(p.Messages(), user)
	var completion []model.Message
	for k, c := range calls {
		id := fmt.Sprintf("call_%d_%d", turn, k)
		completion = append(completion,
			model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Type: "function",
				Function: model.FunctionCall{Name: c.Tool, Arguments: string(c.Arguments)}}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, Name: c.Tool, Content: "ok " + tag})
	}
	completion = append(completion, model.Message{Role: model.RoleAssistant, Content: "done " + tag})

	specs := make([]ToolSpec, len(e.tools))
	for i, t := range e.tools {
		specs[i] = ToolSpec{Name: t.Name, InputSchema: t.Parameters}
	}
	reward := 1.0
	if p.broken || o.fail {
		reward = 0
		p.broken = true
	}
	res := &TurnResult{
		Turn: turn, Atomic: atomic.ID,
		Prompt: prompt, Completion: completion, Tools: append([]model.Tool(nil), e.tools...),
		Segment: Segment{Calls: calls, Content: "done " + tag, Tools: specs, History: append([]Call(nil), p.history...)},
		Reward:  reward, Termination: "done", Reference: opts.Reference,
	}
	p.msgs = append(prompt, completion...)
	p.history = append(p.history, calls...)
	p.state += "|" + tag
	p.next++
	return res, nil
}

// fakeTask is a composed task with n atomic tasks a0..a(n-1) in a chain.
func fakeTask(id string, n int) *task.Task {
	t := &task.Task{ID: id, Brief: "do it all"}
	for i := range n {
		a := task.Atomic{ID: fmt.Sprintf("a%d", i), Request: fmt.Sprintf("request %s/a%d", id, i)}
		if i > 0 {
			a.After = []string{fmt.Sprintf("a%d", i-1)}
		}
		t.Atomic = append(t.Atomic, a)
	}
	return t
}

// hallucinated is a verified turn's calls that include a tool not offered.
var hallucinated = []Call{{Tool: "get_order", Arguments: json.RawMessage(`{"order_id":"x"}`)}, {Tool: "delete_everything"}}

// contents returns the contents of msgs' assistant text messages.
func contents(msgs []model.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == model.RoleAssistant && m.Content != "" {
			out = append(out, m.Content)
		}
	}
	return out
}
