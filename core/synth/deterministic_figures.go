package synth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// ClassifyReport is read/write classification accuracy against labelled
// tools (Toucan readonly_eval.jsonl): the confusion table with read-only
// as the positive class, per server, and every miss.
type ClassifyReport struct {
	Hidden    bool                       `json:"annotation_hidden"`
	Tools     int                        `json:"tools"`
	Correct   int                        `json:"correct"`
	Confusion Confusion                  `json:"confusion"`
	ByServer  map[string]*ClassifyServer `json:"by_server"`
	Misses    []ClassifyMiss             `json:"misses"`
}

// Confusion counts predictions against labels (read-only positive):
// ReadRead = labelled read-only, predicted read-only; ReadWrite =
// labelled read-only, predicted write; and so on.
type Confusion struct {
	ReadRead   int `json:"read_as_read"`
	ReadWrite  int `json:"read_as_write"`
	WriteRead  int `json:"write_as_read"`
	WriteWrite int `json:"write_as_write"`
}

// ClassifyServer is one server's share.
type ClassifyServer struct {
	Name    string `json:"name"`
	Tools   int    `json:"tools"`
	Correct int    `json:"correct"`
}

// ClassifyMiss is one misclassified tool with the classifier's reason.
type ClassifyMiss struct {
	Server   string `json:"server"`
	Tool     string `json:"tool"`
	Label    bool   `json:"read_only"`
	Verb     string `json:"verb"`
	Reason   string `json:"reason"`
	Sentence string `json:"description"`
}

// Accuracy is Correct / Tools.
func (r *ClassifyReport) Accuracy() float64 {
	if r.Tools == 0 {
		return 0
	}
	return float64(r.Correct) / float64(r.Tools)
}

// EvalClassify classifies every tool of a readonly_eval.jsonl stream
// ({"server", "name", "description", "inputSchema", "readOnlyHint", ...}
// per line) with the annotation hidden or shown, against readOnlyHint.
func EvalClassify(r io.Reader, hide bool) (*ClassifyReport, error) {
	rep := &ClassifyReport{Hidden: hide, ByServer: map[string]*ClassifyServer{}, Misses: []ClassifyMiss{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), MaxDocsBytes)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec struct {
			ServerID     string          `json:"server_id"`
			Server       string          `json:"server"`
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			ReadOnlyHint *bool           `json:"readOnlyHint"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, &DocsError{Line: line, Msg: "not a labelled tool: " + err.Error()}
		}
		if rec.ReadOnlyHint == nil {
			return nil, &DocsError{Line: line, Server: rec.Server, Tool: rec.Name, Field: "readOnlyHint", Msg: "missing (the label)"}
		}
		schema, serr := normalizeSchema(rec.InputSchema, false)
		if serr != nil {
			return nil, &DocsError{Line: line, Server: rec.Server, Tool: rec.Name, Field: "inputSchema" + serr.field, Msg: serr.msg}
		}
		t := DocTool{Name: rec.Name, Description: rec.Description, InputSchema: schema, ReadOnlyHint: rec.ReadOnlyHint}
		_, c := Classify(t, ClassifyOptions{HideAnnotations: hide})
		label := *rec.ReadOnlyHint
		rep.Tools++
		sk := rec.Server
		if rec.ServerID != "" {
			sk = rec.ServerID // two servers may share a display name
		}
		s := rep.ByServer[sk]
		if s == nil {
			s = &ClassifyServer{Name: rec.Server}
			rep.ByServer[sk] = s
		}
		s.Tools++
		switch {
		case label && c.ReadOnly:
			rep.Confusion.ReadRead++
		case label && !c.ReadOnly:
			rep.Confusion.ReadWrite++
		case !label && c.ReadOnly:
			rep.Confusion.WriteRead++
		default:
			rep.Confusion.WriteWrite++
		}
		if label == c.ReadOnly {
			rep.Correct++
			s.Correct++
		} else {
			rep.Misses = append(rep.Misses, ClassifyMiss{Server: rec.Server, Tool: rec.Name, Label: label, Verb: c.Verb, Reason: c.Reason, Sentence: firstSentence(rec.Description)})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rep, nil
}

// ScaleReport is every server of a docs set synthesized deterministically:
// how many synthesize, pass spec.Validate, whose program compiles, whose
// seed loads and that NewNativeServer accepts; CPU (wall time on one
// goroutine) per server; and why the others failed.
type ScaleReport struct {
	Servers     int            `json:"servers"`
	LoadErrors  int            `json:"load_errors"` // documentation records that did not parse
	Synthesized int            `json:"synthesized"`
	Valid       int            `json:"spec_valid"`
	Compiled    int            `json:"compiled"`
	Seeded      int            `json:"seeded"`
	Served      int            `json:"served"` // module.NewNativeServer accepted it
	Tools       int            `json:"tools"`
	ReadTools   int            `json:"read_tools"`
	WriteTools  int            `json:"write_tools"`
	Renamed     int            `json:"renamed_tools"` // tools whose documented name is not a Starlark identifier
	Failures    map[string]int `json:"failures"`      // stage: count
	Examples    []string       `json:"examples"`      // the first failure message of each stage
	PerServer   time.Duration  `json:"per_server_ns"` // mean time to synthesize, validate, compile and seed one server
	Total       time.Duration  `json:"total_ns"`

	// Validation (Validate, the five stages), when SynthesizeAll ran it
	// on the served servers: servers passing each stage, passing all,
	// the findings by code, and the mean validation time per server.
	Validated         int           `json:"validated"`
	StagePassed       map[Stage]int `json:"stage_passed,omitempty"`
	PassedAll         int           `json:"passed_all"`
	Codes             map[Code]int  `json:"codes,omitempty"`
	ServersByCode     map[Code]int  `json:"servers_by_code,omitempty"`
	ValidatePerServer time.Duration `json:"validate_per_server_ns"`
}

// SynthesizeAll runs d over every docs and checks each server up to the
// point of serving it (synthesis, spec.Validate, interp.Check, seed load
// into a fresh store, module.NewNativeServer). loadErrors is the count of
// records the loader refused (reported, not retried).
//
// With validate, every served server then goes through Validate (all five
// stages) and the report counts servers per stage passed and findings per
// code; the synthesis time excludes validation.
func SynthesizeAll(ctx context.Context, d *Deterministic, docs []Docs, loadErrors int, validate bool) *ScaleReport {
	rep := &ScaleReport{Servers: len(docs) + loadErrors, LoadErrors: loadErrors, Failures: map[string]int{}, Examples: []string{}}
	var served []*spec.Server
	seen := map[string]bool{}
	fail := func(stage string, err error) {
		rep.Failures[stage]++
		if !seen[stage] {
			seen[stage] = true
			msg := err.Error()
			if len(msg) > 300 {
				msg = msg[:300] + "..."
			}
			rep.Examples = append(rep.Examples, stage+": "+msg)
		}
	}
	start := time.Now()
	for i := range docs {
		srv, err := d.Synthesize(ctx, &Request{Docs: docs[i]})
		if err != nil {
			fail("synthesize", err)
			continue
		}
		rep.Synthesized++
		for _, t := range srv.Tools {
			rep.Tools++
			if t.ReadOnly {
				rep.ReadTools++
			} else {
				rep.WriteTools++
			}
		}
		for _, t := range docs[i].Tools {
			if toolIdent(t.Name) != t.Name {
				rep.Renamed++
			}
		}
		if err := CheckServed(ctx, srv, rep, fail); err != nil {
			continue
		}
		if validate {
			served = append(served, srv)
		}
	}
	rep.Total = time.Since(start)
	if len(docs) > 0 {
		rep.PerServer = rep.Total / time.Duration(len(docs))
	}
	if validate {
		rep.validate(ctx, served)
	}
	return rep
}

func (rep *ScaleReport) validate(ctx context.Context, servers []*spec.Server) {
	rep.StagePassed, rep.Codes, rep.ServersByCode = map[Stage]int{}, map[Code]int{}, map[Code]int{}
	start := time.Now()
	for _, srv := range servers {
		vr, err := Validate(ctx, srv, ValidateOptions{Synthesizer: "deterministic"})
		if err != nil {
			return
		}
		rep.Validated++
		if vr.Passed {
			rep.PassedAll++
		}
		for _, st := range vr.Stages {
			if st.Status == StatusPassed {
				rep.StagePassed[st.Stage]++
			}
		}
		seen := map[Code]bool{}
		for _, f := range vr.Findings {
			rep.Codes[f.Code]++
			if !seen[f.Code] {
				seen[f.Code] = true
				rep.ServersByCode[f.Code]++
			}
		}
	}
	if rep.Validated > 0 {
		rep.ValidatePerServer = time.Since(start) / time.Duration(rep.Validated)
	}
}

// CheckServed takes one server through spec.Validate, interp.Check, the
// seed load and module.NewNativeServer, counting each stage passed into
// rep and reporting the first failure to fail.
func CheckServed(ctx context.Context, srv *spec.Server, rep *ScaleReport, fail func(string, error)) error {
	if err := srv.Validate(); err != nil {
		fail("spec_invalid", err)
		return err
	}
	rep.Valid++
	if err := interp.Check(srv.Program); err != nil {
		fail("program_syntax", err)
		return err
	}
	rep.Compiled++
	st := state.NewStore()
	defer st.Close()
	b := &module.Bundle{Schema: srv.Schema, Seed: srv.Seed}
	if _, err := b.SeedVersion(ctx, st); err != nil {
		fail("seed_invalid", err)
		return err
	}
	rep.Seeded++
	if _, err := module.NewNativeServer(srv, module.Config{}); err != nil {
		fail("serve", err)
		return err
	}
	rep.Served++
	return nil
}

// LoadToucanFile reads servers.jsonl; the count of refused lines comes
// back with the servers that parsed (the refusals are in err).
func LoadToucanFile(r io.Reader, source string) ([]Docs, int, error) {
	docs, err := ParseToucan(r, source)
	n := 0
	if err != nil {
		var j interface{ Unwrap() []error }
		if errors.As(err, &j) {
			n = len(j.Unwrap())
		} else {
			n = 1
		}
	}
	return docs, n, err
}

// String prints the report as the table of docs/synthesis-figures.md.
func (r *ScaleReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "servers %d (load errors %d), synthesized %d, spec.Validate %d, program compiles %d, seed loads %d, NewNativeServer %d\n",
		r.Servers, r.LoadErrors, r.Synthesized, r.Valid, r.Compiled, r.Seeded, r.Served)
	fmt.Fprintf(&b, "tools %d (read %d, write %d; %d renamed to Starlark identifiers)\n", r.Tools, r.ReadTools, r.WriteTools, r.Renamed)
	stages := make([]string, 0, len(r.Failures))
	for s := range r.Failures {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	for _, s := range stages {
		fmt.Fprintf(&b, "failed at %s: %d\n", s, r.Failures[s])
	}
	for _, e := range r.Examples {
		fmt.Fprintf(&b, "  e.g. %s\n", e)
	}
	fmt.Fprintf(&b, "time per server %v (total %v)\n", r.PerServer.Round(time.Microsecond), r.Total.Round(time.Millisecond))
	if r.Validated > 0 {
		fmt.Fprintf(&b, "validated %d: passed all stages %d; per stage:", r.Validated, r.PassedAll)
		for _, st := range Stages {
			fmt.Fprintf(&b, " %s %d", st, r.StagePassed[st])
		}
		b.WriteString("\nfindings by code (findings / servers):")
		for _, c := range Codes {
			if r.Codes[c] > 0 {
				fmt.Fprintf(&b, " %s %d/%d", c, r.Codes[c], r.ServersByCode[c])
			}
		}
		fmt.Fprintf(&b, "\nvalidation time per server %v\n", r.ValidatePerServer.Round(time.Microsecond))
	}
	return b.String()
}
