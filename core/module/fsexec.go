package module

import (
	"errors"

	"github.com/weft-dev/weft/core/state"
	fshost "github.com/weft-dev/weft/hosts/fs"
	"github.com/weft-dev/weft/sdk/abi"
)

// StateFiles is what the file host library runs on: a *state.Unit (inside
// a call) or a *state.Workspace.
type StateFiles interface {
	ReadFile(p string) ([]byte, error)
	Stat(p string) (state.FileInfo, error)
	ReadDir(p string) ([]state.FileInfo, error)
	WriteFile(p string, data []byte) error
	AppendFile(p string, data []byte) error
	Mkdir(p string, parents bool) error
	Remove(p string, recursive bool) error
	Rename(from, to string) error
}

// FilesExecutor adapts a state unit of work (or workspace) to the file host
// library's Executor; errors are classified by ClassifyFileError.
func FilesExecutor(s StateFiles) fshost.Executor { return filesExec{s} }

type filesExec struct{ s StateFiles }

func info(fi state.FileInfo) abi.FileInfo {
	return abi.FileInfo{Name: fi.Name, Path: fi.Path, Dir: fi.Dir, Size: fi.Size}
}

func (e filesExec) ReadFile(p string) ([]byte, error) { return e.s.ReadFile(p) }
func (e filesExec) Stat(p string) (abi.FileInfo, error) {
	fi, err := e.s.Stat(p)
	return info(fi), err
}
func (e filesExec) ReadDir(p string) ([]abi.FileInfo, error) {
	ents, err := e.s.ReadDir(p)
	if err != nil {
		return nil, err
	}
	out := make([]abi.FileInfo, len(ents))
	for i, fi := range ents {
		out[i] = info(fi)
	}
	return out, nil
}
func (e filesExec) WriteFile(p string, d []byte) error    { return e.s.WriteFile(p, d) }
func (e filesExec) AppendFile(p string, d []byte) error   { return e.s.AppendFile(p, d) }
func (e filesExec) Mkdir(p string, parents bool) error    { return e.s.Mkdir(p, parents) }
func (e filesExec) Remove(p string, recursive bool) error { return e.s.Remove(p, recursive) }
func (e filesExec) Rename(from, to string) error          { return e.s.Rename(from, to) }
func (filesExec) Classify(err error) string               { return ClassifyFileError(err) }

// ClassifyFileError maps a state file error to its weft_fs_v1 error kind
// (abi.FS*); anything unrecognised is "other".
func ClassifyFileError(err error) string {
	var se *state.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, state.ErrNoSuchFile):
		return abi.FSNotFound
	case errors.Is(err, state.ErrFileExists):
		return abi.FSExists
	case errors.Is(err, state.ErrNotDir):
		return abi.FSNotDir
	case errors.Is(err, state.ErrIsDir):
		return abi.FSIsDir
	case errors.Is(err, state.ErrNotEmpty):
		return abi.FSNotEmpty
	case errors.Is(err, state.ErrInvalidPath):
		return abi.FSInvalidPath
	case errors.Is(err, state.ErrDenied):
		return abi.FSDenied
	case errors.Is(err, state.ErrFileLimit) && errors.As(err, &se):
		switch se.Limit {
		case state.LimitFileBytes:
			return abi.FSTooLarge
		case state.LimitWorkspaceBytes:
			return abi.FSWorkspaceFull
		case state.LimitFiles:
			return abi.FSTooManyFiles
		}
	}
	return abi.FSOther
}

// FilesPolicy is the file host library's policy of a manifest (nil Files:
// no access).
func (m *Manifest) FilesPolicy() fshost.Policy {
	if m.Files == nil {
		return fshost.Policy{}
	}
	return fshost.Policy{Reads: m.Files.Reads, Writes: m.Files.Writes}
}

// readOnlyFiles is pol with every writable pattern made read-only (the
// policy of resource reads).
func readOnlyFiles(pol fshost.Policy) fshost.Policy {
	return fshost.Policy{Reads: append(append([]string(nil), pol.Reads...), pol.Writes...)}
}
