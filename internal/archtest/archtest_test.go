package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const mod = "github.com/weft-dev/weft/"

// pkg is one package of the import graph (keyed by import path): whether
// it is in the standard library and its direct imports.
type pkg struct {
	std     bool
	imports []string
}

// rule forbids packages under from (path prefixes relative to the module)
// to depend, directly or not, on a package for which bad is true.
type rule struct {
	name string
	from []string
	bad  func(path string, p pkg) bool
}

// under reports whether path is a package of weft's module under one of
// prefixes (paths relative to the module root).
func under(path string, prefixes ...string) bool {
	if !strings.HasPrefix(path, mod) {
		return false
	}
	path = strings.TrimPrefix(path, mod)
	for _, pre := range prefixes {
		if path == pre || strings.HasPrefix(path, pre+"/") {
			return true
		}
	}
	return false
}

var product = []string{"core", "megamcp", "plugins", "internal", "hosts", "cmd", "sdk"}

var rules = []rule{
	{"product imports examples", product, func(path string, _ pkg) bool { return under(path, "examples") }},
	{"sdk imports host side", []string{"sdk"}, func(path string, _ pkg) bool {
		return under(path, "core", "hosts", "megamcp", "plugins", "internal")
	}},
	{"sdk/abi imports beyond the standard library", []string{"sdk/abi"}, func(path string, p pkg) bool {
		return !p.std && !under(path, "sdk/abi")
	}},
}

// violations checks every package of graph under a rule's from against
// the rule; each violation is "rule: a -> b -> c", the shortest import
// chain from the package to a forbidden one, sorted.
func violations(graph map[string]pkg, rules []rule) []string {
	var out []string
	for _, r := range rules {
		for root := range graph {
			if !under(root, r.from...) {
				continue
			}
			if chain := find(graph, root, r.bad); chain != nil {
				for i := range chain {
					chain[i] = strings.TrimPrefix(chain[i], mod)
				}
				out = append(out, r.name+": "+strings.Join(chain, " -> "))
			}
		}
	}
	slices.Sort(out)
	return out
}

// find is a breadth-first search from root for a package bad accepts; it
// returns the chain from root to it, or nil.
func find(graph map[string]pkg, root string, bad func(string, pkg) bool) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		imps := slices.Clone(graph[cur].imports)
		slices.Sort(imps)
		for _, next := range imps {
			if _, seen := prev[next]; seen {
				continue
			}
			prev[next] = cur
			if bad(next, graph[next]) {
				chain := []string{next}
				for p := cur; p != ""; p = prev[p] {
					chain = append([]string{p}, chain...)
				}
				return chain
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// listGraph runs `go list -deps` over the product packages at the
// repository root and returns the import graph of them and everything
// they import (test files excluded).
func listGraph(t *testing.T) map[string]pkg {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}"}
	for _, p := range product {
		args = append(args, "./"+p+"/...")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string]pkg{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			t.Fatalf("go list line %q", sc.Text())
		}
		graph[f[0]] = pkg{std: f[1] == "true", imports: strings.Fields(f[2])}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return graph
}

// TestImportBoundaries is the check of issue 14's "Must show": no product
// package imports examples/, sdk/ imports nothing host-side, sdk/abi only
// the standard library.
func TestImportBoundaries(t *testing.T) {
	graph := listGraph(t)
	// The graph is the real tree: the product packages are in it.
	for _, p := range []string{"core/state", "megamcp", "megamcp/megamcptest", "internal/pipeline", "internal/cli", "sdk/tool", "cmd/weft"} {
		if _, ok := graph[mod+p]; !ok {
			t.Fatalf("go list -deps did not list %s", p)
		}
	}
	if v := violations(graph, rules); len(v) > 0 {
		t.Errorf("import boundaries broken:\n%s", strings.Join(v, "\n"))
	}
}

// TestViolations shows the rules catch what they forbid, with the chain.
func TestViolations(t *testing.T) {
	m := mod
	graph := map[string]pkg{
		"fmt":                                  {std: true},
		m + "core/state":                       {imports: []string{"fmt"}},
		m + "examples/modules/retail/retaildb": {imports: []string{m + "core/state"}},
		m + "internal/pipeline":                {imports: []string{m + "internal/helper"}},
		m + "internal/helper":                  {imports: []string{m + "examples/modules/retail/retaildb"}},
		m + "megamcp":                          {imports: []string{m + "core/state"}},
		m + "sdk/tool":                         {imports: []string{m + "sdk/abi", m + "core/state"}},
		m + "sdk/abi":                          {imports: []string{"fmt", "github.com/x/y"}},
		"github.com/x/y":                       {},
		m + "examples/modules/retail":          {imports: []string{m + "sdk/tool"}},
	}
	want := []string{
		"product imports examples: internal/helper -> examples/modules/retail/retaildb",
		"product imports examples: internal/pipeline -> internal/helper -> examples/modules/retail/retaildb",
		"sdk imports host side: sdk/tool -> core/state",
		"sdk/abi imports beyond the standard library: sdk/abi -> github.com/x/y",
	}
	if diff := cmp.Diff(want, violations(graph, rules)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	// The standard library's own internal/... packages are not weft's.
	graph[mod+"sdk/tool"] = pkg{imports: []string{"fmt", "internal/bytealg"}}
	graph["internal/bytealg"] = pkg{std: true}
	delete(graph, mod+"sdk/abi")
	graph[mod+"internal/helper"] = pkg{imports: []string{mod + "core/state"}}
	if v := violations(graph, rules); len(v) != 0 {
		t.Errorf("clean graph: %v", v)
	}
}
