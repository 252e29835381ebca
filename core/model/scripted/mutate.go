package scripted

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
)

type pair struct {
	key string
	val json.RawMessage
}

// objectPairs splits a JSON object into its members, in order.
func objectPairs(raw json.RawMessage) ([]pair, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []pair
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, pair{key, v})
	}
	return out, true
}

func joinObject(pairs []pair) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(p.key))
		b.WriteByte(':')
		b.WriteString(compact(p.val))
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// wrongArgument changes the value of one member of an arguments object,
// chosen at random among those that can change; ok is false when none can
// (no members, or only nulls and empty containers).
func wrongArgument(args json.RawMessage, rng *rand.Rand) (json.RawMessage, bool) {
	pairs, ok := objectPairs(args)
	if !ok {
		return nil, false
	}
	order := rng.Perm(len(pairs))
	for _, i := range order {
		if v, ok := wrongValue(pairs[i].val, rng); ok {
			pairs[i].val = v
			return joinObject(pairs), true
		}
	}
	return nil, false
}

// wrongValue returns a plausible but different value: a string with one
// digit (or, lacking digits, one letter) changed, a number plus one, a
// boolean negated, an array with one element dropped or changed, an object
// with one member changed.
func wrongValue(v json.RawMessage, rng *rand.Rand) (json.RawMessage, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil, false
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, false
		}
		return json.RawMessage(jsonString(wrongString(s, rng))), true
	case 't':
		return json.RawMessage("false"), true
	case 'f':
		return json.RawMessage("true"), true
	case 'n':
		return nil, false
	case '{':
		return wrongArgument(v, rng)
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(v, &elems) != nil || len(elems) == 0 {
			return nil, false
		}
		j := rng.IntN(len(elems))
		if len(elems) >= 2 && rng.IntN(2) == 0 {
			elems = append(elems[:j:j], elems[j+1:]...)
		} else if e, ok := wrongValue(elems[j], rng); ok {
			elems[j] = e
		} else if len(elems) >= 2 {
			elems = append(elems[:j:j], elems[j+1:]...)
		} else {
			return nil, false
		}
		parts := make([]string, len(elems))
		for i, e := range elems {
			parts[i] = compact(e)
		}
		return json.RawMessage("[" + strings.Join(parts, ",") + "]"), true
	default:
		n := json.Number(v)
		if i, err := n.Int64(); err == nil {
			return json.RawMessage(strconv.FormatInt(i+1, 10)), true
		}
		if f, err := n.Float64(); err == nil {
			return json.RawMessage(strconv.FormatFloat(f+1, 'f', -1, 64)), true
		}
		return nil, false
	}
}

// wrongString changes one digit of s to another digit, or lacking digits
// one ASCII letter to another of the same case, so ids stay id-like
// ("#W2378156" -> "#W2378152"); s with neither gets "x" appended.
func wrongString(s string, rng *rand.Rand) string {
	b := []byte(s)
	var digits, letters []int
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, i)
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters = append(letters, i)
		}
	}
	switch {
	case len(digits) > 0:
		i := digits[rng.IntN(len(digits))]
		b[i] = '0' + byte((int(b[i]-'0')+1+rng.IntN(9))%10)
	case len(letters) > 0:
		i := letters[rng.IntN(len(letters))]
		base := byte('a')
		if b[i] <= 'Z' {
			base = 'A'
		}
		b[i] = base + byte((int(b[i]-base)+1+rng.IntN(25))%26)
	default:
		return s + "x"
	}
	return string(b)
}
