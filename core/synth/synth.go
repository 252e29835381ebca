package synth

import (
	"context"
	"encoding/json"

	"github.com/weft-dev/weft/sdk/spec"
)

// Docs is the documentation a server is synthesized from: its tools as
// documented (MCP tools/list entries, tau2 tools.json, BFCL func docs,
// converted to JSON Schema), optional business requirements in prose
// (a domain policy), and where it came from.
type Docs struct {
	Name         string    `json:"name"`
	Description  string    `json:"description,omitempty"`
	Tools        []DocTool `json:"tools"`
	Requirements string    `json:"requirements,omitempty"`
	Source       string    `json:"source,omitempty"` // file or URL, informational
	License      string    `json:"license,omitempty"`
}

// DocTool is one documented tool. ReadOnlyHint is the MCP annotation when
// the documentation gives it (nil: not given).
type DocTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	ReadOnlyHint *bool           `json:"readOnlyHint,omitempty"`
}

// Request asks a Synthesizer for a server. Round is 0 for the first
// answer; on revision (Round >= 1) Previous is the server of the round
// before and Findings what validation found wrong with it.
type Request struct {
	Docs     Docs
	Round    int
	Previous *spec.Server
	Findings []Finding
}

// Synthesizer turns documentation into a synthesized server. Name is the
// value of the --synthesizer flag ("deterministic", "scripted",
// "endpoint"). Synthesize returns a server or an error that says why none
// could be produced (the documentation is malformed, the endpoint failed);
// a server that is wrong is returned and left to validation.
type Synthesizer interface {
	Name() string
	Synthesize(ctx context.Context, req *Request) (*spec.Server, error)
}

// Stage is a validation stage, in the order validation runs them.
type Stage string

// The validation stages.
const (
	StageInterface Stage = "interface" // definitions parse, schemas valid, every tool implemented with matching parameters, seed loads
	StageNormal    Stage = "normal"    // calls with arguments drawn from seed entities succeed and match the output shape
	StageBoundary  Stage = "boundary"  // missing, wrong-typed and nonexistent-id arguments give the expected error codes
	StageDiff      Stage = "diff"      // a call's state diff stays inside the tool's declared write set; writes change something
	StageReadback  Stage = "readback"  // after a write, the matching read tool shows it
)

// Stages lists the stages in order.
var Stages = []Stage{StageInterface, StageNormal, StageBoundary, StageDiff, StageReadback}

// Code is the closed set of validation error codes: each Finding has one.
type Code string

// The validation error codes (docs/synthesis.md, "Validation").
const (
	CodeSpecInvalid      Code = "spec_invalid"      // interface: sdk/spec Validate failed
	CodeProgramSyntax    Code = "program_syntax"    // interface: the program does not compile
	CodeToolMissing      Code = "tool_missing"      // interface: a documented tool has no function
	CodeParamsMismatch   Code = "params_mismatch"   // interface: function parameters differ from the input schema
	CodeSeedInvalid      Code = "seed_invalid"      // interface: the seed does not load into the schema
	CodeTableUnknown     Code = "table_unknown"     // interface: the program's SQL names a table the schema does not create
	CodeTableUndeclared  Code = "table_undeclared"  // interface: a tool's SQL names a table outside its reads and writes (or the policy refused a read)
	CodeCallFailed       Code = "call_failed"       // normal: a valid call ended in an internal error (SQL bug, fail())
	CodeUnexpectedError  Code = "unexpected_error"  // normal: a valid call on seed entities returned a tool error
	CodeOutputShape      Code = "output_shape"      // normal: the result does not match the tool's output schema
	CodeErrorNotRaised   Code = "error_not_raised"  // boundary: a bad argument did not give a tool error
	CodeWrongErrorCode   Code = "wrong_error_code"  // boundary: a tool error with another code than expected
	CodeBoundaryCrash    Code = "boundary_crash"    // boundary: a bad argument ended in an internal error
	CodeWriteOutsideSet  Code = "write_outside_set" // diff: a table outside the declared write set changed (normal: or the table policy refused the write)
	CodeNoEffect         Code = "no_effect"         // diff: a write tool's successful call changed nothing
	CodeReadOnlyWrote    Code = "read_only_wrote"   // diff: a read-only tool changed state (normal: or the table policy refused its write)
	CodeReadbackMismatch Code = "readback_mismatch" // readback: the read tool does not show what the write did
	CodeBudget           Code = "budget"            // any stage: a call ran out of its step or memory budget
)

// Codes lists every Code, for the histogram and docs.
var Codes = []Code{CodeSpecInvalid, CodeProgramSyntax, CodeToolMissing, CodeParamsMismatch, CodeSeedInvalid,
	CodeTableUnknown, CodeTableUndeclared,
	CodeCallFailed, CodeUnexpectedError, CodeOutputShape, CodeErrorNotRaised, CodeWrongErrorCode, CodeBoundaryCrash,
	CodeWriteOutsideSet, CodeNoEffect, CodeReadOnlyWrote, CodeReadbackMismatch, CodeBudget}

// Finding is one validation failure: the stage and code, the tool and
// field concerned, the failing call (tool arguments and what came back)
// and state diff when there is one, and a message for people and models.
type Finding struct {
	Stage   Stage           `json:"stage"`
	Code    Code            `json:"code"`
	Tool    string          `json:"tool,omitempty"`
	Field   string          `json:"field,omitempty"`
	Call    json.RawMessage `json:"call,omitempty"` // {"name", "arguments", "result"}
	Diff    json.RawMessage `json:"diff,omitempty"` // the call's state changes, core/state Changes JSON
	Message string          `json:"message"`
}
