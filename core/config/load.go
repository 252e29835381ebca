package config

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/weft-dev/weft/internal/suggest"
)

// LoadOptions are the caller's inputs besides the file.
type LoadOptions struct {
	// Vars override variable defaults, by variable name. A value is a
	// string as typed on a command line: it is converted to the type of
	// the variable's default when that is a number or a bool, parsed as an
	// HCL expression when the default is a list, map or object, and kept
	// as a string otherwise. Naming an undeclared variable is an error.
	Vars map[string]string
}

// Load reads and decodes the config file at path. On any error diagnostic
// the Config is nil; warnings may come with a Config. A file that cannot be
// read is an error diagnostic with no Subject.
func Load(path string, opts LoadOptions) (*Config, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read config file",
			Detail:   err.Error(),
		}}
	}
	return Parse(src, path, opts)
}

// Parse decodes config source src; filename names it in diagnostics, and
// relative paths in it are resolved against filename's directory (made
// absolute against the working directory). See Load.
func Parse(src []byte, filename string, opts LoadOptions) (*Config, hcl.Diagnostics) {
	abs, err := filepath.Abs(filename)
	if err != nil {
		abs = filepath.Clean(filename)
	}
	if diags := checkNumbers(src, filename); diags.HasErrors() {
		return nil, diags
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	d := &decoder{dir: filepath.Dir(abs)}
	d.funcs = d.functions()

	vars, rest := d.variables(file.Body, opts.Vars)
	if d.diags.HasErrors() {
		// Without every variable's value the rest would only report
		// follow-on errors.
		diags = append(diags, d.diags...)
		sortDiags(diags)
		return nil, diags
	}
	d.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)},
		Functions: d.funcs,
	}
	if len(vars) == 0 {
		d.ctx.Variables["var"] = cty.EmptyObjectVal
	}
	root := d.block(rest, rootSpec, nil)
	cfg := d.build(root, abs)
	cfg.Variables = map[string]json.RawMessage{}
	for name, v := range vars {
		b, err := ctyjson.Marshal(v, v.Type())
		if err == nil {
			cfg.Variables[name] = b
		}
	}
	diags = append(diags, d.diags...)
	sortDiags(diags)
	if diags.HasErrors() {
		return nil, diags
	}
	return cfg, diags
}

// sortDiags orders diagnostics by position (those without one first), so
// the output does not depend on map order.
func sortDiags(diags hcl.Diagnostics) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		case a.Start.Line != b.Start.Line:
			return a.Start.Line < b.Start.Line
		}
		return a.Start.Column < b.Start.Column
	})
}

// decoder carries the state of one Parse.
type decoder struct {
	dir   string
	funcs map[string]function.Function
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
}

func (d *decoder) errorf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  &r,
	})
}

// functions is the function table of expressions.
func (d *decoder) functions() map[string]function.Function {
	return map[string]function.Function{
		"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc,
		"min": stdlib.MinFunc, "max": stdlib.MaxFunc, "pow": stdlib.PowFunc, "parseint": stdlib.ParseIntFunc,
		"upper": stdlib.UpperFunc, "lower": stdlib.LowerFunc, "title": stdlib.TitleFunc,
		"trimspace": stdlib.TrimSpaceFunc, "trimprefix": stdlib.TrimPrefixFunc, "trimsuffix": stdlib.TrimSuffixFunc,
		"format": stdlib.FormatFunc, "formatlist": stdlib.FormatListFunc, "join": stdlib.JoinFunc,
		"split": stdlib.SplitFunc, "replace": stdlib.ReplaceFunc, "substr": stdlib.SubstrFunc, "strlen": stdlib.StrlenFunc,
		"concat": stdlib.ConcatFunc, "length": stdlib.LengthFunc, "contains": stdlib.ContainsFunc,
		"distinct": stdlib.DistinctFunc, "element": stdlib.ElementFunc, "flatten": stdlib.FlattenFunc,
		"keys": stdlib.KeysFunc, "values": stdlib.ValuesFunc, "lookup": stdlib.LookupFunc, "merge": stdlib.MergeFunc,
		"reverse": stdlib.ReverseListFunc, "slice": stdlib.SliceFunc, "sort": stdlib.SortFunc, "zipmap": stdlib.ZipmapFunc,
		"coalesce": stdlib.CoalesceFunc, "jsonencode": stdlib.JSONEncodeFunc, "jsondecode": stdlib.JSONDecodeFunc,
		"tostring": stdlib.MakeToFunc(cty.String), "tonumber": stdlib.MakeToFunc(cty.Number),
		"tobool": stdlib.MakeToFunc(cty.Bool),
		"file":   d.fileFunc(),
		"env":    envFunc,
	}
}

func functionNames() []string {
	var names []string
	for n := range (&decoder{}).functions() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// maxFileBytes bounds what file() reads.
const maxFileBytes = 16 << 20

func (d *decoder) fileFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := d.resolve(args[0].AsString())
			fi, err := os.Stat(p)
			if err != nil {
				return cty.NilVal, fmt.Errorf("cannot read %s: %v", p, err)
			}
			if !fi.Mode().IsRegular() || fi.Size() > maxFileBytes {
				return cty.NilVal, fmt.Errorf("%s is not a regular file of at most %d bytes", p, maxFileBytes)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return cty.NilVal, fmt.Errorf("cannot read %s: %v", p, err)
			}
			if !utf8.Valid(b) {
				return cty.NilVal, fmt.Errorf("%s is not UTF-8 text", p)
			}
			return cty.StringVal(string(b)), nil
		},
	})
}

var envFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "name", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal(os.Getenv(args[0].AsString())), nil
	},
})

// resolve makes p absolute against the config file's directory.
func (d *decoder) resolve(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.dir, p)
}

// variables decodes the variable blocks and applies the overrides; it
// returns the values and the rest of the body.
func (d *decoder) variables(body hcl.Body, overrides map[string]string) (map[string]cty.Value, hcl.Body) {
	content, rest, diags := body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}},
	})
	d.diags = append(d.diags, diags...)
	fnCtx := &hcl.EvalContext{Functions: d.funcs}
	vals := map[string]cty.Value{}
	defRanges := map[string]hcl.Range{}
	for _, blk := range content.Blocks {
		name := blk.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			d.errorf(blk.LabelRanges[0], "Invalid variable name",
				"A variable name must start with a letter or underscore and contain only letters, digits, underscores and dashes; %q does not.", name)
			continue
		}
		if prev, dup := defRanges[name]; dup {
			d.errorf(blk.LabelRanges[0], "Duplicate variable",
				"Variable %q is already declared at %s.", name, prev.String())
			continue
		}
		defRanges[name] = blk.DefRange
		bc, diags := blk.Body.Content(schemaOf(variableSpec))
		d.diags = append(d.diags, diags...)
		if a, ok := bc.Attributes["description"]; ok {
			d.value(a, kString, fnCtx)
		}
		v := cty.NilVal
		if a, ok := bc.Attributes["default"]; ok {
			if val, ok := d.value(a, kAny, fnCtx); ok {
				v = val
			}
		}
		vals[name] = v
	}
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		s := overrides[name]
		rng := hcl.Range{Filename: fmt.Sprintf("<value for var.%s>", name),
			Start: hcl.InitialPos, End: hcl.Pos{Line: 1, Column: 1 + utf8.RuneCountInString(s), Byte: len(s)}}
		def, declared := vals[name]
		if !declared {
			d.errorf(rng, "Undeclared variable",
				"A value was given for variable %q, but the config declares no variable \"%s\" block.", name, name)
			continue
		}
		v, ok := d.override(name, s, def, rng)
		if ok {
			vals[name] = v
		}
	}
	for name, v := range vals {
		if v == cty.NilVal || v.IsNull() {
			if _, given := overrides[name]; !given {
				d.errorf(defRanges[name], "No value for required variable",
					"Variable %q has no default, so a value must be given (--var %s=VALUE).", name, name)
			}
			vals[name] = cty.DynamicVal
		}
	}
	return vals, rest
}

// override converts a command-line value for a variable whose default is
// def.
func (d *decoder) override(name, s string, def cty.Value, rng hcl.Range) (cty.Value, bool) {
	str := cty.StringVal(s)
	if def == cty.NilVal || def.IsNull() {
		return str, true
	}
	t := def.Type()
	switch {
	case t == cty.String:
		return str, true
	case t.IsPrimitiveType():
		v, err := convert.Convert(str, t)
		if err != nil {
			d.errorf(rng, "Invalid value for variable",
				"Variable %q has a %s default, so its value must be a %s; %q is not.", name, t.FriendlyName(), t.FriendlyName(), s)
			return cty.NilVal, false
		}
		return v, true
	}
	expr, diags := hclsyntax.ParseExpression([]byte(s), rng.Filename, hcl.InitialPos)
	if diags.HasErrors() {
		d.diags = append(d.diags, diags...)
		return cty.NilVal, false
	}
	v, diags := expr.Value(&hcl.EvalContext{Functions: d.funcs})
	if diags.HasErrors() {
		d.diags = append(d.diags, diags...)
		return cty.NilVal, false
	}
	return v, true
}

func schemaOf(s *blockSpec) *hcl.BodySchema {
	bs := &hcl.BodySchema{}
	for _, a := range s.attrs {
		bs.Attributes = append(bs.Attributes, hcl.AttributeSchema{Name: a.name, Required: a.required})
	}
	for _, c := range s.blocks {
		h := hcl.BlockHeaderSchema{Type: c.typ}
		if c.label != "" {
			h.LabelNames = []string{c.label}
		}
		bs.Blocks = append(bs.Blocks, h)
	}
	return bs
}

// node is a decoded block: its attributes' values (converted to their
// kind's type) with their ranges, and its child blocks.
type node struct {
	spec       *blockSpec
	label      string
	labelRange hcl.Range
	defRange   hcl.Range
	attrs      map[string]*attrVal
	blocks     map[string][]*node
}

type attrVal struct {
	val  cty.Value
	rng  hcl.Range // the value expression's range
	expr hcl.Expression
}

// block decodes body against spec. hcl itself reports unknown attributes
// and blocks, missing required attributes and malformed labels, each at
// its range.
func (d *decoder) block(body hcl.Body, spec *blockSpec, blk *hcl.Block) *node {
	n := &node{spec: spec, attrs: map[string]*attrVal{}, blocks: map[string][]*node{}}
	if blk != nil {
		n.defRange = blk.DefRange
		if len(blk.Labels) > 0 {
			n.label, n.labelRange = blk.Labels[0], blk.LabelRanges[0]
		}
	}
	content, diags := body.Content(schemaOf(spec))
	migrationHints(body, spec, diags)
	d.diags = append(d.diags, diags...)
	if content == nil {
		return n
	}
	for i := range spec.attrs {
		as := &spec.attrs[i]
		name := as.name
		a, ok := content.Attributes[name]
		if !ok {
			continue
		}
		if v, ok := d.value(a, as.kind, d.ctx); ok && !v.IsNull() {
			n.attrs[name] = &attrVal{val: v, rng: a.Expr.Range(), expr: a.Expr}
		}
	}
	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		var cs *blockSpec
		for _, c := range spec.blocks {
			if c.typ == b.Type {
				cs = c
			}
		}
		key := b.Type
		if len(b.Labels) > 0 {
			key += " " + b.Labels[0]
		}
		if prev, dup := seen[key]; dup && (!cs.multi || cs.label != "") {
			what := fmt.Sprintf("a %s block", b.Type)
			rng := b.DefRange
			if len(b.Labels) > 0 {
				what = fmt.Sprintf("a %s block named %q", b.Type, b.Labels[0])
				rng = b.LabelRanges[0]
			}
			d.errorf(rng, "Duplicate "+b.Type+" block",
				"There is already %s at %s; each may appear only once.", what, prev.String())
			continue
		}
		seen[key] = b.DefRange
		n.blocks[b.Type] = append(n.blocks[b.Type], d.block(b.Body, cs, b))
	}
	for _, c := range spec.blocks {
		if c.required && len(n.blocks[c.typ]) == 0 && !c.exempted(n.blocks) {
			rng := body.MissingItemRange()
			if blk != nil {
				rng = blk.DefRange
			}
			d.errorf(rng, "Missing "+c.typ+" block",
				"The config needs a %s block. %s", c.header(), firstSentence(c.doc))
		}
	}
	return n
}

// migrationHints adds to each "Unsupported argument" diagnostic of an
// attribute in spec.removed what to write instead (the diagnostic keeps
// hcl's summary and range: the attribute's name).
func migrationHints(body hcl.Body, spec *blockSpec, diags hcl.Diagnostics) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return
	}
	attrHints(sb, spec, diags)
	if len(spec.removed) == 0 {
		return
	}
	for name, hint := range spec.removed {
		a, ok := sb.Attributes[name]
		if !ok {
			continue
		}
		for _, dg := range diags {
			if dg.Summary == "Unsupported argument" && dg.Subject != nil && *dg.Subject == a.NameRange {
				dg.Detail += " " + hint
			}
		}
	}
}

// attrHints adds `Did you mean "NAME"?` to the "Unsupported argument"
// diagnostic of an attribute the block does not have when one of its
// attributes is close (suggest.Closest), as hcl does for block types.
func attrHints(sb *hclsyntax.Body, spec *blockSpec, diags hcl.Diagnostics) {
	names := make([]string, len(spec.attrs))
	for i, a := range spec.attrs {
		names[i] = a.name
	}
	for name, a := range sb.Attributes {
		if _, removed := spec.removed[name]; removed {
			continue
		}
		near := suggest.Closest(name, names)
		if near == "" || near == name {
			continue
		}
		for _, dg := range diags {
			if dg.Summary == "Unsupported argument" && dg.Subject != nil && *dg.Subject == a.NameRange && !strings.Contains(dg.Detail, "Did you mean") {
				dg.Detail += fmt.Sprintf(" Did you mean %q?", near)
			}
		}
	}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// value evaluates an attribute and converts it to k's type.
func (d *decoder) value(a *hcl.Attribute, k kind, ctx *hcl.EvalContext) (cty.Value, bool) {
	v, diags := a.Expr.Value(ctx)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		// Only a variable with no value is unknown; that is reported.
		return cty.NilVal, false
	}
	v, _ = v.Unmark()
	if v.IsNull() {
		return v, true
	}
	cv, err := convert.Convert(v, k.cty())
	if err != nil {
		d.errorf(a.Expr.Range(), "Incorrect attribute value type",
			"Inappropriate value for attribute %q: %s required, got %s.", a.Name, article(k), v.Type().FriendlyName())
		return cty.NilVal, false
	}
	if k == kInt {
		bf := cv.AsBigFloat()
		if !bf.IsInt() {
			d.errorf(a.Expr.Range(), "Incorrect attribute value type",
				"Inappropriate value for attribute %q: a whole number is required, got %s.", a.Name, bf.Text('g', 10))
			return cty.NilVal, false
		}
		if i, acc := bf.Int64(); acc != big.Exact || i > 1<<53 || i < -(1<<53) {
			d.errorf(a.Expr.Range(), "Number out of range",
				"Attribute %q must be between -2^53 and 2^53, got %s.", a.Name, bf.Text('g', 10))
			return cty.NilVal, false
		}
	}
	if k == kStrings || k == kPaths {
		for it := cv.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() {
				d.errorf(a.Expr.Range(), "Incorrect attribute value type",
					"Inappropriate value for attribute %q: the list must not contain null.", a.Name)
				return cty.NilVal, false
			}
		}
	}
	return cv, true
}

func article(k kind) string {
	switch k {
	case kInt:
		return "a whole number is"
	case kNumber:
		return "a number is"
	case kBool:
		return "a bool is"
	case kStrings, kPaths:
		return "a list of strings is"
	case kDuration:
		return "a duration string (such as \"90s\") is"
	case kPath, kOutPath:
		return "a path string is"
	}
	return "a string is"
}

// maxNumberLen bounds a number literal's length, and maxExponentDigits its
// exponent's digits: HCL parses numbers into arbitrary-precision floats,
// and a literal like 1e999999 takes about a second to parse (a fuzzer
// finds it at once). Every number a weft config holds fits a float64.
const (
	maxNumberLen      = 64
	maxExponentDigits = 3
)

// checkNumbers reports number literals too long or too large to be a
// config value, before the parser spends time on them.
func checkNumbers(src []byte, filename string) hcl.Diagnostics {
	toks, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	var diags hcl.Diagnostics
	for _, t := range toks {
		if t.Type != hclsyntax.TokenNumberLit {
			continue
		}
		lit := string(t.Bytes)
		exp := ""
		if i := strings.IndexAny(lit, "eE"); i >= 0 {
			exp = strings.TrimLeft(strings.TrimLeft(lit[i+1:], "+-"), "0")
		}
		if len(lit) > maxNumberLen || len(exp) > maxExponentDigits {
			r := t.Range
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Number out of range",
				Detail:   fmt.Sprintf("The number %.20s... is too long or too large; config numbers must fit a 64-bit float (at most %d characters, an exponent of at most %d digits).", lit, maxNumberLen, maxExponentDigits),
				Subject:  &r,
			})
		}
	}
	return diags
}
