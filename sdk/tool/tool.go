package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/weft-dev/weft/sdk/abi"
)

// Info describes a module: the manifest's name, version, description and
// tables. Owns lists the tables the module reads and writes, Reads those it
// only reads; its SQL may name no other table.
type Info struct {
	Name        string
	Version     string
	Description string
	Owns        []string // tables read and written
	Reads       []string // tables only read
	// FileReads and FileWrites are the workspace paths the module reads
	// and writes (the manifest's "files"; patterns "**", "dir/**" or
	// path.Match globs; writes imply reads). Either set declares the "fs"
	// host library.
	FileReads  []string
	FileWrites []string
}

// Option modifies a tool registered by Register.
type Option func(*toolDef)

// ReadOnly marks a tool as not modifying state: the manifest's
// annotations.readOnlyHint.
func ReadOnly() Option {
	return func(t *toolDef) { t.readOnly = true }
}

// InputSchema replaces the input schema Register derives from In with
// schema, a JSON Schema (draft 2020-12) object given as JSON text, kept in
// the manifest as written (compacted): for keywords the derivation does not
// produce, such as "$schema", "$defs" and "$ref". The host validates the
// arguments against it; the SDK still decodes them into In strictly, so In
// must accept every object the schema does (a map, json.RawMessage fields).
// Register panics when schema is not a JSON object.
func InputSchema(schema string) Option {
	return func(t *toolDef) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(schema)); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte("{")) {
			panic(fmt.Sprintf("tool: Register(%q): InputSchema is not a JSON object (%v)", t.name, err))
		}
		t.input = buf.Bytes()
	}
}

// handler runs one call of a tool on the raw arguments. A non-nil error is
// an internal error (a module bug), never a tool error.
type handler func(ctx context.Context, args json.RawMessage) (*callResult, error)

type toolDef struct {
	name        string
	description string
	input       json.RawMessage
	output      json.RawMessage // nil: no output schema
	readOnly    bool
	run         handler
}

type registry struct {
	mu     sync.Mutex
	info   *Info
	tools  []*toolDef // registration order
	byName map[string]*toolDef
	export handler

	resources []*resourceDef // registration order
	templates []*templateDef
	prompts   []*promptDef
}

// reg is the process's registry; tests swap it.
var reg = &registry{}

func (r *registry) add(t *toolDef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]*toolDef{}
	}
	if r.byName[t.name] != nil {
		panic(fmt.Sprintf("tool: tool %q registered twice", t.name))
	}
	r.byName[t.name] = t
	r.tools = append(r.tools, t)
}

func (r *registry) lookup(name string) handler {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == abi.ExportTool {
		return r.export
	}
	if t := r.byName[name]; t != nil {
		return t.run
	}
	return nil
}

// Module sets the module's identity and tables. Call it once, from init;
// a second call panics.
func Module(info Info) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.info != nil {
		panic("tool: Module called twice")
	}
	info.Owns = append([]string(nil), info.Owns...)
	info.Reads = append([]string(nil), info.Reads...)
	reg.info = &info
}

// Register adds the tool name, implemented by fn, to the module. Call it
// from init.
//
// The tool's input JSON Schema (draft 2020-12, "type": "object") is derived
// from In, which must be a struct (or a pointer to one) or a map with string
// keys. A struct field's property name is its json tag name (or the field
// name); it is optional when it is a pointer or tagged omitempty/omitzero,
// otherwise required; its `description:"..."` tag becomes the property's
// description. Supported field types: string, bool, int*, uint* (minimum 0),
// float*, slices and arrays, []byte (base64 string), maps with string or
// integer keys, nested and embedded structs, pointers (also "null"), any and
// json.RawMessage (any value), time.Time (date-time string), and types
// implementing json.Marshaler (any value) or encoding.TextMarshaler
// (string). Structs get "additionalProperties": false. A recursive type is
// described as any value where it recurs. Unsupported types (chan, func,
// complex, maps with other keys) panic here.
//
// When Out is a struct or a map (or a pointer to one) the tool also has an
// output schema, derived the same way, except that slices, maps and
// pointers may be null (as encoding/json writes nil ones). Out = Result or
// *Result is the exception: the tool returns its content items as they are
// (images, audio, resource links, embedded resources) and has no output
// schema.
//
// A call decodes the arguments into In strictly (unknown fields are an
// error) and calls fn. An integer field accepts an integral number written
// with a fraction or an exponent (1.0, 1e2), as the host's schema check
// does; 1.5 or a value out of the field's range is an invalid argument. The result has one text content: Out itself when it
// is a string (also when Out is an interface holding a string), otherwise
// its JSON encoding (no HTML escaping); when that encoding is a JSON object
// it is also the structuredContent (a nil map is {}). An error returned by
// fn is a tool error: {"content": [{"type": "text", "text": err.Error()}],
// "isError": true}; see Errorf. Undecodable arguments are a tool error too.
// The exception is the module's own bug: an error wrapping (%w) a
// *SQLError of kind syntax, no_such_table or no_such_column (SQL the
// module wrote wrong) is an internal error, which the host reports as an infrastructure failure of
// the environment, not as the agent's mistake (see ModuleBug).
// A panic in fn is not a tool error: it becomes an internal error, which the
// host reports as an infrastructure failure.
//
// Register panics when fn is nil, the name is invalid (empty, longer than
// 128 bytes, not of [A-Za-z0-9_.-], or starting with "weft.") or already
// registered, or a type is unsupported.
func Register[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...Option) {
	if fn == nil {
		panic(fmt.Sprintf("tool: Register(%q): nil function", name))
	}
	if err := checkToolName(name); err != nil {
		panic("tool: Register: " + err.Error())
	}
	inT, outT := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	input, err := inputSchema(inT)
	if err != nil {
		panic(fmt.Sprintf("tool: Register(%q): input: %v", name, err))
	}
	var output json.RawMessage
	if outT != resultType && outT != reflect.PointerTo(resultType) {
		if output, err = outputSchema(outT); err != nil {
			panic(fmt.Sprintf("tool: Register(%q): output: %v", name, err))
		}
	}
	t := &toolDef{name: name, description: description, input: input, output: output}
	for _, o := range opts {
		o(t)
	}
	t.run = func(ctx context.Context, args json.RawMessage) (*callResult, error) {
		var in In
		if err := decodeArgs(args, &in); err != nil {
			return toolError("invalid arguments: " + err.Error()), nil
		}
		out, err := fn(ctx, in)
		if err != nil {
			if ModuleBug(err) {
				return nil, fmt.Errorf("tool %s: module bug: %w", name, err)
			}
			return toolError(err.Error()), nil
		}
		switch r := any(out).(type) {
		case Result:
			return explicitResult(&r)
		case *Result:
			return explicitResult(r)
		}
		return encodeResult(out, outT)
	}
	reg.add(t)
}

// Export sets the module's export hook: fn returns the module's whole state
// in its domain JSON shape, for comparison with another implementation. The
// host calls it as the reserved tool "weft.export" (never listed among the
// tools) and the manifest says "export": true. The result and errors are
// handled as for Register with Out = any. Call it at most once, from init.
func Export(fn func(ctx context.Context) (any, error)) {
	if fn == nil {
		panic("tool: Export: nil function")
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.export != nil {
		panic("tool: Export called twice")
	}
	anyT := reflect.TypeFor[any]()
	reg.export = func(ctx context.Context, _ json.RawMessage) (*callResult, error) {
		out, err := fn(ctx)
		if err != nil {
			return toolError(err.Error()), nil
		}
		return encodeResult(out, anyT)
	}
}

// ModuleBug reports whether err says the module itself is wrong rather
// than the agent's request: it wraps a *SQLError of kind syntax,
// no_such_table or no_such_column (a module's SQL bug must not be scored as
// a policy mistake). Duplicate keys, NOT NULL and type errors stay tool
// errors: the agent's arguments can cause them; so do refusals of the table
// policy (denied), which a sandbox test or a module probing its policy may
// mean to show the agent.
func ModuleBug(err error) bool {
	var se *SQLError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Kind {
	case KindSyntax, KindNoSuchTable, KindNoSuchColumn:
		return true
	}
	return false
}

// Errorf formats a tool error: the agent's problem (an unknown order, a
// wrong status), reported as an isError result whose text is the message.
// It is a convenience: every error a tool function returns is a tool error.
// %w wraps as in fmt.Errorf.
func Errorf(format string, args ...any) error {
	return &toolErr{err: fmt.Errorf(format, args...)}
}

type toolErr struct{ err error }

func (e *toolErr) Error() string { return e.err.Error() }
func (e *toolErr) Unwrap() error { return e.err }

func checkToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("tool name %q: must be 1 to 128 bytes", name)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return fmt.Errorf("tool name %q: only [A-Za-z0-9_.-] allowed", name)
		}
	}
	if strings.HasPrefix(name, abi.ReservedPrefix) {
		return fmt.Errorf("tool name %q: the weft. prefix is reserved", name)
	}
	return nil
}

// ManifestJSON returns the module's manifest (docs/abi.md, "Manifest"; the
// shared type abi.Manifest):
// abi "weft/v1", the Info given to Module, the registered tools in
// registration order, "hosts" listing the four host libraries (sql
// "v2": weft_sql_v1 and weft_sql_v2; clock, rand, log "v1") plus "fs" when Info declares workspace files (then
// "files" holds FileReads and FileWrites), "export" when Export was called, and the registered
// resources, resource templates and prompts (each list omitted when empty)
// in registration order. The encoding is deterministic and does not escape
// HTML characters.
func ManifestJSON() []byte {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	m := abi.Manifest{
		ABI:    abi.Version,
		Tools:  []abi.Tool{},
		Tables: abi.Tables{Owns: []string{}},
		Hosts:  abi.HostVersions(),
		Export: reg.export != nil,
	}
	m.Hosts["sql"] = abi.SQLVersion // the SQL driver and Batch use weft_sql_v2
	if info := reg.info; info != nil {
		m.Name, m.Version, m.Description = info.Name, info.Version, info.Description
		m.Tables.Owns = append(m.Tables.Owns, info.Owns...)
		m.Tables.Reads = info.Reads
		if len(info.FileReads)+len(info.FileWrites) > 0 {
			m.Files = &abi.Files{Reads: info.FileReads, Writes: info.FileWrites}
			m.Hosts["fs"] = abi.FSVersion
		}
	}
	for _, t := range reg.tools {
		mt := abi.Tool{Name: t.name, Description: t.description, InputSchema: t.input, OutputSchema: t.output}
		if t.readOnly {
			mt.Annotations = &abi.Annotations{ReadOnlyHint: true}
		}
		m.Tools = append(m.Tools, mt)
	}
	for _, r := range reg.resources {
		m.Resources = append(m.Resources, abi.Resource(r.info))
	}
	for _, t := range reg.templates {
		m.ResourceTemplates = append(m.ResourceTemplates, abi.ResourceTemplate(t.info))
	}
	for _, p := range reg.prompts {
		m.Prompts = append(m.Prompts, abi.Prompt{Name: p.info.Name, Title: p.info.Title, Description: p.info.Description, Arguments: p.info.Arguments})
	}
	b, err := marshal(m)
	if err != nil {
		panic("tool: encoding the manifest: " + err.Error())
	}
	return b
}
