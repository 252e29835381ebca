package main

import (
	"errors"
	"math"
	"math/big"
	"strconv"
)

// A small evaluator for the arithmetic calculate accepts (digits, '.', '+',
// '-', '*', '/', parentheses, spaces), with Python 3's semantics: integer
// literals are exact big integers, '/' is true division, '//' floor
// division, '**' power (right-associative, binding tighter than a unary
// sign on its left), ints and floats mix the way Python mixes them, and
// whatever Python rejects (syntax, division by zero, overflow converting
// to float, complex results) is an error.

var (
	errSyntax   = errors.New("invalid syntax")
	errDivZero  = errors.New("division by zero")
	errOverflow = errors.New("numerical result out of range")
	errComplex  = errors.New("the result is a complex number")
	errTooLarge = errors.New("integer result too large")
)

// pyNum is a Python int (i != nil) or float.
type pyNum struct {
	i *big.Int
	f float64
}

func (v pyNum) isInt() bool { return v.i != nil }

// toFloat is Python's float(v).
func (v pyNum) toFloat() (float64, error) {
	if !v.isInt() {
		return v.f, nil
	}
	f, _ := new(big.Float).SetInt(v.i).Float64()
	if math.IsInf(f, 0) {
		return 0, errOverflow
	}
	return f, nil
}

type token struct {
	kind string // "num", "op", "eof"
	text string
}

func tokenize(s string) ([]token, error) {
	var toks []token
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			float := false
			if j < len(s) && s[j] == '.' {
				float = true
				j++
				for j < len(s) && isDigit(s[j]) {
					j++
				}
			}
			lit := s[i:j]
			if !float && len(lit) > 1 && lit[0] == '0' {
				for k := 1; k < len(lit); k++ {
					if lit[k] != '0' {
						return nil, errSyntax // leading zeros in a decimal integer
					}
				}
			}
			toks = append(toks, token{"num", lit})
			i = j
		case c == '*' || c == '/':
			if i+1 < len(s) && s[i+1] == c {
				toks = append(toks, token{"op", s[i : i+2]})
				i += 2
			} else {
				toks = append(toks, token{"op", s[i : i+1]})
				i++
			}
		case c == '+' || c == '-' || c == '(' || c == ')':
			toks = append(toks, token{"op", s[i : i+1]})
			i++
		default: // a '.' that starts no number: attribute access or Ellipsis
			return nil, errSyntax
		}
	}
	return append(toks, token{kind: "eof"}), nil
}

type calcParser struct {
	toks []token
	p    int
}

func (c *calcParser) peek() token { return c.toks[c.p] }

func (c *calcParser) accept(op string) bool {
	if t := c.peek(); t.kind == "op" && t.text == op {
		c.p++
		return true
	}
	return false
}

// pyEval parses the whole expression, then evaluates it.
func pyEval(s string) (pyNum, error) {
	toks, err := tokenize(s)
	if err != nil {
		return pyNum{}, err
	}
	c := &calcParser{toks: toks}
	n, err := c.sum()
	if err != nil {
		return pyNum{}, err
	}
	if c.peek().kind != "eof" {
		return pyNum{}, errSyntax
	}
	return n.eval()
}

// node is a parsed expression: a literal, or op applied to args.
type node struct {
	lit  string
	op   string // "+", "-", "*", "/", "//", "**", "neg", "pos"
	args []*node
}

func (c *calcParser) sum() (*node, error) {
	l, err := c.term()
	if err != nil {
		return nil, err
	}
	for {
		var op string
		switch {
		case c.accept("+"):
			op = "+"
		case c.accept("-"):
			op = "-"
		default:
			return l, nil
		}
		r, err := c.term()
		if err != nil {
			return nil, err
		}
		l = &node{op: op, args: []*node{l, r}}
	}
}

func (c *calcParser) term() (*node, error) {
	l, err := c.factor()
	if err != nil {
		return nil, err
	}
	for {
		var op string
		switch {
		case c.accept("*"):
			op = "*"
		case c.accept("//"):
			op = "//"
		case c.accept("/"):
			op = "/"
		default:
			return l, nil
		}
		r, err := c.factor()
		if err != nil {
			return nil, err
		}
		l = &node{op: op, args: []*node{l, r}}
	}
}

func (c *calcParser) factor() (*node, error) {
	switch {
	case c.accept("-"):
		x, err := c.factor()
		if err != nil {
			return nil, err
		}
		return &node{op: "neg", args: []*node{x}}, nil
	case c.accept("+"):
		x, err := c.factor()
		if err != nil {
			return nil, err
		}
		return &node{op: "pos", args: []*node{x}}, nil
	}
	return c.power()
}

func (c *calcParser) power() (*node, error) {
	base, err := c.atom()
	if err != nil {
		return nil, err
	}
	if c.accept("**") {
		exp, err := c.factor()
		if err != nil {
			return nil, err
		}
		return &node{op: "**", args: []*node{base, exp}}, nil
	}
	return base, nil
}

func (c *calcParser) atom() (*node, error) {
	t := c.peek()
	var n *node
	switch {
	case t.kind == "num":
		c.p++
		n = &node{lit: t.text}
	case c.accept("("):
		if c.peek().kind == "op" && c.peek().text == ")" {
			return nil, errSyntax // (): an empty tuple, not a number
		}
		x, err := c.sum()
		if err != nil {
			return nil, err
		}
		if !c.accept(")") {
			return nil, errSyntax
		}
		n = x
	default:
		return nil, errSyntax
	}
	if t := c.peek(); t.kind == "op" && t.text == "(" {
		return nil, errors.New("a number is not callable")
	}
	return n, nil
}

func (n *node) eval() (pyNum, error) {
	if n.op == "" {
		if i, ok := new(big.Int).SetString(n.lit, 10); ok {
			return pyNum{i: i}, nil
		}
		f, err := strconv.ParseFloat(n.lit, 64)
		if err != nil {
			return pyNum{}, errSyntax
		}
		return pyNum{f: f}, nil
	}
	vals := make([]pyNum, len(n.args))
	for k, a := range n.args {
		v, err := a.eval()
		if err != nil {
			return pyNum{}, err
		}
		vals[k] = v
	}
	switch n.op {
	case "neg":
		if vals[0].isInt() {
			return pyNum{i: new(big.Int).Neg(vals[0].i)}, nil
		}
		return pyNum{f: -vals[0].f}, nil
	case "pos":
		return vals[0], nil
	}
	a, b := vals[0], vals[1]
	if a.isInt() && b.isInt() {
		return intOp(n.op, a.i, b.i)
	}
	x, err := a.toFloat()
	if err != nil {
		return pyNum{}, err
	}
	y, err := b.toFloat()
	if err != nil {
		return pyNum{}, err
	}
	f, err := floatOp(n.op, x, y)
	return pyNum{f: f}, err
}

func intOp(op string, a, b *big.Int) (pyNum, error) {
	z := new(big.Int)
	switch op {
	case "+":
		return pyNum{i: z.Add(a, b)}, nil
	case "-":
		return pyNum{i: z.Sub(a, b)}, nil
	case "*":
		return pyNum{i: z.Mul(a, b)}, nil
	case "/": // correctly rounded true division
		if b.Sign() == 0 {
			return pyNum{}, errDivZero
		}
		f, _ := new(big.Rat).SetFrac(a, b).Float64()
		if math.IsInf(f, 0) {
			return pyNum{}, errOverflow
		}
		return pyNum{f: f}, nil
	case "//":
		if b.Sign() == 0 {
			return pyNum{}, errDivZero
		}
		q, m := new(big.Int).QuoRem(a, b, new(big.Int))
		if m.Sign() != 0 && (m.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		}
		return pyNum{i: q}, nil
	case "**":
		if b.Sign() < 0 { // negative exponent: float power
			x, err := pyNum{i: a}.toFloat()
			if err != nil {
				return pyNum{}, err
			}
			y, err := pyNum{i: b}.toFloat()
			if err != nil {
				return pyNum{}, err
			}
			f, err := floatPow(x, y)
			return pyNum{f: f}, err
		}
		if a.CmpAbs(big.NewInt(1)) > 0 && (!b.IsInt64() || int64(a.BitLen())*b.Int64() > 1<<22) {
			return pyNum{}, errTooLarge
		}
		return pyNum{i: z.Exp(a, b, nil)}, nil
	}
	return pyNum{}, errSyntax
}

func floatOp(op string, x, y float64) (float64, error) {
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		if y == 0 {
			return 0, errDivZero
		}
		return x / y, nil
	case "//":
		return floatFloorDiv(x, y)
	case "**":
		return floatPow(x, y)
	}
	return 0, errSyntax
}

// floatFloorDiv is CPython's float floor division.
func floatFloorDiv(vx, wx float64) (float64, error) {
	if wx == 0 {
		return 0, errDivZero
	}
	mod := math.Mod(vx, wx)
	div := (vx - mod) / wx
	if mod != 0 {
		if (wx < 0) != (mod < 0) {
			div -= 1.0
		}
	}
	if div != 0 {
		fl := math.Floor(div)
		if div-fl > 0.5 {
			fl += 1.0
		}
		return fl, nil
	}
	return math.Copysign(0, vx/wx), nil
}

func isOddInteger(x float64) bool {
	return math.Mod(math.Abs(x), 2.0) == 1.0
}

// floatPow is CPython's float power.
func floatPow(iv, iw float64) (float64, error) {
	switch {
	case iw == 0:
		return 1, nil
	case math.IsNaN(iv):
		return iv, nil
	case math.IsNaN(iw):
		if iv == 1 {
			return 1, nil
		}
		return iw, nil
	case math.IsInf(iw, 0):
		a := math.Abs(iv)
		if a == 1 {
			return 1, nil
		}
		if (iw > 0) == (a > 1) {
			return math.Abs(iw), nil
		}
		return 0, nil
	case math.IsInf(iv, 0):
		odd := isOddInteger(iw)
		if iw > 0 {
			if odd {
				return iv, nil
			}
			return math.Abs(iv), nil
		}
		if odd {
			return math.Copysign(0, iv), nil
		}
		return 0, nil
	case iv == 0:
		if iw < 0 {
			return 0, errDivZero
		}
		if isOddInteger(iw) {
			return iv, nil
		}
		return 0, nil
	case iv == 1:
		return 1, nil
	}
	negate := false
	if iv < 0 {
		if iw != math.Floor(iw) {
			return 0, errComplex
		}
		iv = -iv
		negate = isOddInteger(iw)
	}
	if iv == 1 {
		if negate {
			return -1, nil
		}
		return 1, nil
	}
	r := math.Pow(iv, iw)
	if negate {
		r = -r
	}
	if math.IsInf(r, 0) {
		return 0, errOverflow
	}
	return r, nil
}
