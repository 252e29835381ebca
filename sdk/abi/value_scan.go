package abi

import "encoding/json"

// DecodeValue decodes b, one JSON value with only whitespace around it, as
// encoding/json's Decoder with UseNumber decodes it into an any: objects
// as map[string]any (a repeated key keeps its last value), arrays as
// []any, numbers as json.Number (their text), strings, booleans and nil.
// ok is false, and v nil, for anything it leaves to encoding/json: invalid
// JSON, strings that are not valid UTF-8 or escape a surrogate half, values
// nested deeper than 1000 (FuzzDecodeValue checks it against
// encoding/json).
func DecodeValue(b []byte) (v any, ok bool) {
	s := &jscan{b: b}
	v, ok = s.anyValue(0)
	if !ok || s.end() != nil {
		return nil, false
	}
	return v, true
}

func (s *jscan) anyValue(depth int) (any, bool) {
	if depth > 1000 {
		return nil, false
	}
	switch c := s.peek(); {
	case c == '"':
		raw, err := s.strRaw()
		if err != nil {
			return nil, false
		}
		return unescape(raw)
	case c == '{':
		s.i++
		m := map[string]any{}
		if s.peek() == '}' {
			s.i++
			return m, true
		}
		for {
			raw, err := s.strRaw()
			if err != nil || s.expect(':') != nil {
				return nil, false
			}
			k, ok := unescape(raw)
			if !ok {
				return nil, false
			}
			v, ok := s.anyValue(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
			switch s.peek() {
			case ',':
				s.i++
			case '}':
				s.i++
				return m, true
			default:
				return nil, false
			}
		}
	case c == '[':
		s.i++
		l := []any{}
		if s.peek() == ']' {
			s.i++
			return l, true
		}
		for {
			v, ok := s.anyValue(depth + 1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return l, true
			default:
				return nil, false
			}
		}
	case c == 't':
		return true, s.lit("true") == nil
	case c == 'f':
		return false, s.lit("false") == nil
	case c == 'n':
		return nil, s.lit("null") == nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.i
		if s.number() != nil {
			return nil, false
		}
		return json.Number(s.b[start:s.i]), true
	}
	return nil, false
}
