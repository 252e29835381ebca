package megamcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	fshost "github.com/weft-dev/weft/hosts/fs"
	"github.com/weft-dev/weft/sdk/abi"
)

// FilesURIPrefix starts the URI of a session's workspace file as an MCP
// resource: FilesURIPrefix + path ("weft://files/notes/log.txt"). The
// group's MCP server serves the template FilesURITemplate when one of its
// modules declares workspace files.
const (
	FilesURIPrefix   = "weft://files/"
	FilesURITemplate = "weft://files/{+path}"
)

// filesPolicy is the union of the read views of the group's modules'
// files policies; ok is false when no module declares files.
func (g *Group) filesPolicy() (fshost.Policy, bool) {
	var pol fshost.Policy
	for _, m := range g.modules {
		fp := m.mod.Manifest().FilesPolicy()
		pol.Reads = append(append(pol.Reads, fp.Reads...), fp.Writes...)
	}
	return pol, len(pol.Reads) > 0
}

// ReadFile reads workspace file p of the session's current state as an MCP
// resource: the paths some module of the group may read (its manifest's
// files policy), text for valid UTF-8 (MIME type from the extension, else
// text/plain), else a blob (application/octet-stream unless the extension
// says otherwise). Not recorded in the ledger. Errors: ErrNoSuchSession,
// *FencedError, module.ErrUnknownResource for a path that is not a file or
// not readable, ErrBadRequest for an invalid path.
func (s *Server) ReadFile(ctx context.Context, id string, gen uint64, p string) (*module.ResourceResult, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	if err := fshost.ValidPath(p); err != nil {
		return nil, fmt.Errorf("%w: workspace path %q: %v", ErrBadRequest, p, err)
	}
	pol, ok := ss.group.filesPolicy()
	if !ok || !pol.CanRead(p) {
		return nil, fmt.Errorf("%w: workspace file %q is not readable by the session's modules", module.ErrUnknownResource, p)
	}
	data, err := ss.ms.Workspace.ReadFile(p)
	if errors.Is(err, state.ErrNoSuchFile) || errors.Is(err, state.ErrIsDir) || errors.Is(err, state.ErrNotDir) {
		return nil, fmt.Errorf("%w: workspace file %q: %v", module.ErrUnknownResource, p, err)
	}
	if err != nil {
		return nil, err
	}
	uri := FilesURIPrefix + p
	mt := mime.TypeByExtension(path.Ext(p))
	rc := module.ResourceContents{URI: uri}
	if utf8.Valid(data) {
		rc.Text, rc.MimeType = string(data), mt
		if mt == "" {
			rc.MimeType = "text/plain"
		}
	} else {
		rc.Blob, rc.MimeType = base64.StdEncoding.EncodeToString(data), mt
		if mt == "" {
			rc.MimeType = "application/octet-stream"
		}
	}
	return &module.ResourceResult{ResourceResult: abi.ResourceResult{Contents: []module.ResourceContents{rc}}}, nil
}

// addFilesResource registers the workspace-file resource template on the
// group's MCP server when a module declares files.
func (s *Server) addFilesResource(srv *mcp.Server, g *Group) {
	if _, ok := g.filesPolicy(); !ok {
		return
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: FilesURITemplate, Name: "workspace-files",
		Title: "Workspace files", Description: "A file of the session's workspace, by path (e.g. weft://files/notes/log.txt)."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			ss, gen, err := s.requestSession(ctx, req.Session, req.Extra, req.Params.Meta)
			if err != nil {
				return nil, protocolError(err)
			}
			p, _ := strings.CutPrefix(req.Params.URI, FilesURIPrefix)
			res, err := s.ReadFile(ctx, ss.id, gen, p)
			if errors.Is(err, module.ErrUnknownResource) || errors.Is(err, ErrBadRequest) {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			if err != nil {
				return nil, protocolError(err)
			}
			out := &mcp.ReadResourceResult{}
			for _, c := range res.Contents {
				rc, err := toMCPResourceContents(c)
				if err != nil {
					return nil, protocolError(err)
				}
				out.Contents = append(out.Contents, rc)
			}
			return out, nil
		})
}
