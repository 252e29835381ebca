package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	sqlhost "github.com/weft-dev/weft/hosts/sql"
	"github.com/weft-dev/weft/sdk/abi"
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
// embedded "resource" content: the wire type abi.ResourceContents, text
// contents (Text) or binary contents (Blob, base64; EmptyBlob for an empty
// one); decoding requires exactly one of "text" and "blob".
type ResourceContents = abi.ResourceContents

// ResourceResult is the MCP ReadResourceResult of a resource read
// (abi.ResourceResult: Contents).
type ResourceResult struct {
	abi.ResourceResult
	// Denied lists the SQL statements the table policy refused during the
	// read (every write is refused). Not part of MCP.
	Denied []string `json:"-"`
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
func (m *Module) ReadResource(ctx context.Context, s *Session, uri string, opts ...CallOption) (*ResourceResult, error) {
	template, vars, err := m.MatchResource(uri)
	if err != nil {
		return nil, err
	}
	var res *ResourceResult
	denied, err := m.readOnly(ctx, s, ResourceReadRequest, uri,
		abi.ResourceReadArgs{URI: uri, Template: template, Variables: vars}, opts,
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
func (m *Module) readOnly(ctx context.Context, s *Session, name, target string, args any, opts []CallOption, parse func([]byte) error) (denied []string, err error) {
	if s == nil || s.Workspace == nil {
		return nil, fmt.Errorf("module: %s needs a Session with a Workspace", name)
	}
	label := name + " " + target
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(abi.CallRequest{Tool: name, Arguments: a})
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
	policy := sqlhost.Policy{Reads: append(append([]string(nil), m.manifest.Tables.Owns...), m.manifest.Tables.Reads...)}
	env := newCallEnv(s, m.manifest.Name, unit, policy, readOnlyFiles(m.manifest.FilesPolicy()), readOnlyStream|s.Seq(), m.rt.cfg.CallTimeout, opts)
	out, _, _, finish, err := m.run(ctx, env, label, req)
	if err != nil {
		return nil, err
	}
	if perr := parse(out); perr != nil {
		var ce *CallError
		if errors.As(perr, &ce) {
			finish(false)
			ce.Tool, ce.Denied = label, env.Denied()
			return nil, ce
		}
		finish(true)
		return nil, perr
	}
	finish(true)
	return env.Denied(), nil
}

// decodeAnswer decodes the answer to a reserved request (abi.Answer) and
// turns an internalError into a *CallError (ErrTrap) and a refusal into a
// *RefusedError.
func decodeAnswer(out []byte, request, target string) (*abi.Answer, error) {
	ans, err := abi.DecodeAnswer(out)
	if err != nil {
		return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("%v (%s)", err, excerpt(out))}
	}
	if ans.InternalError != nil {
		return nil, &CallError{Kind: ErrTrap, Message: "internal error: " + *ans.InternalError}
	}
	if !ans.IsError {
		return ans, nil
	}
	msg := ""
	for _, raw := range ans.Content {
		var c Content
		if json.Unmarshal(raw, &c) == nil && c.Type == abi.ContentText {
			msg = c.Text
			break
		}
	}
	return nil, &RefusedError{Request: request, Target: target, Message: msg, NotFound: ans.NotFound && request == ResourceReadRequest}
}

// rawList decodes a list member of an answer kept raw (abi.Answer); absent
// or null is (nil, nil).
func rawList(b json.RawMessage) ([]json.RawMessage, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var l []json.RawMessage
	err := json.Unmarshal(b, &l)
	return l, err
}

// parseResourceResponse decodes {"contents": [...]} or an error answer.
func parseResourceResponse(out []byte, uri string) (*ResourceResult, error) {
	ans, err := decodeAnswer(out, ResourceReadRequest, uri)
	if err != nil {
		return nil, err
	}
	contents, err := rawList(ans.Contents)
	if err != nil {
		return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("contents: %v (%s)", err, excerpt(out))}
	}
	if contents == nil {
		return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("response has no contents array (%s)", excerpt(out))}
	}
	res := &ResourceResult{ResourceResult: abi.ResourceResult{Contents: make([]ResourceContents, 0, len(contents))}}
	for i, c := range contents {
		var rc ResourceContents
		if err := json.Unmarshal(c, &rc); err != nil {
			return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("contents[%d]: %v", i, err)}
		}
		if err := rc.Check(); err != nil {
			return nil, &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf("contents[%d]: %v", i, err)}
		}
		res.Contents = append(res.Contents, rc)
	}
	return res, nil
}
