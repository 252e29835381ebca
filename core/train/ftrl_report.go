package train

import (
	"context"
	"fmt"
	"io"
)

// FTRLCaseFailure is one case that did not reproduce FTRL, or one line
// that is not a case.
type FTRLCaseFailure struct {
	Line  int      `json:"line"`
	ID    string   `json:"id,omitempty"`
	Error string   `json:"error,omitempty"` // the line is malformed or could not be scored
	Diffs []string `json:"diffs,omitempty"` // the values that differ from FTRL's
}

// String is "line N (ID): diff; diff" or "line N: error".
func (f FTRLCaseFailure) String() string {
	s := fmt.Sprintf("line %d", f.Line)
	if f.ID != "" {
		s += " (" + f.ID + ")"
	}
	if f.Error != "" {
		return s + ": " + f.Error
	}
	for i, d := range f.Diffs {
		if i == 0 {
			s += ": " + d
		} else {
			s += "; " + d
		}
	}
	return s
}

// FTRLReport summarises scoring a case file.
type FTRLReport struct {
	Mode     string            `json:"mode"`
	Passed   int               `json:"passed"`
	Failed   int               `json:"failed"`
	Failures []FTRLCaseFailure `json:"failures"`
	// Branches counts the passed and failed scored cases by the branch
	// weft's scoring ended in.
	Branches map[FTRLBranch]int `json:"branches"`
	// Calls is the number of parsed calls with recorded feedback
	// (FTRLCompatible only) and Rendered how many of them weft renders
	// from the case's tools exactly as FTRL's get_feedback did;
	// RenderDiffs lists the others. They do not decide pass or fail unless
	// strictFeedback was set.
	Calls       int      `json:"calls"`
	Rendered    int      `json:"rendered_identical"`
	RenderDiffs []string `json:"render_diffs,omitempty"`
}

// Summary is the report's last line: "N passed, N failed".
func (r *FTRLReport) Summary() string {
	return fmt.Sprintf("%d passed, %d failed", r.Passed, r.Failed)
}

// ScoreFTRLCases scores every case of a case file (ReadFTRLCases) with
// CheckFTRLCase in mode m. A malformed line or a case that cannot be
// scored is a failure with its line number; reading goes on. With
// strictFeedback a case whose recorded feedback weft renders differently is
// a failure too. The error is only for a failing reader.
func ScoreFTRLCases(ctx context.Context, r io.Reader, m FTRLMode, strictFeedback bool) (*FTRLReport, error) {
	rep := &FTRLReport{Mode: m.String(), Failures: []FTRLCaseFailure{}, Branches: map[FTRLBranch]int{}}
	err := ReadFTRLCases(r, func(line int, c *FTRLCase, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err != nil {
			rep.Failed++
			rep.Failures = append(rep.Failures, FTRLCaseFailure{Line: line, Error: err.Error()})
			return nil
		}
		ck, err := CheckFTRLCase(ctx, c, m)
		if err != nil {
			rep.Failed++
			rep.Failures = append(rep.Failures, FTRLCaseFailure{Line: line, ID: c.ID, Error: err.Error()})
			return nil
		}
		rep.Branches[ck.Result.Branch]++
		rep.Calls += len(ck.Rendered)
		rep.Rendered += len(ck.Rendered) - len(ck.RenderDiffs)
		for _, d := range ck.RenderDiffs {
			rep.RenderDiffs = append(rep.RenderDiffs, fmt.Sprintf("line %d (%s): %s", line, c.ID, d))
		}
		diffs := ck.Diffs
		if strictFeedback {
			diffs = append(diffs, ck.RenderDiffs...)
		}
		if len(diffs) == 0 {
			rep.Passed++
			return nil
		}
		rep.Failed++
		rep.Failures = append(rep.Failures, FTRLCaseFailure{Line: line, ID: c.ID, Diffs: diffs})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}
