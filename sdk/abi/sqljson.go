package abi

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// DecodeSQLResponse decodes a weft_sql_v1 response (docs/abi.md) into the
// shared SQLResponse, each cell the raw JSON text of its value (a slice of
// raw), with the meaning json.Unmarshal(raw, &resp) gives it; an error is
// json.Unmarshal's for malformed JSON.
//
// It is what a guest should use. encoding/json's decoder runs its scanner a
// function call per input byte and decodes every cell through reflection;
// in wasm each call is expensive (wazero checks for a closed module at every
// function entry), and responses are the bulk of what a module reads. The
// scanner below walks the bytes in loops and leaves to encoding/json only
// what it does not handle (the error object, numbers of rows_affected and
// last_insert_id, and any key other than the six of SQLResponse, which
// makes it decode the whole response with encoding/json: json.Unmarshal
// matches keys case-insensitively).
func DecodeSQLResponse(raw []byte) (*SQLResponse[json.RawMessage], error) {
	var resp SQLResponse[json.RawMessage]
	err := decodeResponse(raw, &resp)
	if err != nil {
		resp = SQLResponse[json.RawMessage]{}
		err = json.Unmarshal(raw, &resp)
	}
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

// CellString is the string a response cell holds (json.Unmarshal of the
// cell into a string), decoded without encoding/json when it has no
// escapes.
func CellString(cell json.RawMessage) (string, error) {
	if len(cell) >= 2 && cell[0] == '"' && cell[len(cell)-1] == '"' {
		if s, err := unquote(cell); err == nil {
			return s, nil
		}
	}
	var s string
	err := json.Unmarshal(cell, &s)
	return s, err
}

var errSyntax = errors.New("invalid JSON")

type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jscan) expect(c byte) error {
	if s.peek() != c {
		return errSyntax
	}
	s.i++
	return nil
}

// str returns the JSON string at the position (unescaped).
func (s *jscan) str() (string, error) {
	raw, err := s.strRaw()
	if err != nil {
		return "", err
	}
	return unquote(raw)
}

// strRaw returns the extent of the JSON string at the position, quotes
// included.
func (s *jscan) strRaw() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errSyntax
	}
	start := s.i
	s.i++
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start:s.i], nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, errSyntax
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
					return nil, errSyntax
				}
				s.i += 6
			default:
				return nil, errSyntax
			}
		case c < 0x20:
			return nil, errSyntax
		default:
			s.i++
		}
	}
	return nil, errSyntax
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// unquote decodes a JSON string's raw extent: directly when it has no
// escapes and is valid UTF-8, else with encoding/json.
func unquote(raw []byte) (string, error) {
	body := raw[1 : len(raw)-1]
	plain := true
	for _, c := range body {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain || (utf8.Valid(body) && !hasByte(body, '\\')) {
		return string(body), nil
	}
	var v string
	err := json.Unmarshal(raw, &v)
	return v, err
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// value returns the extent of the JSON value at the position, checking its
// syntax.
func (s *jscan) value() ([]byte, error) {
	s.ws()
	start := s.i
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

func (s *jscan) skip(depth int) error {
	if depth > 10000 {
		return errSyntax
	}
	switch c := s.peek(); {
	case c == '"':
		_, err := s.strRaw()
		return err
	case c == '{':
		s.i++
		if s.peek() == '}' {
			s.i++
			return nil
		}
		for {
			if _, err := s.strRaw(); err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.i++
			case '}':
				s.i++
				return nil
			default:
				return errSyntax
			}
		}
	case c == '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return errSyntax
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return errSyntax
}

func (s *jscan) lit(w string) error {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return errSyntax
	}
	s.i += len(w)
	return nil
}

// number skips a JSON number, checking its grammar.
func (s *jscan) number() error {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return errSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return errSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return errSyntax
		}
	}
	s.i = i
	return nil
}

func (s *jscan) strList() ([]string, error) {
	if s.peek() == 'n' {
		return nil, s.lit("null")
	}
	if err := s.expect('['); err != nil {
		return nil, err
	}
	out := []string{}
	if s.peek() == ']' {
		s.i++
		return out, nil
	}
	for {
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return out, nil
		default:
			return nil, errSyntax
		}
	}
}

// decodeResponse decodes a weft_sql_v1 response as
// json.Unmarshal(raw, resp) would for a well-formed one. Cells are the raw
// extents of their values (slices of raw).
func decodeResponse(raw []byte, resp *SQLResponse[json.RawMessage]) error {
	s := &jscan{b: raw}
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return s.end()
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		switch key {
		case "columns":
			if resp.Columns, err = s.strList(); err != nil {
				return err
			}
		case "types":
			if resp.Types, err = s.strList(); err != nil {
				return err
			}
		case "rows":
			if resp.Rows, err = s.rows(); err != nil {
				return err
			}
		case "rows_affected", "last_insert_id", "error":
			v, err := s.value()
			if err != nil {
				return err
			}
			var dst any
			switch key {
			case "rows_affected":
				dst = &resp.RowsAffected
			case "last_insert_id":
				dst = &resp.LastInsertID
			default:
				dst = &resp.Error
			}
			if err := json.Unmarshal(v, dst); err != nil {
				return err
			}
		default:
			// json.Unmarshal matches keys case-insensitively; leave
			// anything unusual to it.
			return errFallback
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return s.end()
		default:
			return errSyntax
		}
	}
}

var errFallback = errors.New("fallback")

func (s *jscan) end() error {
	s.ws()
	if s.i != len(s.b) {
		return errSyntax // trailing data, a NUL byte included (peek reads it as the end)
	}
	return nil
}

func (s *jscan) rows() ([][]json.RawMessage, error) {
	if s.peek() == 'n' {
		return nil, s.lit("null")
	}
	if err := s.expect('['); err != nil {
		return nil, err
	}
	out := [][]json.RawMessage{}
	if s.peek() == ']' {
		s.i++
		return out, nil
	}
	var cells []json.RawMessage // one backing array for every row's cells
	for {
		if s.peek() == 'n' {
			if err := s.lit("null"); err != nil {
				return nil, err
			}
			out = append(out, nil)
		} else {
			if err := s.expect('['); err != nil {
				return nil, err
			}
			start := len(cells)
			if s.peek() == ']' {
				s.i++
			} else {
				for {
					v, err := s.value()
					if err != nil {
						return nil, err
					}
					cells = append(cells, v)
					if c := s.peek(); c == ',' {
						s.i++
						continue
					} else if c == ']' {
						s.i++
						break
					}
					return nil, errSyntax
				}
			}
			out = append(out, cells[start:len(cells):len(cells)])
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return out, nil
		default:
			return nil, errSyntax
		}
	}
}
