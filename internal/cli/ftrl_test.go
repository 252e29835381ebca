package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const ftrlCases = "../../examples/data/ftrl-reward/cases.jsonl"

func TestFTRLScoreReferenceCases(t *testing.T) {
	code, stdout, stderr := run(t, Build{}, "ftrl", "score", ftrlCases)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "tool outputs: 353 of 353 rendered from the tools byte-identical to FTRL's feedback\n300 passed, 0 failed\n"
	if stdout != want {
		t.Errorf("stdout = %q, want %q", stdout, want)
	}
	code, stdout, _ = run(t, Build{}, "ftrl", "score", "--mode", "default", ftrlCases)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != ExitError || lines[len(lines)-1] != "271 passed, 29 failed" || len(lines) != 30 {
		t.Fatalf("default: exit %d, %d lines, last %q", code, len(lines), lines[len(lines)-1])
	}
	if want := "FAIL line 6 (pub-005-nan_args): solve_f1 = -0.3, want 1.0;"; !strings.HasPrefix(lines[0], want) {
		t.Errorf("first failure %q, want prefix %q", lines[0], want)
	}
}

func TestFTRLScoreJSON(t *testing.T) {
	code, stdout, _ := run(t, Build{}, "ftrl", "score", "--json", ftrlCases)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Mode     string         `json:"mode"`
		Passed   int            `json:"passed"`
		Failed   int            `json:"failed"`
		Branches map[string]int `json:"branches"`
		Calls    int            `json:"calls"`
		Rendered int            `json:"rendered_identical"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// The README's counts per scoring branch: 142 + 40 with calls, 14 empty,
	// 40 + 6 + 5 leaks, 25 answers, 9 solved already, 19 otherwise.
	want := map[string]int{"calls": 182, "empty": 14, "leak": 51, "answer": 25, "solved": 9, "other": 19}
	if diff := cmp.Diff(want, rep.Branches); diff != "" || rep.Mode != "compatible" || rep.Passed != 300 || rep.Failed != 0 || rep.Calls != 353 || rep.Rendered != 353 {
		t.Errorf("mode %s passed %d, branches (-want +got):\n%s", rep.Mode, rep.Passed, diff)
	}
}

// TestFTRLScoreBadLines: malformed and failing lines are reported with
// their line numbers, the good lines around them are still scored, and the
// exit status is 1.
func TestFTRLScoreBadLines(t *testing.T) {
	data, err := os.ReadFile(ftrlCases)
	if err != nil {
		t.Fatal(err)
	}
	good := strings.Split(string(data), "\n")[:3]
	wrong := strings.Replace(good[2], `"solve_f1": 1.0`, `"solve_f1": 0.9`, 1)
	if wrong == good[2] {
		t.Fatal("case 3 changed format")
	}
	lines := []string{
		good[0],
		`{"id": "a", "id": "b"}`,
		good[1],
		`{"id": "x"`,
		"",
		`[1]`,
		wrong,
		strings.Replace(good[0], `"answer": "New York City", `, "", 1),
		good[2],
	}
	path := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, Build{}, "ftrl", "score", path)
	want := `FAIL line 2: duplicate key "id" at offset 12
FAIL line 4: expecting ',' delimiter at offset 10
FAIL line 6: want a JSON object, got list
FAIL line 7 (pub-002-tool_single): solve_f1 = 1.0, want 0.9
FAIL line 8: missing key "answer"
tool outputs: 5 of 5 rendered from the tools byte-identical to FTRL's feedback
3 passed, 5 failed
`
	if code != ExitError || stderr != "" {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestFTRLScoreUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"ftrl", "score"}, ExitUsage, `weft: "weft ftrl score" needs FILE, got 0 argument(s)` + "\n"},
		{[]string{"ftrl", "score", "--mode", "loose", ftrlCases}, ExitUsage, `weft: --mode: unknown FTRL mode "loose": use compatible or default` + "\n"},
		{[]string{"ftrl", "score", "/nonexistent/cases.jsonl"}, ExitError, "weft: open /nonexistent/cases.jsonl: no such file or directory\n"},
	} {
		code, _, stderr := run(t, Build{}, tt.args...)
		if code != tt.code || stderr != tt.err {
			t.Errorf("%v: exit %d stderr %q, want %d %q", tt.args, code, stderr, tt.code, tt.err)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, Build{}, "ftrl", "score", empty)
	if code != ExitError || !strings.HasSuffix(stdout, "0 passed, 0 failed\n") || stderr != "weft: "+empty+" holds no cases\n" {
		t.Errorf("empty file: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

// docs/ftrl.md gives the held-out scoring command on a line of its own,
// "SCORE: go run ./cmd/weft ARGS" with the literal FILE; those ARGS, with
// FILE the reference cases, score them all and end "N passed, N failed".
func TestFTRLDocsScoreLine(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ftrl.md")
	if err != nil {
		t.Fatal(err)
	}
	var score []string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "SCORE: ") {
			score = append(score, strings.TrimPrefix(l, "SCORE: "))
		}
	}
	if len(score) != 1 {
		t.Fatalf("%d SCORE lines in docs/ftrl.md, want 1: %q", len(score), score)
	}
	f := strings.Fields(score[0])
	if len(f) < 4 || strings.Join(f[:3], " ") != "go run ./cmd/weft" || !slices.Contains(f, "FILE") {
		t.Fatalf("SCORE line %q is not go run ./cmd/weft ... FILE", score[0])
	}
	args := slices.Clone(f[3:])
	args[slices.Index(args, "FILE")] = ftrlCases
	code, stdout, _ := run(t, Build{}, args...)
	if code != ExitOK || !strings.HasSuffix(stdout, "\n300 passed, 0 failed\n") {
		t.Errorf("%v: exit %d, stdout %q", args, code, stdout)
	}
}
