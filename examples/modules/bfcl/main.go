package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/tool"
)

func main() {}

//go:embed func_docs/*.json
var funcDocs embed.FS

// class is one BFCL API class: its func_docs file, its default-state
// loader (_load_scenario) and its methods. A method gets the instance's
// attributes (public ones and the "_"-prefixed private ones weft persists)
// and the call's keyword arguments, and returns the method's value or an
// error for a Python exception.
type class struct {
	name    string
	docs    string
	load    func(config *Dict) (*Dict, error)
	methods map[string]method
	// export, when set, replaces publicState for this class.
	export func(self *Dict) *Dict
}

type method func(self *Dict, args *Dict) (any, error)

var classes = map[string]*class{}

// toolClass maps a tool (method) name to its class.
var toolClass = map[string]*class{}

// classTools lists each class's tool names in func-doc order.
var classTools = map[string][]string{}

func addClass(c *class) bool { classes[c.name] = c; return true }

// classOrder lists the classes in a fixed order (export, docs).
func classOrder() []string {
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// funcDoc is one line of a BFCL func_docs file.
type funcDoc struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

func init() {
	registerAll()
}

// registerAll registers every method of every class as a tool, with the
// input schema converted from the func doc.
func registerAll() {
	tool.Module(tool.Info{
		Name:    "bfcl",
		Version: "1.1.0",
		Description: "BFCL v4 multi-turn domain: the eight simulated APIs (GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot, TravelAPI, VehicleControlAPI) of the Berkeley Function Calling Leaderboard, " +
			"each class's instance state in the table bfcl_class (loaded lazily from the task's initial_config).",
		Owns:       []string{"bfcl_class", "bfcl_attr", "bfcl_fs_entry"},
		FileReads:  []string{"**"},
		FileWrites: []string{"**"},
	})
	for _, cn := range classOrder() {
		c := classes[cn]
		f, err := funcDocs.Open("func_docs/" + c.docs + ".json")
		if err != nil {
			panic(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var d funcDoc
			if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
				panic(err)
			}
			if c.methods[d.Name] == nil {
				panic(fmt.Sprintf("bfcl: %s.%s has a func doc but no implementation", cn, d.Name))
			}
			toolClass[d.Name] = c
			classTools[cn] = append(classTools[cn], d.Name)
			name := d.Name
			tool.Register(name, d.Description, func(ctx context.Context, in map[string]json.RawMessage) (any, error) {
				return callTool(ctx, name, in)
			}, tool.InputSchema(string(inputSchema(d.Parameters))))
		}
		f.Close()
	}
	tool.Export(exportAll)
	tool.Serve(manifestJSON(), tool.Dispatch)
}

// manifestJSON is the SDK's manifest with errors_keep_state set: BFCL's
// error answers are return values, and the state a method changed before
// answering one stays changed.
func manifestJSON() []byte {
	var m abi.Manifest
	if err := json.Unmarshal(tool.ManifestJSON(), &m); err != nil {
		panic(err)
	}
	m.ErrorsKeepState = true
	b, err := abi.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// inputSchema converts BFCL's parameter dialect to JSON Schema: "dict" is
// "object", "float" is "number", "tuple" is "array", "any" has no type;
// objects at the top level take no other properties (Python raises on an
// unexpected keyword argument). Array element types are dropped: the
// methods take any list, as Python does.
func inputSchema(params json.RawMessage) []byte {
	v, _ := decodeValue(params)
	top, _ := v.(*Dict)
	if top == nil {
		top = newDict()
	}
	conv := convSchema(top).(*Dict)
	// An optional parameter also takes null (Python's None).
	req := map[string]bool{}
	if r, ok := conv.G("required").([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				req[s] = true
			}
		}
	}
	if props, ok := conv.G("properties").(*Dict); ok {
		for _, k := range props.Keys() {
			p, _ := props.G(k).(*Dict)
			if t, ok := p.Get("type"); ok && !req[k] && p != nil {
				p.Set("type", []any{t, "null"})
			}
		}
	}
	conv.Set("type", "object")
	conv.Set("additionalProperties", false)
	if !conv.Has("properties") {
		conv.Set("properties", newDict())
	}
	b, _ := marshal(conv)
	return b
}

func convSchema(v any) any {
	d, ok := v.(*Dict)
	if !ok {
		return v
	}
	out := newDict()
	for _, k := range d.Keys() {
		e := d.G(k)
		switch k {
		case "type":
			switch e {
			case "dict":
				out.Set("type", "object")
			case "float":
				out.Set("type", "number")
			case "tuple":
				out.Set("type", "array")
			case "any":
			default:
				out.Set("type", e)
			}
		case "properties":
			props := newDict()
			pd, _ := e.(*Dict)
			if pd != nil {
				for _, pk := range pd.Keys() {
					props.Set(pk, convSchema(pd.G(pk)))
				}
			}
			out.Set("properties", props)
		case "items":
			// Element types are not enforced: Python takes any list
			// (min_value(["a"]) is "a"); the description keeps them.
		case "description", "enum", "required":
			out.Set(k, e)
		case "default":
			// Kept in the description only: a JSON Schema default is
			// advisory, and BFCL writes Python literals there.
		}
	}
	return out
}

// pyError is a Python exception a method raised (BFCL's executor answers
// "Error during execution: <message>").
type pyError struct{ msg string }

func (e *pyError) Error() string { return "Error during execution: " + e.msg }

func raise(format string, a ...any) error { return &pyError{fmt.Sprintf(format, a...)} }

// isErrorValue reports whether a method's value is an error answer: a dict
// with an "error" key, or a one-element list holding one.
func isErrorValue(v any) bool {
	if d, ok := v.(*Dict); ok {
		return d.Has("error")
	}
	if l, ok := v.([]any); ok && len(l) == 1 {
		if d, ok := l[0].(*Dict); ok {
			return d.Has("error")
		}
	}
	return false
}

var db *sql.DB

func sqlDB() *sql.DB {
	if db == nil {
		db = tool.DB()
	}
	return db
}

// stored is how a class's instance is in the session's state: whether its
// bfcl_class row exists, whether it is loaded (state holds the attribute
// names; their values are bfcl_attr rows), and each attribute's stored
// JSON.
type stored struct {
	row, loaded bool
	names       string
	attrs       map[string]string
}

// loadInstance returns the class's instance attributes in the session's
// state: the stored attributes, or the class loaded from the stored
// initial_config (from {} when the class has no row).
func loadInstance(ctx context.Context, c *class) (*Dict, *stored, error) {
	var config, st sql.NullString
	err := sqlDB().QueryRowContext(ctx, "SELECT config, state FROM bfcl_class WHERE name = ?", c.name).Scan(&config, &st)
	was := &stored{row: true, attrs: map[string]string{}}
	if errors.Is(err, sql.ErrNoRows) {
		was.row = false
	} else if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", c.name, err)
	}
	if st.Valid && st.String != "" {
		was.loaded, was.names = true, st.String
		var names []string
		if err := json.Unmarshal([]byte(st.String), &names); err != nil {
			return nil, nil, fmt.Errorf("%s state (attribute names): %w", c.name, err)
		}
		rows, err := sqlDB().QueryContext(ctx, "SELECT attr, value FROM bfcl_attr WHERE class = ?", c.name)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s attributes: %w", c.name, err)
		}
		for rows.Next() {
			var a, v string
			if err := rows.Scan(&a, &v); err != nil {
				rows.Close()
				return nil, nil, err
			}
			was.attrs[a] = v
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		self := newDict()
		for _, n := range names {
			raw, ok := was.attrs[n]
			if !ok {
				return nil, nil, fmt.Errorf("%s state: attribute %s has no bfcl_attr row", c.name, n)
			}
			v, err := decodeValue([]byte(raw))
			if err != nil {
				return nil, nil, fmt.Errorf("%s state: attribute %s: %w", c.name, n, err)
			}
			self.Set(n, v)
		}
		return self, was, nil
	}
	cfg := newDict()
	if config.Valid && strings.TrimSpace(config.String) != "" {
		v, err := decodeValue([]byte(config.String))
		if err != nil {
			return nil, nil, fmt.Errorf("%s config: %w", c.name, err)
		}
		if d, ok := v.(*Dict); ok {
			cfg = d
		}
	}
	self, err := c.load(cfg)
	return self, was, err
}

// attrRows encodes an instance as stored: the attribute names (JSON list,
// the bfcl_class state) and each attribute's JSON (a bfcl_attr row).
func attrRows(self *Dict) (string, map[string]string, error) {
	names := self.Keys()
	nb, err := json.Marshal(names)
	if err != nil {
		return "", nil, err
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := marshal(self.G(n))
		if err != nil {
			return "", nil, err
		}
		out[n] = string(b)
	}
	return string(nb), out, nil
}

// saveInstance writes what differs from was: the class row, changed,
// added and removed attribute rows. One row per attribute keeps a turn's
// state check to the attributes it changes.
func saveInstance(ctx context.Context, c *class, self *Dict, was *stored) error {
	names, attrs, err := attrRows(self)
	if err != nil {
		return err
	}
	db := sqlDB()
	switch {
	case !was.row:
		_, err = db.ExecContext(ctx, "INSERT INTO bfcl_class (name, config, state) VALUES (?, ?, ?)", c.name, "{}", names)
	case names != was.names:
		_, err = db.ExecContext(ctx, "UPDATE bfcl_class SET state = ? WHERE name = ?", names, c.name)
	}
	if err != nil {
		return fmt.Errorf("saving %s: %w", c.name, err)
	}
	for _, n := range self.Keys() {
		old, ok := was.attrs[n]
		switch {
		case !ok:
			_, err = db.ExecContext(ctx, "INSERT INTO bfcl_attr (class, attr, value) VALUES (?, ?, ?)", c.name, n, attrs[n])
		case old != attrs[n]:
			_, err = db.ExecContext(ctx, "UPDATE bfcl_attr SET value = ? WHERE class = ? AND attr = ?", attrs[n], c.name, n)
		}
		if err != nil {
			return fmt.Errorf("saving %s.%s: %w", c.name, n, err)
		}
	}
	for n := range was.attrs {
		if _, ok := attrs[n]; !ok {
			if _, err := db.ExecContext(ctx, "DELETE FROM bfcl_attr WHERE class = ? AND attr = ?", c.name, n); err != nil {
				return fmt.Errorf("saving %s.%s: %w", c.name, n, err)
			}
		}
	}
	return nil
}

// callTool runs one method call: load the instance, run, persist a
// changed state, and answer the value (an error value or an exception as
// a tool error).
func callTool(ctx context.Context, name string, in map[string]json.RawMessage) (any, error) {
	callCtx = ctx
	defer func() { callCtx = context.Background() }()
	c := toolClass[name]
	self, was, err := loadInstance(ctx, c)
	var pe *pyError
	if errors.As(err, &pe) {
		// The configuration itself makes _load_scenario raise.
		return nil, err
	}
	if err != nil {
		moduleBug(err)
	}
	before, err := marshal(self)
	if err != nil {
		moduleBug(err)
	}
	args := newDict()
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, err := decodeValue(in[k])
		if err != nil {
			return nil, raise("argument %s: %v", k, err)
		}
		args.Set(k, v)
	}
	out, callErr := c.methods[name](self, args)
	after, err := marshal(self)
	if err != nil {
		moduleBug(err)
	}
	if !bytes.Equal(before, after) || !was.row {
		if err := saveInstance(ctx, c, self, was); err != nil {
			moduleBug(err)
		}
	}
	if callErr != nil {
		return nil, callErr
	}
	if isErrorValue(out) {
		b, _ := marshal(out)
		return nil, errors.New(string(b))
	}
	if s, ok := out.(string); ok {
		return s, nil
	}
	b, err := marshal(out)
	if err != nil {
		return nil, raise("%v", err)
	}
	return json.RawMessage(b), nil
}

// moduleBug ends the call as an internal error (the SDK turns a panic
// into one; the host rolls the call back and reports an infrastructure
// failure): unreadable stored state or a failed SQL statement is not the
// agent's mistake.
func moduleBug(err error) {
	panic(fmt.Sprintf("bfcl: %v", err))
}

// exportAll is the export hook: {class: {attribute: value}} for every
// class with a row, the public attributes only (names not starting with
// "_"), encoded as the oracle's final_state.
func exportAll(ctx context.Context) (any, error) {
	callCtx = ctx
	defer func() { callCtx = context.Background() }()
	rows, err := sqlDB().QueryContext(ctx, "SELECT name FROM bfcl_class ORDER BY name")
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	out := newDict()
	for _, n := range names {
		c := classes[n]
		if c == nil {
			continue
		}
		self, _, err := loadInstance(ctx, c)
		if err != nil {
			return nil, err
		}
		out.Set(n, publicState(c, self))
	}
	b, err := marshal(out)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// publicState is the attributes BFCL's state checker compares.
func publicState(c *class, self *Dict) *Dict {
	if c != nil && c.export != nil {
		return c.export(self)
	}
	pub := newDict()
	for _, k := range self.Keys() {
		if !strings.HasPrefix(k, "_") {
			pub.Set(k, self.G(k))
		}
	}
	return pub
}

// Helpers for methods.

// opt returns the argument k or the default.
func opt(args *Dict, k string, def any) any {
	if v, ok := args.Get(k); ok {
		return v
	}
	return def
}

// scenario returns config[k] if present, else def (Python dict.get).
func scenario(cfg *Dict, k string, def any) any {
	if v, ok := cfg.Get(k); ok {
		return v
	}
	return def
}

// rng returns the instance's generator (attribute "_random":
// {"seed", "draws"}), and a function storing its position back.
func rng(self *Dict) (*pyRandom, func()) {
	st, _ := self.G("_random").(*Dict)
	seed, _ := toInt(st.G("seed"))
	draws, _ := toInt(st.G("draws"))
	r := restoreRandom(seed, draws)
	return r, func() { st.Set("draws", r.draws) }
}

func seedRandom(self *Dict, seed any) {
	s, _ := toInt(seed)
	self.Set("_random", dict("seed", s, "draws", int64(0)))
}
