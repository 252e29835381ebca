package state

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

// Workspace files: a per-state tree of files and directories beside the SQL
// tables, persistent like them (docs/design/025-workspace-files.md). A
// state's file tree is one immutable value (*fileTree) shared by every
// version and workspace holding it; a write builds a new tree sharing all
// unchanged nodes, so fork, snapshot and restore copy one pointer.

// File error kinds (see Error). A failed file operation changes nothing.
var (
	ErrNoSuchFile  = errors.New("no such file or directory")
	ErrFileExists  = errors.New("file exists")
	ErrNotDir      = errors.New("not a directory")
	ErrIsDir       = errors.New("is a directory")
	ErrNotEmpty    = errors.New("directory not empty")
	ErrInvalidPath = errors.New("invalid workspace path")
	// ErrFileLimit: a per-file, per-workspace or entry-count cap of
	// FileLimits; Error.Limit says which ("file_bytes", "workspace_bytes",
	// "files").
	ErrFileLimit = errors.New("workspace file limit exceeded")
)

// Names of the caps in Error.Limit for ErrFileLimit.
const (
	LimitFileBytes      = "file_bytes"
	LimitWorkspaceBytes = "workspace_bytes"
	LimitFiles          = "files"
)

// FileLimits bounds the files of every workspace of a Store. Zero fields
// take the defaults.
type FileLimits struct {
	MaxFileBytes      int64 // one file's size, bytes (default DefaultMaxFileBytes)
	MaxWorkspaceBytes int64 // the sum of all file sizes of a state, bytes (default DefaultMaxWorkspaceBytes)
	MaxFiles          int   // entries (files and directories) of a state (default DefaultMaxFiles)
}

// Default file limits.
const (
	DefaultMaxFileBytes      = 8 << 20
	DefaultMaxWorkspaceBytes = 64 << 20
	DefaultMaxFiles          = 65536
)

// Path limits: a path's length and one element's, bytes.
const (
	MaxPathBytes    = 4096
	MaxElementBytes = 255
)

func (l FileLimits) withDefaults() FileLimits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxWorkspaceBytes <= 0 {
		l.MaxWorkspaceBytes = DefaultMaxWorkspaceBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// SetFileLimits sets the file limits of every workspace of s; call it
// before the store is used.
func (s *Store) SetFileLimits(l FileLimits) { s.fileLimits = l.withDefaults() }

// FileLimits returns the store's file limits (defaults filled in).
func (s *Store) FileLimits() FileLimits { return s.fileLimits.withDefaults() }

// File is one entry of a state's file tree: Path in io/fs.ValidPath form
// (slash-separated, relative, no "." or ".." elements), Dir for a
// directory (then Data is nil), else Data the file's bytes. Data must not be
// modified: it is shared.
type File struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir,omitempty"`
	Data []byte `json:"data,omitempty"`
}

// FileInfo describes one entry: Name is the last path element ("." for the
// root), Size the file's length in bytes (0 for a directory).
type FileInfo struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	Size int64  `json:"size"`
}

// fileNode is one immutable entry.
type fileNode struct {
	dir  bool
	data []byte
	sum  lanes // fileDigest(path, node)
}

// fileTree is an immutable file tree; nil is the empty tree.
type fileTree struct {
	t     ptree.Tree[string, *fileNode]
	sum   lanes // sum of the entries' digests
	bytes int64 // sum of file sizes
}

func (ft *fileTree) len() int {
	if ft == nil {
		return 0
	}
	return ft.t.Len()
}

func (ft *fileTree) size() int64 {
	if ft == nil {
		return 0
	}
	return ft.bytes
}

func (ft *fileTree) get(p string) (*fileNode, bool) {
	if ft == nil {
		return nil, false
	}
	return ft.t.Get(p)
}

func (ft *fileTree) tree() ptree.Tree[string, *fileNode] {
	if ft == nil {
		return ptree.New[string, *fileNode](strings.Compare)
	}
	return ft.t
}

// fileDigest is the entry's multiset-hash element: SHA-512 of
// "weft.file/v1\x00", the kind byte ('d' or 'f'), the path, NUL, the
// content, as 8 big-endian lanes.
func fileDigest(p string, dir bool, data []byte) lanes {
	h := sha512.New()
	h.Write([]byte("weft.file/v1\x00"))
	if dir {
		h.Write([]byte{'d'})
	} else {
		h.Write([]byte{'f'})
	}
	h.Write([]byte(p))
	h.Write([]byte{0})
	h.Write(data)
	var sum [64]byte
	h.Sum(sum[:0])
	var l lanes
	for i := range l {
		l[i] = binary.BigEndian.Uint64(sum[i*8:])
	}
	return l
}

// set returns the tree with p mapped to a new node.
func (ft *fileTree) set(p string, dir bool, data []byte) *fileTree {
	n := &fileNode{dir: dir, data: data, sum: fileDigest(p, dir, data)}
	t, sum, bytes := ft.tree(), lanes{}, int64(0)
	if ft != nil {
		sum, bytes = ft.sum, ft.bytes
	}
	if old, ok := t.Get(p); ok {
		sum = sum.sub(old.sum)
		bytes -= int64(len(old.data))
	}
	t, _ = t.Set(p, n)
	return &fileTree{t: t, sum: sum.add(n.sum), bytes: bytes + int64(len(data))}
}

// del returns the tree without p (present).
func (ft *fileTree) del(p string) *fileTree {
	t, old, ok := ft.tree().Delete(p)
	if !ok {
		return ft
	}
	return &fileTree{t: t, sum: ft.sum.sub(old.sum), bytes: ft.bytes - int64(len(old.data))}
}

// under calls fn for every entry strictly below directory p ("" = root), in
// path order, until fn returns false.
func (ft *fileTree) under(p string, fn func(path string, n *fileNode) bool) {
	if ft == nil {
		return
	}
	prefix := ""
	if p != "" {
		prefix = p + "/"
	}
	it := ft.t.SeekGE(prefix)
	for k, n, ok := it.Next(); ok && strings.HasPrefix(k, prefix); k, n, ok = it.Next() {
		if !fn(k, n) {
			return
		}
	}
}

// CheckPath reports whether p is a valid workspace path (see File): nil,
// or an *Error of kind ErrInvalidPath saying why. "." is the root and is
// valid.
func CheckPath(p string) error {
	_, err := cleanPath(p)
	return err
}

// cleanPath validates p and returns its internal form ("" for the root).
func cleanPath(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", &Error{Kind: ErrInvalidPath, Path: p, Err: errors.New(why)}
	}
	if p == "." {
		return "", nil
	}
	switch {
	case p == "":
		return bad("empty path")
	case len(p) > MaxPathBytes:
		return bad(fmt.Sprintf("path of %d bytes is longer than %d", len(p), MaxPathBytes))
	case !utf8.ValidString(p):
		return bad("path is not valid UTF-8")
	case p[0] == '/':
		return bad("absolute path: workspace paths are relative to the workspace root")
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == 0:
			return bad("path contains NUL")
		case c < 0x20 || c == 0x7f:
			return bad("path contains a control character")
		case c == '\\':
			return bad(`path contains a backslash: elements are separated by "/"`)
		}
	}
	for _, el := range strings.Split(p, "/") {
		switch {
		case el == "":
			return bad("empty path element (a doubled or trailing /)")
		case el == "..":
			return bad(`".." element: paths cannot leave the workspace`)
		case el == ".":
			return bad(`"." element inside a path`)
		case len(el) > MaxElementBytes:
			return bad(fmt.Sprintf("path element of %d bytes is longer than %d", len(el), MaxElementBytes))
		}
	}
	return p, nil
}

// outPath is the external form of an internal path.
func outPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func baseOf(p string) string {
	if p == "" {
		return "."
	}
	return p[strings.LastIndexByte(p, '/')+1:]
}

func fileErr(kind error, p string, format string, a ...any) error {
	return &Error{Kind: kind, Path: outPath(p), Err: fmt.Errorf(format, a...)}
}

// statNode returns the node of p; the root is a directory.
func (ft *fileTree) stat(p string) (FileInfo, error) {
	if p == "" {
		return FileInfo{Name: ".", Path: ".", Dir: true}, nil
	}
	n, ok := ft.get(p)
	if !ok {
		return FileInfo{}, fileErr(ErrNoSuchFile, p, "%s does not exist", p)
	}
	return FileInfo{Name: baseOf(p), Path: p, Dir: n.dir, Size: int64(len(n.data))}, nil
}

func (ft *fileTree) readFile(p string) ([]byte, error) {
	if p == "" {
		return nil, fileErr(ErrIsDir, p, "the root is a directory")
	}
	n, ok := ft.get(p)
	switch {
	case !ok:
		return nil, fileErr(ErrNoSuchFile, p, "%s does not exist", p)
	case n.dir:
		return nil, fileErr(ErrIsDir, p, "%s is a directory", p)
	}
	return n.data, nil
}

func (ft *fileTree) readDir(p string) ([]FileInfo, error) {
	if p != "" {
		n, ok := ft.get(p)
		switch {
		case !ok:
			return nil, fileErr(ErrNoSuchFile, p, "%s does not exist", p)
		case !n.dir:
			return nil, fileErr(ErrNotDir, p, "%s is not a directory", p)
		}
	}
	out := []FileInfo{}
	skip := ""
	ft.under(p, func(k string, n *fileNode) bool {
		if skip != "" && strings.HasPrefix(k, skip) {
			return true
		}
		rest := k
		if p != "" {
			rest = k[len(p)+1:]
		}
		if strings.IndexByte(rest, '/') >= 0 {
			return true // below a child directory (listed at the directory)
		}
		out = append(out, FileInfo{Name: rest, Path: k, Dir: n.dir, Size: int64(len(n.data))})
		if n.dir {
			skip = k + "/"
		}
		return true
	})
	return out, nil
}

// mkParents returns the tree with every missing ancestor directory of p
// (not p itself) created, or ErrNotDir when one of them is a file, or
// ErrFileLimit when they and extra more entries would exceed the cap.
func (ft *fileTree) mkParents(p string, extra int, lim FileLimits) (*fileTree, error) {
	var missing []string
	for d := parentOf(p); d != ""; d = parentOf(d) {
		n, ok := ft.get(d)
		if ok {
			if !n.dir {
				return nil, fileErr(ErrNotDir, d, "%s is a file, not a directory", d)
			}
			break
		}
		missing = append(missing, d)
	}
	if ft.len()+len(missing)+extra > lim.MaxFiles {
		return nil, &Error{Kind: ErrFileLimit, Path: outPath(p), Limit: LimitFiles, Err: fmt.Errorf("creating the parents of %s would make more than %d entries", p, lim.MaxFiles)}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		ft = ft.set(missing[i], true, nil)
	}
	return ft, nil
}

func (ft *fileTree) writeFile(p string, data []byte, appendTo bool, lim FileLimits) (*fileTree, error) {
	if p == "" {
		return nil, fileErr(ErrIsDir, p, "the root is a directory")
	}
	old, exists := ft.get(p)
	if exists && old.dir {
		return nil, fileErr(ErrIsDir, p, "%s is a directory", p)
	}
	var content []byte
	if appendTo && exists {
		content = make([]byte, 0, len(old.data)+len(data))
		content = append(append(content, old.data...), data...)
	} else {
		content = append([]byte(nil), data...)
	}
	if int64(len(content)) > lim.MaxFileBytes {
		return nil, &Error{Kind: ErrFileLimit, Path: p, Limit: LimitFileBytes, Err: fmt.Errorf("%s would be %d bytes, over the per-file cap of %d", p, len(content), lim.MaxFileBytes)}
	}
	grow := int64(len(content))
	if exists {
		grow -= int64(len(old.data))
	}
	if ft.size()+grow > lim.MaxWorkspaceBytes {
		return nil, &Error{Kind: ErrFileLimit, Path: p, Limit: LimitWorkspaceBytes, Err: fmt.Errorf("the workspace would hold %d bytes of files, over its cap of %d", ft.size()+grow, lim.MaxWorkspaceBytes)}
	}
	if !exists && ft.len()+1 > lim.MaxFiles {
		return nil, &Error{Kind: ErrFileLimit, Path: p, Limit: LimitFiles, Err: fmt.Errorf("the workspace already holds %d entries, its cap", ft.len())}
	}
	nt, err := ft.mkParents(p, boolInt(!exists), lim)
	if err != nil {
		return nil, err
	}
	return nt.set(p, false, content), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (ft *fileTree) mkdir(p string, parents bool, lim FileLimits) (*fileTree, error) {
	if p == "" {
		if parents {
			return ft, nil
		}
		return nil, fileErr(ErrFileExists, p, "the root exists")
	}
	if n, ok := ft.get(p); ok {
		if parents && n.dir {
			return ft, nil
		}
		return nil, fileErr(ErrFileExists, p, "%s already exists", p)
	}
	if !parents {
		if d := parentOf(p); d != "" {
			n, ok := ft.get(d)
			switch {
			case !ok:
				return nil, fileErr(ErrNoSuchFile, d, "parent directory %s does not exist", d)
			case !n.dir:
				return nil, fileErr(ErrNotDir, d, "%s is a file, not a directory", d)
			}
		}
	}
	if ft.len()+1 > lim.MaxFiles {
		return nil, &Error{Kind: ErrFileLimit, Path: p, Limit: LimitFiles, Err: fmt.Errorf("the workspace already holds %d entries, its cap", ft.len())}
	}
	nt, err := ft.mkParents(p, 1, lim)
	if err != nil {
		return nil, err
	}
	return nt.set(p, true, nil), nil
}

func (ft *fileTree) remove(p string, recursive bool) (*fileTree, error) {
	if p == "" {
		return nil, fileErr(ErrInvalidPath, p, "the root cannot be removed")
	}
	n, ok := ft.get(p)
	if !ok {
		return nil, fileErr(ErrNoSuchFile, p, "%s does not exist", p)
	}
	if n.dir {
		var below []string
		ft.under(p, func(k string, _ *fileNode) bool {
			below = append(below, k)
			return recursive
		})
		if len(below) > 0 && !recursive {
			return nil, fileErr(ErrNotEmpty, p, "directory %s is not empty", p)
		}
		for _, k := range below {
			ft = ft.del(k)
		}
	}
	return ft.del(p), nil
}

func (ft *fileTree) rename(from, to string) (*fileTree, error) {
	if from == "" || to == "" {
		return nil, fileErr(ErrInvalidPath, "", "the root cannot be renamed")
	}
	n, ok := ft.get(from)
	if !ok {
		return nil, fileErr(ErrNoSuchFile, from, "%s does not exist", from)
	}
	if from == to {
		return ft, nil
	}
	if _, ok := ft.get(to); ok {
		return nil, fileErr(ErrFileExists, to, "%s already exists", to)
	}
	if n.dir && strings.HasPrefix(to, from+"/") {
		return nil, fileErr(ErrInvalidPath, to, "cannot move directory %s into itself", from)
	}
	if d := parentOf(to); d != "" {
		pn, ok := ft.get(d)
		switch {
		case !ok:
			return nil, fileErr(ErrNoSuchFile, d, "destination directory %s does not exist", d)
		case !pn.dir:
			return nil, fileErr(ErrNotDir, d, "%s is a file, not a directory", d)
		}
	}
	type moved struct {
		path string
		n    *fileNode
	}
	var below []moved
	if n.dir {
		ft.under(from, func(k string, c *fileNode) bool {
			below = append(below, moved{k, c})
			return true
		})
	}
	ft = ft.del(from).set(to, n.dir, n.data)
	for _, m := range below {
		ft = ft.del(m.path).set(to+m.path[len(from):], m.n.dir, m.n.data)
	}
	return ft, nil
}

func (ft *fileTree) files() []File {
	out := []File{}
	ft.under("", func(k string, n *fileNode) bool {
		out = append(out, File{Path: k, Dir: n.dir, Data: n.data})
		return true
	})
	return out
}

// Files returns every entry of the version's file tree in path order
// (byte-wise). O(entries).
func (v *Version) Files() []File { return v.files.files() }

// FileCount returns the number of entries (files and directories). O(1).
func (v *Version) FileCount() int { return v.files.len() }

// ReadFile returns the content of file p (shared: do not modify).
// Errors: ErrInvalidPath, ErrNoSuchFile, ErrIsDir.
func (v *Version) ReadFile(p string) ([]byte, error) {
	cp, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	return v.files.readFile(cp)
}

// Stat describes entry p ("." is the root directory).
func (v *Version) Stat(p string) (FileInfo, error) {
	cp, err := cleanPath(p)
	if err != nil {
		return FileInfo{}, err
	}
	return v.files.stat(cp)
}

// ReadDir lists directory p's direct entries in name order (byte-wise).
// Errors: ErrInvalidPath, ErrNoSuchFile, ErrNotDir.
func (v *Version) ReadDir(p string) ([]FileInfo, error) {
	cp, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	return v.files.readDir(cp)
}

// fileOps are the file operations of a workspace and of a unit: the
// workspace's mutex is held and its tree replaced only when the operation
// succeeds.
func (w *Workspace) fileRead(fn func(ft *fileTree) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fn(w.files)
}

func (w *Workspace) fileWrite(u *Unit, fn func(ft *fileTree, lim FileLimits) (*fileTree, error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if u == nil && w.unit != nil {
		return &Error{Kind: ErrUnitInProgress}
	}
	if u != nil {
		if err := u.check(); err != nil {
			return err
		}
	}
	nt, err := fn(w.files, w.store.FileLimits())
	if err != nil {
		return err
	}
	w.files = nt
	return nil
}

// Files returns every entry of the workspace's current file tree in path
// order.
func (w *Workspace) Files() []File {
	var out []File
	_ = w.fileRead(func(ft *fileTree) error { out = ft.files(); return nil })
	return out
}

// ReadFile, Stat and ReadDir read the workspace's current files (see the
// Version methods of the same names).
func (w *Workspace) ReadFile(p string) ([]byte, error) {
	cp, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = w.fileRead(func(ft *fileTree) (e error) { out, e = ft.readFile(cp); return })
	return out, err
}

// Stat describes entry p of the workspace.
func (w *Workspace) Stat(p string) (FileInfo, error) {
	cp, err := cleanPath(p)
	if err != nil {
		return FileInfo{}, err
	}
	var out FileInfo
	err = w.fileRead(func(ft *fileTree) (e error) { out, e = ft.stat(cp); return })
	return out, err
}

// ReadDir lists directory p of the workspace.
func (w *Workspace) ReadDir(p string) ([]FileInfo, error) {
	cp, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	err = w.fileRead(func(ft *fileTree) (e error) { out, e = ft.readDir(cp); return })
	return out, err
}

// WriteFile creates or truncates file p with a copy of data, creating
// missing parent directories. Errors (*Error): ErrInvalidPath, ErrIsDir (p
// is a directory), ErrNotDir (an ancestor is a file), ErrFileLimit,
// ErrUnitInProgress while a unit is open (write through the Unit). O(len(data)
// + log n).
func (w *Workspace) WriteFile(p string, data []byte) error { return w.writeFile(nil, p, data, false) }

// AppendFile appends data to file p, creating it (and its parents) when
// absent. Errors as WriteFile. O(size of the file + log n).
func (w *Workspace) AppendFile(p string, data []byte) error { return w.writeFile(nil, p, data, true) }

// Mkdir creates directory p. With parents, missing ancestors are created
// and an existing directory p is not an error (mkdir -p); without, the
// parent must exist. Errors: ErrInvalidPath, ErrFileExists, ErrNoSuchFile
// (missing parent), ErrNotDir, ErrFileLimit.
func (w *Workspace) Mkdir(p string, parents bool) error { return w.mkdir(nil, p, parents) }

// Remove removes file or directory p; a non-empty directory needs
// recursive (ErrNotEmpty otherwise). Errors: ErrInvalidPath (also for the
// root), ErrNoSuchFile, ErrNotEmpty. O(entries removed x log n).
func (w *Workspace) Remove(p string, recursive bool) error { return w.remove(nil, p, recursive) }

// Rename moves file or directory from to to (a directory with everything
// under it). to must not exist and its parent must be a directory. Errors:
// ErrInvalidPath (also moving a directory into itself), ErrNoSuchFile,
// ErrFileExists, ErrNotDir. O(entries moved x log n).
func (w *Workspace) Rename(from, to string) error { return w.rename(nil, from, to) }

func (w *Workspace) writeFile(u *Unit, p string, data []byte, appendTo bool) error {
	cp, err := cleanPath(p)
	if err != nil {
		return err
	}
	return w.fileWrite(u, func(ft *fileTree, lim FileLimits) (*fileTree, error) {
		return ft.writeFile(cp, data, appendTo, lim)
	})
}

func (w *Workspace) mkdir(u *Unit, p string, parents bool) error {
	cp, err := cleanPath(p)
	if err != nil {
		return err
	}
	return w.fileWrite(u, func(ft *fileTree, lim FileLimits) (*fileTree, error) { return ft.mkdir(cp, parents, lim) })
}

func (w *Workspace) remove(u *Unit, p string, recursive bool) error {
	cp, err := cleanPath(p)
	if err != nil {
		return err
	}
	return w.fileWrite(u, func(ft *fileTree, _ FileLimits) (*fileTree, error) { return ft.remove(cp, recursive) })
}

func (w *Workspace) rename(u *Unit, from, to string) error {
	cf, err := cleanPath(from)
	if err != nil {
		return err
	}
	ct, err := cleanPath(to)
	if err != nil {
		return err
	}
	return w.fileWrite(u, func(ft *fileTree, _ FileLimits) (*fileTree, error) { return ft.rename(cf, ct) })
}

// File operations inside a unit of work: undone by Rollback with the
// unit's SQL. Same semantics and errors as the Workspace methods;
// ErrUnitDone after Commit or Rollback.

// ReadFile reads file p as the unit sees it.
func (u *Unit) ReadFile(p string) ([]byte, error) { return u.w.ReadFile(p) }

// Stat describes entry p as the unit sees it.
func (u *Unit) Stat(p string) (FileInfo, error) { return u.w.Stat(p) }

// ReadDir lists directory p as the unit sees it.
func (u *Unit) ReadDir(p string) ([]FileInfo, error) { return u.w.ReadDir(p) }

// WriteFile writes file p in the unit.
func (u *Unit) WriteFile(p string, data []byte) error { return u.w.writeFile(u, p, data, false) }

// AppendFile appends to file p in the unit.
func (u *Unit) AppendFile(p string, data []byte) error { return u.w.writeFile(u, p, data, true) }

// Mkdir creates directory p in the unit.
func (u *Unit) Mkdir(p string, parents bool) error { return u.w.mkdir(u, p, parents) }

// Remove removes entry p in the unit.
func (u *Unit) Remove(p string, recursive bool) error { return u.w.remove(u, p, recursive) }

// Rename moves entry from to to in the unit.
func (u *Unit) Rename(from, to string) error { return u.w.rename(u, from, to) }

// WithFiles returns a new version of v's tables with the given entries
// added to its file tree (files replace files of the same path; parents are
// created): how a seed brings its files. Errors as WriteFile and Mkdir.
func (v *Version) WithFiles(files []File) (*Version, error) {
	ft := v.files
	lim := v.store.FileLimits()
	for _, f := range files {
		cp, err := cleanPath(f.Path)
		if err != nil {
			return nil, err
		}
		if f.Dir {
			ft, err = ft.mkdir(cp, true, lim)
		} else {
			ft, err = ft.writeFile(cp, f.Data, false, lim)
		}
		if err != nil {
			return nil, err
		}
	}
	nv := v.store.newVersion(v.cat, v.tables)
	nv.files = ft
	return nv, nil
}

// FileChange is the change of one workspace entry between two states.
// Change is "added", "removed" or "changed" (a file's content, or an entry
// that turned from file to directory or back). OldSHA256 and NewSHA256 are
// the lower-case hex SHA-256 of the file content on each side, "" where
// the side has no file there (absent, or a directory). TextDiff is a
// unified diff (3 lines of context, "a/PATH" and "b/PATH" headers) of the
// two contents when both sides are valid UTF-8 text (an absent side reads
// as empty), else "".
type FileChange struct {
	Path      string `json:"path"`
	Change    string `json:"change"`
	TextDiff  string `json:"text_diff,omitempty"`
	OldSHA256 string `json:"old_sha256,omitempty"`
	NewSHA256 string `json:"new_sha256,omitempty"`
}

// File change kinds (FileChange.Change).
const (
	FileAdded   = "added"
	FileRemoved = "removed"
	FileChanged = "changed"
)

func nodeSHA(n *fileNode) string {
	if n == nil || n.dir {
		return ""
	}
	s := sha256.Sum256(n.data)
	return hex.EncodeToString(s[:])
}

// diffFiles lists the entries that differ between a and b in path order:
// O(k log n) for k changed entries when b descends from a (shared subtrees
// are skipped), plus the text diffs of changed files.
func diffFiles(a, b *fileTree) []FileChange {
	if a == b {
		return nil
	}
	var out []FileChange
	eq := func(x, y *fileNode) bool { return x == y || (x.dir == y.dir && x.sum == y.sum) }
	ptree.Diff(a.tree(), b.tree(), eq, func(p string, na, nb **fileNode) bool {
		var x, y *fileNode
		if na != nil {
			x = *na
		}
		if nb != nil {
			y = *nb
		}
		fc := FileChange{Path: p, OldSHA256: nodeSHA(x), NewSHA256: nodeSHA(y)}
		switch {
		case x == nil:
			fc.Change = FileAdded
		case y == nil:
			fc.Change = FileRemoved
		default:
			fc.Change = FileChanged
		}
		fc.TextDiff = textDiff(p, x, y)
		out = append(out, fc)
		return true
	})
	return out
}

func textDiff(p string, x, y *fileNode) string {
	var a, b []byte
	if x != nil {
		if x.dir {
			return ""
		}
		a = x.data
	}
	if y != nil {
		if y.dir {
			return ""
		}
		b = y.data
	}
	if !utf8.Valid(a) || !utf8.Valid(b) || bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0 {
		return ""
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: diffLines(a), B: diffLines(b),
		FromFile: "a/" + p, ToFile: "b/" + p, Context: 3,
	})
	if err != nil {
		return ""
	}
	return d
}

// diffLines splits text into lines with their "\n"; a last line without
// one gets "\n" plus the marker "\ No newline at end of file" line, as
// diff -u writes it.
func diffLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	return lines
}

// mergeFiles returns the union of the trees; an entry present in several
// must be identical in all of them.
func mergeFiles(trees []*fileTree) (*fileTree, error) {
	var out *fileTree
	for _, ft := range trees {
		if ft.len() == 0 || ft == out {
			continue
		}
		if out.len() == 0 {
			out = ft
			continue
		}
		var err error
		ft.under("", func(p string, n *fileNode) bool {
			if o, ok := out.get(p); ok {
				if o.dir != n.dir || o.sum != n.sum {
					err = &Error{Kind: ErrBadArgument, Path: p, Err: fmt.Errorf("state: file %s differs between the merged versions", p)}
					return false
				}
				return true
			}
			out = out.set(p, n.dir, n.data)
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
