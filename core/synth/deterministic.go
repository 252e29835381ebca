package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// Deterministic synthesizes a server from documentation alone, with no
// model and no reference code: every tool is classified (Classify), given
// an entity (a table) inferred from its name and key parameters, and
// implemented by one of six CRUD operations over that table in the
// Starlark program; the seed rows are generated from Seed in foreign-key
// order. The same docs and options give byte-identical servers. Decision
// record: docs/design/023-deterministic-synthesis.md.
type Deterministic struct {
	// Seed drives the generated seed rows (0 is a valid seed).
	Seed uint64
	// Rows is the number of seed rows per table (default 5; negative: none).
	Rows int
	// HideAnnotations classifies without the documented readOnlyHint.
	HideAnnotations bool
}

// Name is "deterministic".
func (*Deterministic) Name() string { return "deterministic" }

// Synthesize returns the server planned from req.Docs (revision rounds
// plan the same server: the deterministic synthesizer has nothing to
// learn from findings). An error means the docs cannot give a server (no
// tools).
func (d *Deterministic) Synthesize(ctx context.Context, req *Request) (*spec.Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := d.Plan(&req.Docs)
	if err != nil {
		return nil, err
	}
	return p.Server()
}

// Plan is what the deterministic synthesizer inferred from the docs: the
// entities (tables, in foreign-key order: a referenced table before the
// tables referring to it) and per tool its operation, entity and
// parameters. Server renders it as a spec.
type Plan struct {
	Server_  string // the spec's server name
	Docs     *Docs
	Entities []*Entity
	Tools    []*ToolPlan
	seed     uint64
	rows     int
}

// Entity is one inferred table: its key column and type ("string" or
// "integer"), its other columns, and how docs-side collection names may
// call it (for loading a reference state, LoadState).
type Entity struct {
	Name    string // table name
	Key     string // key column
	KeyType string // "string" or "integer"
	Columns []*Column
	Refs    []string // entities this one refers to (its columns' Ref), sorted

	keyNamed bool // KeyType was decided by a plain "id" property
	stamped  bool // updates set updated_at
}

// Column is one non-key column. Type is "string", "integer", "number",
// "boolean" or "json"; Enum the documented values, when any; Ref the
// entity a foreign-key column refers to.
type Column struct {
	Name string
	Prop string // the documented property it came from first
	Type string
	Enum []any
	Ref  string
}

// ToolPlan is one tool: its served name (the documented name made a
// Starlark identifier when needed), operation, classification, entity and
// parameters.
type ToolPlan struct {
	Doc    DocTool
	Name   string
	Op     Op
	Class  Classification
	Entity *Entity
	Params []*Param
}

// Param is one documented argument and its role in the operation: "key"
// (the entity's key), "ref" (a key of another entity: checked to exist),
// "column" (written or filtered on), "query" (a free-text search over
// text columns), "limit" (a row limit) or "arg" (accepted, unused).
type Param struct {
	Prop     string // the documented property name
	Ident    string // the Starlark parameter name, "" when passed through **_kw
	Required bool
	Role     string
	Column   *Column // for key/ref/column roles: the column (key: nil)
	Schema   map[string]any
}

// Errors of every synthesized server, in this order.
var detErrors = []spec.ErrorCode{
	{Code: "invalid_arguments", Description: "an argument is missing, unexpected or of the wrong type"},
	{Code: "not_found", Description: "no entity has the given key (or a referenced key)"},
	{Code: "conflict", Description: "an entity with the given key already exists"},
}

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// reserved are the names a tool function or parameter may not take:
// Starlark keywords, the universe and the interpreter's builtins (a
// global of one of these names would shadow it for the whole program).
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`and break continue def elif else for if in lambda load not or pass return while
		None True False export abs any all bool bytes chr dict dir enumerate fail float getattr hasattr hash int len list
		max min ord print range repr reversed set sorted str tuple type zip as assert async await class del except
		finally from global import is nonlocal raise try with yield`) {
		m[w] = true
	}
	for _, b := range interp.Builtins() {
		m[b] = true
	}
	return m
}()

// keywords are the words a Starlark parameter may not be named (Starlark's
// keywords and the Python ones it reserves); a property named so is passed
// through **_kw. Other names are fine as parameters: the function bodies
// use only the prelude's "_" aliases, so a parameter named query or type
// shadows nothing they use.
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`and break continue def elif else for if in lambda load not or pass return while
		as assert async await class del except finally from global import is nonlocal raise try with yield`) {
		m[w] = true
	}
	return m
}()

// creationVerbs are the create verbs that make a new entity even when
// its key is given; other create-like verbs with a key act on an existing
// one (OpStatus).
var creationVerbs = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`create add insert new make register book reserve submit upload put write post
		publish touch mkdir clone copy cp fork import generate save store record send place buy purchase order
		invite comment reply tweet schedule enqueue queue mint deposit`) {
		creationVerbs[w] = true
	}
}

// pastTense is the status an action leaves ("start" -> "started").
func pastTense(v string) string {
	switch {
	case v == "run":
		return "ran"
	case v == "stop":
		return "stopped"
	case strings.HasSuffix(v, "e"):
		return v + "d"
	}
	return v + "ed"
}

// normProp is a property name lower-cased without "_" and "-", the form
// the role tables below are written in.
func normProp(p string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(p))
}

// keyWords are properties that name an entity's key without an entity
// prefix, and control parameters that are never columns.
var (
	queryProps = map[string]bool{"query": true, "q": true, "keyword": true, "keywords": true, "search": true, "searchquery": true, "term": true, "searchterm": true}
	limitProps = map[string]bool{"limit": true, "maxresults": true, "numresults": true, "count": true, "topk": true, "pagesize": true, "perpage": true, "n": true, "maxitems": true}
	ctrlProps  = map[string]bool{"offset": true, "page": true, "cursor": true, "sort": true, "sortby": true, "orderby": true, "sortorder": true, "direction": true, "format": true, "verbose": true, "fields": true}
	stopNouns  = map[string]bool{"details": true, "detail": true, "info": true, "information": true, "all": true, "by": true, "for": true, "of": true, "the": true, "a": true, "an": true, "to": true, "from": true, "in": true, "on": true, "with": true, "and": true, "or": true, "my": true, "current": true, "new": true, "data": true, "id": true, "ids": true, "tool": true, "api": true, "mcp": true, "status": false}
)

// isKeyName reports whether a property names a key: "id", "*_id",
// "*Id", "*_ids" is not (a list), "*_number" when it names an entity
// ("flight_number").
func isKeyName(p string) bool {
	_, ok := keyStem(p)
	return ok
}

// keyStem returns the entity a key-like property names ("user_id" ->
// "user", "userId" -> "user", "flight_number" -> "flight", "id" -> "").
func keyStem(p string) (string, bool) {
	w := Words(p)
	if len(w) == 0 {
		return "", false
	}
	last := w[len(w)-1]
	switch {
	case len(w) == 1 && (last == "id" || last == "uuid"):
		return "", true
	case len(w) >= 2 && (last == "id" || last == "uuid" || last == "number" && !slices.Contains([]string{"phone", "page", "max", "min", "total", "version", "line", "card", "account"}, w[len(w)-2])):
		return singular(strings.Join(w[:len(w)-1], "_")), true
	}
	return "", false
}

// singular is a small English singularizer for table names.
func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"), len(w) <= 3:
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// sqlName makes a lower-case SQL identifier (letters, digits, _; a letter
// first; at most 60).
func sqlName(s string) string {
	s = strings.Join(Words(s), "_")
	s = nonIdent.ReplaceAllString(strings.ToLower(s), "_")
	s = strings.Trim(s, "_")
	if s == "" {
		s = "x"
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "t_" + s
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// toolIdent makes a documented tool name a Starlark identifier that
// shadows nothing: other characters become "_", a reserved name gets a
// trailing "_".
func toolIdent(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		s = "t" + s
	}
	if len(s) > 120 {
		s = s[:120]
	}
	if reserved[s] || strings.HasPrefix(s, "weft") {
		s += "_"
	}
	return s
}

// serverName makes a docs name a spec server name.
func serverName(n string) string {
	var b strings.Builder
	for _, r := range n {
		if r < 128 && (r == '_' || r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		s = "mcp-" + s
	}
	if len(s) > 128 {
		s = s[:128]
	}
	return s
}

// prop is one property of an input schema, in schema order.
type prop struct {
	name     string
	schema   map[string]any
	required bool
}

// schemaProps lists an object schema's properties in document order.
func docProps(raw json.RawMessage) []prop {
	v, err := decodeOrdered(raw)
	if err != nil {
		return nil
	}
	obj, ok := v.(*omap)
	if !ok {
		return nil
	}
	req := map[string]bool{}
	if r, ok := obj.get("required"); ok {
		if l, ok := r.([]any); ok {
			for _, e := range l {
				if s, ok := e.(string); ok {
					req[s] = true
				}
			}
		}
	}
	pv, _ := obj.get("properties")
	props, _ := pv.(*omap)
	if props == nil {
		return nil
	}
	var out []prop
	for _, k := range props.keys {
		var m map[string]any
		if sub, ok := props.vals[k].(*omap); ok {
			b, _ := json.Marshal(sub)
			_ = json.Unmarshal(b, &m)
		}
		if m == nil {
			m = map[string]any{}
		}
		out = append(out, prop{name: k, schema: m, required: req[k]})
	}
	return out
}

// colType is the column type of a property schema.
func colType(s map[string]any) (string, []any) {
	enum, _ := s["enum"].([]any)
	t, _ := s["type"].(string)
	switch t {
	case "string":
		return "string", enum
	case "integer":
		return "integer", enum
	case "number":
		return "number", enum
	case "boolean":
		return "boolean", nil
	}
	if t == "" && len(enum) > 0 {
		allStr := true
		for _, e := range enum {
			if _, ok := e.(string); !ok {
				allStr = false
			}
		}
		if allStr {
			return "string", enum
		}
	}
	return "json", nil
}

// Plan infers the server from docs. Errors: docs without tools.
func (d *Deterministic) Plan(docs *Docs) (*Plan, error) {
	if len(docs.Tools) == 0 {
		return nil, &DocsError{File: docs.Source, Server: docs.Name, Field: "tools", Msg: "no tools documented"}
	}
	rows := d.Rows
	if rows == 0 {
		rows = 5
	}
	if rows < 0 {
		rows = 0
	}
	p := &Plan{Server_: serverName(docs.Name), Docs: docs, seed: d.Seed, rows: rows}
	copts := ClassifyOptions{HideAnnotations: d.HideAnnotations}

	// Pass 1: entities named by key parameters anywhere; the first such
	// property names the key column as documented ("user_id", "userId",
	// "flight_number") and gives its type.
	keyed := map[string]bool{}
	keyInfo := map[string][2]string{} // entity -> key column, key type
	ents := map[string]*Entity{}
	entity := func(name string) *Entity {
		if e, ok := ents[name]; ok {
			return e
		}
		e := &Entity{Name: name, Key: name + "_id", KeyType: "string"}
		if ki, ok := keyInfo[name]; ok {
			e.Key = ki[0]
			if ki[1] == "integer" {
				e.KeyType = "integer"
			}
		}
		ents[name] = e
		return e
	}
	for _, t := range docs.Tools {
		for _, pr := range docProps(t.InputSchema) {
			if stem, ok := keyStem(pr.name); ok && stem != "" {
				ty, _ := colType(pr.schema)
				if ty == "json" {
					continue
				}
				n := sqlName(stem)
				if _, seen := keyInfo[n]; !seen {
					keyInfo[n] = [2]string{colName(pr.name), ty}
					keyed[n] = true
				}
			}
		}
	}
	used := map[string]bool{}
	for _, t := range docs.Tools {
		op, cls := Classify(t, copts)
		tp := &ToolPlan{Doc: t, Op: op, Class: cls}
		name := toolIdent(t.Name)
		for used[name] {
			name += "_"
		}
		used[name] = true
		tp.Name = name
		props := docProps(t.InputSchema)
		nouns := nounsOf(t.Name)
		// The entity: a key parameter whose stem the name mentions, then the
		// first required key parameter (for by-key operations), then a noun
		// that a key names elsewhere, then the first noun.
		var ename string
		var keyProp string
		for _, pr := range props {
			if stem, ok := keyStem(pr.name); ok && stem != "" && slices.Contains(nouns, sqlName(stem)) {
				ename, keyProp = sqlName(stem), pr.name
				break
			}
		}
		if ename == "" && op != OpList && op != OpCreate {
			for _, pr := range props {
				if stem, ok := keyStem(pr.name); ok && pr.required && stem != "" {
					ename, keyProp = sqlName(stem), pr.name
					break
				}
			}
		}
		if ename == "" {
			for _, n := range nouns {
				if keyed[n] {
					ename = n
					break
				}
			}
		}
		if ename == "" && len(nouns) > 0 {
			ename = nouns[0]
		}
		if ename == "" {
			ename = "record"
		}
		e := entity(ename)
		tp.Entity = e
		if keyProp == "" {
			for _, pr := range props {
				if stem, ok := keyStem(pr.name); ok && (stem == "" || sqlName(stem) == ename) {
					keyProp = pr.name
					break
				}
			}
		}
		if keyProp != "" && !keyed[e.Name] && !e.keyNamed {
			// An entity keyed only by a plain "id": its type decides.
			for _, pr := range props {
				if pr.name == keyProp {
					if ty, _ := colType(pr.schema); ty == "integer" {
						e.KeyType = "integer"
					}
				}
			}
			e.keyNamed = true
		}
		if keyProp != "" && op == OpCreate && !creationVerbs[cls.Verb] && cls.Verb != "" {
			// An action on an existing entity ("start_pod", "run_job"):
			// its status records the action.
			tp.Op = OpStatus
			tp.Class.Status = pastTense(cls.Verb)
		}
		if keyProp == "" && (op == OpGet || op == OpUpdate || op == OpDelete || op == OpStatus) {
			// A by-key operation without a key: it acts on the whole table.
			if op == OpGet {
				tp.Op = OpList
			} else if op != OpCreate {
				tp.Op = OpCreate
			}
		}
		for _, pr := range props {
			par := &Param{Prop: pr.name, Required: pr.required, Schema: pr.schema}
			if identRE.MatchString(pr.name) && !keywords[pr.name] {
				par.Ident = pr.name
			}
			low := normProp(pr.name)
			ty, _ := colType(pr.schema)
			switch {
			case pr.name == keyProp:
				par.Role = "key"
			case isKeyName(pr.name) && ty != "json":
				par.Role = "ref"
			case queryProps[low] && ty == "string":
				par.Role = "query"
			case limitProps[low] && (ty == "integer" || ty == "number"):
				par.Role = "limit"
			case ctrlProps[low]:
				par.Role = "arg"
			default:
				par.Role = "column"
			}
			tp.Params = append(tp.Params, par)
		}
		if tp.Op == OpStatus && cls.Status == "" {
			tp.Class.Status = "closed"
		}
		p.Tools = append(p.Tools, tp)
	}
	// Pass 2: columns. A ref whose entity exists becomes a foreign key;
	// one naming no entity is a plain column.
	for _, tp := range p.Tools {
		e := tp.Entity
		for _, par := range tp.Params {
			switch par.Role {
			case "ref":
				stem, _ := keyStem(par.Prop)
				ref := sqlName(stem)
				if _, ok := ents[ref]; !ok || ref == e.Name {
					par.Role = "column"
				} else {
					par.Column = e.column(par.Prop, par.Schema, ref)
					continue
				}
				fallthrough
			case "column":
				par.Column = e.column(par.Prop, par.Schema, "")
			}
		}
		if tp.Op == OpStatus {
			e.column("status", map[string]any{"type": "string"}, "")
		}
		if tp.Op == OpStatus || tp.Op == OpUpdate {
			// Every update stamps the row with the session clock, so an
			// update that sets no documented field still records itself.
			e.column("updated_at", map[string]any{"type": "string"}, "")
			e.stamped = true
		}
	}
	for _, tp := range p.Tools { // key columns of refs
		for _, par := range tp.Params {
			if par.Role == "ref" {
				par.Column.Type = ents[par.Column.Ref].KeyType
			}
		}
	}
	// Foreign-key order: a referenced entity first; ties by name.
	names := make([]string, 0, len(ents))
	for n := range ents {
		names = append(names, n)
	}
	sort.Strings(names)
	state := map[string]int{}
	var visit func(n string)
	visit = func(n string) {
		if state[n] != 0 {
			return // done, or on the stack (a cycle: broken here)
		}
		state[n] = 1
		e := ents[n]
		refs := map[string]bool{}
		for _, c := range e.Columns {
			if c.Ref != "" {
				refs[c.Ref] = true
			}
		}
		for r := range refs {
			e.Refs = append(e.Refs, r)
		}
		sort.Strings(e.Refs)
		for _, r := range e.Refs {
			visit(r)
		}
		state[n] = 2
		p.Entities = append(p.Entities, e)
	}
	for _, n := range names {
		visit(n)
	}
	return p, nil
}

// colName is a property's column name: the property name itself when it
// is a SQL identifier (so validation and readers see the documented
// name), else sqlName of it.
func colName(prop string) string {
	if len(prop) <= 60 && identRE.MatchString(prop) {
		return prop
	}
	return sqlName(prop)
}

// column returns e's column for a property, adding it (a second property
// of another type widens it to json). Names compare case-insensitively,
// as MySQL's do.
func (e *Entity) column(propName string, s map[string]any, ref string) *Column {
	name := colName(propName)
	if strings.EqualFold(name, e.Key) {
		name += "_value"
	}
	ty, enum := colType(s)
	for _, c := range e.Columns {
		if strings.EqualFold(c.Name, name) {
			if c.Type != ty && c.Ref == "" {
				c.Type, c.Enum = "json", nil
			}
			return c
		}
	}
	c := &Column{Name: name, Prop: propName, Type: ty, Enum: enum, Ref: ref}
	e.Columns = append(e.Columns, c)
	return c
}

// nounsOf lists a tool name's words that are not verbs or stop words,
// singularized, as SQL names.
func nounsOf(name string) []string {
	var out []string
	for _, w := range Words(name) {
		if _, isVerb := lexicon[w]; isVerb || stopNouns[w] || w[0] >= '0' && w[0] <= '9' {
			continue
		}
		n := sqlName(singular(w))
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Server renders the plan as a weft.server/v1 spec.
func (p *Plan) Server() (*spec.Server, error) {
	s := &spec.Server{
		Format: spec.Format, Name: p.Server_, Version: "0.1.0", Description: p.Docs.Description,
		Errors: slices.Clone(detErrors),
		Source: &spec.Source{Docs: p.Docs.Source, Synthesizer: "deterministic"},
	}
	if s.Description == "" {
		s.Description = "Synthesized from the documentation of " + p.Docs.Name
	}
	s.Schema = p.ddl()
	seed, err := p.seedRows()
	if err != nil {
		return nil, err
	}
	s.Seed = seed
	var prog strings.Builder
	prog.WriteString(programPrelude)
	for _, e := range p.Entities {
		bools := []any{}
		for _, c := range e.Columns {
			if c.Type == "boolean" {
				bools = append(bools, c.Name)
			}
		}
		fmt.Fprintf(&prog, "\n_E_%s = %s\n", e.Name, starValue(map[string]any{"table": e.Name, "key": e.Key, "integer_key": e.KeyType == "integer", "bools": bools, "stamped": e.stamped}))
	}
	for _, tp := range p.Tools {
		t := spec.Tool{
			Name: tp.Name, Description: strings.TrimSpace(tp.Doc.Description), InputSchema: tp.Doc.InputSchema,
			ReadOnly: tp.Op.ReadOnly(), Reads: p.reads(tp), Errors: []string{"invalid_arguments", "not_found"},
		}
		if t.Description == "" {
			t.Description = "(undocumented) " + tp.Doc.Name
		}
		if !t.ReadOnly {
			t.Writes = []string{tp.Entity.Name}
		}
		if tp.Op == OpCreate {
			t.Errors = append(t.Errors, "conflict")
		}
		out, _ := json.Marshal(p.outputSchema(tp))
		t.OutputSchema = out
		s.Tools = append(s.Tools, t)
		prog.WriteString(p.function(tp))
	}
	s.Program = prog.String()
	return s, nil
}

func (p *Plan) reads(tp *ToolPlan) []string {
	out := []string{tp.Entity.Name}
	for _, par := range tp.Params {
		if par.Role == "ref" && !slices.Contains(out, par.Column.Ref) {
			out = append(out, par.Column.Ref)
		}
	}
	return out
}

var sqlTypes = map[string]string{"string": "TEXT", "integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN", "json": "JSON"}

func (p *Plan) ddl() string {
	var b strings.Builder
	for _, e := range p.Entities {
		kt := "VARCHAR(191)"
		if e.KeyType == "integer" {
			kt = "BIGINT"
		}
		fmt.Fprintf(&b, "CREATE TABLE `%s` (\n  `%s` %s NOT NULL", e.Name, e.Key, kt)
		for _, c := range e.Columns {
			t := sqlTypes[c.Type]
			if c.Ref != "" {
				t = "VARCHAR(191)"
				if c.Type == "integer" {
					t = "BIGINT"
				}
			}
			fmt.Fprintf(&b, ",\n  `%s` %s", c.Name, t)
		}
		fmt.Fprintf(&b, ",\n  PRIMARY KEY (`%s`)\n);\n", e.Key)
	}
	return b.String()
}

// rowSchema is the JSON Schema of an entity row as query returns it.
func rowSchema(e *Entity) map[string]any {
	props := map[string]any{e.Key: map[string]any{"type": e.KeyType}}
	for _, c := range e.Columns {
		var s map[string]any
		switch c.Type {
		case "json":
			s = map[string]any{}
		default:
			s = map[string]any{"type": []any{c.Type, "null"}}
		}
		props[c.Name] = s
	}
	return map[string]any{"type": "object", "properties": props, "required": []any{e.Key}}
}

func (p *Plan) outputSchema(tp *ToolPlan) map[string]any {
	switch tp.Op {
	case OpList:
		return map[string]any{"type": "object", "properties": map[string]any{
			"results": map[string]any{"type": "array", "items": rowSchema(tp.Entity)},
			"count":   map[string]any{"type": "integer"},
		}, "required": []any{"results", "count"}}
	case OpDelete:
		return map[string]any{"type": "object", "properties": map[string]any{
			"deleted": rowSchema(tp.Entity),
		}, "required": []any{"deleted"}}
	}
	return rowSchema(tp.Entity)
}

// programPrelude holds the builtins' aliases (tool parameters may shadow
// query, str, type, ...) and the six CRUD operations every tool function
// calls with its entity and arguments.
const programPrelude = `# Synthesized by weft's deterministic synthesizer (core/synth): one
# function per tool calls a CRUD operation over its entity's table.
_q = query
_q1 = query_one
_x = execute
_err = tool_error
_str = str
_len = len
_type = type
_enc = json.encode

def _tick(n):
    return "` + "`" + `" + n + "` + "`" + `"

def _fix(e, r):
    if r != None:
        for c in e["bools"]:
            if r.get(c) != None:
                r[c] = r[c] == 1 or r[c] == True
    return r

def _row(e, k):
    return _fix(e, _q1("SELECT * FROM " + _tick(e["table"]) + " WHERE " + _tick(e["key"]) + " = ?", k))

def _must(e, k, what):
    if k == None:
        _err("invalid_arguments", "missing " + what)
    r = _row(e, k)
    if r == None:
        _err("not_found", e["table"] + " " + _str(k) + " not found")
    return r

def _refs(refs, a):
    for p in refs:
        v = a.get(p[0])
        if v != None and _row(p[1], v) == None:
            _err("not_found", p[1]["table"] + " " + _str(v) + " not found")

def _val(ty, v):
    if ty == "json":
        return _enc(v)
    return v

def _sets(cols, a):
    names = []
    vals = []
    for c in cols:
        v = a.get(c[0])
        if v != None:
            names.append(_tick(c[1]))
            vals.append(_val(c[2], v))
    return names, vals

def _get(e, a, keyprop, refs):
    _refs(refs, a)
    return _must(e, a.get(keyprop), keyprop)

def _list(e, a, cols, refs, qprop, text, lprop):
    _refs(refs, a)
    conds = []
    args = []
    for c in cols + [[p[0], p[2]] for p in refs]:
        v = a.get(c[0])
        if v == None or _type(v) in ("list", "dict"):
            continue
        conds.append(_tick(c[1]) + " = ?")
        args.append(v)
    qv = a.get(qprop) if qprop else None
    if qv and text:
        conds.append("(" + " OR ".join([_tick(t) + " LIKE ?" for t in text]) + ")")
        args.extend(["%" + qv + "%"] * _len(text))
    sql = "SELECT * FROM " + _tick(e["table"])
    if conds:
        sql += " WHERE " + " AND ".join(conds)
    sql += " ORDER BY " + _tick(e["key"])
    lv = a.get(lprop) if lprop else None
    if lv != None and _type(lv) in ("int", "float") and lv >= 0:
        sql += " LIMIT " + _str(int(lv))
    rows = [_fix(e, r) for r in _q(sql, *args)]
    return {"results": rows, "count": _len(rows)}

def _newkey(e):
    if e["integer_key"]:
        r = _q1("SELECT COALESCE(MAX(" + _tick(e["key"]) + "), 0) + 1 AS k FROM " + _tick(e["table"]))
        return r["k"]
    n = _q1("SELECT COUNT(*) AS n FROM " + _tick(e["table"]))["n"] + 1
    k = e["table"] + "_" + _str(n)
    for _ in range(1000):
        if _row(e, k) == None:
            break
        n += 1
        k = e["table"] + "_" + _str(n)
    return k

def _create(e, a, keyprop, cols, refs, status):
    _refs(refs, a)
    k = a.get(keyprop) if keyprop else None
    if k != None:
        if _row(e, k) != None:
            _err("conflict", e["table"] + " " + _str(k) + " already exists")
    else:
        k = _newkey(e)
    names, vals = _sets(cols + [[p[0], p[2], p[3]] for p in refs], a)
    names = [_tick(e["key"])] + names
    vals = [k] + vals
    if status and _tick("status") not in names:
        names.append(_tick("status"))
        vals.append(status)
    _x("INSERT INTO " + _tick(e["table"]) + " (" + ", ".join(names) + ") VALUES (" + ", ".join(["?"] * _len(vals)) + ")", *vals)
    return _row(e, k)

def _update(e, a, keyprop, cols, refs, status):
    k = a.get(keyprop)
    _must(e, k, keyprop)
    _refs(refs, a)
    names, vals = _sets(cols + [[p[0], p[2], p[3]] for p in refs], a)
    if status and _tick("status") not in names:
        names.append(_tick("status"))
        vals.append(status)
    if e["stamped"] and _tick("updated_at") not in names:
        names.append(_tick("updated_at"))
        vals.append(now())
    if names:
        _x("UPDATE " + _tick(e["table"]) + " SET " + ", ".join([n + " = ?" for n in names]) + " WHERE " + _tick(e["key"]) + " = ?", *(vals + [k]))
    return _row(e, k)

def _delete(e, a, keyprop, refs):
    k = a.get(keyprop)
    r = _must(e, k, keyprop)
    _refs(refs, a)
    _x("DELETE FROM " + _tick(e["table"]) + " WHERE " + _tick(e["key"]) + " = ?", k)
    return {"deleted": r}
`

// function renders one tool's Starlark function.
func (p *Plan) function(tp *ToolPlan) string {
	var b strings.Builder
	var params []string
	var opt []string
	kw := false
	for _, par := range tp.Params {
		switch {
		case par.Ident == "":
			kw = true
		case par.Required:
			params = append(params, par.Ident)
		default:
			opt = append(opt, par.Ident+" = None")
		}
	}
	params = append(params, opt...)
	if kw {
		params = append(params, "**_kw")
	}
	fmt.Fprintf(&b, "\ndef %s(%s):\n", tp.Name, strings.Join(params, ", "))
	fmt.Fprintf(&b, "    # %s: %s %s (%s, by %s)\n", tp.Doc.Name, tp.Op, tp.Entity.Name, readWrite(tp.Op), tp.Class.Reason)
	b.WriteString("    _a = {")
	n := 0
	for _, par := range tp.Params {
		if par.Ident == "" {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", strconv.Quote(par.Prop), par.Ident)
		n++
	}
	b.WriteString("}\n")
	if kw {
		b.WriteString("    _a.update(_kw)\n")
	}
	e := "_E_" + tp.Entity.Name
	var keyProp, qProp, lProp string
	var cols, refs, text []any
	for _, par := range tp.Params {
		switch par.Role {
		case "key":
			keyProp = par.Prop
		case "query":
			qProp = par.Prop
		case "limit":
			lProp = par.Prop
		case "column":
			cols = append(cols, []any{par.Prop, par.Column.Name, par.Column.Type})
		case "ref":
			refs = append(refs, []any{par.Prop, "@_E_" + par.Column.Ref, par.Column.Name, par.Column.Type})
		}
	}
	for _, c := range tp.Entity.Columns {
		if c.Type == "string" && c.Ref == "" {
			text = append(text, c.Name)
		}
	}
	if cols == nil {
		cols = []any{}
	}
	if refs == nil {
		refs = []any{}
	}
	if text == nil {
		text = []any{}
	}
	switch tp.Op {
	case OpGet:
		fmt.Fprintf(&b, "    return _get(%s, _a, %s, %s)\n", e, strconv.Quote(keyProp), starValue(refs))
	case OpList:
		fmt.Fprintf(&b, "    return _list(%s, _a, %s, %s, %s, %s, %s)\n", e, starValue(cols), starValue(refs), strconv.Quote(qProp), starValue(text), strconv.Quote(lProp))
	case OpCreate:
		fmt.Fprintf(&b, "    return _create(%s, _a, %s, %s, %s, %s)\n", e, strconv.Quote(keyProp), starValue(cols), starValue(refs), strconv.Quote(p.statusOf(tp.Entity)))
	case OpUpdate, OpStatus:
		st := ""
		if tp.Op == OpStatus {
			st = tp.Class.Status
		}
		fmt.Fprintf(&b, "    return _update(%s, _a, %s, %s, %s, %s)\n", e, strconv.Quote(keyProp), starValue(cols), starValue(refs), strconv.Quote(st))
	case OpDelete:
		fmt.Fprintf(&b, "    return _delete(%s, _a, %s, %s)\n", e, strconv.Quote(keyProp), starValue(refs))
	}
	return b.String()
}

// statusOf is the status a created entity starts in ("" when the entity
// has no status column written by a status tool): "active", or the first
// documented enum value.
func (p *Plan) statusOf(e *Entity) string {
	for _, tp := range p.Tools {
		if tp.Entity == e && tp.Op == OpStatus {
			for _, c := range e.Columns {
				if c.Name == "status" && len(c.Enum) > 0 {
					if s, ok := c.Enum[0].(string); ok {
						return s
					}
				}
			}
			return "active"
		}
	}
	return ""
}

func readWrite(op Op) string {
	if op.ReadOnly() {
		return "read"
	}
	return "write"
}

// starValue writes a Go value as a Starlark literal: strings quoted
// ("@name" is the bare global name), lists, dicts with sorted keys, bools.
func starValue(v any) string {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "@") {
			return x[1:]
		}
		return strconv.Quote(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = starValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": " + starValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

var seedWords = []string{"alpha", "bravo", "cedar", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper", "kestrel", "linden", "maple", "nectar", "onyx", "pepper", "quartz", "raven", "sierra", "tundra"}

// seedRows generates the seed: Rows rows per entity in foreign-key order,
// keys "<table>_<n>" (or n for integer keys), values drawn from a PCG
// stream seeded with Seed: an enum's values, words for strings, small
// numbers, booleans, [] for JSON; a foreign key points at a row of the
// referenced table.
func (p *Plan) seedRows() (json.RawMessage, error) {
	rng := rand.New(rand.NewPCG(p.seed, 0x7765667473796e74)) // "weftsynt"
	keys := map[string][]any{}
	for _, e := range p.Entities {
		for i := 1; i <= p.rows; i++ {
			if e.KeyType == "integer" {
				keys[e.Name] = append(keys[e.Name], i)
			} else {
				keys[e.Name] = append(keys[e.Name], fmt.Sprintf("%s_%d", e.Name, i))
			}
		}
	}
	var b strings.Builder
	b.WriteByte('{')
	for ei, e := range p.Entities {
		if ei > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:[", e.Name)
		st := p.statusOf(e)
		for i, k := range keys[e.Name] {
			row := map[string]any{e.Key: k}
			for _, c := range e.Columns {
				row[c.Name] = seedValue(rng, c, keys, st)
			}
			j, err := json.Marshal(row)
			if err != nil {
				return nil, fmt.Errorf("synth: seed row of %s: %w", e.Name, err)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(j)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
}

func seedValue(rng *rand.Rand, c *Column, keys map[string][]any, status string) any {
	if c.Ref != "" {
		ks := keys[c.Ref]
		if len(ks) == 0 {
			return nil
		}
		return ks[rng.IntN(len(ks))]
	}
	if len(c.Enum) > 0 {
		v := c.Enum[rng.IntN(len(c.Enum))]
		if c.Type == "json" {
			return jsonCell(v)
		}
		return v
	}
	if c.Name == "status" && status != "" {
		return status
	}
	switch c.Type {
	case "string":
		low := strings.ToLower(c.Name)
		switch {
		case strings.Contains(low, "date") || strings.HasSuffix(low, "_at") || strings.Contains(low, "time"):
			return fmt.Sprintf("2024-05-%02dT%02d:00:00", rng.IntN(28)+1, rng.IntN(24))[:dateLen(low)]
		case strings.Contains(low, "email"):
			return fmt.Sprintf("%s@example.com", seedWords[rng.IntN(len(seedWords))])
		case strings.Contains(low, "url") || strings.Contains(low, "link"):
			return fmt.Sprintf("https://example.com/%s", seedWords[rng.IntN(len(seedWords))])
		}
		return fmt.Sprintf("%s %s", seedWords[rng.IntN(len(seedWords))], seedWords[rng.IntN(len(seedWords))])
	case "integer":
		return rng.IntN(100) + 1
	case "number":
		return float64(rng.IntN(10000)) / 100
	case "boolean":
		return rng.IntN(2) == 1
	}
	return jsonCell([]any{})
}

// dateLen is 10 (a date) for a column named like a date, 19 (a date and
// time) for one named like a time.
func dateLen(name string) int {
	if strings.Contains(name, "time") || strings.HasSuffix(name, "_at") {
		return 19
	}
	return 10
}

// jsonCell is a value for a JSON column in state.LoadJSON's layout (which
// takes any JSON value for a JSON column).
func jsonCell(v any) any { return v }
