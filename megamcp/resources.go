package megamcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
)

// ReadResource reads an MCP resource of the session's group: the first
// module (in group order) declaring the URI, as a static resource or a
// template match, renders it read-only on the session's current state. It
// is not recorded in the ledger and consumes no tool-call sequence number.
// Errors: ErrNoSuchSession, *FencedError (gen > 0), module.ErrUnknownResource,
// or the module's *CallError.
func (s *Server) ReadResource(ctx context.Context, id string, gen uint64, uri string) (*module.ResourceResult, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	for _, m := range ss.group.modules {
		if _, _, err := m.mod.MatchResource(uri); err != nil {
			continue
		}
		return m.mod.ReadResource(ctx, ss.ms, uri)
	}
	return nil, fmt.Errorf("%w: %q", module.ErrUnknownResource, uri)
}

// GetPrompt renders an MCP prompt of the session's group (the first module
// declaring the name) read-only on the session's current state. Errors:
// ErrNoSuchSession, *FencedError, module.ErrUnknownPrompt, *ArgumentError
// for a missing required argument, or the module's *CallError.
func (s *Server) GetPrompt(ctx context.Context, id string, gen uint64, name string, args map[string]string) (*module.PromptResult, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	for _, m := range ss.group.modules {
		for _, p := range m.mod.Manifest().Prompts {
			if p.Name == name {
				return m.mod.GetPrompt(ctx, ss.ms, name, args)
			}
		}
	}
	return nil, fmt.Errorf("%w: %q", module.ErrUnknownPrompt, name)
}

// addResourcesAndPrompts registers the group's module resources, resource
// templates and prompts on its MCP server. A URI, template or prompt name
// declared by two modules is served by the first.
func (s *Server) addResourcesAndPrompts(srv *mcp.Server, g *Group) {
	seen := map[string]bool{}
	for _, m := range g.modules {
		mf := m.mod.Manifest()
		for _, r := range mf.Resources {
			if seen["r:"+r.URI] {
				continue
			}
			seen["r:"+r.URI] = true
			srv.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MimeType}, s.resourceHandler())
		}
		for _, t := range mf.ResourceTemplates {
			if seen["t:"+t.URITemplate] {
				continue
			}
			seen["t:"+t.URITemplate] = true
			srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MimeType}, s.resourceHandler())
		}
		for _, p := range mf.Prompts {
			if seen["p:"+p.Name] {
				continue
			}
			seen["p:"+p.Name] = true
			mp := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			srv.AddPrompt(mp, s.promptHandler())
		}
	}
}

func (s *Server) resourceHandler() mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ss, gen, err := s.requestSession(ctx, req.Session, req.Extra, req.Params.Meta)
		if err != nil {
			return nil, protocolError(err)
		}
		res, err := s.ReadResource(ctx, ss.id, gen, req.Params.URI)
		if errors.Is(err, module.ErrUnknownResource) {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		if errors.Is(err, module.ErrRefused) {
			// The module's handler answered with an error: the request's
			// fault, not the server's.
			err = fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
		if err != nil {
			return nil, protocolError(err)
		}
		out := &mcp.ReadResourceResult{}
		for _, c := range res.Contents {
			rc, err := toMCPResourceContents(c)
			if err != nil {
				return nil, protocolError(fmt.Errorf("%w: %v", module.ErrMalformedOutput, err))
			}
			out.Contents = append(out.Contents, rc)
		}
		return out, nil
	}
}

func (s *Server) promptHandler() mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		ss, gen, err := s.requestSession(ctx, req.Session, req.Extra, req.Params.Meta)
		if err != nil {
			return nil, protocolError(err)
		}
		res, err := s.GetPrompt(ctx, ss.id, gen, req.Params.Name, req.Params.Arguments)
		if err != nil {
			if errors.Is(err, module.ErrInvalidArguments) || errors.Is(err, module.ErrUnknownPrompt) || errors.Is(err, module.ErrRefused) {
				err = fmt.Errorf("%w: %v", ErrBadRequest, err)
			}
			return nil, protocolError(err)
		}
		out := &mcp.GetPromptResult{Description: res.Description}
		for _, m := range res.Messages {
			cs, err := toMCPContent([]module.Content{m.Content})
			if err != nil {
				return nil, protocolError(fmt.Errorf("%w: %v", module.ErrMalformedOutput, err))
			}
			out.Messages = append(out.Messages, &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: cs[0]})
		}
		return out, nil
	}
}

// requestSession finds the session and generation of an MCP request.
func (s *Server) requestSession(ctx context.Context, ms *mcp.ServerSession, extra *mcp.RequestExtra, meta mcp.Meta) (*Session, uint64, error) {
	var h map[string][]string
	if extra != nil {
		h = extra.Header
	}
	ss, err := s.mcpSession(ctx, ms, h)
	if err != nil {
		return nil, 0, err
	}
	gen, err := requestGeneration(h, meta)
	if err != nil {
		return nil, 0, err
	}
	return ss, gen, nil
}

func toMCPResourceContents(c module.ResourceContents) (*mcp.ResourceContents, error) {
	rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MimeType, Text: c.Text}
	if c.Blob != "" {
		b, err := base64.StdEncoding.DecodeString(c.Blob)
		if err != nil {
			return nil, fmt.Errorf("resource %s: bad base64 blob: %v", c.URI, err)
		}
		rc.Blob, rc.Text = b, ""
	}
	return rc, nil
}

func embeddedResource(c module.Content) (mcp.Content, error) {
	if c.Type != "resource" || c.Resource == nil {
		return nil, fmt.Errorf("unsupported content type %q", c.Type)
	}
	rc, err := toMCPResourceContents(*c.Resource)
	if err != nil {
		return nil, err
	}
	return &mcp.EmbeddedResource{Resource: rc}, nil
}
