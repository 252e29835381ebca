package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/syntax"

	"github.com/weft-dev/weft/sdk/interp"

	"github.com/weft-dev/weft/sdk/spec"
)

// schemaProps returns an object schema's properties (each decoded) and
// its required list.
func schemaProps(raw json.RawMessage) (map[string]map[string]any, []string) {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	_ = json.Unmarshal(raw, &s)
	if s.Properties == nil {
		s.Properties = map[string]map[string]any{}
	}
	return s.Properties, s.Required
}

func schemaType(p map[string]any) string {
	switch t := p["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// binding ties an argument to the seed row it was drawn from.
type binding struct {
	table *seedTable
	row   int
	col   string
	key   bool // col is the table's primary key (or an *_id naming it)
}

// normalCall is a normal-stage call kept for the diff and readback
// stages.
type normalCall struct {
	tool spec.Tool
	args map[string]any
	keys map[string]binding
	out  *outcome
}

// entityTables are the table names an *_id argument's entity may have.
func entityTables(e string) []string {
	out := []string{e, e + "s", e + "es"}
	if strings.HasSuffix(e, "y") {
		out = append(out, e[:len(e)-1]+"ies")
	}
	return out
}

// match finds the seed value of argument name: from the anchor row when
// it has the column, else a table whose key is the column, else the
// entity table of an *_id name, else any table with such a column.
func (v *validator) match(name string, anchor *binding) (binding, bool) {
	if anchor != nil && anchor.table.col(name) >= 0 {
		t := anchor.table
		return binding{table: t, row: anchor.row, col: name, key: slices.Equal(t.key, []string{name})}, true
	}
	names := sortedKeys(v.tables)
	for _, n := range names {
		t := v.tables[n]
		if len(t.rows) > 0 && slices.Equal(t.key, []string{name}) {
			return binding{table: t, col: name, key: true}, true
		}
	}
	if e, ok := strings.CutSuffix(strings.ToLower(name), "_id"); ok && e != "" {
		for _, tn := range entityTables(e) {
			t := v.tables[tn]
			if t == nil || len(t.rows) == 0 {
				continue
			}
			switch {
			case t.col("id") >= 0:
				return binding{table: t, col: "id", key: slices.Equal(t.key, []string{"id"})}, true
			case len(t.key) == 1:
				return binding{table: t, col: t.key[0], key: true}, true
			}
		}
	}
	for _, n := range names {
		t := v.tables[n]
		if len(t.rows) > 0 && t.col(name) >= 0 {
			return binding{table: t, col: name}, true
		}
	}
	return binding{}, false
}

func (b binding) value() any { return b.table.rows[b.row][b.table.col(b.col)] }

// normalArgs draws a valid call of t from the seed: the required
// arguments, ids (and, for a read tool, other columns) from seed rows (one
// anchor row for the arguments it has), enums from the schema (avoiding
// the anchor row's current value), other values from their type.
func (v *validator) normalArgs(t spec.Tool) (map[string]any, map[string]binding) {
	props, required := schemaProps(t.InputSchema)
	var root map[string]any
	_ = json.Unmarshal(t.InputSchema, &root)
	args := map[string]any{}
	keys := map[string]binding{}
	var anchor *binding
	for _, name := range required {
		if b, ok := v.match(name, nil); ok && (b.key || strings.HasSuffix(name, "_id")) {
			anchor = &b
			break
		}
	}
	for _, name := range required {
		p := props[name]
		if p == nil {
			p = map[string]any{}
		}
		p = deref(root, p, 0)
		if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
			val := enum[0]
			if anchor != nil && anchor.table.col(name) >= 0 && len(enum) > 1 && looseEqual(enum[0], anchor.table.rows[anchor.row][anchor.table.col(name)]) {
				val = enum[1]
			}
			args[name] = val
			continue
		}
		if b, ok := v.match(name, anchor); ok && (t.ReadOnly || b.key || strings.HasSuffix(name, "_id")) {
			// A write tool's other arguments are new values (an email to
			// set), not the row's current ones.
			if val, ok := coerce(b.value(), schemaType(p)); ok {
				args[name] = val
				if b.key || strings.HasSuffix(name, "_id") {
					keys[name] = b
				}
				continue
			}
		}
		args[name] = defaultValue(root, name, p, 0)
	}
	return args, keys
}

// deref follows a local "$ref" ("#/$defs/Name", "#/definitions/Name")
// of p within root, and the first branch of an anyOf or oneOf.
func deref(root, p map[string]any, depth int) map[string]any {
	if depth > 8 {
		return p
	}
	if ref, ok := p["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
		var cur any = root
		for _, seg := range strings.Split(ref[2:], "/") {
			m, _ := cur.(map[string]any)
			cur = m[strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")]
		}
		if m, ok := cur.(map[string]any); ok {
			return deref(root, m, depth+1)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := p[k].([]any); ok && len(alts) > 0 && p["type"] == nil {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] != "null" {
					return deref(root, m, depth+1)
				}
			}
		}
	}
	return p
}

// coerce converts a seed value to the schema type of an argument.
func coerce(val any, typ string) (any, bool) {
	if val == nil {
		return nil, false
	}
	switch typ {
	case "string":
		switch x := val.(type) {
		case string:
			return x, true
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), true
		default:
			return fmt.Sprint(x), true
		}
	case "integer":
		switch x := val.(type) {
		case int64, uint64:
			return x, true
		case float64:
			return int64(x), x == math.Trunc(x)
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			return n, err == nil
		}
		return nil, false
	case "number":
		switch x := val.(type) {
		case int64, uint64, float64:
			return x, true
		case string:
			f, err := strconv.ParseFloat(x, 64)
			return f, err == nil
		}
		return nil, false
	case "boolean":
		switch x := val.(type) {
		case bool:
			return x, true
		case int64:
			return x != 0, true
		}
		return nil, false
	case "array", "object":
		return nil, false
	}
	return val, true
}

// defaultValue is a value of p's type when the seed gives none.
func defaultValue(root map[string]any, name string, p map[string]any, depth int) any {
	p = deref(root, p, 0)
	if c, ok := p["const"]; ok {
		return c
	}
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	lname := strings.ToLower(name)
	switch schemaType(p) {
	case "integer":
		if m, ok := p["minimum"].(float64); ok {
			return int64(math.Ceil(m))
		}
		return int64(1)
	case "number":
		if m, ok := p["minimum"].(float64); ok && m > 1 {
			return m
		}
		return 1.0
	case "boolean":
		return true
	case "array":
		items, _ := p["items"].(map[string]any)
		if items == nil || depth > 4 {
			return []any{}
		}
		return []any{defaultValue(root, strings.TrimSuffix(name, "s"), items, depth+1)}
	case "object":
		out := map[string]any{}
		if depth > 4 {
			return out
		}
		props, _ := p["properties"].(map[string]any)
		req, _ := p["required"].([]any)
		for _, r := range req {
			n, _ := r.(string)
			sub, _ := props[n].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
			}
			out[n] = defaultValue(root, n, sub, depth+1)
		}
		return out
	}
	switch {
	case p["format"] == "date" || strings.Contains(lname, "date"):
		return "2024-05-15"
	case p["format"] == "email" || strings.Contains(lname, "email"):
		return "validation@example.com"
	}
	return "validation-" + lname
}

// wrongValue is a value of another type than p's ("" = none to give).
func wrongValue(p map[string]any) (any, bool) {
	switch schemaType(p) {
	case "string":
		return int64(12345), true
	case "integer", "number", "boolean", "array", "object":
		return "not-a-" + schemaType(p), true
	}
	return nil, false
}

// absentValue is a value of b's column that no seed row has.
func absentValue(b binding, typ string) any {
	ci := b.table.col(b.col)
	switch typ {
	case "integer", "number":
		var top float64
		for _, r := range b.table.rows {
			if f, ok := toFloat(r[ci]); ok && f > top {
				top = f
			}
		}
		return int64(top) + 1000
	}
	cand := "nonexistent-" + b.col
	for i := 0; ; i++ {
		taken := false
		for _, r := range b.table.rows {
			if looseEqual(r[ci], cand) {
				taken = true
			}
		}
		if !taken {
			return cand
		}
		cand = fmt.Sprintf("nonexistent-%s-%d", b.col, i)
	}
}

func marshalArgs(m map[string]any) json.RawMessage {
	b, _ := json.Marshal(m)
	return b
}

// normal is the normal stage: one call per tool with arguments drawn
// from the seed, which must succeed and match the output schema.
func (v *validator) normal() {
	for _, t := range v.s.Tools {
		args, keys := v.normalArgs(t)
		o := v.call(StageNormal, v.seed, t.Name, marshalArgs(args))
		nc := &normalCall{tool: t, args: args, keys: keys, out: o}
		add := func(code Code, field, format string, a ...any) {
			v.add(Finding{Stage: StageNormal, Code: code, Tool: t.Name, Field: field, Call: o.callJSON(t.Name),
				Message: fmt.Sprintf("server %q, tool %q: ", v.s.Name, t.Name) + fmt.Sprintf(format, a...)})
		}
		switch {
		case v.budgetFinding(StageNormal, t.Name, o), v.deniedFinding(StageNormal, t.Name, o):
			v.broken[t.Name] = true
		case o.refusal:
			add(CodeParamsMismatch, "input_schema", "arguments drawn from the seed were refused by the input schema: %v", o.err)
		case o.internal:
			v.broken[t.Name] = true
			add(CodeCallFailed, "program", "a valid call on seed entities failed: %v", o.err)
		case o.toolErr():
			add(CodeUnexpectedError, "errors", "a valid call on seed entities returned tool error %q: %s", o.code, resultText(o.res))
		default:
			if sch := v.outputs[t.Name]; sch != nil {
				if msg := checkOutput(sch, o.res.StructuredContent, resultText(o.res)); msg != "" {
					add(CodeOutputShape, "output_schema", "the result does not match the output schema: %s", msg)
				}
			}
		}
		v.normals = append(v.normals, nc)
	}
}

func checkOutput(sch interface{ Validate(any) error }, structured json.RawMessage, text string) string {
	raw := structured
	if len(raw) == 0 {
		raw = json.RawMessage(text)
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return "the result is not JSON: " + err.Error()
	}
	if err := sch.Validate(inst); err != nil {
		return strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return ""
}

// notFoundRE matches the error codes a nonexistent id should give.
var notFoundRE = regexp.MustCompile(`not_found|unknown|no_such|not_exist|nonexistent|invalid|missing`)

// boundary is the boundary stage: each required argument missing, each
// typed argument of another type, each id argument naming no seed row.
func (v *validator) boundary() {
	for _, nc := range v.normals {
		t := nc.tool
		if v.broken[t.Name] {
			continue // its normal call already failed: the same failure again says nothing new
		}
		props, required := schemaProps(t.InputSchema)
		for _, name := range required {
			args := maps(nc.args)
			delete(args, name)
			v.expectError(t, "missing", name, args, nil)
		}
		for _, name := range sortedKeys(nc.args) {
			wv, ok := wrongValue(props[name])
			if !ok {
				continue
			}
			args := maps(nc.args)
			args[name] = wv
			v.expectError(t, "wrong_type", name, args, nil)
		}
		for _, name := range sortedKeys(nc.keys) {
			args := maps(nc.args)
			args[name] = absentValue(nc.keys[name], schemaType(props[name]))
			v.expectError(t, "nonexistent", name, args, expectedCodes(v.s, t))
		}
	}
}

// expectedCodes are the codes a nonexistent id may give: the tool's
// not-found-like codes, else all its codes, else all the server's.
func expectedCodes(s *spec.Server, t spec.Tool) []string {
	var nf []string
	for _, c := range t.Errors {
		if notFoundRE.MatchString(c) {
			nf = append(nf, c)
		}
	}
	switch {
	case len(nf) > 0:
		return nf
	case len(t.Errors) > 0:
		return t.Errors
	}
	return s.ErrorCodes()
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	return out
}

// expectError makes a boundary call that must fail: refused by the input
// schema or a tool error (of one of codes, when given).
func (v *validator) expectError(t spec.Tool, kind, name string, args map[string]any, codes []string) {
	if v.broken[t.Name] {
		return
	}
	o := v.call(StageBoundary, v.seed, t.Name, marshalArgs(args))
	field := "input_schema.properties." + name
	add := func(code Code, format string, a ...any) {
		v.add(Finding{Stage: StageBoundary, Code: code, Tool: t.Name, Field: field, Call: o.callJSON(t.Name), Diff: o.diffJSON(),
			Message: fmt.Sprintf("server %q, tool %q, field %s (%s argument): ", v.s.Name, t.Name, field, kind) + fmt.Sprintf(format, a...)})
	}
	switch {
	case v.budgetFinding(StageBoundary, t.Name, o):
		v.broken[t.Name] = true
	case o.refusal:
		if codes != nil {
			return // the schema refused the made-up id: an error as well
		}
	case o.internal:
		add(CodeBoundaryCrash, "the call ended in an internal error instead of a tool error: %v", o.err)
	case o.ok():
		add(CodeErrorNotRaised, "the call succeeded; want a tool error%s", codeList(codes))
	case codes != nil && !slices.Contains(codes, o.code):
		add(CodeWrongErrorCode, "tool error %q; want%s", o.code, codeList(codes))
	}
}

func codeList(codes []string) string {
	if len(codes) == 0 {
		return ""
	}
	return " of code " + strings.Join(codes, " or ")
}

// diffs is the diff stage over the successful normal calls.
func (v *validator) diffs() {
	for _, nc := range v.normals {
		o := nc.out
		if !o.ok() {
			continue
		}
		t := nc.tool
		v.stageCalls[StageDiff]++
		var changed []string
		for _, td := range o.diff.Tables {
			changed = append(changed, strings.ToLower(td.Table))
		}
		add := func(code Code, field, format string, a ...any) {
			v.add(Finding{Stage: StageDiff, Code: code, Tool: t.Name, Field: field, Call: o.callJSON(t.Name), Diff: o.diffJSON(),
				Message: fmt.Sprintf("server %q, tool %q: ", v.s.Name, t.Name) + fmt.Sprintf(format, a...)})
		}
		if t.ReadOnly {
			if len(changed) > 0 {
				add(CodeReadOnlyWrote, "read_only", "a read-only tool changed tables %s", strings.Join(changed, ", "))
			}
			continue
		}
		var outside []string
		for _, c := range changed {
			if !slices.ContainsFunc(t.Writes, func(w string) bool { return strings.EqualFold(w, c) }) {
				outside = append(outside, c)
			}
		}
		switch {
		case len(outside) > 0:
			add(CodeWriteOutsideSet, "writes", "the call changed %s, outside the declared write set %v", strings.Join(outside, ", "), t.Writes)
		case len(changed) == 0:
			add(CodeNoEffect, "writes", "a write tool's successful call on seed entities changed nothing")
		}
	}
}

// readback is the readback stage: after each write that changed rows,
// every read tool that reads the table and takes an argument naming the
// row is called on the state before and after; every changed column the
// read result shows (a member of that name) must show the new value.
func (v *validator) readback() {
	for _, nc := range v.normals {
		o := nc.out
		if !o.ok() || nc.tool.ReadOnly || o.diff.Empty() {
			continue
		}
		for _, td := range o.diff.Tables {
			st := v.tables[strings.ToLower(td.Table)]
			if st == nil {
				continue
			}
			var rows []map[string]any // full row after the write
			var check [][]string      // columns to check per row
			for _, r := range td.Added {
				row := map[string]any{}
				for i, c := range td.Columns {
					row[c] = r.Values[i]
				}
				rows, check = append(rows, row), append(check, td.Columns)
			}
			for _, rc := range td.Changed {
				row := v.seedRow(st, td.PrimaryKey, rc.Key)
				var cols []string
				for _, cc := range rc.Columns {
					row[cc.Column] = cc.New
					cols = append(cols, cc.Column)
				}
				rows, check = append(rows, row), append(check, cols)
			}
			for i, row := range rows {
				for _, rt := range v.s.Tools {
					if rt.ReadOnly && touches(rt, td.Table) && !v.broken[rt.Name] {
						v.readOne(nc, rt, td.Table, row, check[i])
					}
				}
			}
		}
	}
}

func touches(t spec.Tool, table string) bool {
	f := func(x string) bool { return strings.EqualFold(x, table) }
	return slices.ContainsFunc(t.Reads, f) || slices.ContainsFunc(t.Writes, f)
}

// seedRow is the seed row of st with primary key key, as a map (empty
// when absent).
func (v *validator) seedRow(st *seedTable, pk []string, key []any) map[string]any {
	row := map[string]any{}
	for _, r := range st.rows {
		match := len(pk) > 0
		for i, k := range pk {
			if ci := st.col(k); ci < 0 || i >= len(key) || !looseEqual(r[ci], key[i]) {
				match = false
			}
		}
		if match {
			for i, c := range st.columns {
				row[c] = r[i]
			}
			return row
		}
	}
	for i, k := range pk {
		if i < len(key) {
			row[k] = key[i]
		}
	}
	return row
}

// readOne reads row back with read tool rt after write nc.
func (v *validator) readOne(nc *normalCall, rt spec.Tool, table string, row map[string]any, cols []string) {
	props, _ := schemaProps(rt.InputSchema)
	args, _ := v.normalArgs(rt)
	linked := false
	ent := strings.ToLower(table)
	for name, p := range props {
		var val any
		var ok bool
		if x, has := row[name]; has {
			val, ok = x, true
		} else if e, isID := strings.CutSuffix(strings.ToLower(name), "_id"); isID && slices.Contains(entityTables(e), ent) {
			val, ok = row["id"]
		}
		if !ok {
			continue
		}
		if cv, good := coerce(val, schemaType(p)); good {
			args[name] = cv
			linked = true
		}
	}
	if !linked {
		return
	}
	a := marshalArgs(args)
	after := v.call(StageReadback, nc.out.after, rt.Name, a)
	f := Finding{Stage: StageReadback, Code: CodeReadbackMismatch, Tool: rt.Name, Call: after.callJSON(rt.Name), Diff: nc.out.diffJSON()}
	if v.budgetFinding(StageReadback, rt.Name, after) {
		v.broken[rt.Name] = true
		return
	}
	if !after.ok() {
		f.Field = "program"
		f.Message = fmt.Sprintf("server %q, tool %q: after %s changed %s, reading it back failed: %s", v.s.Name, rt.Name, nc.tool.Name, table, failText(after))
		v.add(f)
		return
	}
	var res any
	raw := after.res.StructuredContent
	if len(raw) == 0 {
		raw = json.RawMessage(resultText(after.res))
	}
	if json.Unmarshal(raw, &res) != nil {
		return
	}
	for _, c := range cols {
		shown := members(res, c, nil)
		if len(shown) == 0 || slices.ContainsFunc(shown, func(x any) bool { return looseEqual(x, row[c]) }) {
			continue
		}
		f.Field = c
		f.Message = fmt.Sprintf("server %q, tool %q, field %s: after %s set %s.%s to %v, %s shows %v", v.s.Name, rt.Name, c,
			nc.tool.Name, table, c, jsonText(row[c]), rt.Name, jsonText(shown[0]))
		v.add(f)
		return
	}
}

func failText(o *outcome) string {
	if o.err != nil {
		return o.err.Error()
	}
	return fmt.Sprintf("tool error %q: %s", o.code, resultText(o.res))
}

func jsonText(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// members collects the values of every object member named name in x.
func members(x any, name string, out []any) []any {
	switch t := x.(type) {
	case map[string]any:
		for k, val := range t {
			if k == name {
				out = append(out, val)
			}
			out = members(val, name, out)
		}
	case []any:
		for _, e := range t {
			out = members(e, name, out)
		}
	}
	return out
}

func toFloat(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case int:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

// looseEqual compares a state value with a JSON value: numbers by value
// (a decimal's string too), date-times with "T" or " ", JSON documents
// by their encoding.
func looseEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr && bStr {
		return as == bs || strings.Replace(as, "T", " ", 1) == strings.Replace(bs, "T", " ", 1)
	}
	if fa, ok := toFloat(a); ok {
		if fb, ok := toFloat(b); ok {
			return fa == fb
		}
	}
	if ab, ok := a.(bool); ok {
		bb, ok := b.(bool)
		return ok && ab == bb
	}
	return jsonText(a) == jsonText(b)
}

// tableUse is a table an SQL literal names, and whether the statement
// writes it (the first table of an INSERT, UPDATE, DELETE or REPLACE).
type tableUse struct {
	table string
	write bool
}

// sqlStmtRE tells a string literal that is SQL (it starts with a
// statement verb) from prose such as an error message.
var sqlStmtRE = regexp.MustCompile(`(?is)^\s*(select|insert|update|delete|replace|with)\b`)

// sqlTableRE finds the table names of SQL text.
var sqlTableRE = regexp.MustCompile("(?i)\\b(?:from|join|into|update|table)\\s+`?([a-zA-Z_][a-zA-Z0-9_]*)`?")

// checkTables scans the program's string literals for the tables its SQL
// names (a best-effort static check: SQL built from non-literal pieces is
// seen only as far as its literals go): a table the schema does not create
// is CodeTableUnknown, and a table a tool's function (or a helper it calls)
// names outside the tool's reads and writes is CodeTableUndeclared.
func (v *validator) checkTables(fns map[string][]interp.Param) bool {
	f, err := (&syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}).Parse("program.star", v.s.Program, 0)
	if err != nil {
		return true // reported by the compile check
	}
	uses := map[string][]tableUse{} // function -> tables its literals name
	calls := map[string][]string{}  // function -> top-level functions it calls
	for _, st := range f.Stmts {
		def, ok := st.(*syntax.DefStmt)
		if !ok {
			continue
		}
		name := def.Name.Name
		syntax.Walk(def, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.Literal:
				if s, ok := x.Value.(string); ok && sqlStmtRE.MatchString(s) {
					write := isWrite(s)
					for i, m := range sqlTableRE.FindAllStringSubmatch(s, -1) {
						u := tableUse{table: strings.ToLower(m[1]), write: write && i == 0}
						if !slices.Contains(uses[name], u) && !sqlWord[u.table] {
							uses[name] = append(uses[name], u)
						}
					}
				}
			case *syntax.CallExpr:
				if id, ok := x.Fn.(*syntax.Ident); ok {
					if _, isFn := fns[id.Name]; isFn && id.Name != name {
						calls[name] = append(calls[name], id.Name)
					}
				}
			}
			return true
		})
	}
	created := v.s.Tables()
	ok := true
	for _, t := range v.s.Tools {
		seen := map[string]bool{}
		var reach func(fn string)
		var tables []tableUse
		reach = func(fn string) {
			if seen[fn] {
				return
			}
			seen[fn] = true
			for _, u := range uses[fn] {
				if !slices.Contains(tables, u) {
					tables = append(tables, u)
				}
			}
			for _, c := range calls[fn] {
				reach(c)
			}
		}
		reach(t.Name)
		reported := map[string]bool{}
		for _, u := range tables {
			tab := u.table
			declared := touches(t, tab)
			verb := "reads"
			if u.write {
				declared = slices.ContainsFunc(t.Writes, func(w string) bool { return strings.EqualFold(w, tab) })
				verb = "writes"
			}
			if reported[tab] {
				continue
			}
			switch {
			case !slices.Contains(created, tab):
				ok, reported[tab] = false, true
				v.add(Finding{Stage: StageInterface, Code: CodeTableUnknown, Tool: t.Name, Field: "program",
					Message: fmt.Sprintf("server %q, tool %q, field program: the SQL names table %q, which the schema does not create (tables: %s)", v.s.Name, t.Name, tab, strings.Join(created, ", "))})
			case !declared:
				ok, reported[tab] = false, true
				v.add(Finding{Stage: StageInterface, Code: CodeTableUndeclared, Tool: t.Name, Field: verb,
					Message: fmt.Sprintf("server %q, tool %q, field %s: the SQL %s table %q, which the tool does not declare (reads %v, writes %v)", v.s.Name, t.Name, verb, verb, tab, t.Reads, t.Writes)})
			}
		}
	}
	return ok
}

// sqlWord are words the table pattern may catch that are not tables
// ("DELETE FROM" is caught at FROM; "INSERT INTO x SELECT ... FROM y" too).
var sqlWord = map[string]bool{"select": true, "where": true, "set": true, "values": true, "if": true, "exists": true, "dual": true}
