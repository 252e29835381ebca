package module

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/state"
)

// Errors of TableNamespaces (match with errors.Is).
var (
	// ErrNamespaceClash: two modules of a group would store their tables
	// under the same namespace.
	ErrNamespaceClash = errors.New("table namespace clash")
	// ErrBadNamespace: a module's name gives no valid namespace (it holds
	// "__", the separator of namespaced names, or no letter to start with).
	ErrBadNamespace = errors.New("bad table namespace")
)

// GroupTables is how a lifecycle group's modules keep their tables
// (docs/design/026-composition.md).
type GroupTables struct {
	// Namespaces holds each module's namespace, in group order: all ""
	// when no two modules own a table of the same name (the group is
	// stored exactly as before namespaces existed), else every module's
	// Namespace(name).
	Namespaces []string
	// Names maps a module name to its Sandbox.Names (its owned and read
	// tables, lower case, to their stored names); nil when Namespaces are
	// all "".
	Names map[string]map[string]string
}

// Namespaced reports whether the group stores its tables under namespaces.
func (g GroupTables) Namespaced() bool { return g.Names != nil }

// Namespace is the table namespace of a module called name: lower case,
// each character outside [a-z0-9_] replaced by "_" ("tau2-retail" ->
// "tau2_retail"). Errors (ErrBadNamespace): a name holding "__" or whose
// namespace is not valid (state.ValidNamespace).
func Namespace(name string) (string, error) {
	if strings.Contains(name, state.NamespaceSep) {
		return "", fmt.Errorf("%w: module name %q holds %q, the separator of namespaced names", ErrBadNamespace, name, state.NamespaceSep)
	}
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	ns := string(b)
	if err := state.ValidNamespace(ns); err != nil {
		return "", fmt.Errorf("%w: module %q: %v", ErrBadNamespace, name, err)
	}
	return ns, nil
}

// TableNamespaces decides how the modules with manifests ms (a lifecycle
// group, in group order) keep their tables: when no table is owned by two
// of them, as they are (GroupTables.Namespaced false); otherwise each
// module's tables are stored as "<namespace>__<table>" and its statements
// keep their own names, a read of a table another module owns resolving to
// that module's namespace. Errors: ErrBadNamespace, ErrNamespaceClash (two
// modules with one namespace, e.g. "a-b" and "a_b").
func TableNamespaces(ms []*Manifest) (GroupTables, error) {
	owners := map[string]int{}
	clash := false
	for _, m := range ms {
		for _, t := range m.Tables.Owns {
			lt := strings.ToLower(t)
			owners[lt]++
			if owners[lt] > 1 {
				clash = true
			}
		}
	}
	out := GroupTables{Namespaces: make([]string, len(ms))}
	if !clash {
		return out, nil
	}
	owner := map[string]string{} // table -> namespace of its first owner
	seen := map[string]string{}  // namespace -> module
	for i, m := range ms {
		ns, err := Namespace(m.Name)
		if err != nil {
			return GroupTables{}, err
		}
		if o, ok := seen[ns]; ok {
			return GroupTables{}, fmt.Errorf("%w: modules %q and %q both give namespace %q", ErrNamespaceClash, o, m.Name, ns)
		}
		seen[ns] = m.Name
		out.Namespaces[i] = ns
		for _, t := range m.Tables.Owns {
			if _, ok := owner[strings.ToLower(t)]; !ok {
				owner[strings.ToLower(t)] = ns
			}
		}
	}
	out.Names = map[string]map[string]string{}
	for i, m := range ms {
		names := map[string]string{}
		for _, t := range m.Tables.Owns {
			names[strings.ToLower(t)] = state.NamespacedTable(out.Namespaces[i], t)
		}
		for _, t := range m.Tables.Reads {
			lt := strings.ToLower(t)
			if _, own := names[lt]; own {
				continue
			}
			if ns, ok := owner[lt]; ok {
				names[lt] = state.NamespacedTable(ns, t)
			}
		}
		out.Names[m.Name] = names
	}
	return out, nil
}

// Seed returns the group's seed state from its modules' seed versions (in
// group order): each namespaced when the group is (state.Version.Namespaced),
// then merged (state.Merge).
func (g GroupTables) Seed(seeds []*state.Version) (*state.Version, error) {
	if len(seeds) != len(g.Namespaces) {
		return nil, fmt.Errorf("module: %d seeds for a group of %d modules", len(seeds), len(g.Namespaces))
	}
	vs := make([]*state.Version, len(seeds))
	for i, v := range seeds {
		vs[i] = v
		if ns := g.Namespaces[i]; ns != "" && v != nil {
			nv, err := v.Namespaced(ns)
			if err != nil {
				return nil, err
			}
			vs[i] = nv
		}
	}
	return state.Merge(vs...)
}

// Stored is the name table, as module m's statements write it, is stored
// under in the group's state.
func (g GroupTables) Stored(m, table string) string {
	if n, ok := g.Names[m][strings.ToLower(table)]; ok {
		return n
	}
	return table
}
