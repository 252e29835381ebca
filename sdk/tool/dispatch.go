package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-dev/weft/sdk/abi"
)

// Host is the host side of a call: the host libraries of docs/abi.md as Go
// methods (abi.Host: SQL, Now, Rand, Log, Progress). On GOOS=wasip1 the
// package implements it with the weft_*_v1 imports; native hosts
// (core/module's NativeHost, a Module from module.NewNative) and tests pass
// their own to Dispatch.
type Host = abi.Host

// callMu serializes Dispatch: DB, Log and Progress reach the host of the
// call in progress through current.
var callMu sync.Mutex

type hostRef struct{ h Host }

var (
	current     atomic.Pointer[hostRef] // the host of the Dispatch in progress
	defaultHost Host                    // outside Dispatch: the wasm imports on wasip1, nil elsewhere
)

// currentHost returns the host of the call in progress, else defaultHost
// (nil on native builds).
func currentHost() Host {
	if r := current.Load(); r != nil {
		return r.h
	}
	return defaultHost
}

// Dispatch runs one call request ({"tool": name, "arguments": {...}}, see
// docs/abi.md "Call request") against the registered tools, with h as the
// host libraries, and returns the response JSON: a CallToolResult
// ({"content": [...], "structuredContent": {...}, "isError": true}) or, for
// a module bug, {"internalError": "..."}. The reserved requests
// "weft.resource.read" and "weft.prompt.get" run the registered resource,
// template and prompt handlers and answer {"contents": [...]},
// {"description": ..., "messages": [...]} or an error ({"content": [text],
// "isError": true, "notFound": true}) as docs/abi.md describes.
//
// An unknown tool and undecodable arguments are tool errors (isError). A
// malformed request, a panic in the tool ("panic: ..."; the stack is logged
// at error level) and a result that cannot be encoded are internal errors.
//
// Dispatch calls are serialized by a process-wide mutex held for the whole
// call, because DB, Log and Progress reach h through package state: calls
// from several goroutines are safe but run one at a time, and a tool that
// calls Dispatch itself deadlocks. Goroutines a tool starts may use DB until
// the tool returns, not after.
func Dispatch(ctx context.Context, h Host, request []byte) (response []byte) {
	if ctx == nil {
		ctx = context.Background()
	}
	callMu.Lock()
	defer callMu.Unlock()
	current.Store(&hostRef{h})
	defer current.Store(nil)
	defer func() {
		if p := recover(); p != nil {
			if h != nil {
				h.Log(3, fmt.Sprintf("panic: %v\n%s", p, debug.Stack()))
			}
			response = internalError(fmt.Sprintf("panic: %v", p))
		}
	}()

	var req abi.CallRequest
	if err := parseCallRequest(request, &req); err != nil {
		return internalError("malformed call request: " + err.Error())
	}
	switch req.Tool {
	case abi.ResourceReadRequest:
		return readResource(ctx, req.Arguments)
	case abi.PromptGetRequest:
		return getPrompt(ctx, req.Arguments)
	}
	run := reg.lookup(req.Tool)
	if run == nil {
		return encodeResponse(toolError(fmt.Sprintf("unknown tool %q", req.Tool)))
	}
	res, err := run(ctx, req.Arguments)
	if err != nil {
		return internalError(err.Error())
	}
	return encodeResponse(res)
}

// parseCallRequest is json.Unmarshal(b, req), with a fast path for the
// form the host writes (core/module's callRequest): {"tool":"<name>",
// "arguments":<value>} with a name of printable ASCII without escapes and
// compact arguments (compactJSON), which is cut out directly instead of
// through encoding/json's reflection and byte-at-a-time scanner. Anything
// else (whitespace, other members, escapes) takes encoding/json.
func parseCallRequest(b []byte, req *abi.CallRequest) error {
	const pre, mid = `{"tool":"`, `","arguments":`
	if len(b) > len(pre)+len(mid) && string(b[:len(pre)]) == pre && b[len(b)-1] == '}' {
		rest := b[len(pre) : len(b)-1]
		if i := bytes.IndexByte(rest, '"'); i >= 0 && plainName(rest[:i]) && bytes.HasPrefix(rest[i:], []byte(mid)) {
			if args := rest[i+len(mid):]; compactJSON(args) {
				*req = abi.CallRequest{Tool: string(rest[:i]), Arguments: append(json.RawMessage(nil), args...)}
				return nil
			}
		}
	}
	return json.Unmarshal(b, req)
}

// plainName reports whether every byte of s is printable ASCII other than
// a backslash (a JSON string body that decodes to itself).
func plainName(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c > 0x7E || c == '\\' {
			return false
		}
	}
	return true
}

// Log writes msg to the host log at level 0 debug, 1 info, 2 warn or
// 3 error (weft_log_v1.write); other levels are clamped. Natively it is
// dropped outside Dispatch.
func Log(level int, msg string) {
	level = min(max(level, 0), 3)
	if h := currentHost(); h != nil {
		h.Log(level, msg)
	}
}

// Progress sends an MCP progress notification for the current call
// (weft_log_v1.progress); total 0 means unknown. Natively it is dropped
// outside Dispatch.
func Progress(progress, total float64, msg string) {
	if h := currentHost(); h != nil {
		h.Progress(progress, total, msg)
	}
}

// callResult is the wire result of a tool call.
type callResult = abi.CallResult

func toolError(msg string) *callResult {
	return &callResult{Content: []abi.Content{abi.Text(msg)}, IsError: true}
}

var resultType = reflect.TypeFor[Result]()

// explicitResult is the callResult of a tool returning a Result.
func explicitResult(r *Result) (*callResult, error) {
	if r == nil {
		return nil, errors.New("the tool returned a nil *tool.Result")
	}
	out := &callResult{Content: make([]abi.Content, len(r.Content)), IsError: r.IsError}
	for i, c := range r.Content {
		w, err := c.wire()
		if err != nil {
			return nil, fmt.Errorf("encoding the result: content %d: %v", i, err)
		}
		out.Content[i] = w
	}
	return out, nil
}

func internalError(msg string) []byte {
	b, err := marshal(abi.InternalError{Message: msg})
	if err != nil { // cannot happen for a string
		return []byte(`{"internalError":"encoding failed"}`)
	}
	return b
}

// encodeResponse writes r as JSON, byte for byte what marshal(r) writes
// (abi.CallResult's encoding).
// It is written by hand because encoding/json re-validates a
// json.RawMessage (structuredContent, often the bulk of the response) with
// its byte-at-a-time scanner, a function call per byte, which is slow in
// wasm; the structured content comes from marshal and is compact already.
func encodeResponse(r *callResult) []byte {
	n := len(r.StructuredContent) + 64
	for _, c := range r.Content {
		n += len(c.Type) + len(c.Text) + len(c.Data)*4/3 + 32
	}
	buf := make([]byte, 0, n+n/16)
	buf = append(buf, `{"content":`...)
	if r.Content == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '[')
		for i, c := range r.Content {
			if i > 0 {
				buf = append(buf, ',')
			}
			if c.Type != abi.ContentText {
				b, err := marshal(c)
				if err != nil {
					return internalError("encoding the result: " + err.Error())
				}
				buf = append(buf, b...)
				continue
			}
			// What a json.Encoder without HTML escaping writes.
			buf = append(buf, `{"type":`...)
			buf = abi.AppendJSONString(buf, c.Type, false)
			buf = append(buf, `,"text":`...)
			buf = abi.AppendJSONString(buf, c.Text, false)
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	if len(r.StructuredContent) > 0 {
		buf = append(buf, `,"structuredContent":`...)
		buf = append(buf, r.StructuredContent...)
	}
	if r.IsError {
		buf = append(buf, `,"isError":true`...)
	}
	return append(buf, '}')
}

// marshal is json.Marshal without HTML escaping (abi.Marshal).
func marshal(v any) ([]byte, error) { return abi.Marshal(v) }

// decodeArgs decodes the call arguments into v (a pointer) strictly. Absent
// or null arguments are {}. A number written with a fraction or an exponent
// whose value is an integer (1.0, 1e2, -3.000) decodes into an integer
// field: the host's schema check accepts it for "integer" and passes the
// arguments on byte for byte (docs/abi.md), so when encoding/json refuses
// such a number the arguments are decoded again with every integral number
// written as an integer.
func decodeArgs(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	err := decodeStrict(args, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number ") {
		if norm, changed := integralNumbers(args); changed {
			reflect.ValueOf(v).Elem().SetZero()
			err = decodeStrict(norm, v)
		}
	}
	return err
}

func decodeStrict(args []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the arguments")
	}
	return nil
}

// integralNumbers rewrites, outside strings, every JSON number with a
// fraction or an exponent whose value is an integer of at most 64 bits
// (1.0, 2e3, -4.50e1) as that integer's digits; other numbers stay as
// written. changed reports whether anything was rewritten. b is valid JSON.
func integralNumbers(b []byte) (out []byte, changed bool) {
	out = make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(b))
			out = append(out, b[i:j]...)
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(b) && strings.IndexByte("0123456789.eE+-", b[j]) >= 0 {
				j++
			}
			if n, ok := integral(b[i:j]); ok {
				out = append(out, n...)
				changed = true
			} else {
				out = append(out, b[i:j]...)
			}
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out, changed
}

// integral returns the integer digits of num when it has a fraction or an
// exponent, its value is an integer and it fits 64 bits (int64 or uint64).
// Exponents beyond ±400 are left alone (no value of 64 bits needs one).
func integral(num []byte) ([]byte, bool) {
	if !bytes.ContainsAny(num, ".eE") || len(num) > 800 {
		return nil, false
	}
	if i := bytes.IndexAny(num, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(string(num[i+1:]), "+"))
		if err != nil || e > 400 || e < -400 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(string(num))
	if !ok || !r.IsInt() {
		return nil, false
	}
	n := r.Num()
	if !n.IsInt64() && !n.IsUint64() {
		return nil, false
	}
	return []byte(n.String()), true
}

// encodeResult makes the CallToolResult of a tool's value; outT is the
// tool's static Out type.
func encodeResult(out any, outT reflect.Type) (*callResult, error) {
	if s, ok := plainString(out, outT); ok {
		return &callResult{Content: []abi.Content{abi.Text(s)}}, nil
	}
	b, err := marshalResult(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %v", err)
	}
	if string(b) == "null" && outT.Kind() == reflect.Map {
		b = []byte("{}")
	}
	r := &callResult{Content: []abi.Content{abi.Text(string(b))}}
	if len(b) > 0 && b[0] == '{' {
		r.StructuredContent = b
	}
	return r, nil
}

// marshalResult is marshal(out), byte for byte. A value implementing
// json.Marshaler (not a nil pointer) whose MarshalJSON output is compact,
// valid JSON is that output as is: what encoding/json writes after calling
// MarshalJSON and re-scanning its output with its byte-at-a-time scanner
// (a function call per byte, slow in wasm). Other output (whitespace,
// invalid JSON) and other values go through marshal, which calls
// MarshalJSON again.
func marshalResult(out any) ([]byte, error) {
	if m, ok := out.(json.Marshaler); ok {
		if v := reflect.ValueOf(out); v.Kind() != reflect.Pointer || !v.IsNil() {
			if b, err := m.MarshalJSON(); err == nil && compactJSON(b) {
				return b, nil
			}
		}
	}
	return marshal(out)
}

// compactJSON reports whether b is one JSON value (RFC 8259) without
// whitespace outside its strings: what encoding/json's compaction without
// HTML escaping leaves unchanged. Values nested deeper than maxCompactDepth
// are reported false (the caller then takes encoding/json's path).
func compactJSON(b []byte) bool {
	p := jsonCheck{b: b}
	return p.value(0) && p.i == len(b)
}

const maxCompactDepth = 1000

type jsonCheck struct {
	b []byte
	i int
}

func (p *jsonCheck) value(depth int) bool {
	if p.i >= len(p.b) || depth > maxCompactDepth {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return true
		}
		for {
			if p.i >= len(p.b) || p.b[p.i] != '"' || !p.str() {
				return false
			}
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return false
			}
			p.i++
			if !p.value(depth + 1) {
				return false
			}
			if more, ok := p.next('}'); !more {
				return ok
			}
		}
	case c == '[':
		p.i++
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return true
		}
		for {
			if !p.value(depth + 1) {
				return false
			}
			if more, ok := p.next(']'); !more {
				return ok
			}
		}
	case c == '"':
		return p.str()
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.num()
	}
	return false
}

// next consumes what follows an object member or an array element: a ','
// (more: another one follows) or the container's closing byte (more false,
// ok). Anything else, or the end of the input, is ok false.
func (p *jsonCheck) next(closing byte) (more, ok bool) {
	if p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return true, true
	case closing:
		p.i++
		return false, true
	}
	return false, false
}

func (p *jsonCheck) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str checks the string at p.i (its opening quote): bytes from 0x20 on
// (encoding/json accepts invalid UTF-8 and copies it), escapes \" \\ \/
// \b \f \n \r \t \uXXXX.
func (p *jsonCheck) str() bool {
	b := p.b
	for i := p.i + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(b) {
				return false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

// num checks -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at p.i.
func (p *jsonCheck) num() bool {
	b, i := p.b, p.i
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	p.i = i
	return true
}

// plainString reports whether out is returned as plain text: Out is a
// string type, or an interface holding a string, without its own JSON
// encoding.
func plainString(out any, outT reflect.Type) (string, bool) {
	if outT.Kind() == reflect.Interface {
		s, ok := out.(string)
		return s, ok
	}
	if outT.Kind() == reflect.String && !customJSON(outT) && !customText(outT) {
		return reflect.ValueOf(out).String(), true
	}
	return "", false
}

// Now is the session's virtual clock (weft_clock_v1.now): on GOOS=wasip1 the
// same instant as time.Now() during a call; natively it reads the Host passed
// to Dispatch (core/module's NativeHost: the session's clock), where
// time.Now() would be the machine's. A module that must behave the same
// natively and in wasm reads time with Now. Outside Dispatch, natively, it
// is the Unix epoch.
func Now() time.Time {
	if h := currentHost(); h != nil {
		return time.Unix(0, h.Now()).UTC()
	}
	return time.Unix(0, 0).UTC()
}

// Rand is the session's deterministic random stream (weft_rand_v1.fill) as
// an io.Reader: on GOOS=wasip1 the stream crypto/rand reads during a call;
// natively the Host's (NativeHost: the same ChaCha8 stream of the session
// seed and call sequence), where crypto/rand would read the machine's.
// Outside Dispatch, natively, it reads zero bytes.
var Rand io.Reader = randReader{}

type randReader struct{}

func (randReader) Read(p []byte) (int, error) {
	if h := currentHost(); h != nil {
		h.Rand(p)
	} else {
		clear(p)
	}
	return len(p), nil
}
