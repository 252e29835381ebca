package module

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	clockhost "github.com/weft-dev/weft/hosts/clock"
	loghost "github.com/weft-dev/weft/hosts/log"
	randhost "github.com/weft-dev/weft/hosts/rand"
	sqlhost "github.com/weft-dev/weft/hosts/sql"
)

var (
	// ErrUnknownResource: no resource of the manifest has the URI and no
	// resource template matches it (the module was not run), or the
	// module's handler answered that the resource does not exist
	// (*RefusedError with NotFound).
	ErrUnknownResource = errors.New("unknown resource")
	// ErrRefused: the module's resource or prompt handler answered with an
	// error (the guest's isError answer): a domain error, such as a template
	// variable naming no record, not an infrastructure failure
	// (*RefusedError). The instance stays healthy.
	ErrRefused = errors.New("refused by the module")
)

// RefusedError is a resource read or prompt get that the module's handler
// refused. It wraps ErrRefused, and ErrUnknownResource when NotFound.
type RefusedError struct {
	Request  string // ResourceReadRequest or PromptGetRequest
	Target   string // the resource URI or the prompt name
	Message  string // the handler's text
	NotFound bool   // the handler said the resource does not exist
}

func (e *RefusedError) Error() string {
	what := "prompt"
	if e.Request == ResourceReadRequest {
		what = "resource"
	}
	return fmt.Sprintf("%s %s: %v: %s", what, e.Target, ErrRefused, e.Message)
}

func (e *RefusedError) Is(target error) bool {
	return target == ErrRefused || e.NotFound && target == ErrUnknownResource
}

// ResourceContents is one item of a resource read, or the resource of an
// embedded "resource" content: text contents (Text) or binary contents
// (Blob, base64). It encodes as MCP TextResourceContents when Blob is
// empty (so an empty blob is indistinguishable from empty text) and as
// BlobResourceContents otherwise; decoding requires exactly one of "text"
// and "blob".
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"` // base64
}

type resourceContentsJSON struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// MarshalJSON writes "text" (even when empty) unless Blob is set.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	j := resourceContentsJSON{URI: r.URI, MimeType: r.MimeType}
	if r.Blob != "" {
		j.Blob = &r.Blob
	} else {
		j.Text = &r.Text
	}
	return json.Marshal(j)
}

// UnmarshalJSON requires exactly one of "text" and "blob".
func (r *ResourceContents) UnmarshalJSON(b []byte) error {
	var j resourceContentsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if (j.Text == nil) == (j.Blob == nil) {
		return errors.New("resource contents need exactly one of text and blob")
	}
	*r = ResourceContents{URI: j.URI, MimeType: j.MimeType}
	if j.Text != nil {
		r.Text = *j.Text
	} else {
		r.Blob = *j.Blob
	}
	return nil
}

func (r *ResourceContents) check() error {
	if r.URI == "" {
		return errors.New("resource contents need a uri")
	}
	return nil
}

// ResourceResult is the MCP ReadResourceResult of a resource read.
type ResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	// Denied lists the SQL statements the table policy refused during the
	// read (every write is refused). Not part of MCP.
	Denied []string `json:"-"`
}

// resourceRequest is the arguments of a ResourceReadRequest.
type resourceRequest struct {
	URI       string            `json:"uri"`
	Template  string            `json:"template,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
}

// MatchResource resolves uri against the manifest: a resource with exactly
// that URI first, else the first resource template (in manifest order) it
// expands, with the template's variables (percent-decoded). An unmatched uri
// is ErrUnknownResource.
func (m *Module) MatchResource(uri string) (template string, vars map[string]string, err error) {
	for _, r := range m.manifest.Resources {
		if r.URI == uri {
			return "", nil, nil
		}
	}
	for _, rt := range m.manifest.ResourceTemplates {
		t, err := cachedTemplate(rt.URITemplate)
		if err != nil { // validated at Compile
			continue
		}
		if vars, ok := t.match(uri); ok {
			return rt.URITemplate, vars, nil
		}
	}
	return "", nil, fmt.Errorf("%w: %q in module %s", ErrUnknownResource, uri, m.manifest.Name)
}

// ReadResource reads the resource uri for session s: a resource of the
// manifest, or a URI matching one of its resource templates (MatchResource;
// the module's handler gets the template and its variables). It runs like
// Call (one instance, the session's workspace, clock, log and progress
// callbacks, Config.CallTimeout) but is always read-only:
//
//   - every SQL write is refused with a "denied" error (ResourceResult.Denied
//     lists them) and the unit of work is rolled back, so the workspace is
//     unchanged;
//   - it does not consume a sequence number (Session.Seq is unchanged); its
//     random stream is RandStream(s.Seed, 1<<63|s.Seq()), the same for every
//     read-only request between two calls, so a read is a function of the
//     state, the seed and the position in the session.
//
// Errors: ErrUnknownResource (not declared, nothing run); *RefusedError
// (ErrRefused, and ErrUnknownResource when the handler says NotFound) when
// the handler answers with an error; *CallError exactly as for Call (ErrTrap,
// ErrDeadline, ErrCanceled, ErrMemoryLimit, ErrMalformedOutput: a response
// without contents or with invalid items), after which the instance is
// discarded. Calls and reads of one session must not overlap.
func (m *Module) ReadResource(ctx context.Context, s *Session, uri string) (*ResourceResult, error) {
	template, vars, err := m.MatchResource(uri)
	if err != nil {
		return nil, err
	}
	var res *ResourceResult
	denied, err := m.readOnly(ctx, s, ResourceReadRequest, uri,
		resourceRequest{URI: uri, Template: template, Variables: vars},
		func(out []byte) error {
			var rerr error
			res, rerr = parseResourceResponse(out, uri)
			return rerr
		})
	if err != nil {
		return nil, err
	}
	res.Denied = denied
	return res, nil
}

// templates caches parsed URI templates by their text.
var templates sync.Map // string -> *uriTemplate

func cachedTemplate(s string) (*uriTemplate, error) {
	if t, ok := templates.Load(s); ok {
		return t.(*uriTemplate), nil
	}
	t, err := parseURITemplate(s)
	if err != nil {
		return nil, err
	}
	templates.Store(s, t)
	return t, nil
}

// readOnlyStream is the bit that sets the random streams of read-only
// requests apart from those of tool calls (whose sequence numbers never
// reach it).
const readOnlyStream = 1 << 63

// readOnly runs the reserved request name(args) for s in a unit of work it
// always rolls back, under m's table policy with every table read-only.
// parse decodes the response: a *CallError from it discards the instance
// (like a trap), any other error is returned with the instance kept.
func (m *Module) readOnly(ctx context.Context, s *Session, name, target string, args any, parse func([]byte) error) (denied []string, err error) {
	if s == nil || s.Workspace == nil {
		return nil, fmt.Errorf("module: %s needs a Session with a Workspace", name)
	}
	label := name + " " + target
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}{name, a})
	if err != nil {
		return nil, err
	}
	unit, err := s.Workspace.Begin()
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := unit.Rollback(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	leave, err := m.rt.admit(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	inst, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}

	policy := sqlhost.Policy{Reads: append(append([]string(nil), m.manifest.Tables.Owns...), m.manifest.Tables.Reads...)}
	sqlCall := &sqlhost.Call{Handler: &sqlhost.Handler{
		Exec:   SQLExecutor(unit),
		Policy: policy,
		OnDenied: func(d *sqlhost.DeniedError) {
			denied = append(denied, d.Statement)
		},
	}}
	stream := RandStream(s.Seed, readOnlyStream|s.Seq())
	now := s.now()
	clockFn := func() int64 { return now }
	lg := logger{s}
	inst.b.set(clockFn, stream, lg.Log)

	callCtx, cancel := context.WithTimeout(ctx, m.rt.cfg.CallTimeout)
	defer cancel()
	callCtx = sqlhost.WithCall(callCtx, sqlCall)
	callCtx = clockhost.WithClock(callCtx, clockhost.Func(clockFn))
	callCtx = randhost.WithSource(callCtx, stream)
	callCtx = loghost.WithLogger(callCtx, lg)

	out, err := inst.invoke(callCtx, req)
	if err != nil {
		ce := m.classify(ctx, callCtx, inst, label, err)
		ce.Denied = denied
		inst.close(context.WithoutCancel(ctx))
		return nil, ce
	}
	if perr := parse(out); perr != nil {
		var ce *CallError
		if errors.As(perr, &ce) {
			ce.Tool, ce.Denied = label, denied
			inst.close(context.WithoutCancel(ctx))
			return nil, ce
		}
		m.release(ctx, inst)
		return nil, perr
	}
	m.release(ctx, inst)
	return denied, nil
}

// guestAnswer is the common part of the answers to reserved requests: an
// internalError (a module bug) or a refusal ({"isError": true, "content":
// [text...], "notFound": bool}).
type guestAnswer struct {
	InternalError *string           `json:"internalError"`
	IsError       bool              `json:"isError"`
	Content       []json.RawMessage `json:"content"`
	NotFound      bool              `json:"notFound"`
}

// decodeAnswer decodes out into v (which embeds or mirrors guestAnswer) and
// turns an internalError into a *CallError (ErrTrap) and a refusal into a
// *RefusedError.
func decodeAnswer(out []byte, v any, request, target string) (refused bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(v); err != nil {
		return false, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("response is not a JSON object: %v (%s)", err, excerpt(out))}
	}
	if dec.More() {
		return false, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("trailing data after the response (%s)", excerpt(out))}
	}
	var ans guestAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		return false, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("response: %v (%s)", err, excerpt(out))}
	}
	if ans.InternalError != nil {
		return false, &CallError{Kind: ErrTrap, Message: "internal error: " + *ans.InternalError}
	}
	if !ans.IsError {
		return false, nil
	}
	msg := ""
	for _, raw := range ans.Content {
		var c Content
		if json.Unmarshal(raw, &c) == nil && c.Type == "text" {
			msg = c.Text
			break
		}
	}
	return true, &RefusedError{Request: request, Target: target, Message: msg, NotFound: ans.NotFound && request == ResourceReadRequest}
}

// parseResourceResponse decodes {"contents": [...]} or an error answer.
func parseResourceResponse(out []byte, uri string) (*ResourceResult, error) {
	var raw struct {
		Contents *[]json.RawMessage `json:"contents"`
	}
	if _, err := decodeAnswer(out, &raw, ResourceReadRequest, uri); err != nil {
		return nil, err
	}
	if raw.Contents == nil {
		return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("response has no contents array (%s)", excerpt(out))}
	}
	res := &ResourceResult{Contents: make([]ResourceContents, 0, len(*raw.Contents))}
	for i, c := range *raw.Contents {
		var rc ResourceContents
		if err := json.Unmarshal(c, &rc); err != nil {
			return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("contents[%d]: %v", i, err)}
		}
		if err := rc.check(); err != nil {
			return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("contents[%d]: %v", i, err)}
		}
		res.Contents = append(res.Contents, rc)
	}
	return res, nil
}
