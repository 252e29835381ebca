package verify_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

func TestFileChecks(t *testing.T) {
	f := newFixture(t)
	final, err := f.apply(t, f.initial).WithFiles([]state.File{
		{Path: "docs/report.txt", Data: []byte("total: 42\n")},
		{Path: "tmp", Dir: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	vs := map[string]*state.Version{verify.Initial: f.initial, verify.Final: final}
	ev := verify.NewStateEvidence(vs)
	for _, tc := range []struct {
		name     string
		check    task.Check
		passed   bool
		evidence string
		missing  []string
	}{
		{"equal", task.Check{Kind: task.CheckFileEqual, Path: "docs/report.txt", Text: "total: 42\n"}, true,
			"docs/report.txt of final is exactly the expected 10 bytes", nil},
		{"not equal", task.Check{Kind: task.CheckFileEqual, Path: "docs/report.txt", Text: "total: 41\n"}, false,
			`docs/report.txt of final is "total: 42\n", not "total: 41\n"`, []string{`file docs/report.txt = "total: 41\n"`}},
		{"equal of missing file", task.Check{Kind: task.CheckFileEqual, Path: "nope.txt", Text: ""}, false,
			"final has no file nope.txt", []string{`file nope.txt = ""`}},
		{"equal of a directory", task.Check{Kind: task.CheckFileEqual, Path: "tmp", Text: ""}, false,
			"final has no file tmp", []string{`file tmp = ""`}},
		{"contains", task.Check{Kind: task.CheckFileContains, Path: "docs/report.txt", Text: "42"}, true,
			`docs/report.txt of final contains "42"`, nil},
		{"does not contain", task.Check{Kind: task.CheckFileContains, Path: "docs/report.txt", Text: "43"}, false,
			`docs/report.txt of final ("total: 42\n") does not contain "43"`, []string{`file docs/report.txt contains "43"`}},
		{"absent", task.Check{Kind: task.CheckFileAbsent, Path: "old.txt"}, true, "final has no entry old.txt", nil},
		{"present file", task.Check{Kind: task.CheckFileAbsent, Path: "docs/report.txt"}, false,
			"final still has docs/report.txt", []string{"absent docs/report.txt"}},
		{"present dir", task.Check{Kind: task.CheckFileAbsent, Path: "tmp"}, false, "final still has tmp", []string{"absent tmp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := overall(t, ev, verify.Input{}, tc.check)
			if r.Passed != tc.passed || r.Evidence != tc.evidence || r.Kind != tc.check.Kind {
				t.Errorf("got %v %q (%s), want %v %q", r.Passed, r.Evidence, r.Kind, tc.passed, tc.evidence)
			}
			if d := cmp.Diff(tc.missing, r.Missing); d != "" {
				t.Errorf("Missing (-want +got):\n%s", d)
			}
		})
	}
}

// Evidence without file access: the file checks are an evidence error, not
// a failed checkpoint.
func TestFileChecksNeedFileEvidence(t *testing.T) {
	f := newFixture(t)
	ev := noFiles{verify.NewStateEvidence(map[string]*state.Version{verify.Initial: f.initial, verify.Final: f.initial})}
	in := verify.Input{Task: &task.Task{ID: "t", Checks: []task.Check{{Kind: task.CheckFileAbsent, Path: "a"}}}}
	if _, err := verify.Verify(context.Background(), in, ev); !errors.Is(err, verify.ErrEvidence) {
		t.Errorf("err = %v, want ErrEvidence", err)
	}
}

type noFiles struct{ verify.Evidence }

func TestFileCheckValidation(t *testing.T) {
	for _, tc := range []struct {
		check task.Check
		want  string
	}{
		{task.Check{Kind: task.CheckFileEqual, Path: "../x"}, `checks[0].path`},
		{task.Check{Kind: task.CheckFileAbsent, Path: "/etc/passwd"}, `checks[0].path`},
		{task.Check{Kind: task.CheckFileAbsent, Path: "."}, `checks[0].path`},
		{task.Check{Kind: task.CheckFileContains, Path: "a.txt"}, `checks[0].text`},
	} {
		tk := task.Task{ID: "t", Brief: "r", Checks: []task.Check{tc.check}}
		err := tk.Validate()
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want mention of %s", tc.check, err, tc.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
