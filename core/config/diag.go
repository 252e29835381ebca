package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// FormatDiagnostic renders d on one line as
// "file:line:col: error: summary; detail" (or "warning:"). Without a
// Subject the position is left out: "error: summary; detail". Lines and
// columns are 1-based; columns count characters, not bytes.
func FormatDiagnostic(d *hcl.Diagnostic) string {
	var b strings.Builder
	if d.Subject != nil {
		fmt.Fprintf(&b, "%s:%d:%d: ", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
	}
	if d.Severity == hcl.DiagWarning {
		b.WriteString("warning: ")
	} else {
		b.WriteString("error: ")
	}
	b.WriteString(d.Summary)
	if d.Detail != "" {
		b.WriteString("; ")
		b.WriteString(strings.Join(strings.Fields(d.Detail), " "))
	}
	return b.String()
}

// Diagnostic is the JSON form of an hcl.Diagnostic (`weft validate
// --json`). Filename, Line, Column, EndLine and EndColumn are zero when the
// diagnostic has no source range; Line and Column are 1-based, EndColumn
// is exclusive.
type Diagnostic struct {
	Severity  string `json:"severity"` // "error" or "warning"
	Summary   string `json:"summary"`
	Detail    string `json:"detail,omitempty"`
	Filename  string `json:"filename,omitempty"`
	Line      int    `json:"line,omitempty"`
	Column    int    `json:"column,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	EndColumn int    `json:"end_column,omitempty"`
}

// Diagnostics converts diags to their JSON form, in order.
func Diagnostics(diags hcl.Diagnostics) []Diagnostic {
	out := make([]Diagnostic, 0, len(diags))
	for _, d := range diags {
		j := Diagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			j.Severity = "warning"
		}
		if d.Subject != nil {
			j.Filename = d.Subject.Filename
			j.Line, j.Column = d.Subject.Start.Line, d.Subject.Start.Column
			j.EndLine, j.EndColumn = d.Subject.End.Line, d.Subject.End.Column
		}
		out = append(out, j)
	}
	return out
}
