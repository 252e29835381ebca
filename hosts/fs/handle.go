package fshost

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/sdk/abi"
)

// Executor runs file operations on a workspace (core/module adapts a state
// unit of work). Paths are valid (ValidPath) and allowed by the policy;
// errors are classified by Classify into the abi FS* kinds.
type Executor interface {
	ReadFile(p string) ([]byte, error)
	Stat(p string) (abi.FileInfo, error)
	ReadDir(p string) ([]abi.FileInfo, error)
	WriteFile(p string, data []byte) error
	AppendFile(p string, data []byte) error
	Mkdir(p string, parents bool) error
	Remove(p string, recursive bool) error
	Rename(from, to string) error
	// Classify maps an error of the methods above to an abi FS* kind.
	Classify(err error) string
}

// MaxRequest is the largest request accepted from a guest, bytes.
const MaxRequest = 32 << 20

// Handler serves weft_fs_v1 requests on Exec under Policy.
type Handler struct {
	Exec   Executor
	Policy Policy
	// OnDenied, if set, is told of every operation the policy refused (op
	// and path).
	OnDenied func(op, path string)
}

// Handle runs one FSRequest (JSON) and returns the FSResponse JSON. It
// never fails: a malformed request, an invalid path, a refused path and a
// failed operation are FSResponse errors, and a failed operation changes
// nothing.
func (h *Handler) Handle(ctx context.Context, req []byte) []byte {
	resp := h.do(ctx, req)
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(abi.FSResponse{Error: &abi.FSError{Kind: abi.FSOther, Message: err.Error()}})
	}
	return b
}

func fail(kind, p, format string, a ...any) abi.FSResponse {
	return abi.FSResponse{Error: &abi.FSError{Kind: kind, Path: p, Message: fmt.Sprintf(format, a...)}}
}

func (h *Handler) do(ctx context.Context, raw []byte) abi.FSResponse {
	if h == nil || h.Exec == nil {
		return fail(abi.FSOther, "", "no workspace bound to this call")
	}
	if err := ctx.Err(); err != nil {
		return fail(abi.FSOther, "", "call stopped: %v", err)
	}
	var req abi.FSRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return fail(abi.FSOther, "", "malformed weft_fs_v1 request: %v", err)
	}
	if err := ValidPath(req.Path); err != nil {
		return fail(abi.FSInvalidPath, req.Path, "%s: %v", quote(req.Path), err)
	}
	write := false
	switch req.Op {
	case abi.FSRead, abi.FSList, abi.FSStat:
	case abi.FSWrite, abi.FSAppend, abi.FSRemove, abi.FSMkdir:
		write = true
	case abi.FSRename:
		write = true
		if err := ValidPath(req.To); err != nil {
			return fail(abi.FSInvalidPath, req.To, "%s: %v", quote(req.To), err)
		}
	default:
		return fail(abi.FSOther, req.Path, "unknown weft_fs_v1 op %q", req.Op)
	}
	deny := func(p string, w bool) abi.FSResponse {
		if h.OnDenied != nil {
			h.OnDenied(req.Op, p)
		}
		what := "read"
		if w {
			what = "write"
		}
		return fail(abi.FSDenied, p, "denied: the module's manifest does not allow it to %s %s", what, quote(p))
	}
	if write && !h.Policy.CanWrite(req.Path) {
		return deny(req.Path, true)
	}
	if !write && !h.Policy.CanRead(req.Path) && (req.Op == abi.FSRead || !h.Policy.reachable(req.Path)) {
		return deny(req.Path, false)
	}
	if req.Op == abi.FSRename && !h.Policy.CanWrite(req.To) {
		return deny(req.To, true)
	}
	// A recursive remove or a rename of a directory touches every path
	// under it: each must be writable (and, renamed, writable at its new
	// place).
	if req.Op == abi.FSRename || (req.Op == abi.FSRemove && req.Recursive) {
		var bad string
		h.walk(req.Path, func(p string) bool {
			if !h.Policy.CanWrite(p) {
				bad = p
				return false
			}
			if req.Op == abi.FSRename {
				if np := req.To + p[len(req.Path):]; !h.Policy.CanWrite(np) {
					bad = np
					return false
				}
			}
			return true
		})
		if bad != "" {
			return deny(bad, true)
		}
	}
	e := h.Exec
	errResp := func(err error, p string) abi.FSResponse {
		return abi.FSResponse{Error: &abi.FSError{Kind: e.Classify(err), Path: p, Message: err.Error()}}
	}
	switch req.Op {
	case abi.FSRead:
		d, err := e.ReadFile(req.Path)
		if err != nil {
			return errResp(err, req.Path)
		}
		if d == nil {
			d = []byte{}
		}
		return abi.FSResponse{Data: d}
	case abi.FSStat:
		fi, err := e.Stat(req.Path)
		if err != nil {
			return errResp(err, req.Path)
		}
		return abi.FSResponse{Info: &fi}
	case abi.FSList:
		ents, err := e.ReadDir(req.Path)
		if err != nil {
			return errResp(err, req.Path)
		}
		out := make([]abi.FileInfo, 0, len(ents))
		for _, fi := range ents {
			if h.Policy.CanRead(fi.Path) || h.Policy.canReadBelow(fi.Path, fi.Dir) {
				out = append(out, fi)
			}
		}
		return abi.FSResponse{Entries: out}
	case abi.FSWrite:
		if err := e.WriteFile(req.Path, req.Data); err != nil {
			return errResp(err, req.Path)
		}
	case abi.FSAppend:
		if err := e.AppendFile(req.Path, req.Data); err != nil {
			return errResp(err, req.Path)
		}
	case abi.FSMkdir:
		if err := e.Mkdir(req.Path, req.Parents); err != nil {
			return errResp(err, req.Path)
		}
	case abi.FSRemove:
		if err := e.Remove(req.Path, req.Recursive); err != nil {
			return errResp(err, req.Path)
		}
	case abi.FSRename:
		if err := e.Rename(req.Path, req.To); err != nil {
			return errResp(err, req.Path)
		}
	}
	return abi.FSResponse{}
}

// canReadBelow reports whether a directory holds paths the policy lets the
// module read ("dir/**" or a glob starting "dir/"): such a directory is
// listed in its parent, and may be listed and stat'ed, so the module can
// reach them.
func (pol Policy) canReadBelow(p string, dir bool) bool {
	return dir && pol.reachable(p)
}

// reachable reports whether some pattern names paths under directory p
// (the root: any pattern).
func (pol Policy) reachable(p string) bool {
	for _, list := range [][]string{pol.Reads, pol.Writes} {
		for _, pat := range list {
			if p == "." || (len(pat) > len(p) && pat[:len(p)] == p && pat[len(p)] == '/') {
				return true
			}
		}
	}
	return false
}

// walk calls fn for every path strictly under directory p (nothing for a
// file or a missing path), depth first, until fn returns false.
func (h *Handler) walk(p string, fn func(string) bool) bool {
	ents, err := h.Exec.ReadDir(p)
	if err != nil {
		return true
	}
	for _, fi := range ents {
		if !fn(fi.Path) {
			return false
		}
		if fi.Dir && !h.walk(fi.Path, fn) {
			return false
		}
	}
	return true
}

func quote(p string) string {
	if len(p) > 200 {
		p = p[:200] + "..."
	}
	return fmt.Sprintf("%q", p)
}
