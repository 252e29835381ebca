package state

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// RefusedFunctions are the SQL functions no statement may call, with the
// reason: each has process-wide state or a side effect outside the
// workspace, so it would be a channel between sessions or a leak of the host
// (docs/abi.md, "Refused SQL functions"). Statements naming one fail with
// ErrDenied when they are planned, whatever the arguments.
var RefusedFunctions = map[string]string{
	"get_lock":          "named locks are shared by every session of the process (a cross-session channel)",
	"is_free_lock":      "named locks are shared by every session of the process (a cross-session channel)",
	"is_used_lock":      "named locks are shared by every session of the process (a cross-session channel)",
	"release_lock":      "named locks are shared by every session of the process (a cross-session channel)",
	"release_all_locks": "named locks are shared by every session of the process (a cross-session channel)",
	"sleep":             "time is virtual: sleeping would block a call slot in real time and tell nothing to the state",
	"benchmark":         "burns host CPU for no result",
	"load_file":         "reads files of the host",
	"connection_id":     "the engine's connection counter is process-wide (differs between runs and leaks other sessions' activity)",
}

// sizeBound predicts the largest result (in bytes) of a string function
// from its evaluated arguments, before it runs.
type sizeBound func(args []any) int64

func strLen(v any) int64 {
	switch v.(type) {
	case nil, string, []byte:
		return valueSize(v)
	}
	return int64(len(fmt.Sprint(v)))
}

func intArg(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		var n int64
		fmt.Sscan(fmt.Sprint(x), &n)
		return n
	case float32:
		return int64(math.Min(float64(x), math.MaxInt32))
	case float64:
		return int64(math.Min(x, math.MaxInt32))
	}
	var n int64
	fmt.Sscan(fmt.Sprint(v), &n)
	return n
}

func sumLen(args []any) int64 {
	var n int64
	for _, a := range args {
		n += strLen(a)
	}
	return n
}

func sat(a, b int64) int64 { // a*b, saturating
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// boundedFunctions are the functions whose result can be much larger than
// their arguments; each is checked against the Sandbox's limits before it
// runs (a prediction from the arguments) and after (the real size).
var boundedFunctions = map[string]sizeBound{
	"repeat": func(a []any) int64 { return sat(strLen(a[0]), intArg(a[1])) },
	"space":  func(a []any) int64 { return intArg(a[0]) },
	"lpad":   func(a []any) int64 { return sat(intArg(a[1]), 4) },
	"rpad":   func(a []any) int64 { return sat(intArg(a[1]), 4) },
	"replace": func(a []any) int64 {
		s, from, to := fmt.Sprint(a[0]), fmt.Sprint(a[1]), fmt.Sprint(a[2])
		if a[0] == nil || from == "" || a[1] == nil {
			return strLen(a[0])
		}
		return int64(len(s)) + sat(int64(strings.Count(s, from)), int64(len(to)))
	},
	"insert":    func(a []any) int64 { return strLen(a[0]) + strLen(a[3]) },
	"concat":    sumLen,
	"concat_ws": func(a []any) int64 { return sumLen(a[1:]) + sat(strLen(a[0]), int64(len(a))) },
	"regexp_replace": func(a []any) int64 {
		return strLen(a[0]) + sat(strLen(a[0])+1, strLen(a[2]))
	},
	"to_base64": func(a []any) int64 { return strLen(a[0])*2 + 4 },
	"hex":       func(a []any) int64 { return strLen(a[0])*2 + 16 },
	"quote":     func(a []any) int64 { return strLen(a[0])*2 + 2 },
	"uncompress": func(a []any) int64 {
		// MySQL's format: a 4-byte little-endian length, then zlib data.
		b, ok := a[0].([]byte)
		if !ok {
			b = []byte(fmt.Sprint(a[0]))
		}
		if len(b) < 4 {
			return 0
		}
		return int64(binary.LittleEndian.Uint32(b))
	},
	"compress":            func(a []any) int64 { return strLen(a[0]) + 64 },
	"json_array":          sumLen,
	"json_object":         sumLen,
	"json_set":            sumLen,
	"json_insert":         sumLen,
	"json_replace":        sumLen,
	"json_array_append":   sumLen,
	"json_array_insert":   sumLen,
	"json_merge":          sumLen,
	"json_merge_patch":    sumLen,
	"json_merge_preserve": sumLen,
	"json_pretty":         func(a []any) int64 { return strLen(a[0]) * 4 },
	"json_quote":          func(a []any) int64 { return strLen(a[0])*6 + 2 },
	"format":              func(a []any) int64 { return 128 + sat(intArg(a[1]), 2) },
}

var builtins = func() map[string]sql.Function {
	m := make(map[string]sql.Function, len(function.BuiltIns))
	for _, f := range function.BuiltIns {
		m[f.FunctionName()] = f
	}
	return m
}()

// sandboxFunctions overrides the engine's functions for every statement of
// the process (analyzer.ExternalFunctionProvider is consulted before the
// built-in registry): refused functions fail at planning, clock and random
// functions read the statement's Sandbox, amplifying string functions are
// bounded by it. Without a Sandbox the clock, random and bounded functions
// behave as the engine's own.
type sandboxFunctions struct{}

func init() { analyzer.ExternalFunctionProvider = sandboxFunctions{} }

var sandboxFuncs = func() map[string]sql.Function {
	m := map[string]sql.Function{}
	for name, why := range RefusedFunctions {
		name, why := name, why
		m[name] = sql.FunctionN{Name: name, Fn: func(...sql.Expression) (sql.Expression, error) {
			return nil, denied(fmt.Errorf("SQL function %s() is refused: %s", strings.ToUpper(name), why))
		}}
	}
	// SYSDATE() reads the real time on every evaluation in the engine; in a
	// sandbox it is NOW(). The others read the statement's query time,
	// which exec sets from the Sandbox's clock.
	now := builtins["now"]
	m["sysdate"] = sql.FunctionN{Name: "sysdate", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		return now.NewInstance(args)
	}}
	for name, bound := range boundedFunctions {
		name, b, bound := name, builtins[name], bound
		if b == nil {
			continue
		}
		m[name] = sql.FunctionN{Name: name, Fn: func(args ...sql.Expression) (sql.Expression, error) {
			inner, err := b.NewInstance(args)
			if err != nil {
				return nil, err
			}
			return &override{inner: inner, name: name, eval: func(ctx *sql.Context, sb *Sandbox, o *override, row sql.Row) (any, error) {
				return evalBounded(ctx, sb, o, row, bound)
			}}, nil
		}}
	}
	m["rand"] = sql.FunctionN{Name: "rand", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		inner, err := builtins["rand"].NewInstance(args)
		if err != nil || len(args) > 0 {
			return inner, err // RAND(seed) is deterministic
		}
		return &override{inner: inner, name: "rand", eval: func(ctx *sql.Context, sb *Sandbox, o *override, row sql.Row) (any, error) {
			u, err := sb.randomUint64("rand")
			if err != nil {
				return nil, err
			}
			return float64(u>>11) / (1 << 53), nil
		}}, nil
	}}
	m["uuid"] = sql.FunctionN{Name: "uuid", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		inner, err := builtins["uuid"].NewInstance(args)
		if err != nil {
			return nil, err
		}
		return &override{inner: inner, name: "uuid", eval: func(ctx *sql.Context, sb *Sandbox, o *override, row sql.Row) (any, error) {
			var b [16]byte
			if err := sb.randomBytes("uuid", b[:]); err != nil {
				return nil, err
			}
			b[6] = b[6]&0x0f | 0x40 // version 4
			b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
			h := hex.EncodeToString(b[:])
			return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
		}}, nil
	}}
	m["uuid_short"] = sql.FunctionN{Name: "uuid_short", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) != 0 {
			return nil, sql.ErrInvalidArgumentNumber.New("UUID_SHORT", 0, len(args))
		}
		return &override{inner: expression.NewLiteral(uint64(0), types.Uint64), name: "uuid_short", eval: func(ctx *sql.Context, sb *Sandbox, o *override, row sql.Row) (any, error) {
			if sb == nil {
				return nil, denied(fmt.Errorf("UUID_SHORT() needs the session's seeded random stream"))
			}
			return sb.randomUint64("uuid_short")
		}, always: true}, nil
	}}
	m["random_bytes"] = sql.FunctionN{Name: "random_bytes", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		inner, err := builtins["random_bytes"].NewInstance(args)
		if err != nil {
			return nil, err
		}
		return &override{inner: inner, name: "random_bytes", always: true, eval: func(ctx *sql.Context, sb *Sandbox, o *override, row sql.Row) (any, error) {
			if sb == nil {
				return nil, denied(fmt.Errorf("RANDOM_BYTES() needs the session's seeded random stream"))
			}
			v, err := o.inner.Children()[0].Eval(ctx, row)
			if err != nil || v == nil {
				return nil, err
			}
			n := intArg(v)
			if n < 1 || n > 1024 {
				return nil, fmt.Errorf("RANDOM_BYTES: length %d is out of range 1..1024", n)
			}
			b := make([]byte, n)
			if err := sb.randomBytes("random_bytes", b); err != nil {
				return nil, err
			}
			return b, nil
		}}, nil
	}}
	return m
}()

// SandboxedFunctions lists the function names whose behaviour a Sandbox
// changes, sorted: refused ones, clock, random and bounded ones.
func SandboxedFunctions() []string {
	out := make([]string, 0, len(sandboxFuncs))
	for n := range sandboxFuncs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (sandboxFunctions) Function(_ *sql.Context, name string) (sql.Function, bool) {
	f, ok := sandboxFuncs[strings.ToLower(name)]
	return f, ok
}

func evalBounded(ctx *sql.Context, sb *Sandbox, o *override, row sql.Row, bound sizeBound) (any, error) {
	if err := sb.tick(ctx); err != nil {
		return nil, err
	}
	kids := o.inner.Children()
	vals := make([]any, len(kids))
	lits := make([]sql.Expression, len(kids))
	for i, k := range kids {
		v, err := k.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
		lits[i] = expression.NewLiteral(v, k.Type())
	}
	max := sb.limit(sb.Limits.MaxValueBytes, DefaultMaxValueBytes)
	if n := bound(vals); n > max {
		return nil, sb.exceed(strings.ToUpper(o.name)+" result bytes", n, max)
	}
	e, err := o.inner.WithChildren(lits...)
	if err != nil {
		return nil, err
	}
	v, err := e.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if err := sb.chargeValue(o.name, valueSize(v)); err != nil {
		return nil, err
	}
	return v, nil
}

// valueSize approximates the bytes a computed value holds.
func valueSize(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return int64(len(x))
	case []byte:
		return int64(len(x))
	case types.JSONDocument:
		if b, err := json.Marshal(x.Val); err == nil {
			return int64(len(b))
		}
	}
	return 16
}

// override is a built-in function whose evaluation goes through the
// statement's Sandbox (eval); without a Sandbox it evaluates as the built-in
// (inner), unless always is set.
type override struct {
	inner  sql.Expression
	name   string
	eval   func(ctx *sql.Context, sb *Sandbox, o *override, row sql.Row) (any, error)
	always bool
}

var (
	_ sql.FunctionExpression         = (*override)(nil)
	_ sql.NonDeterministicExpression = (*override)(nil)
	_ sql.CollationCoercible         = (*override)(nil)
)

func (o *override) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	sb := sandboxOf(ctx)
	if sb == nil && !o.always {
		return o.inner.Eval(ctx, row)
	}
	return o.eval(ctx, sb, o, row)
}

func (o *override) Resolved() bool   { return o.inner.Resolved() }
func (o *override) String() string   { return o.inner.String() }
func (o *override) Type() sql.Type   { return o.inner.Type() }
func (o *override) IsNullable() bool { return o.inner.IsNullable() }
func (o *override) Children() []sql.Expression {
	if o.always && o.name == "uuid_short" {
		return nil
	}
	return o.inner.Children()
}
func (o *override) FunctionName() string { return o.name }
func (o *override) Description() string {
	if f, ok := o.inner.(sql.FunctionExpression); ok {
		return f.Description()
	}
	return o.name
}

func (o *override) IsNonDeterministic() bool {
	switch o.name {
	case "rand", "uuid", "uuid_short", "random_bytes":
		return true
	}
	if nd, ok := o.inner.(sql.NonDeterministicExpression); ok {
		return nd.IsNonDeterministic()
	}
	return false
}

func (o *override) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	if c, ok := o.inner.(sql.CollationCoercible); ok {
		return c.CollationCoercibility(ctx)
	}
	return sql.Collation_binary, 5
}

func (o *override) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if o.always && o.name == "uuid_short" {
		if len(children) != 0 {
			return nil, sql.ErrInvalidChildrenNumber.New(o, len(children), 0)
		}
		return o, nil
	}
	inner, err := o.inner.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	c := *o
	c.inner = inner
	return &c, nil
}
