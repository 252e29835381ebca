package synth

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/weft-dev/weft/sdk/spec"
)

// ReportFormat is the "format" value of a validation report.
const ReportFormat = "weft.synth-report/v1"

// ReportFile is the report's file name in a spec directory, next to
// server.json (docs/synthesis.md, "Validation report").
const ReportFile = "validation.json"

// Report is the validation report of one server (JSON shape of
// validation.json): which stages ran and passed, every Finding in stage
// order, and, after revision, each round's outcome. Passed is true iff
// there are no findings.
type Report struct {
	Format        string        `json:"format"`
	Server        string        `json:"server"`
	Version       string        `json:"version,omitempty"`
	ProgramDigest string        `json:"program_digest,omitempty"`
	Synthesizer   string        `json:"synthesizer,omitempty"`
	Passed        bool          `json:"passed"`
	Stages        []StageReport `json:"stages"`
	Findings      []Finding     `json:"findings"`
	// Calls is the number of tool calls validation made.
	Calls int `json:"calls"`
	// Rounds is set by Revise: one entry per synthesis round, in order.
	Rounds []Round `json:"rounds,omitempty"`
}

// StageReport is one stage's outcome: Status "passed", "failed" or
// "skipped" (an earlier stage failed so that this one cannot run: after a
// failed interface stage nothing runs), its tool calls and findings.
type StageReport struct {
	Stage    Stage  `json:"stage"`
	Status   string `json:"status"`
	Calls    int    `json:"calls"`
	Findings int    `json:"findings"`
}

// Stage statuses.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Round is one round of Revise: the round number (0 = first answer), the
// synthesizer's error when it gave no usable server (Findings then hold
// the interface finding fed back), the findings validation made, and
// whether the round improved on the best before it.
type Round struct {
	Round    int       `json:"round"`
	Error    string    `json:"error,omitempty"`
	Passed   bool      `json:"passed"`
	Improved bool      `json:"improved"`
	Findings []Finding `json:"findings"`
	// FirstFailed is the first stage with a finding ("" when passed).
	FirstFailed Stage `json:"first_failed,omitempty"`
}

// Histogram counts the report's findings per Code (codes without
// findings are absent).
func (r *Report) Histogram() map[Code]int {
	h := map[Code]int{}
	for _, f := range r.Findings {
		h[f.Code]++
	}
	return h
}

// Codes returns the distinct codes of the findings, in Codes order.
func (r *Report) Codes() []Code {
	h := r.Histogram()
	var out []Code
	for _, c := range Codes {
		if h[c] > 0 {
			out = append(out, c)
		}
	}
	return out
}

// HasCode reports whether a finding has code c.
func (r *Report) HasCode(c Code) bool { return r.Histogram()[c] > 0 }

// FirstFailed is the first stage with a finding, or "" when the report
// passed.
func (r *Report) FirstFailed() Stage {
	for _, s := range Stages {
		for _, f := range r.Findings {
			if f.Stage == s {
				return s
			}
		}
	}
	return ""
}

// ReadReport reads a validation report (the ReportFile of a spec
// directory, or a report file).
func ReadReport(path string) (*Report, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, ReportFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("synth: report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("synth: report %s: %w", path, err)
	}
	if r.Format != ReportFormat {
		return nil, fmt.Errorf("synth: report %s: format %q, want %q", path, r.Format, ReportFormat)
	}
	return &r, nil
}

// WriteDir writes s as a spec directory that spec.Load reads back to the
// same server: server.json with program_file program.star, schema_file
// schema.sql and seed_file seed.json (when s has a seed), and, when r is
// not nil, the validation report as ReportFile. dir is created if needed;
// files of the same names are replaced.
func WriteDir(dir string, s *spec.Server, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	c := *s
	c.Tools = slices.Clone(s.Tools)
	files := map[string][]byte{}
	if c.Program != "" {
		files["program.star"], c.ProgramFile, c.Program = []byte(c.Program), "program.star", ""
	}
	if c.Schema != "" {
		files["schema.sql"], c.SchemaFile, c.Schema = []byte(c.Schema), "schema.sql", ""
	}
	if len(c.Seed) > 0 {
		files["seed.json"], c.SeedFile, c.Seed = append([]byte(nil), c.Seed...), "seed.json", nil
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	files["server.json"] = append(b, '\n')
	if r != nil {
		rb, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		files[ReportFile] = append(rb, '\n')
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("synth: %w", err)
		}
	}
	return nil
}
