package pyvalue

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weft-dev/weft/sdk/pyfloat"
)

// Kind is the Python type of a Value.
type Kind uint8

// The Python types a JSON document decodes to.
const (
	None  Kind = iota // None (JSON null)
	Bool              // bool
	Int               // int (a JSON number without fraction or exponent)
	Float             // float (a JSON number with one, or NaN/Infinity)
	Str               // str
	List              // list
	Dict              // dict, insertion-ordered
)

var kindNames = [...]string{"NoneType", "bool", "int", "float", "str", "list", "dict"}

// String returns Python's type name (type(v).__name__): "NoneType", "bool",
// "int", "float", "str", "list" or "dict".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Value is a Python value as json.loads produces it. Exactly the field of
// its Kind is meaningful. Int holds the decimal digits Python's str() gives
// (arbitrary size, "-0" normalised to "0"); Dict keeps insertion order, a
// repeated key keeping its first position and its last value, as a Python
// dict does.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   string
	Float float64
	Str   string
	List  []Value
	Dict  []Item
}

// Item is one key/value pair of a Dict.
type Item struct {
	Key   string
	Value Value
}

// Get returns the value of key in a Dict and whether it is there.
func (v Value) Get(key string) (Value, bool) {
	for _, it := range v.Dict {
		if it.Key == key {
			return it.Value, true
		}
	}
	return Value{}, false
}

// Truthy is Python's bool(v): false for None, False, 0, 0.0, -0.0, "" and
// empty containers; NaN is true.
func (v Value) Truthy() bool {
	switch v.Kind {
	case None:
		return false
	case Bool:
		return v.Bool
	case Int:
		return v.Int != "0"
	case Float:
		return v.Float != 0 // NaN != 0
	case Str:
		return v.Str != ""
	case List:
		return len(v.List) > 0
	case Dict:
		return len(v.Dict) > 0
	}
	return false
}

// Hashable reports whether v can be a dict key in Python (lists and dicts
// cannot).
func (v Value) Hashable() bool { return v.Kind != List && v.Kind != Dict }

// StrValue returns the Str s.
func StrValue(s string) Value { return Value{Kind: Str, Str: s} }

// Options select the decoder's dialect.
type Options struct {
	// Strict refuses what RFC 8259 refuses and Python accepts: NaN,
	// Infinity, -Infinity and numbers out of float64's range. It also lifts
	// Python's 4300-digit limit on ints.
	Strict bool
	// NoDupKeys refuses an object with a repeated key (Python keeps the last
	// value).
	NoDupKeys bool
}

// pyMaxDepth bounds nesting. CPython's decoder recurses and fails with
// RecursionError near its default recursion limit of 1000; the bound also
// keeps hostile input from exhausting the stack.
const pyMaxDepth = 990

// pyMaxIntDigits is CPython's default int_max_str_digits (3.11+): json.loads
// of an int literal with more digits raises ValueError.
const pyMaxIntDigits = 4300

// JSONLoads decodes s as Python's json.loads(s) does (CPython 3.11): a
// leading U+FEFF is refused, white space is " \t\n\r" only, NaN, Infinity
// and -Infinity are floats, an out-of-range number is ±inf, numbers without
// fraction or exponent are ints (more than 4300 digits refused), lone
// surrogate escapes become U+FFFD (Go strings cannot hold them), control
// characters inside strings are refused, a repeated object key keeps its
// first position and last value, and nesting deeper than 990 is refused. The
// error says what and where (byte offset).
func JSONLoads(s string) (Value, error) {
	return Decode(s, Options{})
}

// Decode is JSONLoads in the dialect o selects (Options{} is JSONLoads
// itself); errors as JSONLoads.
func Decode(s string, o Options) (Value, error) {
	if !utf8.ValidString(s) {
		return Value{}, errors.New("invalid UTF-8")
	}
	if strings.HasPrefix(s, "\ufeff") {
		return Value{}, errors.New("unexpected UTF-8 BOM")
	}
	d := &pyDecoder{s: s, o: o}
	d.ws()
	v, err := d.value(0)
	if err != nil {
		return Value{}, err
	}
	d.ws()
	if d.i != len(d.s) {
		return Value{}, d.errf("extra data")
	}
	return v, nil
}

type pyDecoder struct {
	s string
	i int
	o Options
}

func (d *pyDecoder) errf(format string, args ...any) error {
	return fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), d.i)
}

func (d *pyDecoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *pyDecoder) lit(word string) bool {
	if strings.HasPrefix(d.s[d.i:], word) {
		d.i += len(word)
		return true
	}
	return false
}

func (d *pyDecoder) value(depth int) (Value, error) {
	if depth > pyMaxDepth {
		return Value{}, d.errf("nesting deeper than %d", pyMaxDepth)
	}
	if d.i >= len(d.s) {
		return Value{}, d.errf("expecting value")
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		s, err := d.str()
		return Value{Kind: Str, Str: s}, err
	case c == 'n' && d.lit("null"):
		return Value{Kind: None}, nil
	case c == 't' && d.lit("true"):
		return Value{Kind: Bool, Bool: true}, nil
	case c == 'f' && d.lit("false"):
		return Value{Kind: Bool}, nil
	case c == 'N' && !d.o.Strict && d.lit("NaN"):
		return Value{Kind: Float, Float: math.NaN()}, nil
	case c == 'I' && !d.o.Strict && d.lit("Infinity"):
		return Value{Kind: Float, Float: math.Inf(1)}, nil
	case c == '-' && !d.o.Strict && d.lit("-Infinity"):
		return Value{Kind: Float, Float: math.Inf(-1)}, nil
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return Value{}, d.errf("expecting value")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (d *pyDecoder) number() (Value, error) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	if d.i >= len(d.s) || !isDigit(d.s[d.i]) {
		d.i = start
		return Value{}, d.errf("expecting value")
	}
	if d.s[d.i] == '0' {
		d.i++
	} else {
		for d.i < len(d.s) && isDigit(d.s[d.i]) {
			d.i++
		}
	}
	isFloat := false
	if d.i+1 < len(d.s) && d.s[d.i] == '.' && isDigit(d.s[d.i+1]) {
		isFloat = true
		d.i += 2
		for d.i < len(d.s) && isDigit(d.s[d.i]) {
			d.i++
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		j := d.i + 1
		if j < len(d.s) && (d.s[j] == '+' || d.s[j] == '-') {
			j++
		}
		if j < len(d.s) && isDigit(d.s[j]) {
			isFloat = true
			for j < len(d.s) && isDigit(d.s[j]) {
				j++
			}
			d.i = j
		}
	}
	text := d.s[start:d.i]
	if !isFloat {
		digits := strings.TrimPrefix(text, "-")
		if !d.o.Strict && len(digits) > pyMaxIntDigits {
			return Value{}, d.errf("int literal of %d digits exceeds the limit of %d", len(digits), pyMaxIntDigits)
		}
		if digits == "0" {
			text = "0"
		}
		return Value{Kind: Int, Int: text}, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			return Value{}, d.errf("bad number %q", text)
		}
		if d.o.Strict && math.IsInf(f, 0) {
			return Value{}, d.errf("number %s out of range", text)
		}
		// Python's float() rounds overflow to ±inf and underflow to 0, the
		// values ParseFloat returns with ErrRange.
	}
	return Value{Kind: Float, Float: f}, nil
}

func hexVal(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (d *pyDecoder) str() (string, error) {
	d.i++ // opening quote
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			return "", d.errf("unterminated string")
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return b.String(), nil
		case c < 0x20:
			return "", d.errf("invalid control character")
		case c != '\\':
			j := d.i
			for j < len(d.s) && d.s[j] != '"' && d.s[j] != '\\' && d.s[j] >= 0x20 {
				j++
			}
			b.WriteString(d.s[d.i:j])
			d.i = j
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", d.errf("unterminated string")
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hexVal(d.s[d.i:])
			if !ok {
				return "", d.errf("invalid \\uXXXX escape")
			}
			d.i += 4
			if r >= 0xd800 && r <= 0xdbff && strings.HasPrefix(d.s[d.i:], `\u`) {
				if r2, ok := hexVal(d.s[d.i+2:]); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					d.i += 6
					r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
				}
			}
			if r >= 0xd800 && r <= 0xdfff {
				r = utf8.RuneError // a lone surrogate: Python keeps it, Go cannot
			}
			b.WriteRune(r)
		default:
			d.i -= 2
			return "", d.errf("invalid \\escape")
		}
	}
}

func (d *pyDecoder) array(depth int) (Value, error) {
	d.i++
	v := Value{Kind: List, List: []Value{}}
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return v, nil
	}
	for {
		d.ws()
		e, err := d.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		v.List = append(v.List, e)
		d.ws()
		if d.i >= len(d.s) {
			return Value{}, d.errf("expecting ',' delimiter")
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return v, nil
		default:
			return Value{}, d.errf("expecting ',' delimiter")
		}
	}
}

func (d *pyDecoder) object(depth int) (Value, error) {
	d.i++
	v := Value{Kind: Dict, Dict: []Item{}}
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return v, nil
	}
	var index map[string]int
	for {
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return Value{}, d.errf("expecting property name enclosed in double quotes")
		}
		keyAt := d.i
		k, err := d.str()
		if err != nil {
			return Value{}, err
		}
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return Value{}, d.errf("expecting ':' delimiter")
		}
		d.i++
		d.ws()
		e, err := d.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		if len(v.Dict) >= 8 && index == nil {
			index = make(map[string]int, 16)
			for i, it := range v.Dict {
				index[it.Key] = i
			}
		}
		at := -1
		if index != nil {
			if i, ok := index[k]; ok {
				at = i
			}
		} else {
			for i, it := range v.Dict {
				if it.Key == k {
					at = i
					break
				}
			}
		}
		switch {
		case at >= 0 && d.o.NoDupKeys:
			d.i = keyAt
			return Value{}, d.errf("duplicate key %q", k)
		case at >= 0:
			v.Dict[at].Value = e
		default:
			if index != nil {
				index[k] = len(v.Dict)
			}
			v.Dict = append(v.Dict, Item{Key: k, Value: e})
		}
		d.ws()
		if d.i >= len(d.s) {
			return Value{}, d.errf("expecting ',' delimiter")
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return v, nil
		default:
			return Value{}, d.errf("expecting ',' delimiter")
		}
	}
}

// JSONDumps renders v as Python's json.dumps(v, ensure_ascii=False) does
// with its other defaults: separators ", " and ": ", keys in insertion
// order, non-ASCII written raw, only '"', '\\' and control characters below
// U+0020 escaped (\n \r \t \b \f by name, the rest as \u00xx), floats as
// repr() with NaN, Infinity and -Infinity for the non-finite ones.
func JSONDumps(v Value) string {
	var b strings.Builder
	pyDump(&b, v)
	return b.String()
}

func pyDump(b *strings.Builder, v Value) {
	switch v.Kind {
	case None:
		b.WriteString("null")
	case Bool:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case Int:
		b.WriteString(v.Int)
	case Float:
		switch {
		case math.IsNaN(v.Float):
			b.WriteString("NaN")
		case math.IsInf(v.Float, 1):
			b.WriteString("Infinity")
		case math.IsInf(v.Float, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(FloatRepr(v.Float))
		}
	case Str:
		pyDumpStr(b, v.Str)
	case List:
		b.WriteByte('[')
		for i, e := range v.List {
			if i > 0 {
				b.WriteString(", ")
			}
			pyDump(b, e)
		}
		b.WriteByte(']')
	case Dict:
		b.WriteByte('{')
		for i, it := range v.Dict {
			if i > 0 {
				b.WriteString(", ")
			}
			pyDumpStr(b, it.Key)
			b.WriteString(": ")
			pyDump(b, it.Value)
		}
		b.WriteByte('}')
	}
}

func pyDumpStr(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// FloatRepr is Python's repr(f) (= str(f)) of a float: pyfloat.Repr
// (100.0, 0.0001, 1e-05, 2.5e+16, 1e+16, -0.0, inf, nan).
func FloatRepr(f float64) string { return pyfloat.Repr(f) }

// ToStr is Python's str(v): a str as is, None/True/False by name, ints as
// digits, floats as FloatRepr, lists and dicts as their repr (str items
// quoted with Repr).
func ToStr(v Value) string {
	if v.Kind == Str {
		return v.Str
	}
	return Repr(v)
}

// Repr is Python's repr(v).
func Repr(v Value) string {
	var b strings.Builder
	pyReprTo(&b, v)
	return b.String()
}

func pyReprTo(b *strings.Builder, v Value) {
	switch v.Kind {
	case None:
		b.WriteString("None")
	case Bool:
		if v.Bool {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case Int:
		b.WriteString(v.Int)
	case Float:
		b.WriteString(FloatRepr(v.Float))
	case Str:
		b.WriteString(ReprStr(v.Str))
	case List:
		b.WriteByte('[')
		for i, e := range v.List {
			if i > 0 {
				b.WriteString(", ")
			}
			pyReprTo(b, e)
		}
		b.WriteByte(']')
	case Dict:
		b.WriteByte('{')
		for i, it := range v.Dict {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprStr(it.Key))
			b.WriteString(": ")
			pyReprTo(b, it.Value)
		}
		b.WriteByte('}')
	}
}

// ReprStr is Python's repr(s) of a str: single quotes unless s contains a
// single quote and no double quote; backslash, the quote, \t \n \r escaped,
// other non-printable characters (unicode.IsPrint, which is Python's
// str.isprintable up to the Unicode version) as \xNN, \uNNNN or \UNNNNNNNN.
func ReprStr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x80 || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyIsSpace is Python's str.isspace() for one character (what str.strip()
// strips): Unicode White_Space plus U+001C–U+001F, which Python counts
// (bidirectional class B or S) and Go's unicode.IsSpace does not.
func pyIsSpace(r rune) bool {
	return r >= 0x1c && r <= 0x1f || unicode.IsSpace(r)
}

// Strip is Python's s.strip() with no argument.
func Strip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// LStripSet is Python's s.lstrip(chars): it removes leading characters
// that occur anywhere in chars (a set, not a prefix).
func LStripSet(s, chars string) string {
	return strings.TrimLeftFunc(s, func(r rune) bool { return strings.ContainsRune(chars, r) })
}

// Lower is Python's s.lower(): the full lowercase mapping, so U+0130 (İ)
// becomes "i̇" (U+0069 U+0307), and U+03A3 (Σ) becomes final ς when it ends a
// word (preceded by a cased letter and not followed by one, skipping
// case-ignorable characters, Unicode's Final_Sigma condition) and σ
// otherwise. Every other character takes its simple lowercase mapping, as
// in Go's unicode.ToLower.
func Lower(s string) string {
	// Fast path: ASCII only.
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3a3:
			if finalSigma(rs, i) {
				b.WriteRune(0x3c2)
			} else {
				b.WriteRune(0x3c3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && caseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !cased(rs[j])
}

// cased is Unicode's Cased property: Lu, Ll, Lt, Other_Lowercase,
// Other_Uppercase.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk
// and Word_Break MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
