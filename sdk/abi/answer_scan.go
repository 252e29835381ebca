package abi

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeAnswerFast decodes b as DecodeAnswer does, for the answers modules
// write (the keys of Answer spelled exactly, each once; booleans true or
// false; strings without escapes), without encoding/json's reflection:
// ok is false for anything else, which the caller then leaves to
// encoding/json (same result, or its error). The raw members are slices of
// one copy of b (encoding/json copies each of them).
func decodeAnswerFast(b []byte) (a *Answer, ok bool) {
	s := &jscan{b: b}
	if s.peek() != '{' {
		return nil, false
	}
	b = append([]byte(nil), b...)
	s.b = b
	s.i++
	a = &Answer{}
	if s.peek() == '}' {
		s.i++
		return a, s.end() == nil
	}
	var seen uint16
	for {
		key, err := s.strRaw()
		if err != nil || s.expect(':') != nil {
			return nil, false
		}
		bit, dst := answerMember(a, string(key))
		if bit == 0 || seen&bit != 0 {
			return nil, false // unknown, differently spelt or repeated: encoding/json decides
		}
		seen |= bit
		if s.peek() == 'n' {
			return nil, false // null: encoding/json's rules per member type
		}
		switch d := dst.(type) {
		case *[]json.RawMessage:
			if s.peek() != '[' {
				return nil, false
			}
			s.i++
			*d = []json.RawMessage{}
			if s.peek() == ']' {
				s.i++
				break
			}
			for {
				v, err := s.value()
				if err != nil {
					return nil, false
				}
				*d = append(*d, v)
				if c := s.peek(); c == ',' {
					s.i++
					continue
				} else if c == ']' {
					s.i++
					break
				}
				return nil, false
			}
		case *json.RawMessage:
			v, err := s.value()
			if err != nil {
				return nil, false
			}
			*d = v
		case *bool:
			switch {
			case s.lit("true") == nil:
				*d = true
			case s.lit("false") == nil:
				*d = false
			default:
				return nil, false
			}
		case **string, *string:
			raw, err := s.strRaw()
			if err != nil {
				return nil, false
			}
			v, ok := plainString(raw)
			if !ok {
				return nil, false
			}
			if p, isPtr := d.(**string); isPtr {
				*p = &v
			} else {
				*d.(*string) = v
			}
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return a, s.end() == nil
		default:
			return nil, false
		}
	}
}

// answerMember is the bit and the field of a's member spelt key (with its
// quotes), or 0 for any other key.
func answerMember(a *Answer, key string) (uint16, any) {
	switch key {
	case `"content"`:
		return 1 << 0, &a.Content
	case `"structuredContent"`:
		return 1 << 1, &a.StructuredContent
	case `"isError"`:
		return 1 << 2, &a.IsError
	case `"notFound"`:
		return 1 << 3, &a.NotFound
	case `"internalError"`:
		return 1 << 4, &a.InternalError
	case `"code"`:
		return 1 << 5, &a.Code
	case `"contents"`:
		return 1 << 6, &a.Contents
	case `"description"`:
		return 1 << 7, &a.Description
	case `"messages"`:
		return 1 << 8, &a.Messages
	}
	return 0, nil
}

// plainString is the value of a JSON string's raw extent (quotes included)
// that has no escapes and is valid UTF-8; ok false otherwise.
func plainString(raw []byte) (string, bool) {
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// DecodeContent decodes one content item as json.Unmarshal(raw, &c) does
// (the shape Content.MarshalJSON writes for a text item is decoded without
// encoding/json's reflection); errors are encoding/json's.
func DecodeContent(raw []byte) (Content, error) {
	if c, ok := decodeTextContent(raw); ok {
		return c, nil
	}
	var c Content
	err := json.Unmarshal(raw, &c)
	return c, err
}

// decodeTextContent decodes {"type":"...","text":"..."} (both members
// strings, spelt exactly, each at most once, nothing else); ok false for
// anything else.
func decodeTextContent(raw []byte) (c Content, ok bool) {
	s := &jscan{b: raw}
	if s.expect('{') != nil {
		return c, false
	}
	if s.peek() == '}' {
		s.i++
		return c, s.end() == nil
	}
	var seen uint8
	for {
		key, err := s.strRaw()
		if err != nil || s.expect(':') != nil {
			return c, false
		}
		var bit uint8
		var dst *string
		switch string(key) {
		case `"type"`:
			bit, dst = 1, &c.Type
		case `"text"`:
			bit, dst = 2, &c.Text
		default:
			return c, false
		}
		if seen&bit != 0 {
			return c, false
		}
		seen |= bit
		raw, err := s.strRaw()
		if err != nil {
			return c, false
		}
		v, ok := unescape(raw)
		if !ok {
			return c, false
		}
		*dst = v
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return c, s.end() == nil
		default:
			return c, false
		}
	}
}

// unescape is the value of a JSON string's raw extent (quotes included,
// syntax checked by strRaw) when it is valid UTF-8 and has no \u escape of
// a surrogate half (encoding/json's rules for those, and for invalid UTF-8,
// are left to it): ok false otherwise.
func unescape(raw []byte) (string, bool) {
	body := raw[1 : len(raw)-1]
	esc := false
	for _, c := range body {
		if c == '\\' {
			esc = true
			break
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	if !esc {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch body[i] {
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			var r rune
			for _, h := range body[i+1 : i+5] {
				r <<= 4
				switch {
				case h >= '0' && h <= '9':
					r |= rune(h - '0')
				case h >= 'a' && h <= 'f':
					r |= rune(h - 'a' + 10)
				default:
					r |= rune(h - 'A' + 10)
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}
