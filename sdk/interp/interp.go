package interp

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	starjson "go.starlark.net/lib/json"
	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/weft-dev/weft/sdk/abi"
)

// Options configures an Interpreter. Zero values take the defaults.
type Options struct {
	// MaxSteps is the Starlark step budget of one call (default
	// DefaultMaxSteps); a call that exceeds it ends with an internal error
	// of code abi.InternalSteps.
	MaxSteps uint64
	// MaxProgramBytes bounds the estimated memory of the compiled
	// programs kept (ProgramCharge each; default DefaultMaxProgramBytes):
	// past it the least recently used are dropped first. The newest
	// program is kept even when it alone is over the bound.
	MaxProgramBytes int64
	// MaxPrograms, when > 0, also bounds the number of programs kept
	// (default 0: only MaxProgramBytes bounds them).
	MaxPrograms int
}

// DefaultMaxSteps is the default step budget of a call: about a second
// of Starlark on one core natively.
const DefaultMaxSteps = 20_000_000

// DefaultMaxProgramBytes is the default bound of the estimated memory of
// the compiled programs one Interpreter keeps: 128 MiB, half of an
// instance's default linear memory cap (core/module Config.MemoryLimitMiB,
// 256 MiB), leaving the other half to the garbage collector's headroom and
// the calls. A bank-sized program (2 KB compiled) is charged ~8.6 KiB, so
// ~15,000 fit; a Toucan server's (~25-40 KB compiled) 100-160 KiB, so
// ~800-1,300. A server called before then answers a new session's first
// call without decoding its program again (docs/benchmarks.md, "Many
// servers in one process"). It replaced a fixed bound of 1,024 programs,
// which made every call warm-in-name-only at 10,000 bank-sized servers.
const DefaultMaxProgramBytes = 128 << 20

// ProgramCharge is the memory a program is charged in the cache, in
// bytes, from the length of its compiled form (Compile; the source's when
// it came as source): 4x plus 1 KiB. Decoded and initialized, a program
// holds 3.6-3.7x its compiled bytes of Go heap (measured for compiled
// sizes of 2-50 KB; the globals, functions and constants).
func ProgramCharge(compiledLen int) int64 { return 4*int64(compiledLen) + 1024 }

// Interpreter runs synthesized servers' programs. It is safe for
// concurrent use; calls of one program run in parallel on frozen globals.
type Interpreter struct {
	opts  Options
	mu    sync.Mutex
	progs map[string]*list.Element // of order, by digest
	order list.List                // *program, least recently used first
	bytes int64                    // ProgramCharge of the programs kept
}

type program struct {
	digest  string
	globals starlark.StringDict
	codes   map[string]bool
	charge  int64 // ProgramCharge
}

// New returns an Interpreter with opts.
func New(opts Options) *Interpreter {
	if opts.MaxSteps == 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.MaxProgramBytes <= 0 {
		opts.MaxProgramBytes = DefaultMaxProgramBytes
	}
	return &Interpreter{opts: opts, progs: map[string]*list.Element{}}
}

var std = New(Options{})

// Dispatch answers one call request with the default Interpreter: the
// entry point of the interpreter module (core/module.Dispatch's shape).
func Dispatch(ctx context.Context, h abi.Host, request []byte) []byte {
	return std.Dispatch(ctx, h, request)
}

// Has reports whether a program is compiled under digest.
func (in *Interpreter) Has(digest string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	_, ok := in.progs[digest]
	return ok
}

// Dispatch answers one call request (abi.CallRequest with Program) with a
// CallResult, or an InternalError for what the agent did not cause.
func (in *Interpreter) Dispatch(ctx context.Context, h abi.Host, request []byte) (response []byte) {
	if ctx == nil {
		ctx = context.Background()
	}
	defer func() {
		if p := recover(); p != nil {
			response = internal(abi.InternalFail, fmt.Sprintf("interpreter panic: %v", p))
		}
	}()
	var req abi.CallRequest
	if err := json.Unmarshal(request, &req); err != nil {
		return internal("", "malformed call request: "+err.Error())
	}
	if req.Program == nil || req.Program.Digest == "" {
		return internal(abi.InternalProgram, "call request without a program: this module runs synthesized servers only")
	}
	prog, err := in.program(req.Program)
	if err != nil {
		var ie *internalErr
		if errors.As(err, &ie) {
			return internal(ie.code, ie.msg)
		}
		return internal(abi.InternalProgram, err.Error())
	}
	c := &call{ctx: ctx, h: h, prog: prog}
	thread := &starlark.Thread{Name: req.Tool, Print: func(_ *starlark.Thread, msg string) { c.log(1, msg) }}
	thread.SetLocal(callKey, c)
	thread.SetMaxExecutionSteps(in.opts.MaxSteps)
	if done := ctx.Done(); done != nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-done:
				thread.Cancel("deadline: " + ctx.Err().Error())
			case <-stop:
			}
		}()
	}
	name := req.Tool
	switch {
	case name == abi.ExportTool:
		name = "export"
	case name == abi.ExportChangedTool:
		name = "export_changed"
	case strings.HasPrefix(name, abi.ReservedPrefix):
		return encodeToolError("", fmt.Sprintf("request %q is not served by synthesized servers", name))
	}
	v, ok := prog.globals[name]
	if !ok {
		if name == "export" || name == "export_changed" {
			return internal(abi.InternalProgram, "the program defines no "+name+"() function")
		}
		return internal(abi.InternalProgram, fmt.Sprintf("the program defines no function %q", name))
	}
	fn, ok := v.(*starlark.Function)
	if !ok {
		return internal(abi.InternalProgram, fmt.Sprintf("%q is a %s, not a function defined by the program", name, v.Type()))
	}
	kwargs, terr := bindArgs(fn, req.Arguments)
	if terr != "" {
		return encodeToolError("invalid_arguments", terr)
	}
	out, err := starlark.Call(thread, fn, nil, kwargs)
	if err != nil {
		var te *toolErr
		var ie *internalErr
		switch {
		case errors.As(err, &te):
			return encodeToolError(te.code, te.msg)
		case ctx.Err() != nil:
			// Before a host call's own error: a statement the deadline
			// cut short is the deadline, not a failing program.
			return internal(abi.InternalDeadline, errText(err))
		case errors.As(err, &ie):
			return internal(ie.code, ie.msg+backtrace(err))
		case thread.ExecutionSteps() >= in.opts.MaxSteps:
			return internal(abi.InternalSteps, fmt.Sprintf("tool %s ran out of its step budget (%d steps)", name, in.opts.MaxSteps))
		default:
			return internal(abi.InternalFail, errText(err))
		}
	}
	res, err := resultOf(out)
	if err != nil {
		return internal(abi.InternalFail, fmt.Sprintf("tool %s returned %s: %v", name, out.Type(), err))
	}
	b, err := abi.Marshal(res)
	if err != nil {
		return internal(abi.InternalFail, err.Error())
	}
	return b
}

// program returns the compiled program of p, compiling and caching it
// when p carries its Source.
func (in *Interpreter) program(p *abi.Program) (*program, error) {
	in.mu.Lock()
	if e, ok := in.progs[p.Digest]; ok {
		in.order.MoveToBack(e)
		in.mu.Unlock()
		return e.Value.(*program), nil
	}
	in.mu.Unlock()
	if p.Source == "" && len(p.Compiled) == 0 {
		return nil, &internalErr{code: abi.InternalProgramMissing, msg: "no compiled program " + p.Digest + ": send its source"}
	}
	var prog *program
	var err error
	if len(p.Compiled) > 0 {
		// The host's compiled form (Compile) skips parsing and compiling;
		// one this build cannot decode (another go.starlark.net encoding
		// version, damaged bytes) falls back to the source, or asks for it.
		sp, derr := decodeProgram(p.Compiled)
		switch {
		case derr == nil:
			prog, err = initProgram(sp, p.Errors, in.opts.MaxSteps)
		case p.Source == "":
			return nil, &internalErr{code: abi.InternalProgramMissing, msg: "compiled program " + p.Digest + " not decodable (" + derr.Error() + "): send its source"}
		}
	}
	size := len(p.Compiled)
	if prog == nil && err == nil {
		prog, err = compile(p.Source, p.Errors, in.opts.MaxSteps)
		size = len(p.Source)
	}
	if err != nil {
		return nil, err
	}
	prog.digest, prog.charge = p.Digest, ProgramCharge(size)
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.progs[p.Digest]; !ok {
		in.progs[p.Digest] = in.order.PushBack(prog)
		in.bytes += prog.charge
		for in.order.Len() > 1 && (in.bytes > in.opts.MaxProgramBytes || in.opts.MaxPrograms > 0 && in.order.Len() > in.opts.MaxPrograms) {
			old := in.order.Remove(in.order.Front()).(*program)
			in.bytes -= old.charge
			delete(in.progs, old.digest)
		}
	}
	return prog, nil
}

// Stats reports the programs kept and their ProgramCharge in all, in
// bytes.
func (in *Interpreter) Stats() (programs int, bytes int64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.progs), in.bytes
}

// fileOptions: the Starlark dialect of programs (while loops, sets,
// recursion and top-level control flow allowed; the step budget bounds
// them).
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// Check compiles a program as Dispatch would and returns its syntax or
// initialization error (with the position, "program.star:LINE:COL"), or
// nil.
func Check(source string) error {
	_, err := compile(source, nil, 0)
	return err
}

// compile parses and initializes a program (its top-level statements run
// with no host: they may define functions and constants but not query).
func compile(source string, codes []string, maxSteps uint64) (*program, error) {
	if maxSteps == 0 {
		maxSteps = DefaultMaxSteps
	}
	_, sp, err := starlark.SourceProgramOptions(fileOptions, "program.star", source, builtins.Has)
	if err != nil {
		return nil, &internalErr{code: abi.InternalProgram, msg: "program: " + err.Error()}
	}
	return initProgram(sp, codes, maxSteps)
}

// initProgram runs a program's top-level statements and freezes its
// globals.
func initProgram(sp *starlark.Program, codes []string, maxSteps uint64) (*program, error) {
	if maxSteps == 0 {
		maxSteps = DefaultMaxSteps
	}
	thread := &starlark.Thread{Name: "init"}
	thread.SetMaxExecutionSteps(maxSteps)
	globals, err := sp.Init(thread, builtins)
	if err != nil {
		return nil, &internalErr{code: abi.InternalProgram, msg: "program init: " + errText(err)}
	}
	globals.Freeze()
	set := make(map[string]bool, len(codes))
	for _, c := range codes {
		set[c] = true
	}
	return &program{globals: globals, codes: set}, nil
}

// decodeProgram decodes a compiled program (Compile's encoding); damaged
// bytes are an error, not a panic.
func decodeProgram(b []byte) (sp *starlark.Program, err error) {
	defer func() {
		if p := recover(); p != nil {
			sp, err = nil, fmt.Errorf("decoding: %v", p)
		}
	}()
	return starlark.CompiledProgram(bytes.NewReader(b))
}

// Compile returns the compiled form of a program the host sends as
// abi.Program.Compiled: go.starlark.net's compiled-program encoding
// (starlark.Program.Write), decoded by the interpreter in a fraction of
// the time parsing and compiling the source takes (about 18x natively,
// 10x in wasm for the bank spec). A source that does not compile is the
// same error Check gives.
func Compile(source string) ([]byte, error) {
	_, sp, err := starlark.SourceProgramOptions(fileOptions, "program.star", source, builtins.Has)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := sp.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Functions returns the names of the top-level functions a compiled
// program defines, with their named parameters and which of them are
// required (no default), for the interface check of validation.
func Functions(source string) (map[string][]Param, error) {
	prog, err := compile(source, nil, 0)
	if err != nil {
		return nil, err
	}
	out := map[string][]Param{}
	for name, v := range prog.globals {
		fn, ok := v.(*starlark.Function)
		if !ok {
			continue
		}
		var ps []Param
		for i := range namedParams(fn) {
			n, _ := fn.Param(i)
			ps = append(ps, Param{Name: n, Required: fn.ParamDefault(i) == nil})
		}
		out[name] = ps
	}
	return out, nil
}

// Param is a named parameter of a program's function.
type Param struct {
	Name     string
	Required bool
}

func namedParams(fn *starlark.Function) int {
	n := fn.NumParams()
	if fn.HasVarargs() {
		n--
	}
	if fn.HasKwargs() {
		n--
	}
	return n
}

// bindArgs turns the arguments object into keyword arguments of fn; a
// missing required or unexpected argument is a tool error message.
func bindArgs(fn *starlark.Function, raw json.RawMessage) ([]starlark.Tuple, string) {
	var pairs []kv
	if len(raw) > 0 && string(raw) != "null" {
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, "arguments are not JSON: " + err.Error()
		}
		d, ok := v.(*starlark.Dict)
		if !ok {
			return nil, "arguments are not a JSON object"
		}
		for _, it := range d.Items() {
			pairs = append(pairs, kv{string(it[0].(starlark.String)), it[1]})
		}
	}
	n := namedParams(fn)
	known := make(map[string]bool, n)
	for i := range n {
		p, _ := fn.Param(i)
		known[p] = true
	}
	given := map[string]bool{}
	kwargs := make([]starlark.Tuple, 0, len(pairs))
	for _, p := range pairs {
		if !known[p.k] && !fn.HasKwargs() {
			return nil, fmt.Sprintf("unexpected argument %q", p.k)
		}
		given[p.k] = true
		kwargs = append(kwargs, starlark.Tuple{starlark.String(p.k), p.v})
	}
	for i := range n {
		p, _ := fn.Param(i)
		if !given[p] && fn.ParamDefault(i) == nil {
			return nil, fmt.Sprintf("missing required argument %q", p)
		}
	}
	return kwargs, ""
}

type kv struct {
	k string
	v starlark.Value
}

// call is the per-call state builtins reach through the thread.
type call struct {
	ctx  context.Context
	h    abi.Host
	prog *program
}

const callKey = "weft.call"

func (c *call) log(level int, msg string) {
	if c.h != nil {
		c.h.Log(level, msg)
	}
}

func current(thread *starlark.Thread, fn string) (*call, error) {
	c, _ := thread.Local(callKey).(*call)
	if c == nil || c.h == nil {
		return nil, fmt.Errorf("%s() can only be called while a tool runs, not at the program's top level", fn)
	}
	return c, nil
}

// toolErr ends a call with a tool error (tool_error).
type toolErr struct{ code, msg string }

func (e *toolErr) Error() string { return "tool error " + e.code + ": " + e.msg }

// internalErr ends a call with an internal error of a code.
type internalErr struct{ code, msg string }

func (e *internalErr) Error() string { return e.msg }

var builtins = starlark.StringDict{
	"query":      starlark.NewBuiltin("query", bQuery),
	"query_one":  starlark.NewBuiltin("query_one", bQueryOne),
	"execute":    starlark.NewBuiltin("execute", bExecute),
	"tool_error": starlark.NewBuiltin("tool_error", bToolError),
	"now":        starlark.NewBuiltin("now", bNow),
	"now_unix":   starlark.NewBuiltin("now_unix", bNowUnix),
	"rand_int":   starlark.NewBuiltin("rand_int", bRandInt),
	"log":        starlark.NewBuiltin("log", bLog),
	"json":       starjson.Module,
	"math":       starmath.Module,
}

// Builtins returns the names a program may use beyond Starlark's own.
func Builtins() []string {
	return []string{"query", "query_one", "execute", "tool_error", "now", "now_unix", "rand_int", "log", "json", "math"}
}

func bToolError(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var code, msg string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "code", &code, "message?", &msg); err != nil {
		return nil, &internalErr{code: abi.InternalFail, msg: err.Error()}
	}
	c, err := current(thread, b.Name())
	if err != nil {
		return nil, &internalErr{code: abi.InternalFail, msg: err.Error()}
	}
	if len(c.prog.codes) > 0 && !c.prog.codes[code] {
		return nil, &internalErr{code: abi.InternalFail, msg: fmt.Sprintf("tool_error code %q is not among the server's errors", code)}
	}
	if msg == "" {
		msg = code
	}
	return nil, &toolErr{code: code, msg: msg}
}

func bNow(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	c, err := current(thread, b.Name())
	if err != nil {
		return nil, err
	}
	return starlark.String(time.Unix(0, c.h.Now()).UTC().Format("2006-01-02T15:04:05")), nil
}

func bNowUnix(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	c, err := current(thread, b.Name())
	if err != nil {
		return nil, err
	}
	return starlark.MakeInt64(c.h.Now() / int64(time.Second)), nil
}

func bRandInt(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var n int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "n", &n); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("rand_int: n must be positive, got %d", n)
	}
	c, err := current(thread, b.Name())
	if err != nil {
		return nil, err
	}
	var p [8]byte
	c.h.Rand(p[:])
	var u uint64
	for _, x := range p {
		u = u<<8 | uint64(x)
	}
	return starlark.MakeUint64(u % uint64(n)), nil
}

func bLog(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var msg string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "msg", &msg); err != nil {
		return nil, err
	}
	c, err := current(thread, b.Name())
	if err != nil {
		return nil, err
	}
	c.log(1, msg)
	return starlark.None, nil
}

func bQuery(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	resp, err := runSQL(thread, b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return rowsOf(resp)
}

func bQueryOne(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	resp, err := runSQL(thread, b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if len(resp.Rows) == 0 {
		return starlark.None, nil
	}
	resp.Rows = resp.Rows[:1]
	l, err := rowsOf(resp)
	if err != nil {
		return nil, err
	}
	return l.Index(0), nil
}

func bExecute(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	resp, err := runSQL(thread, b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return starlark.MakeInt64(resp.RowsAffected), nil
}

// runSQL sends one statement to the host. A failed statement is an
// internal error (code abi.InternalSQL) carrying the SQL error kind.
func runSQL(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (*abi.SQLResponse[json.RawMessage], error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword argument %s", b.Name(), kwargs[0][0])
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: missing the SQL statement", b.Name())
	}
	stmt, ok := starlark.AsString(args[0])
	if !ok {
		return nil, fmt.Errorf("%s: the statement is a %s, not a string", b.Name(), args[0].Type())
	}
	c, err := current(thread, b.Name())
	if err != nil {
		return nil, err
	}
	req := abi.SQLRequest{SQL: stmt, Args: make([]json.RawMessage, 0, len(args)-1)}
	for i, a := range args[1:] {
		j, err := sqlArg(a)
		if err != nil {
			return nil, fmt.Errorf("%s: argument %d: %v", b.Name(), i+1, err)
		}
		req.Args = append(req.Args, j)
	}
	reqJSON, err := abi.Marshal(req)
	if err != nil {
		return nil, err
	}
	var resp abi.SQLResponse[json.RawMessage]
	if err := json.Unmarshal(c.h.SQL(reqJSON), &resp); err != nil {
		return nil, &internalErr{code: abi.InternalSQL, msg: "malformed SQL response: " + err.Error()}
	}
	if resp.Error != nil {
		return nil, &internalErr{code: abi.InternalSQL, msg: fmt.Sprintf("%s(%q): %s", b.Name(), stmt, resp.Error.Error())}
	}
	return &resp, nil
}

// sqlArg is a Starlark value as a weft_sql_v1 argument: scalars as JSON
// scalars, a dict or list as its JSON text.
func sqlArg(v starlark.Value) (json.RawMessage, error) {
	switch x := v.(type) {
	case starlark.NoneType, starlark.Bool, starlark.Int, starlark.Float, starlark.String:
		return encodeValue(x)
	case *starlark.Dict, *starlark.List, starlark.Tuple:
		j, err := encodeValue(x)
		if err != nil {
			return nil, err
		}
		return json.Marshal(string(j))
	}
	return nil, fmt.Errorf("a %s cannot be a SQL argument", v.Type())
}

// rowsOf converts a response's rows to a list of dicts, cells by column
// type: numbers as int or float, decimals as float, JSON columns decoded.
func rowsOf(resp *abi.SQLResponse[json.RawMessage]) (*starlark.List, error) {
	out := make([]starlark.Value, 0, len(resp.Rows))
	for _, row := range resp.Rows {
		d := starlark.NewDict(len(resp.Columns))
		for i, col := range resp.Columns {
			var cell json.RawMessage
			if i < len(row) {
				cell = row[i]
			}
			typ := ""
			if i < len(resp.Types) {
				typ = resp.Types[i]
			}
			v, err := cellValue(typ, cell)
			if err != nil {
				return nil, fmt.Errorf("column %s: %v", col, err)
			}
			if err := d.SetKey(starlark.String(col), v); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
	return starlark.NewList(out), nil
}

func cellValue(typ string, cell json.RawMessage) (starlark.Value, error) {
	if len(cell) == 0 || string(cell) == "null" {
		return starlark.None, nil
	}
	switch typ {
	case abi.TypeDecimal:
		var s string
		if err := json.Unmarshal(cell, &s); err != nil {
			return decodeJSON(cell)
		}
		f, err := parseFloat(s)
		if err != nil {
			return nil, err
		}
		return starlark.Float(f), nil
	case abi.TypeString, abi.TypeTime:
		if s, ok := plainString(cell); ok {
			return starlark.String(s), nil
		}
	case abi.TypeInt, abi.TypeUint:
		if i, err := strconv.ParseInt(string(cell), 10, 64); err == nil {
			return starlark.MakeInt64(i), nil
		}
	}
	return decodeJSON(cell)
}

// plainString is the value of a JSON string with no escapes, without a
// decoder (most cells).
func plainString(cell json.RawMessage) (string, bool) {
	if len(cell) < 2 || cell[0] != '"' || cell[len(cell)-1] != '"' {
		return "", false
	}
	body := cell[1 : len(cell)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	return string(body), true
}

func errText(err error) string {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return ee.Backtrace()
	}
	return err.Error()
}

func backtrace(err error) string {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		for i := range ee.CallStack {
			if pos := ee.CallStack.At(i).Pos; pos.Filename() != "<builtin>" {
				return " (at " + pos.String() + ")"
			}
		}
	}
	return ""
}

func internal(code, msg string) []byte {
	b, err := abi.Marshal(abi.InternalError{Message: msg, Code: code})
	if err != nil {
		return []byte(`{"internalError":"encoding failed"}`)
	}
	return b
}

// encodeToolError is the CallResult of a tool error: the message as text,
// {"error": code, "message": msg} as structured content.
func encodeToolError(code, msg string) []byte {
	sc, _ := abi.Marshal(map[string]string{"error": code, "message": msg})
	if code == "" {
		sc = nil
	}
	b, err := abi.Marshal(abi.CallResult{Content: []abi.Content{abi.Text(msg)}, StructuredContent: sc, IsError: true})
	if err != nil {
		return internal(abi.InternalFail, err.Error())
	}
	return b
}

// resultOf is the CallResult of a tool's return value: a string as its
// text; any other value as its JSON text, a dict also as structured
// content.
func resultOf(v starlark.Value) (*abi.CallResult, error) {
	if s, ok := v.(starlark.String); ok {
		return &abi.CallResult{Content: []abi.Content{abi.Text(string(s))}}, nil
	}
	j, err := encodeValue(v)
	if err != nil {
		return nil, err
	}
	r := &abi.CallResult{Content: []abi.Content{abi.Text(string(j))}}
	if _, ok := v.(*starlark.Dict); ok {
		r.StructuredContent = j
	}
	return r, nil
}
