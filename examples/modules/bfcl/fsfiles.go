package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weft-dev/weft/sdk/tool"
)

// GorillaFileSystem over the session's workspace files.
//
// Where things live:
//
//   - workspace files: the tree. The root directory's contents are at the
//     workspace root; a directory is a directory entry (empty ones too), a
//     file a file whose bytes are its content. Names that are not valid
//     workspace path elements (".", "..", "", or holding a backslash, a
//     control character or "%") are percent-escaped (fsEscape).
//   - table bfcl_fs_entry(path, ord): the position of each entry in its
//     directory (Python dict insertion order, which ls, find and the
//     export show; the workspace lists by name). An entry keeps its ord
//     while it stays; a new one gets its directory's largest plus one.
//   - "_fs" of the class row (fsSide): the root directory's name (the
//     default root is named "/", which is no path), the current directory
//     (BFCL's _current_dir: session state, not a file) as a workspace path,
//     and, only when object identity makes BFCL's graph differ from the
//     tree (mv of a directory leaves its children's parent link on the old
//     object; cp of a directory shares the children between copy and
//     original), the graph's shape without the contents of the files the
//     tree shows. None of the public oracle cases' final states needs it,
//     six of their 1,618 calls run with it.
//
// A call reads the tree (fsOpen), runs the method on the graph and writes
// back only what changed (fsSave): removed entries, new directories, new
// or changed files, changed ords, the side record.

// callCtx is the context of the call in progress (Dispatch serializes
// calls; set by callTool and exportAll).
var callCtx = context.Background()

// fsSide is the private attribute "_fs".
type fsSide struct {
	Root string `json:"root"`
	// Cwd is the current directory's workspace path ("" = root), when
	// Graph is nil.
	Cwd string `json:"cwd"`
	// Graph is BFCL's object graph when the tree alone does not describe
	// it; file nodes the tree shows have their content in the files.
	Graph *fsGraph `json:"graph,omitempty"`
	// Unsynced: Graph is a fresh _load_scenario with every content, not
	// yet written to the files.
	Unsynced bool `json:"unsynced,omitempty"`
}

func fsGetSide(self *Dict) (*fsSide, error) {
	b, err := marshal(self.G("_fs"))
	if err != nil {
		return nil, err
	}
	var s fsSide
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("GorillaFileSystem _fs: %w", err)
	}
	return &s, nil
}

func fsSetSide(self *Dict, s *fsSide) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	v, err := decodeValue(b)
	if err != nil {
		return err
	}
	self.Set("_fs", v)
	return nil
}

// fsEscape maps a BFCL name to a workspace path element, reversibly:
// '%', '\\' and control bytes become %XX; "", "." and ".." become "%",
// "%." and "%..".
func fsEscape(name string) string {
	switch name {
	case "", ".", "..":
		return "%" + name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '%' || c == '\\' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func fsUnescape(el string) string {
	switch el {
	case "%", "%.", "%..":
		return el[1:]
	}
	if !strings.Contains(el, "%") {
		return el
	}
	var b strings.Builder
	for i := 0; i < len(el); i++ {
		if el[i] == '%' && i+2 < len(el) {
			if v, err := strconv.ParseUint(el[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(el[i])
	}
	return b.String()
}

func joinPath(dir, el string) string {
	if dir == "" {
		return el
	}
	return dir + "/" + el
}

func wsPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// fsSnap is the tree as the workspace holds it.
type fsSnap struct {
	entries  map[string]*snapEntry // by workspace path
	children map[string][]string   // directory path -> entry paths in ord order
}

type snapEntry struct {
	dir     bool
	content string
	ord     int64
}

// readSnap reads the whole tree: the files (a walk from the root) and the
// ords of bfcl_fs_entry.
func readSnap() (*fsSnap, error) {
	s := &fsSnap{entries: map[string]*snapEntry{}, children: map[string][]string{}}
	ords := map[string]int64{}
	rows, err := sqlDB().QueryContext(callCtx, "SELECT path, ord FROM bfcl_fs_entry")
	if err != nil {
		return nil, fmt.Errorf("reading bfcl_fs_entry: %w", err)
	}
	for rows.Next() {
		var p string
		var o int64
		if err := rows.Scan(&p, &o); err != nil {
			rows.Close()
			return nil, err
		}
		ords[p] = o
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	files := tool.Files()
	var walk func(dir string) error
	walk = func(dir string) error {
		des, err := files.ReadDir(wsPath(dir))
		if err != nil {
			return err
		}
		var kids []string
		for _, de := range des {
			p := joinPath(dir, de.Name())
			e := &snapEntry{dir: de.IsDir(), ord: ords[p]}
			if !e.dir {
				b, err := files.ReadFile(p)
				if err != nil {
					return err
				}
				e.content = string(b)
			}
			s.entries[p] = e
			kids = append(kids, p)
			if e.dir {
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		// ord order; entries without a row (written by someone else) last,
		// by name.
		slices.SortStableFunc(kids, func(a, b string) int {
			oa, ob := ords[a], ords[b]
			switch {
			case oa == ob:
				return 0
			case oa == 0:
				return 1
			case ob == 0:
				return -1
			case oa < ob:
				return -1
			}
			return 1
		})
		s.children[dir] = kids
		return nil
	}
	if err := walk(""); err != nil {
		return nil, fmt.Errorf("reading the workspace files: %w", err)
	}
	return s, nil
}

// fsOpen returns the instance's graph and the files it was read from.
func fsOpen(self *Dict) (*fsGraph, *fsSnap, error) {
	side, err := fsGetSide(self)
	if err != nil {
		return nil, nil, err
	}
	snap, err := readSnap()
	if err != nil {
		return nil, nil, err
	}
	if side.Graph != nil {
		g := side.Graph
		if g.Nodes == nil || g.Maps == nil || g.Nodes[g.Root] == nil {
			return nil, nil, errors.New("GorillaFileSystem _fs: malformed graph")
		}
		if !side.Unsynced {
			// Contents of the files the tree shows come from the files.
			err := g.walkVisible(func(p, _ string, _ int, e fsEntry) error {
				if node := g.Nodes[e.Node]; !node.Dir {
					e := snap.entries[p]
					if e == nil || e.dir {
						return fmt.Errorf("GorillaFileSystem: file %s missing from the workspace", p)
					}
					node.Content = e.content
				}
				return nil
			})
			if err != nil {
				return nil, nil, err
			}
		}
		return g, snap, nil
	}
	g := &fsGraph{Nodes: map[int]*fsNode{}, Maps: map[int][]fsEntry{}}
	g.Root = g.newDir(side.Root, 0)
	g.Cwd = 0
	byPath := map[string]int{"": g.Root}
	var build func(dir string, d int)
	build = func(dir string, d int) {
		for _, p := range snap.children[dir] {
			e := snap.entries[p]
			name := fsUnescape(path.Base(p))
			if e.dir {
				n := g.newDir(name, d)
				g.set(d, name, n)
				byPath[p] = n
				build(p, n)
			} else {
				g.set(d, name, g.newFile(name, e.content))
			}
		}
	}
	build("", g.Root)
	g.Cwd = byPath[side.Cwd]
	if g.Cwd == 0 {
		return nil, nil, fmt.Errorf("GorillaFileSystem: current directory %q is not a directory of the workspace", side.Cwd)
	}
	return g, snap, nil
}

// walkVisible calls fn for every entry reachable from the root by
// contents, in pre-order (a directory before its entries, entries in dict
// order), with its workspace path, its directory's path and node, and its
// entry; a node reachable twice is visited twice.
func (g *fsGraph) walkVisible(fn func(p, dir string, d int, e fsEntry) error) error {
	var walk func(dir string, d, depth int) error
	walk = func(dir string, d, depth int) error {
		if depth > 256 {
			return errors.New("cyclic directory tree")
		}
		for _, e := range g.Maps[g.Nodes[d].Contents] {
			p := joinPath(dir, fsEscape(e.Name))
			if err := fn(p, dir, d, e); err != nil {
				return err
			}
			if g.Nodes[e.Node].Dir {
				if err := walk(p, e.Node, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("", g.Root, 0)
}

// visEntry is one entry of the tree a graph shows.
type visEntry struct {
	path    string
	dir     bool
	content string
	ord     int64
}

// visible lists the tree the graph shows, in pre-order, with ords (kept
// from old where the entry keeps its place), and reports whether the tree
// describes the graph (canonical: every node and contents map reached
// once, every directory's parent link its container, the current directory
// in the tree), with the current directory's path.
func (g *fsGraph) visible(old *fsSnap) ([]visEntry, bool, string, error) {
	var out []visEntry
	seenNode := map[int]bool{g.Root: true}
	seenMap := map[int]bool{g.Nodes[g.Root].Contents: true}
	canonical := g.Nodes[g.Root].Parent == 0
	cwd, cwdFound := "", g.Cwd == g.Root
	last := map[string]int64{} // directory path -> last ord given
	err := g.walkVisible(func(p, dir string, d int, e fsEntry) error {
		n := g.Nodes[e.Node]
		if seenNode[e.Node] || n.Name != e.Name {
			canonical = false
		}
		seenNode[e.Node] = true
		ord := last[dir] + 1
		if o := old.entries[p]; o != nil && o.ord > last[dir] && o.dir == n.Dir {
			ord = o.ord
		}
		last[dir] = ord
		out = append(out, visEntry{path: p, dir: n.Dir, content: n.Content, ord: ord})
		if n.Dir {
			if seenMap[n.Contents] || n.Parent != d {
				canonical = false
			}
			seenMap[n.Contents] = true
			if e.Node == g.Cwd && !cwdFound {
				cwd, cwdFound = p, true
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, "", err
	}
	if !canonical || !cwdFound {
		return out, false, "", nil
	}
	return out, true, cwd, nil
}

// fsSave writes the graph's tree to the workspace files and bfcl_fs_entry
// (only what differs from old) and the side record to self.
func fsSave(self *Dict, g *fsGraph, old *fsSnap) error {
	vis, canonical, cwd, err := g.visible(old)
	if err != nil {
		return err
	}
	files := tool.Files()
	db := sqlDB()
	now := map[string]*visEntry{}
	for i := range vis {
		now[vis[i].path] = &vis[i]
	}
	// Removed entries (and kind changes), top-most first.
	var gone []string
	for p, e := range old.entries {
		if n := now[p]; n == nil || n.dir != e.dir {
			gone = append(gone, p)
		}
	}
	slices.Sort(gone)
	removed := ""
	for _, p := range gone {
		if _, err := db.ExecContext(callCtx, "DELETE FROM bfcl_fs_entry WHERE path = ?", p); err != nil {
			return err
		}
		if removed != "" && strings.HasPrefix(p, removed+"/") {
			continue
		}
		if err := files.RemoveAll(p); err != nil {
			return err
		}
		removed = p
	}
	for _, e := range vis {
		o := old.entries[e.path]
		if o != nil && o.dir != e.dir {
			o = nil
		}
		switch {
		case e.dir && o == nil:
			if err := files.Mkdir(e.path); err != nil {
				return err
			}
		case !e.dir && (o == nil || o.content != e.content):
			if err := files.WriteFile(e.path, []byte(e.content)); err != nil {
				return err
			}
		}
		switch {
		case o == nil:
			_, err = db.ExecContext(callCtx, "INSERT INTO bfcl_fs_entry (path, ord) VALUES (?, ?)", e.path, e.ord)
		case o.ord != e.ord:
			_, err = db.ExecContext(callCtx, "UPDATE bfcl_fs_entry SET ord = ? WHERE path = ?", e.ord, e.path)
		}
		if err != nil {
			return fmt.Errorf("writing bfcl_fs_entry: %w", err)
		}
	}
	side := &fsSide{Root: g.Nodes[g.Root].Name, Cwd: cwd}
	if !canonical {
		side.Cwd = ""
		side.Graph = stripVisible(g)
	}
	return fsSetSide(self, side)
}

// stripVisible is g without the contents of the file nodes the tree shows
// (the files hold them), node ids renumbered densely in walk order so the
// record depends on the graph's shape only.
func stripVisible(g *fsGraph) *fsGraph {
	shown := map[int]bool{}
	_ = g.walkVisible(func(_, _ string, _ int, e fsEntry) error { shown[e.Node] = true; return nil })
	out := &fsGraph{Nodes: map[int]*fsNode{}, Maps: map[int][]fsEntry{}, Root: g.Root, Cwd: g.Cwd, Next: g.Next}
	for id, n := range g.Nodes {
		c := *n
		if shown[id] && !c.Dir {
			c.Content = ""
		}
		out.Nodes[id] = &c
	}
	for id, m := range g.Maps {
		out.Maps[id] = slices.Clone(m)
	}
	return out
}

// fsTree is the public attribute root: {root_name: {"type": "directory",
// "contents": ...}}, built from the workspace files (from the graph while
// it is not yet written).
func fsTree(self *Dict) (*Dict, error) {
	side, err := fsGetSide(self)
	if err != nil {
		return nil, err
	}
	if side.Unsynced && side.Graph != nil {
		t, err := side.Graph.tree(side.Graph.Root, 0)
		if err != nil {
			return nil, err
		}
		return dict(side.Graph.Nodes[side.Graph.Root].Name, t), nil
	}
	snap, err := readSnap()
	if err != nil {
		return nil, err
	}
	var build func(dir string) *Dict
	build = func(dir string) *Dict {
		c := newDict()
		for _, p := range snap.children[dir] {
			e := snap.entries[p]
			name := fsUnescape(path.Base(p))
			if e.dir {
				c.Set(name, dict("type", "directory", "contents", build(p)))
			} else {
				c.Set(name, dict("type", "file", "content", e.content))
			}
		}
		return c
	}
	return dict(side.Root, dict("type", "directory", "contents", build(""))), nil
}

// fsSeed is the seed of a GorillaFileSystem configuration: the instance
// attributes (its _fs side record), the workspace entries and their ords,
// as a call would write them.
func fsSeed(cfg *Dict) (*Dict, []visEntry, error) {
	g, err := graphOf(cfg)
	if err != nil {
		return nil, nil, err
	}
	empty := &fsSnap{entries: map[string]*snapEntry{}, children: map[string][]string{}}
	vis, canonical, cwd, err := g.visible(empty)
	if err != nil {
		return nil, nil, err
	}
	if !canonical {
		return nil, nil, errors.New("bfcl: a loaded configuration is always a tree")
	}
	for _, e := range vis {
		if !e.dir && !utf8.ValidString(e.content) {
			return nil, nil, fmt.Errorf("bfcl: file %s is not UTF-8", e.path)
		}
	}
	self := dict("long_context", false)
	if err := fsSetSide(self, &fsSide{Root: g.Nodes[g.Root].Name, Cwd: cwd}); err != nil {
		return nil, nil, err
	}
	return self, vis, nil
}
