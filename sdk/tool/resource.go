package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/sdk/abi"
)

// ErrNotFound tells the host that a resource does not exist: a resource
// handler whose error wraps it (fmt.Errorf("no item %q: %w", id,
// tool.ErrNotFound)) answers "notFound", which the host reports as an
// unknown resource (MCP's resource-not-found error) rather than as a
// failed read.
var ErrNotFound = errors.New("resource not found")

// ResourceInfo describes a static resource (MCP Resource): URI is absolute
// ("scheme:..."), unique among the module's resources; Name is unique among
// its resources and templates; Title, Description and MimeType are
// optional.
type ResourceInfo struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
}

// TemplateInfo describes a resource template (MCP ResourceTemplate):
// URITemplate is an RFC 6570 level-1 template, {name} expressions only
// (e.g. "test://items/{id}/data"); Name is unique among the module's
// resources and templates.
type TemplateInfo struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MimeType    string
}

type resourceDef struct {
	info ResourceInfo
	fn   func(ctx context.Context, uri string) ([]ResourceContents, error)
}

type templateDef struct {
	info TemplateInfo
	fn   func(ctx context.Context, uri string, vars map[string]string) ([]ResourceContents, error)
}

// Resource adds the static resource r, read by fn, to the module. Call it
// from init.
//
// The host calls fn when a client reads r.URI, with that URI. fn runs like
// a tool (same host libraries; DB works) but read-only: every write
// statement fails with a *SQLError of KindDenied and nothing it does is
// kept. It returns the resource's contents, usually one item; an item with
// an empty URI gets uri, one with an empty MimeType gets r.MimeType. An
// error is the read's error (its text reaches the client); wrap ErrNotFound
// to say the resource does not exist. A panic is an internal error.
//
// Resource panics when fn is nil, r.URI is not absolute or contains
// braces, r.Name is empty, or either is already registered.
func Resource(r ResourceInfo, fn func(ctx context.Context, uri string) ([]ResourceContents, error)) {
	if fn == nil {
		panic(fmt.Sprintf("tool: Resource(%q): nil function", r.URI))
	}
	if !hasScheme(r.URI) || strings.ContainsAny(r.URI, "{} \t\r\n") {
		panic(fmt.Sprintf("tool: Resource(%q): the URI must be absolute (scheme:...), without braces or spaces", r.URI))
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.claimResourceName(r.Name, "Resource("+r.URI+")")
	for _, d := range reg.resources {
		if d.info.URI == r.URI {
			panic(fmt.Sprintf("tool: Resource(%q) registered twice", r.URI))
		}
	}
	reg.resources = append(reg.resources, &resourceDef{info: r, fn: fn})
}

// ResourceTemplate adds the resource template t, read by fn, to the module.
// Call it from init.
//
// The host matches a read URI against the templates (after the static
// resources, in registration order) and calls fn with the URI and the
// template's variables: each matched one or more characters other than
// "/", "?" and "#" and is percent-decoded ("test://items/{id}" read as
// "test://items/a%20b" gives {"id": "a b"}). fn runs read-only and its
// results and errors are handled as for Resource. The host validates the
// template when it loads the module.
//
// ResourceTemplate panics when fn is nil, t.URITemplate has no {variable}
// or is already registered, or t.Name is empty or already registered.
func ResourceTemplate(t TemplateInfo, fn func(ctx context.Context, uri string, vars map[string]string) ([]ResourceContents, error)) {
	if fn == nil {
		panic(fmt.Sprintf("tool: ResourceTemplate(%q): nil function", t.URITemplate))
	}
	if !hasScheme(t.URITemplate) || !strings.Contains(t.URITemplate, "{") {
		panic(fmt.Sprintf("tool: ResourceTemplate(%q): the template must be an absolute URI (scheme:...) with {variables}", t.URITemplate))
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.claimResourceName(t.Name, "ResourceTemplate("+t.URITemplate+")")
	for _, d := range reg.templates {
		if d.info.URITemplate == t.URITemplate {
			panic(fmt.Sprintf("tool: ResourceTemplate(%q) registered twice", t.URITemplate))
		}
	}
	reg.templates = append(reg.templates, &templateDef{info: t, fn: fn})
}

// claimResourceName panics when name is empty or used by a resource or
// template already. r.mu is held.
func (r *registry) claimResourceName(name, what string) {
	if strings.TrimSpace(name) == "" {
		panic("tool: " + what + ": empty name")
	}
	for _, d := range r.resources {
		if d.info.Name == name {
			panic(fmt.Sprintf("tool: %s: name %q is already registered", what, name))
		}
	}
	for _, d := range r.templates {
		if d.info.Name == name {
			panic(fmt.Sprintf("tool: %s: name %q is already registered", what, name))
		}
	}
}

// hasScheme reports whether s starts with a URI scheme and a colon.
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	for j, c := range []byte(s[:i]) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')
		if !ok {
			return false
		}
	}
	return true
}

// readResource answers a resource read request: {"uri": ..., "template":
// ..., "variables": {...}} (docs/abi.md).
func readResource(ctx context.Context, args json.RawMessage) []byte {
	var req abi.ResourceReadArgs
	if err := json.Unmarshal(args, &req); err != nil {
		return internalError("malformed resource read request: " + err.Error())
	}
	var (
		contents []ResourceContents
		err      error
		mimeType string
		found    bool
	)
	reg.mu.Lock()
	var rd *resourceDef
	var td *templateDef
	if req.Template != "" {
		for _, d := range reg.templates {
			if d.info.URITemplate == req.Template {
				td = d
			}
		}
	} else {
		for _, d := range reg.resources {
			if d.info.URI == req.URI {
				rd = d
			}
		}
	}
	reg.mu.Unlock()
	switch {
	case rd != nil:
		found, mimeType = true, rd.info.MimeType
		contents, err = rd.fn(ctx, req.URI)
	case td != nil:
		found, mimeType = true, td.info.MimeType
		vars := req.Variables
		if vars == nil {
			vars = map[string]string{}
		}
		contents, err = td.fn(ctx, req.URI, vars)
	}
	if !found {
		return refusal(fmt.Sprintf("unknown resource %q", req.URI), true)
	}
	if err != nil {
		return refusal(err.Error(), errors.Is(err, ErrNotFound))
	}
	out := abi.ResourceResult{Contents: make([]abi.ResourceContents, len(contents))}
	for i, c := range contents {
		if c.URI == "" {
			c.URI = req.URI
		}
		if c.MimeType == "" {
			c.MimeType = mimeType
		}
		out.Contents[i] = c.wire()
	}
	b, merr := marshal(out)
	if merr != nil {
		return internalError("encoding the resource: " + merr.Error())
	}
	return b
}

// refusal is the error answer of a resource read or prompt get.
func refusal(msg string, notFound bool) []byte {
	b, err := marshal(abi.NewRefusal(msg, notFound))
	if err != nil { // cannot happen for a text item
		return internalError("encoding the error: " + err.Error())
	}
	return b
}
