package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// Endpoint is the endpoint synthesizer: an OpenAI-compatible model
// (core/model.Client, or any model.Policy) asked for a weft.server/v1
// server with JSON-schema structured output (ServerSchema). The prompt
// carries the documentation, the inferred schema when Infer gives one,
// and on revision the previous server and the typed findings with their
// failing calls and diffs. An answer that is not a server is an
// *AnswerError (Revise feeds it back); an endpoint failure is the
// *model.Error.
type Endpoint struct {
	Model    model.Policy
	Sampling model.Sampling
	// Infer, when set, gives the schema DDL inferred from the docs (the
	// deterministic synthesizer's entities and keys) for the prompt.
	Infer func(Docs) string
	// Strict sends the response format with "strict": true.
	Strict bool
}

var _ Synthesizer = (*Endpoint)(nil)

// Name is "endpoint".
func (*Endpoint) Name() string { return "endpoint" }

// ServerSchema is the JSON Schema of the answer the endpoint synthesizer
// asks for (response_format "weft_server"): a weft.server/v1 server with
// its program, schema and seed inline.
const ServerSchema = `{"type":"object","properties":{` +
	`"format":{"type":"string","enum":["weft.server/v1"]},` +
	`"name":{"type":"string"},"version":{"type":"string"},"description":{"type":"string"},` +
	`"schema":{"type":"string","description":"MySQL DDL: CREATE TABLE statements separated by ;"},` +
	`"seed":{"type":"object","description":"initial rows: {table: [{column: value}]}"},` +
	`"errors":{"type":"array","items":{"type":"object","properties":{"code":{"type":"string"},"description":{"type":"string"}},"required":["code"]}},` +
	`"program":{"type":"string","description":"Starlark source: one top-level function per tool"},` +
	`"tools":{"type":"array","items":{"type":"object","properties":{` +
	`"name":{"type":"string"},"description":{"type":"string"},"input_schema":{"type":"object"},"output_schema":{"type":"object"},` +
	`"read_only":{"type":"boolean"},"reads":{"type":"array","items":{"type":"string"}},"writes":{"type":"array","items":{"type":"string"}},` +
	`"errors":{"type":"array","items":{"type":"string"}}},"required":["name","description","input_schema","read_only"]}}},` +
	`"required":["format","name","version","schema","errors","program","tools"]}`

// Synthesize asks the model for a server.
func (e *Endpoint) Synthesize(ctx context.Context, req *Request) (*spec.Server, error) {
	if e.Model == nil {
		return nil, errors.New("synth: endpoint synthesizer without a model")
	}
	msgs, err := e.Prompt(req)
	if err != nil {
		return nil, err
	}
	resp, err := e.Model.Generate(ctx, &model.Request{
		Messages: msgs, Sampling: e.Sampling,
		ResponseFormat: &model.ResponseFormat{Name: "weft_server", Description: "a weft.server/v1 synthesized server",
			Schema: json.RawMessage(ServerSchema), Strict: e.Strict},
	})
	if err != nil {
		return nil, fmt.Errorf("synth: endpoint synthesizer, docs %q, round %d: %w", req.Docs.Name, req.Round, err)
	}
	bad := func(err error) error {
		return &AnswerError{Synthesizer: e.Name(), Docs: req.Docs.Name, Round: req.Round, Excerpt: excerptOf(resp.Message.Content), Err: err}
	}
	if resp.FinishReason == "length" {
		return nil, bad(errors.New("the answer was cut off at the token limit (finish_reason length)"))
	}
	text := stripFence(resp.Message.Content)
	if text == "" {
		return nil, bad(errors.New("the answer is empty"))
	}
	s, err := spec.Parse([]byte(text))
	if err != nil {
		return nil, bad(err)
	}
	return s, nil
}

// stripFence drops a Markdown code fence around the answer, which some
// servers add even under structured output.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
}

// systemPrompt states the format and its rules.
var systemPrompt = `You write synthesized MCP tool servers in the weft.server/v1 format, as one JSON object.

- "schema": MySQL DDL (CREATE TABLE ...; one per entity, a primary key each). "seed": rows per table ({"table": [{"column": value}]}) that satisfy the schema, enough for every tool to be called.
- "tools": every documented tool, with its name, description and input_schema as documented; "read_only" true for tools that change nothing; "reads" and "writes" list every table the tool's SQL reads and writes (a read-only tool writes nothing); "errors" lists the error codes it may raise.
- "errors": the server's closed set of error codes (lower_snake_case), e.g. "<entity>_not_found" for an id that names no row.
- "program": Starlark (Python-like, no imports, no I/O). One top-level function per tool, named as the tool, whose parameters are exactly the input_schema's properties (optional ones with a default). Helpers may be defined. Builtins: ` + strings.Join(interp.Builtins(), ", ") + `. query(sql, *args) returns a list of dicts, query_one(sql, *args) a dict or None, execute(sql, *args) the rows affected; use ? placeholders. tool_error(code, message) ends the call with a tool error whose code is one of "errors". now() is the session's clock ("2006-01-02T15:04:05"). Return a dict (the tool's structured result).
- Check every precondition before writing (the id exists, the state allows it) and raise the matching tool error; a failed SQL statement is a bug.

Answer with the JSON object only.`

// Prompt returns the messages of req: the system prompt, then the docs
// (and the inferred schema), and on revision the previous server and the
// findings.
func (e *Endpoint) Prompt(req *Request) ([]model.Message, error) {
	docs, err := json.MarshalIndent(req.Docs, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("synth: docs %q: %w", req.Docs.Name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Write the server %q from this documentation:\n\n%s\n", req.Docs.Name, docs)
	if e.Infer != nil {
		if ddl := strings.TrimSpace(e.Infer(req.Docs)); ddl != "" {
			fmt.Fprintf(&b, "\nSchema inferred from the documentation (entities, keys, column types; correct it where the documentation says otherwise):\n\n%s\n", ddl)
		}
	}
	msgs := []model.Message{{Role: model.RoleSystem, Content: systemPrompt}, {Role: model.RoleUser, Content: b.String()}}
	if req.Round == 0 {
		return msgs, nil
	}
	var r strings.Builder
	fmt.Fprintf(&r, "Revision round %d. ", req.Round)
	if req.Previous != nil {
		prev, err := json.Marshal(req.Previous)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&r, "Your previous server:\n\n%s\n\n", prev)
	} else {
		r.WriteString("Your previous answer was not a usable server.\n\n")
	}
	r.WriteString("Validation found these problems (stage, code, tool, field; the failing call with its arguments and result, and the state diff it made). Fix every one and answer with the whole corrected server:\n\n")
	for i, f := range req.Findings {
		fmt.Fprintf(&r, "%d. [%s/%s]", i+1, f.Stage, f.Code)
		if f.Tool != "" {
			fmt.Fprintf(&r, " tool %s", f.Tool)
		}
		if f.Field != "" {
			fmt.Fprintf(&r, " field %s", f.Field)
		}
		fmt.Fprintf(&r, ": %s\n", f.Message)
		if len(f.Call) > 0 {
			fmt.Fprintf(&r, "   call: %s\n", f.Call)
		}
		if len(f.Diff) > 0 {
			fmt.Fprintf(&r, "   diff: %s\n", f.Diff)
		}
	}
	return append(msgs, model.Message{Role: model.RoleUser, Content: r.String()}), nil
}
