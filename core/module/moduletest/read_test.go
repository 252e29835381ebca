package moduletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadRefusesCasesThatCheckNothing: a misspelt key, a case with neither
// calls nor final_changes, and an empty file are refused with the case and
// the key named (issue 15 item 18: "call" for "calls" passed as 1 passed).
func TestReadRefusesCasesThatCheckNothing(t *testing.T) {
	const known = `; known keys: id, calls, final_changes; accepted extra keys: involved_classes, initial_config, config_id, question, excluded_function, final_state (docs/module-test.md)`
	for _, tc := range []struct{ name, in, want string }{
		{"call for calls", `{"cases": [{"id": "t1", "call": [{"name": "x"}]}]}`,
			`moduletest: case 0 ("t1"): unknown key "call" (did you mean "calls"?)` + known},
		{"final_change", `{"cases": [{"id": "t1", "calls": [], "final_change": {}}]}`,
			`moduletest: case 0 ("t1"): unknown key "final_change" (did you mean "final_changes"?)` + known},
		{"far key, no suggestion", `{"cases": [{"id": "t1", "calls": [], "zzzzzz": 1}]}`,
			`moduletest: case 0 ("t1"): unknown key "zzzzzz"` + known},
		{"neither", `{"cases": [{"id": "a", "calls": []}, {"id": "t2"}]}`,
			`moduletest: case 1 ("t2") checks nothing: it has neither "calls" nor "final_changes" (give "calls": [] and "final_changes": {} to check that nothing changes)`},
		{"call key", `{"cases": [{"id": "t1", "calls": [{"name": "x", "argument": {}}]}]}`,
			`moduletest: case 0 ("t1") call 0: unknown key "argument" (did you mean "arguments"?); known keys: name, arguments, error, output; accepted extra keys: raised, bfcl_text, turn, bfcl_call (docs/module-test.md)`},
		{"null calls", `{"cases": [{"id": "t1", "calls": null}]}`,
			`moduletest: case 0 ("t1") checks nothing: it has neither "calls" nor "final_changes" (give "calls": [] and "final_changes": {} to check that nothing changes)`},
		{"call without name", `{"cases": [{"id": "t1", "calls": [{"arguments": {}}]}]}`,
			`moduletest: case 0 ("t1") call 0 has no name`},
		{"file key", `{"source": "s", "case": [{"id": "t1", "calls": []}]}`,
			`moduletest: cases: the file has no cases (expected {"cases": [...]}); the file: unknown key "case" (did you mean "cases"?); known keys: source, cases; accepted extra keys: none (docs/module-test.md)`},
		{"duplicate id", `{"cases": [{"id": "a", "calls": []}, {"id": "a", "final_changes": {}}]}`,
			`moduletest: case 1: id "a" is also case 0's`},
		{"several unknown", `{"cases": [{"id": "t1", "calls": [], "Calls": [], "ids": 1}]}`,
			`moduletest: case 0 ("t1"): unknown key "Calls" (did you mean "calls"?)` + known + ` (2 unknown keys: Calls, ids)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("accepted: %+v", f)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadAcceptsRealChecksAndOracleExtras: zero calls with final_changes
// {} is a check (nothing may change); the keys BFCL's oracle files carry are
// accepted and ignored.
func TestReadAcceptsRealChecksAndOracleExtras(t *testing.T) {
	f, err := Read(strings.NewReader(`{"cases": [
		{"id": "nothing-changes", "calls": [], "final_changes": {}},
		{"id": "only-final", "final_changes": {"users": {}}},
		{"id": "multi_turn_base_0", "involved_classes": ["GorillaFileSystem"], "initial_config": {"GorillaFileSystem": {}},
		 "config_id": "multi_turn_base_0", "question": [["ls"]], "excluded_function": [],
		 "calls": [{"name": "ls", "arguments": {}, "error": false, "output": {"current_directory_content": []},
		            "raised": false, "bfcl_text": "x", "turn": 0, "bfcl_call": "ls()"}],
		 "final_changes": {}, "final_state": {"GorillaFileSystem": {}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, c := range f.Cases {
		got = append(got, c.ID+":"+string(rune('0'+len(c.Calls))))
	}
	if diff := cmp.Diff([]string{"nothing-changes:0", "only-final:0", "multi_turn_base_0:1"}, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if f.Cases[0].FinalChanges == nil || len(f.Cases[0].FinalChanges) != 0 {
		t.Errorf("final_changes {} must decode as an empty, non-nil map: %#v", f.Cases[0].FinalChanges)
	}
}

// TestReadShippedOracleFiles: every cases file in the repository and, when
// present (a checkout beside /work/shared), the shared data sets oracle files pass Read.
func TestReadShippedOracleFiles(t *testing.T) {
	paths, _ := filepath.Glob("../../../examples/data/*/oracle/*.json")
	shared, _ := filepath.Glob("../../../../../shared/data/*/oracle/*.json")
	paths = append(paths, shared...)
	if len(paths) == 0 {
		t.Fatal("no oracle files found")
	}
	for _, p := range paths {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Read(fh)
		fh.Close()
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var n struct{ Cases []json.RawMessage }
		b, _ := os.ReadFile(p)
		_ = json.Unmarshal(b, &n)
		if len(f.Cases) != len(n.Cases) {
			t.Errorf("%s: %d cases read, file has %d", p, len(f.Cases), len(n.Cases))
		}
	}
	t.Logf("%d oracle files", len(paths))
}

// TestReadRefusesDuplicateKeys: a key given twice in one object is refused
// wherever it is (the file, a case, a call, below a call), naming the case
// and call and the line and column of the second occurrence; before, the
// decoder kept the last "calls" ([]) and the case passed checking nothing.
func TestReadRefusesDuplicateKeys(t *testing.T) {
	const tail = ` (a key may appear once in an object; JSON decoders keep only the last value)`
	for _, tc := range []struct{ name, in, want string }{
		{"case calls twice", `{"cases":[{"id":"t1","calls":[{"name":"x"}],"calls":[]}]}`,
			`moduletest: case 0 ("t1"): duplicate key "calls" at line 1, column 45` + tail},
		{"top cases twice", "{\"cases\": [{\"id\": \"a\", \"calls\": []}],\n \"cases\": []}",
			`moduletest: the file: duplicate key "cases" at line 2, column 2` + tail},
		{"call name twice", "{\"cases\": [\n{\"id\": \"a\", \"calls\": []},\n{\"id\": \"b\", \"calls\": [{\"name\": \"x\"}, {\"name\": \"y\", \"name\": \"z\"}]}]}",
			`moduletest: case 1 ("b") call 1: duplicate key "name" at line 3, column 52` + tail},
		{"id after the duplicate", `{"cases":[{"final_changes":{},"final_changes":{},"id":"late"}]}`,
			`moduletest: case 0 ("late"): duplicate key "final_changes" at line 1, column 31` + tail},
		{"inside arguments", `{"cases":[{"id":"t1","calls":[{"name":"x","arguments":{"n":1,"n":2}}]}]}`,
			`moduletest: case 0 ("t1") call 0 "arguments": duplicate key "n" at line 1, column 62` + tail},
		{"inside final_changes", `{"cases":[{"id":"t1","final_changes":{"users":{"u1":{},"u1":null}}}]}`,
			`moduletest: case 0 ("t1") "final_changes" "users": duplicate key "u1" at line 1, column 56` + tail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("accepted: %+v", f)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	// The same keys in different objects are not duplicates.
	if _, err := Read(strings.NewReader(`{"cases":[{"id":"a","calls":[{"name":"x","arguments":{"name":1}},{"name":"x"}]},{"id":"b","calls":[]}]}`)); err != nil {
		t.Errorf("distinct objects refused: %v", err)
	}
}
