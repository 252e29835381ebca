package module

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Interrupting guest code.
//
// A call must stop at its deadline even when the guest spins without
// calling the host. wazero's own mechanism (RuntimeConfig
// WithCloseOnContextDone) makes every loop header leave the compiled code
// for Go to check whether the module was closed. Go's wasm output has a
// loop at the top of nearly every function (its resumption dispatch), so
// that check runs on almost every function call and made Go guests several
// times slower (measured on the retail module: the export hook 9.4 s with
// it, 2.4 s without).
//
// Instead, instrumentInterrupt rewrites the module before compiling it:
// it adds a mutable i32 global, exported as interruptExport, and at the
// start of every function body and every loop body inserts
//
//	global.get $interrupt
//	if
//	  unreachable
//	end
//
// which compiles to a load and a branch. The host sets the global when the
// call's context is done (instance.invoke); the guest traps at its next
// loop iteration or function entry, and the trap is classified by the
// context's error like wazero's own close. Modules the rewriter does not
// understand (opcodes outside the MVP, sign extension, saturating
// conversions, bulk memory, reference types and tail calls) are compiled
// unchanged on a runtime with wazero's check instead.

// interruptExport is the name of the added global's export.
const interruptExport = "weft.interrupt"

var errNoInstrument = errors.New("module: cannot instrument")

// instrumentInterrupt returns wasm with the interrupt checks added.
func instrumentInterrupt(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || binary.LittleEndian.Uint32(wasm[4:8]) != 1 {
		return nil, fmt.Errorf("%w: not a wasm 1 binary", errNoInstrument)
	}
	type section struct {
		id   byte
		body []byte
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
	importedGlobals, definedGlobals := uint32(0), uint32(0)
	gi, ei, ci := -1, -1, -1
	for i, s := range secs {
		switch s.id {
		case 2:
			n, err := countImportedGlobals(s.body)
			if err != nil {
				return nil, err
			}
			importedGlobals = n
		case 6:
			n, _, err := readU32(s.body)
			if err != nil {
				return nil, err
			}
			definedGlobals, gi = n, i
		case 7:
			ei = i
			if err := checkExportNames(s.body); err != nil {
				return nil, err
			}
		case 10:
			ci = i
		}
	}
	if gi < 0 || ei < 0 || ci < 0 {
		return nil, fmt.Errorf("%w: no global, export or code section", errNoInstrument)
	}
	gidx := importedGlobals + definedGlobals

	// Global section: one more i32 global, mutable, initially 0.
	gbody, err := appendToVec(secs[gi].body, []byte{0x7F, 0x01, 0x41, 0x00, 0x0B})
	if err != nil {
		return nil, err
	}
	secs[gi].body = gbody
	// Export section: export it.
	exp := appendName(nil, interruptExport)
	exp = append(exp, 0x03)
	exp = appendU32(exp, gidx)
	ebody, err := appendToVec(secs[ei].body, exp)
	if err != nil {
		return nil, err
	}
	secs[ei].body = ebody
	// Code section.
	check := []byte{0x23}
	check = appendU32(check, gidx)
	check = append(check, 0x04, 0x40, 0x00, 0x0B)
	cbody, err := instrumentCode(secs[ci].body, check)
	if err != nil {
		return nil, err
	}
	secs[ci].body = cbody

	out := make([]byte, 0, len(wasm)+len(wasm)/8)
	out = append(out, wasm[:8]...)
	for _, s := range secs {
		out = append(out, s.id)
		out = appendU32(out, uint32(len(s.body)))
		out = append(out, s.body...)
	}
	return out, nil
}

// checkExportNames fails when the module already exports interruptExport.
func checkExportNames(b []byte) error {
	n, p, err := readU32(b)
	if err != nil {
		return err
	}
	for range n {
		l, k, err := readU32(b[p:])
		if err != nil {
			return err
		}
		p += k
		if p+int(l)+1 > len(b) {
			return fmt.Errorf("%w: bad export", errNoInstrument)
		}
		if string(b[p:p+int(l)]) == interruptExport {
			return fmt.Errorf("%w: the module exports %s itself", errNoInstrument, interruptExport)
		}
		p += int(l) + 1
		if p, err = skipLEB(b, p); err != nil {
			return err
		}
	}
	return nil
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

func countImportedGlobals(b []byte) (uint32, error) {
	n, p, err := readU32(b)
	if err != nil {
		return 0, err
	}
	var globals uint32
	skipName := func() error {
		l, k, err := readU32(b[p:])
		if err != nil {
			return err
		}
		p += k + int(l)
		if p > len(b) {
			return fmt.Errorf("%w: bad import", errNoInstrument)
		}
		return nil
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
		if err := skipName(); err != nil {
			return 0, err
		}
		if err := skipName(); err != nil {
			return 0, err
		}
		if p >= len(b) {
			return 0, fmt.Errorf("%w: bad import", errNoInstrument)
		}
		kind := b[p]
		p++
		switch kind {
		case 0x00: // func
			if p, err = skipLEB(b, p); err != nil {
				return 0, err
			}
		case 0x01: // table
			p++ // reftype
			if err := limits(); err != nil {
				return 0, err
			}
		case 0x02: // memory
			if err := limits(); err != nil {
				return 0, err
			}
		case 0x03: // global
			p += 2
			globals++
		default:
			return 0, fmt.Errorf("%w: import kind %#x", errNoInstrument, kind)
		}
		if p > len(b) {
			return 0, fmt.Errorf("%w: bad import", errNoInstrument)
		}
	}
	return globals, nil
}

// instrumentCode inserts check at the start of every function body and
// after every loop instruction of the code section body b.
func instrumentCode(b []byte, check []byte) ([]byte, error) {
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
		fn, err = instrumentFunc(fn[:0], b[p:p+int(size)], check)
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

func instrumentFunc(out, body, check []byte) ([]byte, error) {
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
		case op == 0x0C, op == 0x0D, op == 0x10, op == 0x12, op >= 0x20 && op <= 0x26, op == 0xD2,
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
