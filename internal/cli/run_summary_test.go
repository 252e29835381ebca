package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/report"
)

// The summary names report.html only when this run wrote it, and a run
// without rollout episodes prints no empty table or attribution line
// (trial F10: stages = ["import"] ended with "(report: .../report.html)"
// for a file that was never written, after an empty table).
func TestPrintSummaryReportOnlyWhenWritten(t *testing.T) {
	var b bytes.Buffer
	if err := printSummary(&b, runResult{Dir: "runs/x", Metrics: &report.Metrics{}}); err != nil {
		t.Fatal(err)
	}
	want := "no rollout episodes in the run folder\n\nrun folder: runs/x (no report: the pipeline has no report stage)\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("summary without rollout or report (-want +got):\n%s", diff)
	}

	b.Reset()
	m := &report.Metrics{Episodes: 2, Passed: 1, ToolCalls: 4, ToolErrors: 1, Attributions: map[attribute.Class]int{attribute.ClassPolicy: 1}}
	if err := printSummary(&b, runResult{Dir: "runs/x", Metrics: m, Report: "runs/x/report.html"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"attributions: policy 1\n", "tool error rate", "\nrun folder: runs/x (report: runs/x/report.html)\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
	b.Reset()
	m.Attributions = nil
	if err := printSummary(&b, runResult{Dir: "runs/x", Metrics: m}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "attributions: none\n") || strings.Contains(out, "report.html") {
		t.Errorf("summary with episodes, no attributions, no report:\n%s", out)
	}
}
