package module

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// Interrupting guest code.
//
// A call must stop at its deadline even when the guest spins without
// calling the host, and a spinning guest must not stall the host's garbage
// collector. wazero's own mechanism (RuntimeConfig WithCloseOnContextDone)
// makes every loop header leave the compiled code for Go to check whether
// the module was closed. Go's wasm output has a loop at the top of nearly
// every function (its resumption dispatch), so that check runs on almost
// every function call and made Go guests several times slower.
//
// Instead, instrumentInterrupt rewrites every module before compiling it:
// it adds a mutable i32 global $budget (initially yieldEvery) and an
// imported host function weft_interrupt_v1.yield () -> i32, and at the
// start of every function body and every loop body inserts
//
//	global.get $budget
//	i32.const 1
//	i32.sub
//	global.set $budget
//	global.get $budget
//	i32.const 1
//	i32.lt_s
//	if
//	  call $yield
//	  global.set $budget
//	end
//
// which compiles to a load, a decrement, a store and a branch (a signed
// comparison, not a test for zero: a guest trapped inside yield leaves the
// budget at 0, and must yield at once if the instance is called again). Every
// yieldEvery checks the guest calls yield: Go code, so a stop-the-world of
// the garbage collector (and Go's preemption) gets its safepoint there;
// yield lets other goroutines run (runtime.Gosched), then traps the guest
// with sys.ExitCodeDeadlineExceeded or sys.ExitCodeContextCanceled when the
// call's context is done or past its deadline, and otherwise returns
// yieldEvery for the next round. No other goroutine writes to the guest:
// the deadline is found by the guest's own goroutine, at most yieldEvery
// checks after it passed.
//
// Because the import is appended to the function index space after the
// module's own imports, every reference to a defined function (call,
// return_call, ref.func, exports, start, element segments, constant
// expressions, the name section) is renumbered. Modules the rewriter does
// not understand (opcodes outside wasm 2.0 without SIMD, threads or
// exceptions) are refused at Compile with ErrInvalidModule: there is one
// runtime and one deadline mechanism.

// interruptModule and yieldName name the host function instrumentInterrupt
// imports.
const (
	interruptModule = "weft_interrupt_v1"
	yieldName       = "yield"
)

// yieldEvery is the number of checks between two calls of yield. At a
// nanosecond or two per check of a tight loop that is a Go safepoint (and
// a deadline check) every ~50 µs, for ~0.2 % of the loop's time.
const yieldEvery = 1 << 15

var errNoInstrument = errors.New("module: cannot instrument")

// instantiateInterrupt adds the weft_interrupt_v1 host module to rt.
func instantiateInterrupt(ctx context.Context, rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder(interruptModule).
		NewFunctionBuilder().
		WithGoFunction(api.GoFunc(yieldHost), nil, []api.ValueType{api.ValueTypeI32}).
		Export(yieldName).
		Instantiate(ctx)
	return err
}

// yieldHost is weft_interrupt_v1.yield: a safepoint for the Go runtime,
// the deadline check, and the next budget of checks.
func yieldHost(ctx context.Context, stack []uint64) {
	runtime.Gosched()
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
		}
		panic(sys.NewExitError(sys.ExitCodeContextCanceled))
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
	}
	stack[0] = yieldEvery
}

// section is one section of a wasm binary.
type section struct {
	id   byte
	body []byte
}

// sectionRank orders the known sections as the binary format requires
// (the data count section, 12, sits between elements and code).
func sectionRank(id byte) int {
	switch {
	case id == 12:
		return 10
	case id >= 10:
		return int(id) + 1
	default:
		return int(id)
	}
}

// withSection returns secs with an empty section id inserted at its place
// when there is none, and the index of that section.
func withSection(secs []section, id byte, empty []byte) ([]section, int) {
	at := len(secs)
	for i, s := range secs {
		if s.id == id {
			return secs, i
		}
		if s.id != 0 && sectionRank(s.id) > sectionRank(id) {
			at = i
			break
		}
	}
	secs = append(secs, section{})
	copy(secs[at+1:], secs[at:])
	secs[at] = section{id, empty}
	return secs, at
}

// instrumentInterrupt returns wasm with the interrupt checks added.
func instrumentInterrupt(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || binary.LittleEndian.Uint32(wasm[4:8]) != 1 {
		return nil, fmt.Errorf("%w: not a wasm 1 binary", errNoInstrument)
	}
	var secs []section
	for p := 8; p < len(wasm); {
		id := wasm[p]
		p++
		n, k, err := readU32(wasm[p:])
		if err != nil {
			return nil, err
		}
		p += k
		if uint64(p)+uint64(n) > uint64(len(wasm)) {
			return nil, fmt.Errorf("%w: section %d overruns the binary", errNoInstrument, id)
		}
		secs = append(secs, section{id, wasm[p : p+int(n)]})
		p += int(n)
	}
	hasCode := false
	for _, s := range secs {
		hasCode = hasCode || s.id == 10
	}
	if !hasCode {
		return wasm, nil // no function runs: nothing to check
	}
	empty := []byte{0}
	// Type section: the type () -> i32 of yield.
	secs, ti := withSection(secs, 1, empty)
	tbody, typeIdx, err := typeIndex(secs[ti].body, []byte{0x60, 0x00, 0x01, 0x7F})
	if err != nil {
		return nil, err
	}
	secs[ti].body = tbody
	// Import section: yield, after the module's own imports.
	secs, ii := withSection(secs, 2, empty)
	imp, err := scanImports(secs[ii].body)
	if err != nil {
		return nil, err
	}
	entry := appendName(nil, interruptModule)
	entry = appendName(entry, yieldName)
	entry = append(entry, 0x00)
	entry = appendU32(entry, typeIdx)
	if secs[ii].body, err = appendToVec(secs[ii].body, entry); err != nil {
		return nil, err
	}
	yieldIdx := imp.funcs
	re := func(f uint32) uint32 {
		if f >= yieldIdx {
			return f + 1
		}
		return f
	}
	// Global section: $budget, after the existing globals.
	secs, gi := withSection(secs, 6, empty)
	definedGlobals, _, err := readU32(secs[gi].body)
	if err != nil {
		return nil, err
	}
	gidx := imp.globals + definedGlobals
	g := []byte{0x7F, 0x01, 0x41}
	g = appendS32(g, yieldEvery)
	g = append(g, 0x0B)
	for i := range secs {
		var body []byte
		switch secs[i].id {
		case 6:
			body, err = renumberGlobals(secs[i].body, re)
			if err == nil {
				body, err = appendToVec(body, g)
			}
		case 7:
			body, err = renumberExports(secs[i].body, re)
		case 8:
			var f uint32
			if f, _, err = readU32(secs[i].body); err == nil {
				body = appendU32(nil, re(f))
			}
		case 9:
			body, err = renumberElements(secs[i].body, re)
		case 10:
			check := []byte{0x23}
			check = appendU32(check, gidx)
			check = append(check, 0x41, 0x01, 0x6B, 0x24)
			check = appendU32(check, gidx)
			check = append(check, 0x23)
			check = appendU32(check, gidx)
			check = append(check, 0x41, 0x01, 0x48, 0x04, 0x40, 0x10) // i32.const 1, i32.lt_s, if, call
			check = appendU32(check, yieldIdx)
			check = append(check, 0x24)
			check = appendU32(check, gidx)
			check = append(check, 0x0B)
			body, err = instrumentCode(secs[i].body, check, re)
		case 0:
			body, err = renumberNames(secs[i].body, re)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		secs[i].body = body
	}
	out := make([]byte, 0, len(wasm)+len(wasm)/4)
	out = append(out, wasm[:8]...)
	for _, s := range secs {
		out = append(out, s.id)
		out = appendU32(out, uint32(len(s.body)))
		out = append(out, s.body...)
	}
	return out, nil
}

func readU32(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5 && i < len(b); i++ {
		v |= uint32(b[i]&0x7F) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: bad LEB128", errNoInstrument)
}

// skipLEB skips one LEB128 number (signed or not, up to 64 bits).
func skipLEB(b []byte, p int) (int, error) {
	for i := 0; i < 10; i++ {
		if p >= len(b) {
			break
		}
		c := b[p]
		p++
		if c&0x80 == 0 {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: bad LEB128", errNoInstrument)
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}

// appendToVec adds one encoded entry to a section that is a vector.
func appendToVec(body, entry []byte) ([]byte, error) {
	n, k, err := readU32(body)
	if err != nil {
		return nil, err
	}
	out := appendU32(nil, n+1)
	out = append(out, body[k:]...)
	return append(out, entry...), nil
}

// instrumentCode inserts check at the start of every function body and
// after every loop instruction of the code section body b, and renumbers
// the function indices of call, return_call and ref.func by re.
func instrumentCode(b []byte, check []byte, re func(uint32) uint32) ([]byte, error) {
	n, p, err := readU32(b)
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(b)+len(b)/4), n)
	var fn []byte
	for range n {
		size, k, err := readU32(b[p:])
		if err != nil {
			return nil, err
		}
		p += k
		if p+int(size) > len(b) {
			return nil, fmt.Errorf("%w: function body overruns the code section", errNoInstrument)
		}
		fn, err = instrumentFunc(fn[:0], b[p:p+int(size)], check, re)
		if err != nil {
			return nil, err
		}
		p += int(size)
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	if p != len(b) {
		return nil, fmt.Errorf("%w: trailing bytes in the code section", errNoInstrument)
	}
	return out, nil
}

func instrumentFunc(out, body, check []byte, re func(uint32) uint32) ([]byte, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errNoInstrument}, a...)...)
	}
	// Locals.
	n, p, err := readU32(body)
	if err != nil {
		return nil, err
	}
	for range n {
		if p, err = skipLEB(body, p); err != nil {
			return nil, err
		}
		if p >= len(body) {
			return nil, bad("bad locals")
		}
		switch t := body[p]; t {
		case 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
			p++
		default:
			return nil, bad("local type %#x", t)
		}
	}
	out = append(out, body[:p]...)
	out = append(out, check...)
	start := p
	leb := func() error {
		p, err = skipLEB(body, p)
		return err
	}
	for p < len(body) {
		op := body[p]
		p++
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			if p >= len(body) {
				return nil, bad("truncated block type")
			}
			switch body[p] {
			case 0x40, 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
				p++
			default:
				if err := leb(); err != nil { // type index (s33)
					return nil, err
				}
			}
			if op == 0x03 {
				out = append(out, body[start:p]...)
				out = append(out, check...)
				start = p
			}
		case op == 0x00, op == 0x01, op == 0x05, op == 0x0B, op == 0x0F, op == 0x1A, op == 0x1B,
			op >= 0x45 && op <= 0xC4, op == 0xD1:
		case op == 0x10, op == 0x12, op == 0xD2: // call, return_call, ref.func
			f, k, err := readU32(body[p:])
			if err != nil {
				return nil, err
			}
			out = append(out, body[start:p]...)
			out = appendU32(out, re(f))
			p += k
			start = p
		case op == 0x0C, op == 0x0D, op >= 0x20 && op <= 0x26,
			op == 0x41, op == 0x42, op == 0x3F, op == 0x40:
			if err := leb(); err != nil {
				return nil, err
			}
		case op == 0x11, op == 0x13: // call_indirect, return_call_indirect
			if err := leb(); err != nil {
				return nil, err
			}
			if err := leb(); err != nil {
				return nil, err
			}
		case op == 0x0E: // br_table
			cnt, k, err := readU32(body[p:])
			if err != nil {
				return nil, err
			}
			p += k
			for i := uint32(0); i <= cnt; i++ {
				if err := leb(); err != nil {
					return nil, err
				}
			}
		case op == 0x1C: // select t*
			cnt, k, err := readU32(body[p:])
			if err != nil {
				return nil, err
			}
			p += k + int(cnt)
		case op >= 0x28 && op <= 0x3E: // memarg
			if p >= len(body) {
				return nil, bad("truncated memarg")
			}
			multi := body[p]&0x40 != 0
			if err := leb(); err != nil {
				return nil, err
			}
			if multi {
				if err := leb(); err != nil {
					return nil, err
				}
			}
			if err := leb(); err != nil {
				return nil, err
			}
		case op == 0x43:
			p += 4
		case op == 0x44:
			p += 8
		case op == 0xD0:
			p++
		case op == 0xFC:
			sub, k, err := readU32(body[p:])
			if err != nil {
				return nil, err
			}
			p += k
			var imms int
			switch {
			case sub <= 7:
			case sub == 9, sub == 11, sub == 13, sub == 15, sub == 16, sub == 17:
				imms = 1
			case sub == 8, sub == 10, sub == 12, sub == 14:
				imms = 2
			default:
				return nil, bad("opcode 0xfc %d", sub)
			}
			for range imms {
				if err := leb(); err != nil {
					return nil, err
				}
			}
		default:
			return nil, bad("opcode %#x", op)
		}
		if p > len(body) {
			return nil, bad("truncated instruction")
		}
	}
	if p != len(body) {
		return nil, bad("truncated function body")
	}
	return append(out, body[start:]...), nil
}

// appendS32 appends v as a signed LEB128 number.
func appendS32(b []byte, v int32) []byte { return appendS64(b, int64(v)) }

// appendS64 appends v as a signed LEB128 number.
func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// typeIndex returns the type section body with functype ft (encoded,
// starting with 0x60) and its index: an identical existing type, else a
// new last one.
func typeIndex(body, ft []byte) ([]byte, uint32, error) {
	n, p, err := readU32(body)
	if err != nil {
		return nil, 0, err
	}
	for i := range n {
		if p >= len(body) || body[p] != 0x60 {
			return nil, 0, fmt.Errorf("%w: type %d is not a function type", errNoInstrument, i)
		}
		q := p + 1
		for range 2 {
			c, k, err := readU32(body[q:])
			if err != nil {
				return nil, 0, err
			}
			q += k + int(c) // value types are one byte each without GC types
			if q > len(body) {
				return nil, 0, fmt.Errorf("%w: bad type %d", errNoInstrument, i)
			}
		}
		if string(body[p:q]) == string(ft) {
			return body, i, nil
		}
		p = q
	}
	out, err := appendToVec(body, ft)
	return out, n, err
}

// imports counts the imported functions and globals of a module.
type imports struct{ funcs, globals uint32 }

// scanImports reads the import section body b; a module that imports
// interruptModule itself cannot be instrumented.
func scanImports(b []byte) (imports, error) {
	var im imports
	n, p, err := readU32(b)
	if err != nil {
		return im, err
	}
	name := func() (string, error) {
		l, k, err := readU32(b[p:])
		if err != nil {
			return "", err
		}
		p += k
		if p+int(l) > len(b) {
			return "", fmt.Errorf("%w: bad import", errNoInstrument)
		}
		s := string(b[p : p+int(l)])
		p += int(l)
		return s, nil
	}
	limits := func() error {
		if p >= len(b) {
			return fmt.Errorf("%w: bad limits", errNoInstrument)
		}
		flags := b[p]
		p++
		if flags > 0x07 {
			return fmt.Errorf("%w: limits flags %#x", errNoInstrument, flags)
		}
		if p, err = skipLEB(b, p); err != nil {
			return err
		}
		if flags&1 != 0 {
			if p, err = skipLEB(b, p); err != nil {
				return err
			}
		}
		return nil
	}
	for range n {
		mod, err := name()
		if err != nil {
			return im, err
		}
		if mod == interruptModule {
			return im, fmt.Errorf("%w: the module imports %s itself", errNoInstrument, interruptModule)
		}
		if _, err := name(); err != nil {
			return im, err
		}
		if p >= len(b) {
			return im, fmt.Errorf("%w: bad import", errNoInstrument)
		}
		kind := b[p]
		p++
		switch kind {
		case 0x00: // func
			if p, err = skipLEB(b, p); err != nil {
				return im, err
			}
			im.funcs++
		case 0x01: // table
			p++ // reftype
			if err := limits(); err != nil {
				return im, err
			}
		case 0x02: // memory
			if err := limits(); err != nil {
				return im, err
			}
		case 0x03: // global
			p += 2
			im.globals++
		default:
			return im, fmt.Errorf("%w: import kind %#x", errNoInstrument, kind)
		}
		if p > len(b) {
			return im, fmt.Errorf("%w: bad import", errNoInstrument)
		}
	}
	return im, nil
}

// copyExpr appends the constant expression at b[p:] (through its end
// opcode) to out, ref.func renumbered by re, and returns the position after it.
func copyExpr(out, b []byte, p int, re func(uint32) uint32) ([]byte, int, error) {
	for p < len(b) {
		op := b[p]
		out = append(out, op)
		p++
		switch {
		case op == 0x0B:
			return out, p, nil
		case op == 0x41, op == 0x42, op == 0x23: // i32/i64.const, global.get
			q, err := skipLEB(b, p)
			if err != nil {
				return nil, 0, err
			}
			out, p = append(out, b[p:q]...), q
		case op == 0x43:
			if p+4 > len(b) {
				return nil, 0, fmt.Errorf("%w: truncated constant", errNoInstrument)
			}
			out, p = append(out, b[p:p+4]...), p+4
		case op == 0x44:
			if p+8 > len(b) {
				return nil, 0, fmt.Errorf("%w: truncated constant", errNoInstrument)
			}
			out, p = append(out, b[p:p+8]...), p+8
		case op == 0xD0: // ref.null t
			if p >= len(b) {
				return nil, 0, fmt.Errorf("%w: truncated ref.null", errNoInstrument)
			}
			out, p = append(out, b[p]), p+1
		case op == 0xD2:
			f, k, err := readU32(b[p:])
			if err != nil {
				return nil, 0, err
			}
			out, p = appendU32(out, re(f)), p+k
		case op == 0x6A, op == 0x6B, op == 0x6C, op == 0x7C, op == 0x7D, op == 0x7E: // extended constants
		default:
			return nil, 0, fmt.Errorf("%w: opcode %#x in a constant expression", errNoInstrument, op)
		}
	}
	return nil, 0, fmt.Errorf("%w: unterminated constant expression", errNoInstrument)
}

// renumberGlobals renumbers ref.func in the global section body b.
func renumberGlobals(b []byte, re func(uint32) uint32) ([]byte, error) {
	n, p, err := readU32(b)
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, len(b)), b[:p]...)
	for range n {
		if p+2 > len(b) {
			return nil, fmt.Errorf("%w: bad global", errNoInstrument)
		}
		out = append(out, b[p], b[p+1]) // value type, mutability
		if out, p, err = copyExpr(out, b, p+2, re); err != nil {
			return nil, err
		}
	}
	if p != len(b) {
		return nil, fmt.Errorf("%w: trailing bytes in the global section", errNoInstrument)
	}
	return out, nil
}

// renumberExports renumbers the function exports of the export section
// body b.
func renumberExports(b []byte, re func(uint32) uint32) ([]byte, error) {
	n, p, err := readU32(b)
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, len(b)+8), b[:p]...)
	for range n {
		l, k, err := readU32(b[p:])
		if err != nil {
			return nil, err
		}
		end := p + k + int(l) + 1
		if end > len(b) {
			return nil, fmt.Errorf("%w: bad export", errNoInstrument)
		}
		kind := b[end-1]
		out = append(out, b[p:end]...)
		idx, k, err := readU32(b[end:])
		if err != nil {
			return nil, err
		}
		if kind == 0x00 {
			idx = re(idx)
		}
		out = appendU32(out, idx)
		p = end + k
	}
	return out, nil
}

// renumberElements renumbers the function indices and ref.func
// expressions of the element section body b (segment flags 0 to 7).
func renumberElements(b []byte, re func(uint32) uint32) ([]byte, error) {
	n, p, err := readU32(b)
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, len(b)+16), b[:p]...)
	leb := func() error {
		q, err := skipLEB(b, p)
		if err != nil {
			return err
		}
		out, p = append(out, b[p:q]...), q
		return nil
	}
	for range n {
		flags, k, err := readU32(b[p:])
		if err != nil {
			return nil, err
		}
		if flags > 7 {
			return nil, fmt.Errorf("%w: element segment flags %d", errNoInstrument, flags)
		}
		out, p = append(out, b[p:p+k]...), p+k
		if flags&2 != 0 && flags&1 == 0 { // explicit table index
			if err := leb(); err != nil {
				return nil, err
			}
		}
		if flags&1 == 0 { // active: offset expression
			if out, p, err = copyExpr(out, b, p, re); err != nil {
				return nil, err
			}
		}
		if flags&3 != 0 { // element kind or reference type
			if p >= len(b) {
				return nil, fmt.Errorf("%w: bad element segment", errNoInstrument)
			}
			out, p = append(out, b[p]), p+1
		}
		cnt, k, err := readU32(b[p:])
		if err != nil {
			return nil, err
		}
		out, p = append(out, b[p:p+k]...), p+k
		for range cnt {
			if flags&4 != 0 {
				if out, p, err = copyExpr(out, b, p, re); err != nil {
					return nil, err
				}
				continue
			}
			f, k, err := readU32(b[p:])
			if err != nil {
				return nil, err
			}
			out, p = appendU32(out, re(f)), p+k
		}
	}
	if p != len(b) {
		return nil, fmt.Errorf("%w: trailing bytes in the element section", errNoInstrument)
	}
	return out, nil
}

// renumberNames renumbers the function and local names of a custom
// "name" section body b; other custom sections are returned unchanged.
func renumberNames(b []byte, re func(uint32) uint32) ([]byte, error) {
	l, k, err := readU32(b)
	if err != nil || k+int(l) > len(b) || string(b[k:k+int(l)]) != "name" {
		return b, nil
	}
	p := k + int(l)
	out := append(make([]byte, 0, len(b)+64), b[:p]...)
	for p < len(b) {
		id := b[p]
		size, k, err := readU32(b[p+1:])
		if err != nil {
			return nil, err
		}
		start, end := p+1+k, p+1+k+int(size)
		if end > len(b) {
			return nil, fmt.Errorf("%w: bad name subsection", errNoInstrument)
		}
		sub := b[start:end]
		if id == 1 || id == 2 { // function names, local names: keyed by function index
			if sub, err = renumberNameMap(sub, re, id == 2); err != nil {
				return nil, err
			}
		}
		out = append(out, id)
		out = appendU32(out, uint32(len(sub)))
		out = append(out, sub...)
		p = end
	}
	return out, nil
}

// renumberNameMap renumbers the keys of a name map (vec(idx name)), or,
// when indirect, of an indirect name map (vec(idx vec(idx name))).
func renumberNameMap(b []byte, re func(uint32) uint32, indirect bool) ([]byte, error) {
	n, p, err := readU32(b)
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, len(b)+8), b[:p]...)
	skipName := func(q int) (int, error) {
		l, k, err := readU32(b[q:])
		if err != nil {
			return 0, err
		}
		if q+k+int(l) > len(b) {
			return 0, fmt.Errorf("%w: bad name", errNoInstrument)
		}
		return q + k + int(l), nil
	}
	for range n {
		f, k, err := readU32(b[p:])
		if err != nil {
			return nil, err
		}
		out, p = appendU32(out, re(f)), p+k
		q := p
		if indirect {
			m, k, err := readU32(b[q:])
			if err != nil {
				return nil, err
			}
			q += k
			for range m {
				if q, err = skipLEB(b, q); err != nil {
					return nil, err
				}
				if q, err = skipName(q); err != nil {
					return nil, err
				}
			}
		} else if q, err = skipName(q); err != nil {
			return nil, err
		}
		out, p = append(out, b[p:q]...), q
	}
	return out, nil
}
