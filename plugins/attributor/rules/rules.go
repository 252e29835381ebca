// Package rules is weft's built-in attributor plugin "rules": it assigns
// each failed checkpoint of an episode to the policy, the environment, the
// task or the verifier with the rules of core/attribute, reading the
// episode's states through the host's State service.
//
// The AttributeRequest it reads (weft.plugin.v2, converted by
// plugins/internal/wire):
//
//   - task: the task;
//   - ledger: the session ledger (the verifier's view of each call);
//   - checkpoints: the verifier's checkpoints in order, each with score
//     r_k and its check results;
//   - trajectory: its assistant messages with content are the agent's
//     messages to the user (for communicate checks);
//   - reference: the reference replay the host ran from the initial
//     state; modules: which module serves each tool (for the Revise names);
//   - settings: none (an empty object at most).
//
// Request builds such a request and Decode reads one back into a
// core/attribute.Input (without Evidence). The host runs the attributor
// in process through core/attribute directly (no request at all).
package rules

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/plugins/internal/wire"
	"github.com/weft-dev/weft/sdk/failure"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Name and Version are what Describe reports.
const (
	Name    = "rules"
	Version = "1"
)

// SettingsSchema is the JSON Schema of the settings object: none are
// taken (the reference replay and modules are request fields).
const SettingsSchema = `{"type": "object", "additionalProperties": false}`

// ErrRequest: the request does not decode (bad task, ledger line,
// checkpoint evidence or settings).
var ErrRequest = errors.New("rules attributor: bad request")

// Attributor is the "rules" attributor; the zero value is ready.
type Attributor struct{}

var _ plugin.Attributor = Attributor{}

// New returns the "rules" attributor.
func New() Attributor { return Attributor{} }

// Describe reports Name, Version and SettingsSchema.
func (Attributor) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name, resp.Version, resp.SettingsSchema = Name, Version, plugin.MustJSONValue(SettingsSchema)
	return nil
}

// Attribute decodes req, reads states through host.State() and fills
// resp.Attributions, one per failed checkpoint in checkpoint order. A
// failure of the State service sets resp.Failure and returns nil; a request
// that does not decode returns an error wrapping ErrRequest.
func (Attributor) Attribute(ctx context.Context, host plugin.Host, req *plugin.AttributeRequest, resp *plugin.AttributeResponse) error {
	in, err := Decode(req)
	if err != nil {
		return err
	}
	in.Evidence = NewEvidence(host.State(), req.EpisodeId)
	atts, err := attribute.Attribute(ctx, in)
	if err != nil {
		var he *plugin.HostError
		if errors.As(err, &he) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			resp.Failure = plugin.FailureFromError(err)
			return nil
		}
		return err
	}
	resp.Attributions = Encode(atts)
	return nil
}

// Blame maps a class to the protocol's Blame (BLAME_UNSPECIFIED for an
// unknown class).
func Blame(c attribute.Class) plugin.Blame {
	switch c {
	case attribute.ClassPolicy:
		return plugin.BlamePolicy
	case attribute.ClassEnvironment:
		return plugin.BlameEnvironment
	case attribute.ClassTask:
		return plugin.BlameTask
	case attribute.ClassVerifier:
		return plugin.BlameVerifier
	}
	return 0
}

// Class maps a Blame back to a class ("" for BLAME_UNSPECIFIED).
func Class(b plugin.Blame) attribute.Class {
	switch b {
	case plugin.BlamePolicy:
		return attribute.ClassPolicy
	case plugin.BlameEnvironment:
		return attribute.ClassEnvironment
	case plugin.BlameTask:
		return attribute.ClassTask
	case plugin.BlameVerifier:
		return attribute.ClassVerifier
	}
	return ""
}

// Encode turns attributions into the protocol's.
func Encode(atts []attribute.Attribution) []*plugin.Attribution {
	out := make([]*plugin.Attribution, len(atts))
	for i, a := range atts {
		out[i] = &plugin.Attribution{Checkpoint: a.Checkpoint, Blame: Blame(a.Class), Evidence: a.Evidence, Revise: a.Revise}
	}
	return out
}

// Attributions turns a response's attributions back into core ones (the
// host's side).
func Attributions(resp *plugin.AttributeResponse) []attribute.Attribution {
	out := make([]attribute.Attribution, len(resp.GetAttributions()))
	for i, a := range resp.GetAttributions() {
		out[i] = attribute.Attribution{Checkpoint: a.GetCheckpoint(), Class: Class(a.GetBlame()), Evidence: a.GetEvidence(), Revise: a.GetRevise()}
	}
	return out
}

// Request builds the AttributeRequest of an episode (see the package doc);
// in.Evidence is not part of it (the plugin reads states through the State
// service), in.Messages travel as the trajectory's assistant messages.
// Errors: ErrRequest when in has no task or result, or a value does not
// convert.
func Request(episodeID string, in attribute.Input) (*plugin.AttributeRequest, error) {
	if in.Task == nil || in.Result == nil {
		return nil, fmt.Errorf("%w: task and result are required", ErrRequest)
	}
	pt, err := wire.Task(in.Task)
	if err != nil {
		return nil, fmt.Errorf("%w: task: %v", ErrRequest, err)
	}
	req := &plugin.AttributeRequest{EpisodeId: episodeID, Task: pt, Modules: in.Modules}
	for _, c := range in.Ledger {
		req.Ledger = append(req.Ledger, wire.VerifyLedgerCall(c))
	}
	for _, cp := range in.Result.Checkpoints {
		pc, err := wire.Checkpoint(cp)
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint %s: %v", ErrRequest, cp.Name, err)
		}
		req.Checkpoints = append(req.Checkpoints, pc)
	}
	for _, c := range in.Reference.Calls {
		req.Reference = append(req.Reference, wire.ReferenceCall(c))
	}
	if len(in.Messages) > 0 {
		tr := &plugin.Trajectory{}
		for _, m := range in.Messages {
			tr.Messages = append(tr.Messages, &plugin.Message{Role: plugin.RoleAssistant, Content: m})
		}
		req.Trajectory = tr
	}
	return req, nil
}

// Decode reads an AttributeRequest into an attribute.Input without
// Evidence. Errors wrap ErrRequest and name the part that failed (task,
// settings).
func Decode(req *plugin.AttributeRequest) (attribute.Input, error) {
	var in attribute.Input
	t, err := wire.FromTask(req.GetTask())
	if err != nil || t == nil {
		if err == nil {
			err = errors.New("no task")
		}
		return in, fmt.Errorf("%w: task: %v", ErrRequest, err)
	}
	in.Task = t
	for _, c := range req.GetLedger() {
		in.Ledger = append(in.Ledger, wire.FromVerifyLedgerCall(c))
	}
	in.Result = &verify.Result{}
	sum := 0.0
	for _, cp := range req.GetCheckpoints() {
		v := wire.FromCheckpoint(cp)
		sum += v.Score
		in.Result.Checkpoints = append(in.Result.Checkpoints, v)
	}
	if n := len(in.Result.Checkpoints); n > 0 {
		in.Result.Score = sum / float64(n)
	}
	if s := req.GetSettings(); s != nil {
		if o := s.GetObjectValue(); o == nil || len(o.GetFields()) > 0 {
			return in, fmt.Errorf("%w: settings: this attributor takes none, got %s", ErrRequest, plugin.SettingsJSON(s))
		}
	}
	for _, c := range req.GetReference() {
		in.Reference.Calls = append(in.Reference.Calls, wire.FromReferenceCall(c))
	}
	in.Modules = req.GetModules()
	for _, m := range req.GetTrajectory().GetMessages() {
		if m.GetRole() == plugin.RoleAssistant && m.GetContent() != "" {
			in.Messages = append(in.Messages, m.GetContent())
		}
	}
	return in, nil
}

// Evidence is verify.Evidence over a host's State service for one episode.
// Errors: a State error is returned as is (a *plugin.HostError), except
// that Kind "unavailable" also matches errors.ErrUnsupported and a message
// saying "no such version" also matches verify.ErrNoVersion, so that
// core/attribute treats them as "not available".
type Evidence struct {
	state   plugin.State
	episode string
}

var _ verify.Evidence = (*Evidence)(nil)

// NewEvidence returns the Evidence of episode over s.
func NewEvidence(s plugin.State, episode string) *Evidence {
	return &Evidence{state: s, episode: episode}
}

type evidenceError struct {
	err  error
	also error
}

func (e *evidenceError) Error() string   { return e.err.Error() }
func (e *evidenceError) Unwrap() []error { return []error{e.err, e.also} }

func wrapState(err error) error {
	var he *plugin.HostError
	if errors.As(err, &he) {
		switch {
		case he.Kind == failure.Unavailable:
			return &evidenceError{err, errors.ErrUnsupported}
		case he.Kind == failure.NoSuchVersion || strings.Contains(strings.ToLower(he.Message), "no such version"):
			return &evidenceError{err, verify.ErrNoVersion}
		}
	}
	return err
}

// Hash returns the content hash of version (64 lower-case hex digits).
func (e *Evidence) Hash(ctx context.Context, version string) (string, error) {
	var resp plugin.HashResponse
	if err := e.state.Hash(ctx, &plugin.HashRequest{EpisodeId: e.episode, Version: version}, &resp); err != nil {
		return "", wrapState(err)
	}
	return resp.GetHash(), nil
}

// Diff returns the row-level changes from -> to.
func (e *Evidence) Diff(ctx context.Context, from, to string) (*state.Changes, error) {
	var resp plugin.DiffResponse
	if err := e.state.Diff(ctx, &plugin.DiffRequest{EpisodeId: e.episode, From: from, To: to}, &resp); err != nil {
		return nil, wrapState(err)
	}
	c := wire.FromChanges(resp.GetChanges())
	if c == nil {
		c = &state.Changes{Tables: []state.TableDiff{}}
	}
	return c, nil
}

// Query runs a read-only SQL statement on version (rows of typed values).
func (e *Evidence) Query(ctx context.Context, version, sql string) ([]string, [][]any, error) {
	var resp plugin.QueryResponse
	if err := e.state.Query(ctx, &plugin.QueryRequest{EpisodeId: e.episode, Version: version, Sql: sql}, &resp); err != nil {
		return nil, nil, wrapState(err)
	}
	rows := make([][]any, len(resp.GetRows()))
	for i, r := range resp.GetRows() {
		rows[i] = plugin.GoList(r)
	}
	return resp.GetColumns(), rows, nil
}
