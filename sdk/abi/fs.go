package abi

import (
	"io/fs"
)

// File error kinds of weft_fs_v1, the values of FSError.Kind. An operation
// that failed with any of them had no effect.
const (
	FSNotFound      = "not_found"      // the path (or a rename's source) does not exist
	FSExists        = "exists"         // the path (a mkdir's, a rename's destination) already exists
	FSNotDir        = "not_dir"        // a parent, or the listed path, is a file
	FSIsDir         = "is_dir"         // read, write or append of a directory
	FSNotEmpty      = "not_empty"      // remove of a non-empty directory without recursive
	FSInvalidPath   = "invalid_path"   // not a workspace path (absolute, "..", NUL, invalid UTF-8, ...)
	FSTooLarge      = "too_large"      // the file would exceed the per-file cap
	FSWorkspaceFull = "workspace_full" // the workspace's files would exceed its byte cap
	FSTooManyFiles  = "too_many_files" // the workspace would exceed its entry cap
	FSDenied        = "denied"         // a path the manifest's files policy does not allow
	FSOther         = "other"
)

// File operations of an FSRequest (its Op).
const (
	FSRead   = "read"   // Path -> Data
	FSWrite  = "write"  // Path, Data: create or truncate (parents created)
	FSAppend = "append" // Path, Data: append, creating the file (and parents)
	FSList   = "list"   // Path (a directory, "." the root) -> Entries
	FSStat   = "stat"   // Path -> Info
	FSRemove = "remove" // Path; Recursive for a non-empty directory
	FSRename = "rename" // Path -> To (To must not exist)
	FSMkdir  = "mkdir"  // Path; Parents: create ancestors, no error if it is a directory
)

// FSRequest is one weft_fs_v1 request (docs/abi.md, "weft_fs_v1").
// Paths are io/fs.ValidPath paths relative to the workspace root ("." is
// the root). Data travels as base64 in JSON.
type FSRequest struct {
	Op        string `json:"op"`
	Path      string `json:"path"`
	To        string `json:"to,omitempty"`
	Data      []byte `json:"data,omitempty"`
	Parents   bool   `json:"parents,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
}

// FileInfo describes one workspace entry: Name its last path element ("."
// for the root), Path the full path, Size the file's length in bytes (0
// for a directory).
type FileInfo struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	Size int64  `json:"size"`
}

// FSResponse is the answer to an FSRequest: Data for read, Info for stat,
// Entries (in name order) for list, nothing else for a write operation
// that succeeded, or Error.
type FSResponse struct {
	Data    []byte     `json:"data,omitempty"`
	Info    *FileInfo  `json:"info,omitempty"`
	Entries []FileInfo `json:"entries,omitempty"`
	Error   *FSError   `json:"error,omitempty"`
}

// FSError is a failed file operation: Kind is one of the FS* kinds, Path
// the path involved.
type FSError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

func (e *FSError) Error() string { return "fs " + e.Kind + ": " + e.Message }

// Is lets errors.Is match the io/fs sentinels: fs.ErrNotExist (not_found),
// fs.ErrExist (exists), fs.ErrInvalid (invalid_path) and fs.ErrPermission
// (denied).
func (e *FSError) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e.Kind == FSNotFound
	case fs.ErrExist:
		return e.Kind == FSExists
	case fs.ErrInvalid:
		return e.Kind == FSInvalidPath
	case fs.ErrPermission:
		return e.Kind == FSDenied
	}
	return false
}

// FSHost is the optional file library of a Host: a native host that
// serves weft_fs_v1 implements it (core/module's NativeHost does). FS runs
// one FSRequest (JSON) and returns the FSResponse JSON.
type FSHost interface {
	FS(req []byte) []byte
}

// Files is a manifest's workspace-file policy: the paths a module may read
// (Reads) and write (Writes; writing implies reading). A pattern is "**"
// (the whole workspace), "dir/**" (dir and everything under it), or a
// path.Match glob matched against the whole path ("*.txt", "notes/*.md").
type Files struct {
	Reads  []string `json:"reads,omitempty"`
	Writes []string `json:"writes,omitempty"`
}
