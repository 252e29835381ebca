package synth_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/sdk/spec"
)

func library(t *testing.T, edit func(*spec.Server)) *spec.Server {
	t.Helper()
	s, err := spec.Load("testdata/library")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func validate(t *testing.T, s *spec.Server, opts synth.ValidateOptions) *synth.Report {
	t.Helper()
	r, err := synth.Validate(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestValidateLibrary: the correct library server passes every stage; the
// stage call counts are exact (6 normal calls; boundary: 9 missing, 9
// wrong-typed, 5 nonexistent-id arguments; 6 diffs; readback: borrow_book
// reads back books (get_book) and loans (list_loans), return_book the
// same, update_email members (get_member, list_loans)).
func TestValidateLibrary(t *testing.T) {
	r := validate(t, library(t, nil), synth.ValidateOptions{Synthesizer: "hand"})
	want := []synth.StageReport{
		{Stage: synth.StageInterface, Status: synth.StatusPassed},
		{Stage: synth.StageNormal, Status: synth.StatusPassed, Calls: 6},
		{Stage: synth.StageBoundary, Status: synth.StatusPassed, Calls: 23},
		{Stage: synth.StageDiff, Status: synth.StatusPassed, Calls: 6},
		{Stage: synth.StageReadback, Status: synth.StatusPassed, Calls: 6},
	}
	if diff := cmp.Diff(want, r.Stages); diff != "" || !r.Passed || len(r.Findings) != 0 || r.Calls != 41 {
		t.Errorf("stages (-want +got):\n%s\nfindings: %s", diff, messages(r.Findings))
	}
	if r.Format != synth.ReportFormat || r.Server != "library" || r.Synthesizer != "hand" || r.ProgramDigest != library(t, nil).ProgramRef().Digest {
		t.Errorf("report header: %+v", r)
	}
}

// TestValidateBadInput is must-show 7 at the validation layer: each bad
// spec is a finding naming server, tool and field; budgets stop a looping
// and an allocating implementation.
func TestValidateBadInput(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*spec.Server)
		opts  synth.ValidateOptions
		want  synth.Finding // Stage, Code, Tool, Field; Message must contain wantMsg
		msg   string
		later synth.Stage // a stage that must be skipped ("" = none)
	}{
		{"invalid spec", func(s *spec.Server) { s.Tools[4].Writes = append(s.Tools[4].Writes, "fines") }, synth.ValidateOptions{},
			synth.Finding{Stage: synth.StageInterface, Code: synth.CodeSpecInvalid, Tool: "return_book", Field: "writes"},
			`server "library", tool "return_book", field writes: table "fines" is not created by the schema`, synth.StageNormal},
		{"program syntax", func(s *spec.Server) { s.Program += "\ndef broken(:\n" }, synth.ValidateOptions{},
			synth.Finding{Stage: synth.StageInterface, Code: synth.CodeProgramSyntax, Field: "program"},
			`server "library": program: program.star:`, synth.StageNormal},
		{"undeclared table", func(s *spec.Server) {
			s.Program = strings.Replace(s.Program, "FROM loans WHERE member_id", "FROM loan_history WHERE member_id", 1)
		}, synth.ValidateOptions{},
			synth.Finding{Stage: synth.StageInterface, Code: synth.CodeTableUnknown, Tool: "list_loans", Field: "program"},
			`server "library", tool "list_loans", field program: the SQL names table "loan_history", which the schema does not create`, synth.StageNormal},
		{"seed violates the schema", func(s *spec.Server) {
			s.Seed = json.RawMessage(strings.Replace(string(s.Seed), `"email": "ada@example.com"`, `"email": null`, 1))
		}, synth.ValidateOptions{},
			synth.Finding{Stage: synth.StageInterface, Code: synth.CodeSeedInvalid, Field: "seed"},
			`server "library", field seed:`, synth.StageNormal},
		{"seed names an unknown table", func(s *spec.Server) { s.Seed = json.RawMessage(`{"fines": [{"id": 1}]}`) }, synth.ValidateOptions{},
			synth.Finding{Stage: synth.StageInterface, Code: synth.CodeSeedInvalid, Field: "seed"}, `fines`, synth.StageNormal},
		{"loop", func(s *spec.Server) {
			s.Program = strings.Replace(s.Program, "def get_member(member_id):\n", "def get_member(member_id):\n    while True:\n        pass\n", 1)
		}, synth.ValidateOptions{},
			synth.Finding{Stage: synth.StageNormal, Code: synth.CodeBudget, Tool: "get_member"},
			`server "library", tool "get_member": the call ran out of its budget`, ""},
		{"allocation", func(s *spec.Server) {
			s.Program = strings.Replace(s.Program, "def get_member(member_id):\n", "def get_member(member_id):\n    s = \"x\"\n    for i in range(64):\n        s = s + s\n", 1)
		}, synth.ValidateOptions{MemoryBudget: 16 << 20},
			synth.Finding{Stage: synth.StageNormal, Code: synth.CodeBudget, Tool: "get_member", Field: "memory"},
			`memory: the call allocated more than its 16777216-byte budget`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validate(t, library(t, tt.edit), tt.opts)
			if r.Passed || len(r.Findings) == 0 {
				t.Fatalf("passed: %+v", r)
			}
			f := r.Findings[0]
			got := synth.Finding{Stage: f.Stage, Code: f.Code, Tool: f.Tool, Field: f.Field}
			if tt.want.Field == "" && tt.want.Code == synth.CodeBudget {
				got.Field = "" // steps or time, whichever budget the machine hits first
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("first finding (-want +got):\n%s\nall:\n%s", diff, messages(r.Findings))
			}
			if !strings.Contains(f.Message, tt.msg) {
				t.Errorf("message %q lacks %q", f.Message, tt.msg)
			}
			if f.Code == synth.CodeBudget && !strings.Contains(f.Message, "not registered") {
				t.Errorf("budget finding does not say the server is refused: %s", f.Message)
			}
			for _, st := range r.Stages {
				if st.Stage == tt.later && st.Status != synth.StatusSkipped {
					t.Errorf("stage %s ran after a failed interface: %+v", st.Stage, st)
				}
			}
		})
	}
}

// TestValidateBudgetIsPerTool: a looping tool is called once, not once
// per boundary or readback call.
func TestValidateBudgetIsPerTool(t *testing.T) {
	r := validate(t, library(t, func(s *spec.Server) {
		s.Program = strings.Replace(s.Program, "    _member(member_id)\n    rows = query(", "    _member(member_id)\n    while True:\n        pass\n    rows = query(", 1)
	}), synth.ValidateOptions{})
	if diff := cmp.Diff([]synth.Code{synth.CodeBudget}, r.Codes()); diff != "" || r.Histogram()[synth.CodeBudget] != 1 {
		t.Errorf("codes (-want +got):\n%s\n%s", diff, messages(r.Findings))
	}
}

// TestReportRoundTrip: WriteDir writes a directory spec.Load reads back to
// the same server, and the report ReadReport reads back.
func TestReportRoundTrip(t *testing.T) {
	s := library(t, nil)
	r := validate(t, s, synth.ValidateOptions{})
	dir := t.TempDir()
	if err := synth.WriteDir(dir, s, r); err != nil {
		t.Fatal(err)
	}
	back, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	asJSON := cmp.Transformer("json", func(r json.RawMessage) any {
		var v any
		_ = json.Unmarshal(r, &v)
		return v
	})
	if diff := cmp.Diff(s, back, asJSON); diff != "" {
		t.Errorf("spec round trip (-want +got):\n%s", diff)
	}
	rb, err := synth.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, rb); diff != "" {
		t.Errorf("report round trip (-want +got):\n%s", diff)
	}
}
