package sqlhost

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Policy is the table policy of a module: Owns may be read and written,
// Reads may only be read. Names are case-insensitive.
type Policy struct {
	Owns  []string
	Reads []string
}

// DeniedError is a statement refused by the policy before it ran.
type DeniedError struct {
	Table     string // the table that is not allowed, or "" for a refused statement kind
	Write     bool   // the table is a write target declared as read-only
	Reason    string
	Statement string
}

func (e *DeniedError) Error() string {
	switch {
	case e.Table != "" && e.Write:
		return fmt.Sprintf("denied: table %q is read-only for this module", e.Table)
	case e.Table != "":
		return fmt.Sprintf("denied: table %q is not declared by this module", e.Table)
	default:
		return "denied: " + e.Reason
	}
}

// ErrSyntax is returned by Check for a statement that does not parse.
var ErrSyntax = errors.New("sql syntax error")

// StatementKind tells how a checked statement runs.
type StatementKind int

const (
	KindQuery StatementKind = iota // returns rows (SELECT, UNION, ...)
	KindExec                       // INSERT, REPLACE, UPDATE, DELETE
)

// Check parses stmt (exactly one statement) and verifies every table it
// names against the policy. It returns the statement kind, a *DeniedError
// for a refused statement or table, or an error wrapping ErrSyntax.
//
// Results are cached per (policy, statement text), up to checkCacheMax
// entries: modules send the same parameterized statements over and over, and
// parsing them here costs as much as a sixth of a tool call.
func (p Policy) Check(stmt string) (StatementKind, error) {
	return p.checkKeyed(p.key(), stmt)
}

// checkKeyed is Check with p.key() computed by the caller (a Handler
// computes it once for all the statements of its call).
func (p Policy) checkKeyed(pkey, stmt string) (StatementKind, error) {
	key := checkKey{policy: pkey, stmt: stmt}
	if v, ok := checkCache.Load(key); ok {
		r := v.(checkResult)
		return r.kind, r.err
	}
	kind, err := p.check(stmt)
	if len(stmt) <= 4096 && checkCacheLen.Load() < checkCacheMax {
		if _, loaded := checkCache.LoadOrStore(key, checkResult{kind, err}); !loaded {
			checkCacheLen.Add(1)
		}
	}
	return kind, err
}

// checkCacheMax bounds the Check cache (entries; statements longer than
// 4 KiB are not cached).
const checkCacheMax = 1 << 14

var (
	checkCache    sync.Map // checkKey -> checkResult
	checkCacheLen atomic.Int64
)

type checkKey struct{ policy, stmt string }

type checkResult struct {
	kind StatementKind
	err  error
}

// key identifies the policy's table sets unambiguously, whatever bytes the
// names hold: each set is sorted, lower-cased (names compare
// case-insensitively) and de-duplicated, and every name is written with its
// length in front, so no two different pairs of sets share a key.
func (p Policy) key() string {
	var b strings.Builder
	for _, names := range [][]string{p.Owns, p.Reads} {
		l := make([]string, len(names))
		for i, n := range names {
			l[i] = strings.ToLower(n)
		}
		sort.Strings(l)
		l = slices.Compact(l)
		b.WriteString(strconv.Itoa(len(l)))
		b.WriteByte(':')
		for _, n := range l {
			b.WriteString(strconv.Itoa(len(n)))
			b.WriteByte(':')
			b.WriteString(n)
		}
	}
	return b.String()
}

func (p Policy) check(stmt string) (StatementKind, error) {
	if strings.Contains(stmt, "/*!") {
		return 0, &DeniedError{Reason: "MySQL executable comments are not allowed", Statement: stmt}
	}
	tree, next, err := sqlparser.ParseOne(context.Background(), stmt)
	if err != nil {
		if errors.Is(err, sqlparser.ErrEmpty) {
			return 0, fmt.Errorf("%w: empty statement", ErrSyntax)
		}
		return 0, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if next >= 0 && next < len(stmt) && strings.Trim(stmt[next:], " \t\r\n;") != "" {
		return 0, &DeniedError{Reason: "only one statement per query", Statement: stmt}
	}
	c := collector{ctes: map[string]bool{}}
	var kind StatementKind
	switch s := tree.(type) {
	case *sqlparser.Select:
		if s.Into != nil {
			return 0, &DeniedError{Reason: "SELECT ... INTO is not allowed", Statement: stmt}
		}
		kind = KindQuery
	case *sqlparser.SetOp:
		if s.Into != nil {
			return 0, &DeniedError{Reason: "SELECT ... INTO is not allowed", Statement: stmt}
		}
		kind = KindQuery
	case *sqlparser.Insert:
		kind = KindExec
		c.writes = append(c.writes, s.Table)
	case *sqlparser.Update:
		kind = KindExec
		c.writes = append(c.writes, updateTargets(s)...)
	case *sqlparser.Delete:
		kind = KindExec
		c.writes = append(c.writes, deleteTargets(s)...)
	default:
		return 0, &DeniedError{Reason: fmt.Sprintf("statement kind %s is not allowed", stmtKind(tree)), Statement: stmt}
	}
	c.walk(reflect.ValueOf(tree), false)
	if c.denied != "" {
		return 0, &DeniedError{Reason: c.denied, Statement: stmt}
	}
	owns, reads := set(p.Owns), set(p.Reads)
	for _, t := range c.writes {
		name, ok := plainName(t)
		if !ok {
			return 0, &DeniedError{Table: qualified(t), Statement: stmt}
		}
		if !owns[name] {
			return 0, &DeniedError{Table: t.Name.String(), Write: reads[name], Statement: stmt}
		}
	}
	for _, t := range c.reads {
		name, ok := plainName(t)
		if !ok {
			return 0, &DeniedError{Table: qualified(t), Statement: stmt}
		}
		if name == "dual" || c.ctes[name] || owns[name] || reads[name] {
			continue
		}
		return 0, &DeniedError{Table: t.Name.String(), Statement: stmt}
	}
	return kind, nil
}

func stmtKind(s sqlparser.Statement) string {
	t := reflect.TypeOf(s)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.ToUpper(t.Name())
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[strings.ToLower(n)] = true
	}
	return m
}

func plainName(t sqlparser.TableName) (string, bool) {
	if !t.DbQualifier.IsEmpty() || !t.SchemaQualifier.IsEmpty() {
		return "", false
	}
	return strings.ToLower(t.Name.String()), true
}

func qualified(t sqlparser.TableName) string {
	var parts []string
	for _, p := range []sqlparser.TableIdent{t.DbQualifier, t.SchemaQualifier, t.Name} {
		if !p.IsEmpty() {
			parts = append(parts, p.String())
		}
	}
	return strings.Join(parts, ".")
}

// aliases maps alias (and bare table name) to the table for the
// AliasedTableExprs of a FROM-like list, descending into joins.
func aliases(exprs sqlparser.TableExprs) map[string]sqlparser.TableName {
	m := map[string]sqlparser.TableName{}
	var add func(e sqlparser.TableExpr)
	add = func(e sqlparser.TableExpr) {
		switch x := e.(type) {
		case *sqlparser.AliasedTableExpr:
			if tn, ok := x.Expr.(sqlparser.TableName); ok {
				m[strings.ToLower(tn.Name.String())] = tn
				if !x.As.IsEmpty() {
					m[strings.ToLower(x.As.String())] = tn
				}
			}
		case *sqlparser.JoinTableExpr:
			add(x.LeftExpr)
			add(x.RightExpr)
		case *sqlparser.ParenTableExpr:
			for _, y := range x.Exprs {
				add(y)
			}
		}
	}
	for _, e := range exprs {
		add(e)
	}
	return m
}

func tablesOf(m map[string]sqlparser.TableName) []sqlparser.TableName {
	var out []sqlparser.TableName
	seen := map[string]bool{}
	for _, t := range m {
		k := qualified(t)
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

// updateTargets are the tables an UPDATE may write: those whose alias
// qualifies an assigned column; every table when a column is unqualified
// and the statement names more than one table.
func updateTargets(u *sqlparser.Update) []sqlparser.TableName {
	m := aliases(u.TableExprs)
	all := tablesOf(m)
	if len(all) <= 1 {
		return all
	}
	var out []sqlparser.TableName
	for _, e := range u.Exprs {
		if e == nil || e.Name == nil || e.Name.Qualifier.Name.IsEmpty() {
			return all
		}
		t, ok := m[strings.ToLower(e.Name.Qualifier.Name.String())]
		if !ok {
			return all
		}
		out = append(out, t)
	}
	return out
}

// deleteTargets are the tables a DELETE removes rows from.
func deleteTargets(d *sqlparser.Delete) []sqlparser.TableName {
	m := aliases(d.TableExprs)
	if len(d.Targets) == 0 {
		return tablesOf(m)
	}
	var out []sqlparser.TableName
	for _, t := range d.Targets {
		if r, ok := m[strings.ToLower(t.Name.String())]; ok && t.DbQualifier.IsEmpty() {
			out = append(out, r)
		} else {
			out = append(out, t)
		}
	}
	return out
}

// collector walks the whole AST by reflection (sqlparser.Walk skips some
// fields, e.g. the WITH of a set operation) and collects every table name in
// a table position. Column qualifiers and star qualifiers name aliases, not
// tables, and are skipped; delete targets are resolved separately.
type collector struct {
	reads  []sqlparser.TableName
	writes []sqlparser.TableName
	ctes   map[string]bool
	denied string
}

var (
	tableNameType = reflect.TypeOf(sqlparser.TableName{})
	colNameType   = reflect.TypeOf(sqlparser.ColName{})
	starExprType  = reflect.TypeOf(sqlparser.StarExpr{})
	deleteType    = reflect.TypeOf(sqlparser.Delete{})
	cteType       = reflect.TypeOf(sqlparser.CommonTableExpr{})
	intoType      = reflect.TypeOf(sqlparser.Into{})
)

func (c *collector) walk(v reflect.Value, depthGuard bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		c.walk(v.Elem(), depthGuard)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			c.walk(v.Index(i), depthGuard)
		}
	case reflect.Struct:
		switch v.Type() {
		case tableNameType:
			if v.CanInterface() {
				t := v.Interface().(sqlparser.TableName)
				if !t.Name.IsEmpty() {
					c.reads = append(c.reads, t)
				}
			}
			return
		case colNameType, starExprType:
			return
		case intoType:
			c.denied = "SELECT ... INTO is not allowed"
			return
		case cteType:
			if v.CanInterface() {
				cte := v.Addr().Interface().(*sqlparser.CommonTableExpr)
				if cte.AliasedTableExpr != nil && !cte.As.IsEmpty() {
					c.ctes[strings.ToLower(cte.As.String())] = true
				}
			}
		}
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if t == deleteType && f.Name == "Targets" {
				continue // aliases; resolved by deleteTargets
			}
			c.walk(v.Field(i), depthGuard)
		}
	}
}
