package evolve

import (
	"strings"
	"testing"
)

const twoTools = `load("x", "y")

def _helper(a):
    return a

def get_item(item_id):
    # get
    _a = {"item_id": item_id}
    return _get(_E_item, _a, "item_id", [])

def set_item(item_id, name = None):
    _a = {"item_id": item_id, "name": name}

    return _update(_E_item, _a, "item_id", [], [], "")
`

// splice takes one function from the answer, nothing else: the span runs to
// the next top-level line (blank and indented lines inside it included).
func TestSplice(t *testing.T) {
	answer := strings.Replace(twoTools, `return _update(`, `return _fixed(`, 1)
	answer = strings.Replace(answer, `return _get(`, `return _other(`, 1)
	got, ok := splice(twoTools, answer, "set_item")
	if !ok {
		t.Fatal("no set_item")
	}
	want := strings.Replace(twoTools, `return _update(`, `return _fixed(`, 1)
	if got != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", got, want)
	}
	a, e, ok := funcSpan(twoTools, "get_item")
	if !ok || !strings.HasPrefix(twoTools[a:e], "def get_item(") || !strings.HasSuffix(twoTools[a:e], "[])\n") {
		t.Errorf("get_item span %q", twoTools[a:e])
	}
	for _, name := range []string{"nope", "get", "_helpe"} {
		if _, _, ok := funcSpan(twoTools, name); ok {
			t.Errorf("funcSpan found %q", name)
		}
	}
	if _, ok := splice(twoTools, "def other():\n    pass\n", "get_item"); ok {
		t.Error("spliced from an answer without the function")
	}
}

// funcSpan never panics and, when it finds a function, returns a span that
// starts with its def and lies inside the program; splicing a program's
// function into itself gives the program back.
func FuzzFuncSpan(f *testing.F) {
	f.Add(twoTools, "set_item")
	f.Add("def f(:\n", "f")
	f.Add("x\ndef g(a):\n\n\n", "g")
	f.Fuzz(func(t *testing.T, prog, name string) {
		a, e, ok := funcSpan(prog, name)
		if !ok {
			return
		}
		if a < 0 || e > len(prog) || a > e || !strings.HasPrefix(prog[a:], "def "+name+"(") {
			t.Fatalf("span %d..%d of %d bytes for %q", a, e, len(prog), name)
		}
		if got, ok := splice(prog, prog, name); !ok || got != prog {
			t.Fatalf("self-splice changed the program")
		}
	})
}
