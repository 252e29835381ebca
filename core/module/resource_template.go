package module

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// uriTemplate is a parsed RFC 6570 level-1 URI template: literal text and
// {name} expressions (simple string expansion), nothing else.
type uriTemplate struct {
	raw  string
	vars []string       // variable names, in order
	re   *regexp.Regexp // the whole URI; one group per variable
}

// parseURITemplate parses a level-1 template. It refuses operators
// ({+x}, {#x}, {/x}, {?x}, ...), value modifiers ({x:3}, {x*}), lists
// ({x,y}), adjacent expressions ({x}{y}, whose split is ambiguous), a
// variable used twice, characters RFC 6570 does not allow in literals, a
// template without variables and one that does not expand to an absolute
// URI.
func parseURITemplate(s string) (*uriTemplate, error) {
	t := &uriTemplate{raw: s}
	var re strings.Builder
	re.WriteByte('^')
	seen := map[string]bool{}
	lastWasExpr := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{':
			j := strings.IndexByte(s[i+1:], '}')
			if j < 0 {
				return nil, fmt.Errorf("unclosed { at byte %d", i)
			}
			expr := s[i+1 : i+1+j]
			if lastWasExpr {
				return nil, fmt.Errorf("expression {%s} directly follows another one: the split between them would be ambiguous", expr)
			}
			if err := checkVarName(expr); err != nil {
				return nil, fmt.Errorf("expression {%s}: %v", expr, err)
			}
			if seen[expr] {
				return nil, fmt.Errorf("variable %q appears twice", expr)
			}
			seen[expr] = true
			t.vars = append(t.vars, expr)
			re.WriteString(`([^/?#]+)`)
			lastWasExpr = true
			i += j + 2
		case c == '}':
			return nil, fmt.Errorf("unmatched } at byte %d", i)
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return nil, fmt.Errorf("%% at byte %d does not start a percent-encoded octet", i)
			}
			re.WriteString(regexp.QuoteMeta(s[i : i+3]))
			lastWasExpr = false
			i += 3
		default:
			if c <= ' ' || c == 0x7f || strings.IndexByte("\"'<>\\^`|", c) >= 0 {
				return nil, fmt.Errorf("character %q at byte %d is not allowed in a URI template", c, i)
			}
			re.WriteString(regexp.QuoteMeta(s[i : i+1]))
			lastWasExpr = false
			i++
		}
	}
	re.WriteByte('$')
	if len(t.vars) == 0 {
		return nil, fmt.Errorf("no {variable}: declare a fixed URI under resources")
	}
	sample := s
	for _, v := range t.vars {
		sample = strings.Replace(sample, "{"+v+"}", "x", 1)
	}
	if u, err := url.Parse(sample); err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("does not expand to an absolute URI (scheme:...)")
	}
	t.re = regexp.MustCompile(re.String())
	return t, nil
}

// checkVarName accepts an RFC 6570 varname: varchars (ALPHA, DIGIT, "_",
// percent-encoded octets) with single dots between them.
func checkVarName(name string) error {
	if name == "" {
		return fmt.Errorf("empty expression")
	}
	if strings.ContainsAny(name[:1], "+#./;?&=,!@|") {
		return fmt.Errorf("operator %q: only level-1 {name} expressions are supported (RFC 6570)", name[:1])
	}
	if strings.ContainsAny(name, ",:*") {
		return fmt.Errorf("lists and value modifiers are not supported, only level-1 {name} expressions (RFC 6570)")
	}
	prevDot := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			prevDot = false
		case c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]):
			prevDot = false
			i += 2
		case c == '.' && !prevDot && i < len(name)-1:
			prevDot = true
		default:
			return fmt.Errorf("invalid variable name (letters, digits, _ and inner dots)")
		}
	}
	return nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// match reports whether uri is an expansion of t and returns the variables:
// each matches one or more characters other than / ? #, percent-decoded.
// A value that does not decode (a stray %) is no match.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			return nil, false
		}
		vars[name] = v
	}
	return vars, true
}
