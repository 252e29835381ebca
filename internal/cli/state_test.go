package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStateCommands drives load, hash, query and diff end to end on files.
func TestStateCommands(t *testing.T) {
	dir := t.TempDir()
	ddl := writeFile(t, dir, "schema.sql", `CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, balance DECIMAL(8,2));`)
	rows0 := writeFile(t, dir, "rows0.json", `{"users": [{"id": 1, "name": "ann", "balance": 10.5}, {"id": 2, "name": "bob", "balance": 0}]}`)
	rows1 := writeFile(t, dir, "rows1.json", `{"users": [{"id": 1, "name": "ann", "balance": 7.25}, {"id": 3, "name": "cy", "balance": null}]}`)
	v0, v1 := filepath.Join(dir, "v0.json"), filepath.Join(dir, "v1.json")

	code, out, errOut := run(t, stamped, "state", "load", "--ddl", ddl, "--data", rows0, "--out", v0, "--json")
	if code != ExitOK {
		t.Fatalf("load: %d %s", code, errOut)
	}
	var loaded struct {
		Hash   string `json:"hash"`
		Tables []struct {
			Table string `json:"table"`
			Rows  int    `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &loaded); err != nil || len(loaded.Hash) != 64 || loaded.Tables[0].Rows != 2 {
		t.Fatalf("load --json output %q (%v)", out, err)
	}
	if code, _, errOut := run(t, stamped, "state", "load", "--ddl", ddl, "--data", rows1, "-o", v1); code != ExitOK {
		t.Fatalf("load v1: %s", errOut)
	}

	code, out, _ = run(t, stamped, "state", "hash", v0)
	if code != ExitOK || out != loaded.Hash+"  "+v0+"\n" {
		t.Fatalf("hash output %q, want hash %s", out, loaded.Hash)
	}

	code, out, errOut = run(t, stamped, "state", "query", v0, "SELECT name, balance FROM users WHERE id = ?", "1")
	if code != ExitOK {
		t.Fatalf("query: %s", errOut)
	}
	if d := cmp.Diff("name  balance\nann   10.5\n", out); d != "" {
		t.Fatalf("query output (-want +got):\n%s", d)
	}

	code, out, errOut = run(t, stamped, "state", "diff", v0, v1)
	if code != ExitOK {
		t.Fatalf("diff: %s", errOut)
	}
	want := "table users: 1 added, 1 removed, 1 changed\n" +
		"  + [3] [3 cy NULL]\n" +
		"  - [2] [2 bob 0.00]\n" +
		"  ~ [1] balance: 10.50 -> 7.25\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Fatalf("diff output (-want +got):\n%s", d)
	}
	code, out, _ = run(t, stamped, "state", "diff", v0, v0, "--json")
	if code != ExitOK || strings.TrimSpace(out) != `{"tables":null}` {
		t.Fatalf("empty diff --json: %q", out)
	}
}

func TestStateCommandErrors(t *testing.T) {
	dir := t.TempDir()
	noPK := writeFile(t, dir, "bad.sql", `CREATE TABLE t (a INT)`)
	bad := writeFile(t, dir, "bad.json", `{"format": "weft.state/v1", "ddl": [], "tables": [`)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"state", "load", "--ddl", noPK, "--out", filepath.Join(dir, "x.json")}, ExitError, "no primary key"},
		{[]string{"state", "load", "--ddl", noPK}, ExitUsage, "--ddl and --out are required"},
		{[]string{"state", "hash"}, ExitUsage, "needs one state file"},
		{[]string{"state", "hash", bad}, ExitError, "malformed state JSON"},
		{[]string{"state", "hash", filepath.Join(dir, "missing.json")}, ExitError, "no such file"},
		{[]string{"state", "diff", bad}, ExitUsage, "needs two state files"},
		{[]string{"state", "query", bad}, ExitUsage, "needs a state file and a SQL statement"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, stamped, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) || !strings.HasPrefix(errOut, "weft: ") {
			t.Errorf("%v: exit %d stderr %q; want exit %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

// TestStateDemo runs the demo on the repository's tau2-retail data.
func TestStateDemo(t *testing.T) {
	code, out, errOut := run(t, stamped, "state", "demo", "--data", "../../examples/data/tau2-retail/db.state.json", "-G", "4", "--json")
	if code != ExitOK {
		t.Fatalf("demo: exit %d: %s", code, errOut)
	}
	var res demoResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Branches) != 4 || !res.RoundTripOK {
		t.Fatalf("demo result %+v", res)
	}
	for i, b := range res.Branches {
		ok := i%2 == 0
		if (b.Outcome == "ok") != ok {
			t.Errorf("branch %d outcome %q", i, b.Outcome)
		}
		// Failed calls leave the original state; successful ones agree.
		if !ok && b.Hash != res.Hash || ok && b.Hash != res.Branches[0].Hash || ok && b.Hash == res.Hash {
			t.Errorf("branch %d hash %s (original %s, branch 0 %s)", i, b.Hash, res.Hash, res.Branches[0].Hash)
		}
	}
	if len(res.Diff.Tables) != 2 || res.Diff.Tables[0].Table != "orders" || len(res.Diff.Tables[0].Changed) != 1 ||
		res.Diff.Tables[1].Table != "payments" || len(res.Diff.Tables[1].Added) < 1 {
		t.Fatalf("diff %+v", res.Diff)
	}
	ch := res.Diff.Tables[0].Changed[0]
	if ch.Columns[0].Column != "status" || ch.Columns[0].Old != "pending" || ch.Columns[0].New != "cancelled" {
		t.Fatalf("order change %+v", ch)
	}
}

func TestStateDemoBadFlags(t *testing.T) {
	code, _, errOut := run(t, stamped, "state", "demo", "-G", "1")
	if code != ExitUsage || !strings.Contains(errOut, "at least 2") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	code, _, errOut = run(t, stamped, "state", "demo", "--data", "/nonexistent/db.json")
	if code != ExitError || !strings.Contains(errOut, "--data") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	// tau2's own db.json is not a state file: the domain's converter makes one.
	code, _, errOut = run(t, stamped, "state", "demo", "--data", "../../examples/data/tau2-retail/db.json")
	if code != ExitError || !strings.Contains(errOut, `tau2-retail/db.json: state: malformed state JSON: format "", want "weft.state/v1"`) {
		t.Fatalf("exit %d %q", code, errOut)
	}
}
