package tool

import (
	"encoding/json"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/weft-dev/weft/sdk/abi"
)

// FileError is a failed workspace-file operation (weft_fs_v1): Kind is one
// of the abi.FS* kinds ("not_found", "exists", "denied", ...).
// errors.Is(err, fs.ErrNotExist), fs.ErrExist, fs.ErrInvalid and
// fs.ErrPermission match the corresponding kinds. A failed operation
// changed nothing.
type FileError = abi.FSError

// FilesFS is the session's workspace files as seen by the call in
// progress: an io/fs file system (fs.FS, fs.ReadFileFS, fs.ReadDirFS,
// fs.StatFS; fs.WalkDir and fs.Glob work on it) plus write calls. Paths
// are io/fs paths relative to the workspace root ("." is the root). Writes
// are part of the call's unit of work: a tool error or failure rolls them
// back with the call's SQL. Use it only inside a tool, resource or prompt
// handler (it reaches the host of the call in progress); the manifest must
// declare the paths (Info.FileReads, Info.FileWrites), else operations
// fail with kind "denied".
type FilesFS struct{}

// Files returns the workspace file system of the call in progress.
func Files() FilesFS { return FilesFS{} }

func fsCall(req abi.FSRequest) (abi.FSResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return abi.FSResponse{}, &FileError{Kind: abi.FSOther, Message: err.Error(), Path: req.Path}
	}
	var call func([]byte) []byte
	if fh, ok := currentHost().(abi.FSHost); ok {
		call = fh.FS
	} else if hasPlatformFS {
		call = platformFS
	} else {
		return abi.FSResponse{}, &FileError{Kind: abi.FSOther, Message: "no workspace file library (call Files inside a handler run by Dispatch with a host that serves weft_fs_v1)", Path: req.Path}
	}
	var resp abi.FSResponse
	if err := json.Unmarshal(call(b), &resp); err != nil {
		return abi.FSResponse{}, &FileError{Kind: abi.FSOther, Message: "malformed weft_fs_v1 response: " + err.Error(), Path: req.Path}
	}
	if resp.Error != nil {
		return resp, resp.Error
	}
	return resp, nil
}

// ReadFile returns the content of file name. Errors: kinds not_found,
// is_dir, invalid_path, denied.
func (FilesFS) ReadFile(name string) ([]byte, error) {
	r, err := fsCall(abi.FSRequest{Op: abi.FSRead, Path: name})
	if err != nil {
		return nil, err
	}
	if r.Data == nil {
		r.Data = []byte{}
	}
	return r.Data, nil
}

// Stat describes entry name.
func (FilesFS) Stat(name string) (fs.FileInfo, error) {
	r, err := fsCall(abi.FSRequest{Op: abi.FSStat, Path: name})
	if err != nil {
		return nil, err
	}
	if r.Info == nil {
		return nil, &FileError{Kind: abi.FSOther, Message: "stat answer without info", Path: name}
	}
	return fileInfo{*r.Info}, nil
}

// ReadDir lists directory name's entries (those the manifest lets the
// module read) in name order.
func (FilesFS) ReadDir(name string) ([]fs.DirEntry, error) {
	r, err := fsCall(abi.FSRequest{Op: abi.FSList, Path: name})
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = fs.FileInfoToDirEntry(fileInfo{e})
	}
	return out, nil
}

// Open opens entry name for reading: a file's content is read at Open; a
// directory supports ReadDir (fs.ReadDirFile).
func (f FilesFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fi, err := f.Stat(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if fi.IsDir() {
		ents, err := f.ReadDir(name)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &openDir{info: fi, ents: ents}, nil
	}
	data, err := f.ReadFile(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &openFile{info: fi, data: data}, nil
}

// WriteFile creates or truncates file name with data, creating missing
// parent directories. Errors: kinds is_dir, not_dir, invalid_path,
// too_large, workspace_full, too_many_files, denied.
func (FilesFS) WriteFile(name string, data []byte) error {
	_, err := fsCall(abi.FSRequest{Op: abi.FSWrite, Path: name, Data: data})
	return err
}

// AppendFile appends data to file name, creating it (and its parents) when
// absent. Errors as WriteFile.
func (FilesFS) AppendFile(name string, data []byte) error {
	_, err := fsCall(abi.FSRequest{Op: abi.FSAppend, Path: name, Data: data})
	return err
}

// Mkdir creates directory name; its parent must exist. Errors: exists,
// not_found (parent), not_dir, too_many_files, denied.
func (FilesFS) Mkdir(name string) error {
	_, err := fsCall(abi.FSRequest{Op: abi.FSMkdir, Path: name})
	return err
}

// MkdirAll creates directory name and any missing parents; an existing
// directory is not an error (mkdir -p).
func (FilesFS) MkdirAll(name string) error {
	_, err := fsCall(abi.FSRequest{Op: abi.FSMkdir, Path: name, Parents: true})
	return err
}

// Remove removes a file or an empty directory. Errors: not_found,
// not_empty, denied.
func (FilesFS) Remove(name string) error {
	_, err := fsCall(abi.FSRequest{Op: abi.FSRemove, Path: name})
	return err
}

// RemoveAll removes name and, for a directory, everything under it.
// Unlike os.RemoveAll an absent path is an error (not_found).
func (FilesFS) RemoveAll(name string) error {
	_, err := fsCall(abi.FSRequest{Op: abi.FSRemove, Path: name, Recursive: true})
	return err
}

// Rename moves a file or a directory (with everything under it) from
// oldname to newname. newname must not exist (kind exists) and its parent
// must be a directory (not_found, not_dir); moving a directory into itself
// is invalid_path.
func (FilesFS) Rename(oldname, newname string) error {
	_, err := fsCall(abi.FSRequest{Op: abi.FSRename, Path: oldname, To: newname})
	return err
}

// fileInfo is fs.FileInfo of an abi.FileInfo: no modification times (zero
// time), mode fs.ModeDir|0o755 for directories and 0o644 for files; Sys
// returns the abi.FileInfo.
type fileInfo struct{ fi abi.FileInfo }

func (i fileInfo) Name() string {
	if i.fi.Name == "" {
		return path.Base(i.fi.Path)
	}
	return i.fi.Name
}
func (i fileInfo) Size() int64 { return i.fi.Size }
func (i fileInfo) Mode() fs.FileMode {
	if i.fi.Dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return i.fi.Dir }
func (i fileInfo) Sys() any           { return i.fi }

type openFile struct {
	info fs.FileInfo
	data []byte
	off  int
}

func (f *openFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *openFile) Read(p []byte) (int, error) {
	if f.off >= len(f.data) {
		return 0, io.EOF
	}
	n := copy(p, f.data[f.off:])
	f.off += n
	return n, nil
}
func (f *openFile) Close() error { return nil }

type openDir struct {
	info fs.FileInfo
	ents []fs.DirEntry
	off  int
}

func (d *openDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: fs.ErrInvalid}
}
func (d *openDir) Close() error { return nil }
func (d *openDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.off:]
	if n <= 0 {
		d.off = len(d.ents)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
