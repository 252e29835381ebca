package module

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	sqlhost "github.com/weft-dev/weft/hosts/sql"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// serverLayer is what makes a Module a synthesized server on a shared
// interpreter: the interpreter Module whose compiled code and pool of warm
// instances run its calls, and its program, sent by digest.
type serverLayer struct {
	interp *Module
	digest string // the program's digest (spec.ProgramDigest)
	// The request's "program" member, spliced onto the request's closing
	// brace (`,"program":{...}}`): by digest only; with the program
	// compiled by the host (sdk/interp.Compile, no source: decoding it is
	// ~10x cheaper in the guest than compiling the source; the source
	// when the host could not compile it); with the source.
	byDigest, withProgram, withSource []byte
	resent                            atomic.Int64 // program_missing answers resent with the source
}

// maxTrackedPrograms bounds the program digests remembered per interpreter
// instance; past it the set starts over (a forgotten program is sent
// compiled again, which the guest ignores when it still holds it; a
// program the guest evicted costs one program_missing round trip). It is
// above what the guest's program cache holds at its default budget
// (sdk/interp.DefaultMaxProgramBytes: ~15,000 bank-sized programs), so at
// 10,000 servers a warm call is sent by digest.
const maxTrackedPrograms = 1 << 15

func newServerLayer(s *spec.Server) (*serverLayer, error) {
	p := s.ProgramRef()
	full, err := abi.Marshal(p)
	if err != nil {
		return nil, err
	}
	short, err := abi.Marshal(abi.Program{Digest: p.Digest})
	if err != nil {
		return nil, err
	}
	prog := full
	if c, err := interp.Compile(p.Source); err == nil {
		if prog, err = abi.Marshal(abi.Program{Digest: p.Digest, Errors: p.Errors, Compiled: c}); err != nil {
			return nil, err
		}
	}
	suffix := func(b []byte) []byte { return append(append([]byte(`,"program":`), b...), '}') }
	return &serverLayer{digest: p.Digest, byDigest: suffix(short), withProgram: suffix(prog), withSource: suffix(full)}, nil
}

// request adds a program member (one of l's suffixes) to a call request
// (the JSON object Module.Call or ReadResource encoded, without one).
func (l *serverLayer) request(req, suffix []byte) ([]byte, error) {
	req = bytes.TrimSpace(req)
	if len(req) < 2 || req[len(req)-1] != '}' {
		return nil, &outputError{"call request is not a JSON object"}
	}
	out := make([]byte, 0, len(req)-1+len(suffix))
	return append(append(out, req[:len(req)-1]...), suffix...), nil
}

// invoke runs req on inst: as is for a module, with the program for a
// synthesized server. The program goes only to an instance not known to
// hold it, compiled by the host; an instance that answers program_missing
// (it never had it, evicted it, or could not decode the compiled form) is
// sent the source once more. ans is out decoded when invoke had to decode
// it (a server's answer that may be an internalError), so that the caller
// does not decode it again; else nil.
func (m *Module) invoke(ctx context.Context, inst *instance, req []byte) (out []byte, ans *abi.Answer, err error) {
	l := m.srv
	if l == nil {
		out, err = inst.invoke(ctx, req)
		return out, nil, err
	}
	suffix := l.withProgram
	if inst.programs[l.digest] {
		suffix = l.byDigest
	}
	r, err := l.request(req, suffix)
	if err != nil {
		return nil, nil, err
	}
	if out, err = inst.invoke(ctx, r); err != nil {
		return nil, nil, err
	}
	// program_missing: sent by digest, the program is sent compiled (the
	// guest evicted it: decoding is ~3x cheaper than compiling the
	// source); sent compiled, the source (the guest could not decode it).
	for ans = internalAnswer(out); ans != nil && ans.Code == abi.InternalProgramMissing && !bytes.Equal(suffix, l.withSource); ans = internalAnswer(out) {
		l.resent.Add(1)
		if bytes.Equal(suffix, l.byDigest) {
			suffix = l.withProgram
		} else {
			suffix = l.withSource
		}
		if r, err = l.request(req, suffix); err != nil {
			return nil, nil, err
		}
		if out, err = inst.invoke(ctx, r); err != nil {
			return nil, nil, err
		}
	}
	if inst.programs == nil || len(inst.programs) >= maxTrackedPrograms {
		inst.programs = map[string]bool{}
	}
	inst.programs[l.digest] = true
	return out, ans, nil
}

// internalAnswer is out decoded when it may be an internalError answer (it
// holds the member name), or nil: the one decode of such an answer, reused
// by parseResponse.
func internalAnswer(out []byte) *abi.Answer {
	if !bytes.Contains(out, []byte(`"internalError"`)) {
		return nil
	}
	ans, err := abi.DecodeAnswer(out)
	if err != nil {
		return nil
	}
	return ans
}

// internalKind is the failure of an internalError answer by its code
// (abi.InternalError.Code): a call out of its interpreter step budget is
// ErrStepBudget (the program's runaway loop, deterministic: not retried); a
// program its call's deadline cancelled is ErrDeadline; every other
// internal error (a failed statement of the program, fail(), a runtime
// error, a program that does not compile, or none) is the module's bug
// (ErrTrap), attributed to the environment.
func internalKind(code string) error {
	switch code {
	case abi.InternalSteps:
		return ErrStepBudget
	case abi.InternalDeadline:
		return ErrDeadline
	}
	return ErrTrap
}

// policyFor is the table policy of a call of tool: the tool's own for a
// synthesized server (its reads and writes), else the manifest's.
func (m *Module) policyFor(tool string) sqlhost.Policy {
	if p, ok := m.toolPolicy[tool]; ok {
		return p
	}
	return m.policy
}

// ToolPolicy returns the table policy a call of tool runs under: for a
// synthesized server the tool's declared writes (Owns: read and written)
// and reads (Reads: read only), for the export hook every table read-only;
// for a module the manifest's tables.
func (m *Module) ToolPolicy(tool string) sqlhost.Policy { return m.policyFor(tool) }

// toolPolicies is the per-tool table policy of a server: each tool may
// write its Writes and read its Reads and Writes, nothing else; the export
// hook (and the export of changed records) reads every table and writes
// none.
func toolPolicies(s *spec.Server) map[string]sqlhost.Policy {
	out := make(map[string]sqlhost.Policy, len(s.Tools)+1)
	for _, t := range s.Tools {
		out[t.Name] = sqlhost.Policy{
			Owns:  append([]string{}, t.Writes...),
			Reads: append([]string{}, t.Reads...),
		}
	}
	out[ExportTool] = sqlhost.Policy{Owns: []string{}, Reads: s.Tables()}
	out[ExportChangedTool] = sqlhost.Policy{Owns: []string{}, Reads: s.Tables()}
	return out
}

// serverModule is the Module of server s without its way of running calls:
// the server's manifest (spec.Server.Manifest), compiled input schemas, the
// whole-server policy and the per-tool policies. A spec that does not
// validate is a *ModuleError naming the server, tool and field.
func serverModule(s *spec.Server, digestOf func(manifest []byte) string) (*Module, error) {
	name := "server:" + s.Name
	if err := s.Validate(); err != nil {
		return nil, &ModuleError{Digest: name, Reason: "invalid server spec", Err: err}
	}
	man := s.Manifest()
	raw, err := abi.Marshal(man)
	if err != nil {
		return nil, &ModuleError{Digest: name, Reason: "manifest", Err: err}
	}
	m := &Module{manifest: Manifest(man), manifestJSON: raw}
	if m.schemas, err = m.manifest.compileSchemas(); err != nil {
		return nil, &ModuleError{Digest: name, Reason: "manifest", Err: err}
	}
	m.policy = m.manifest.SQLPolicy()
	m.toolPolicy = toolPolicies(s)
	if digestOf != nil {
		m.digest = digestOf(raw)
	}
	return m, nil
}

// ErrNotInterpreter: LoadServer was given a Module that is not a compiled
// interpreter module of the same Runtime.
var ErrNotInterpreter = errors.New("not an interpreter module")

// LoadServer returns the Module of synthesized server s run by interp, the
// interpreter module (modules/interp) compiled by r: the server's own
// manifest, input schemas and per-tool table policy (Module.ToolPolicy),
// its calls run on interp's compiled code and shared pool of warm
// instances, so thousands of servers cost one compilation and one pool.
// Loading compiles nothing and runs nothing. Each call sends the program by
// digest and its source only to an instance that has not been sent it
// (docs/abi.md, "Program").
//
// An interpreter's internal error answers classify by code: out of the step
// budget is ErrStepBudget, cancelled by the call's deadline ErrDeadline,
// anything else (a failed statement, fail(), a runtime error, a program
// that does not compile) ErrTrap. A statement
// outside the tool's declared tables is refused ("denied", listed in
// Result.Denied or CallError.Denied) and, since the interpreter treats a
// failed statement as the program's bug, fails the call with ErrTrap.
//
// A spec that does not validate is a *ModuleError (ErrInvalidModule)
// naming server, tool and field; an interp that is nil, native, a server
// itself or of another Runtime wraps ErrNotInterpreter. Digest is
// "server:sha256:<hex>" of the server's manifest, program digest and the
// interpreter's digest.
func (r *Runtime) LoadServer(ctx context.Context, interp *Module, s *spec.Server) (*Module, error) {
	switch {
	case interp == nil || interp.wrt == nil || interp.native != nil:
		return nil, fmt.Errorf("module: LoadServer: %w (need a compiled wasm module)", ErrNotInterpreter)
	case interp.srv != nil:
		return nil, fmt.Errorf("module: LoadServer: %w (%s is a synthesized server)", ErrNotInterpreter, interp.manifest.Name)
	case interp.rt != r:
		return nil, fmt.Errorf("module: LoadServer: %w (compiled by another Runtime)", ErrNotInterpreter)
	case len(interp.manifest.Tools) > 0:
		return nil, fmt.Errorf("module: LoadServer: %w (%s declares tools of its own)", ErrNotInterpreter, interp.manifest.Name)
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	layer, err := newServerLayer(s)
	if err != nil {
		return nil, err
	}
	layer.interp = interp
	m, err := serverModule(s, func(man []byte) string {
		h := sha256.New()
		h.Write(man)
		h.Write([]byte{0})
		h.Write([]byte(layer.digest))
		h.Write([]byte{0})
		h.Write([]byte(interp.digest))
		return "server:sha256:" + hex.EncodeToString(h.Sum(nil))
	})
	if err != nil {
		return nil, err
	}
	m.rt, m.wrt, m.srv = r, interp.wrt, layer
	return m, nil
}

// Interpreter returns the interpreter Module a synthesized server's calls
// run on, or nil for a module.
func (m *Module) Interpreter() *Module {
	if m.srv == nil {
		return nil
	}
	return m.srv.interp
}

// ErrNoInterpreter: a server bundle's interpreter module is not in the
// registry.
var ErrNoInterpreter = errors.New("interpreter module not in the registry: run make build (or weft module build ./modules/interp)")

// Load returns the Module of a bundle: a module bundle's wasm compiled by r
// (Compile), or a server bundle (Bundle.IsServer) loaded on its
// interpreter, which reg must hold under the digest the manifest names
// (ErrNoInterpreter otherwise; compiled once per runtime).
func (r *Runtime) Load(ctx context.Context, reg *Registry, b *Bundle) (*Module, error) {
	if !b.IsServer() {
		return r.Compile(ctx, b.Wasm)
	}
	s, err := b.Spec()
	if err != nil {
		return nil, err
	}
	interp, err := r.interpreter(ctx, reg, b.Manifest.Interpreter)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", s.Name, err)
	}
	return r.LoadServer(ctx, interp, s)
}

// interpreter compiles the interpreter bundle ref of reg.
func (r *Runtime) interpreter(ctx context.Context, reg *Registry, ref string) (*Module, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: %s (no registry)", ErrNoInterpreter, ref)
	}
	if m := r.cachedInterpreter(ref); m != nil {
		return m, nil
	}
	ib, _, err := reg.Get(ref)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNoInterpreter, ref)
	}
	if err != nil {
		return nil, err
	}
	if ib.IsServer() {
		return nil, fmt.Errorf("%w: %s is a synthesized server", ErrNotInterpreter, ref)
	}
	m, err := r.Compile(ctx, ib.Wasm)
	if err == nil {
		r.keepInterpreter(ref, m)
	}
	return m, err
}

// InterpreterName is the registry name of the interpreter module
// (modules/interp); a spec directory is bundled against InterpreterName's
// latest tag.
const InterpreterName = "weft-interp"

// ResolveInterpreter returns the bundle digest of the interpreter module in
// reg (InterpreterName:latest), or ErrNoInterpreter.
func ResolveInterpreter(reg *Registry) (string, error) {
	d, err := reg.Resolve(InterpreterName)
	if errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("%w: no %s:latest in %s", ErrNoInterpreter, InterpreterName, reg.Dir())
	}
	return d, err
}

// IsServerDir reports whether dir is a spec directory (it holds
// server.json): what `weft module build` and `weft module test` bundle as a
// synthesized server instead of compiling Go.
func IsServerDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, BundleServer))
	return err == nil && st.Mode().IsRegular()
}
