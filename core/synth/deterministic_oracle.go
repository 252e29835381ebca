package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest"
	"github.com/weft-dev/weft/core/state"
)

// StateLoad says how a reference state (tau2 db.json, a BFCL
// initial_config) was loaded into a plan's inferred schema: rows per
// table, the collections that matched no table, and the values left out
// because the inferred column has another type.
type StateLoad struct {
	Rows      map[string]int `json:"rows"`
	Unmatched []string       `json:"unmatched_collections"`
	Dropped   int            `json:"values_dropped"`
}

// StateSeed maps a reference state onto the plan's tables and returns it
// as seed rows (state.LoadJSON's layout). The rule, from names alone:
// every collection in the state (an object member whose value is an array
// of objects or an object of objects, at any depth up to 3) is matched to
// the entity whose name is the collection's name singularized, or one of
// its words ("ticket_queue" -> ticket, "booking_record" -> booking). Each
// element is a row: the key is the element's member named as the key
// column, else its "id", else (an object of objects) the member name; the
// columns take the element's members of the same name (documented property
// or column name) when the JSON type fits the column type, the rest is
// dropped. Elements without a usable key are skipped.
func (p *Plan) StateSeed(st any) (json.RawMessage, *StateLoad) {
	load := &StateLoad{Rows: map[string]int{}, Unmatched: []string{}}
	byName := map[string]*Entity{}
	for _, e := range p.Entities {
		byName[e.Name] = e
	}
	rows := map[string][]map[string]any{}
	keysSeen := map[string]map[string]bool{}
	var walk func(name string, v any, depth int)
	walk = func(name string, v any, depth int) {
		if depth > 3 {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range stateKeys(m) {
			elems, keys := collection(m[k])
			if elems == nil {
				walk(k, m[k], depth+1)
				continue
			}
			e := matchEntity(k, byName)
			if e == nil {
				load.Unmatched = append(load.Unmatched, k)
				continue
			}
			for i, el := range elems {
				row, dropped := p.row(e, el, keys[i])
				load.Dropped += dropped
				if row == nil {
					continue
				}
				ks := fmt.Sprint(row[e.Key])
				if keysSeen[e.Name] == nil {
					keysSeen[e.Name] = map[string]bool{}
				}
				if keysSeen[e.Name][ks] {
					continue
				}
				keysSeen[e.Name][ks] = true
				rows[e.Name] = append(rows[e.Name], row)
				load.Rows[e.Name]++
			}
		}
	}
	walk("", st, 0)
	out := map[string][]map[string]any{}
	for _, e := range p.Entities {
		if r := rows[e.Name]; len(r) > 0 {
			out[e.Name] = r
		}
	}
	b, _ := json.Marshal(out)
	return b, load
}

func stateKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// collection returns the elements of an array of objects, or of an object
// whose members are all objects (with their member names), else nil.
func collection(v any) ([]map[string]any, []string) {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil, nil
		}
		var out []map[string]any
		for _, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, nil
			}
			out = append(out, m)
		}
		return out, make([]string, len(out))
	case map[string]any:
		if len(x) == 0 {
			return nil, nil
		}
		var out []map[string]any
		var keys []string
		for _, k := range stateKeys(x) {
			m, ok := x[k].(map[string]any)
			if !ok {
				return nil, nil
			}
			out = append(out, m)
			keys = append(keys, k)
		}
		return out, keys
	}
	return nil, nil
}

func matchEntity(name string, byName map[string]*Entity) *Entity {
	n := sqlName(singular(strings.ToLower(name)))
	if e := byName[n]; e != nil {
		return e
	}
	for _, w := range Words(name) {
		if e := byName[sqlName(singular(w))]; e != nil {
			return e
		}
	}
	return nil
}

// row converts one state element to a row of e (nil without a key).
func (p *Plan) row(e *Entity, el map[string]any, mapKey string) (map[string]any, int) {
	var key any
	for _, k := range []string{e.Key, "id"} {
		if v, ok := el[k]; ok && v != nil {
			key = v
			break
		}
	}
	if key == nil && mapKey != "" {
		key = mapKey
	}
	key = fitKey(e.KeyType, key)
	if key == nil {
		return nil, 0
	}
	row := map[string]any{e.Key: key}
	dropped := 0
	for _, c := range e.Columns {
		v, ok := el[c.Prop]
		if !ok {
			v, ok = el[c.Name]
		}
		if !ok || v == nil {
			continue
		}
		if fv, fits := fitValue(c, v); fits {
			row[c.Name] = fv
		} else {
			dropped++
		}
	}
	return row, dropped
}

func fitKey(typ string, v any) any {
	switch x := v.(type) {
	case string:
		if typ == "integer" {
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return nil
			}
			return n
		}
		return x
	case float64:
		if typ == "integer" {
			if x != math.Trunc(x) {
				return nil
			}
			return int64(x)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return nil
}

func fitValue(c *Column, v any) (any, bool) {
	if c.Ref != "" {
		k := fitKey(c.Type, v)
		return k, k != nil
	}
	switch c.Type {
	case "json":
		return v, true
	case "string":
		s, ok := v.(string)
		return s, ok
	case "integer":
		f, ok := v.(float64)
		return f, ok && f == math.Trunc(f)
	case "number":
		f, ok := v.(float64)
		return f, ok
	case "boolean":
		b, ok := v.(bool)
		return b, ok
	}
	return nil, false
}

// OracleGroup is oracle cases that share documentation and a starting
// state: one synthesized server, loaded with State, replays them.
type OracleGroup struct {
	Docs  *Docs
	State any // decoded JSON (numbers float64); nil: the synthesizer's own seed
	Cases []moduletest.Case
	// Read tells the reference's read/write label of a tool (tau2's
	// tool_type); nil: the synthesized server's own read_only flag.
	Read func(tool string) (bool, bool)
	// Class names the class a tool belongs to (BFCL), for the split.
	Class func(tool string) string
}

// OracleTally counts oracle calls: all, with the error classification
// equal (tool error or not), and fully right (classification equal and,
// on success, the output equal).
//
// Successes counts the calls the reference answered without an error and
// OutputRight those of them whose output was equal too (Right minus the
// calls where both sides erred).
type OracleTally struct {
	Calls       int `json:"calls"`
	ErrorRight  int `json:"error_right"`
	Right       int `json:"right"`
	Successes   int `json:"reference_successes"`
	OutputRight int `json:"output_right"`
}

func (t *OracleTally) add(o OracleTally) {
	t.Calls += o.Calls
	t.ErrorRight += o.ErrorRight
	t.Right += o.Right
	t.Successes += o.Successes
	t.OutputRight += o.OutputRight
}

// OracleSplit is a tally for read and for write tools.
type OracleSplit struct {
	Read  OracleTally `json:"read"`
	Write OracleTally `json:"write"`
}

// OracleReport is the share of oracle calls a deterministically
// synthesized server gets right, read and write tools apart, overall and
// per class; Misses counts wrong calls by "tool: error|output|unknown
// tool"; Loaded sums the rows loaded from the reference states.
type OracleReport struct {
	File    string                  `json:"file"`
	Groups  int                     `json:"servers"`
	Total   OracleSplit             `json:"total"`
	ByClass map[string]*OracleSplit `json:"by_class,omitempty"`
	Misses  map[string]int          `json:"misses"`
	Loaded  map[string]int          `json:"rows_loaded"`
	Dropped int                     `json:"values_dropped"`
	// LabelSource is "reference" when read/write come from the reference's
	// labels, "synthesized" when from the synthesized server's read_only.
	LabelSource string        `json:"label_source"`
	Elapsed     time.Duration `json:"elapsed_ns"`
}

// MeasureOracle synthesizes one server per group with d, loads the
// group's state into it (StateSeed), replays the cases with
// moduletest.Run and tallies every call.
func MeasureOracle(ctx context.Context, d *Deterministic, file string, groups []OracleGroup) (*OracleReport, error) {
	rep := &OracleReport{File: file, ByClass: map[string]*OracleSplit{}, Misses: map[string]int{}, Loaded: map[string]int{}, LabelSource: "synthesized"}
	start := time.Now()
	for gi, g := range groups {
		p, err := d.Plan(g.Docs)
		if err != nil {
			return nil, err
		}
		srv, err := p.Server()
		if err != nil {
			return nil, err
		}
		if g.State != nil {
			seed, load := p.StateSeed(g.State)
			srv.Seed = seed
			for t, n := range load.Rows {
				rep.Loaded[t] += n
			}
			rep.Dropped += load.Dropped
		}
		mod, err := module.NewNativeServer(srv, module.Config{CallTimeout: 30 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("group %d (%s): %w", gi, g.Docs.Name, err)
		}
		st := state.NewStore()
		v, err := (&module.Bundle{Schema: srv.Schema, Seed: srv.Seed}).SeedVersion(ctx, st)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("group %d (%s): loading the reference state: %w", gi, g.Docs.Name, err)
		}
		res, err := moduletest.Run(ctx, mod, v, g.Cases, nil)
		st.Close()
		if err != nil {
			return nil, err
		}
		rep.Groups++
		type at struct {
			c string
			i int
		}
		wrong := map[at]string{}
		for _, m := range res.Mismatches {
			if m.Call < 0 {
				continue
			}
			k := at{m.Case, m.Call}
			if m.What == "output" && wrong[k] == "" {
				wrong[k] = "output"
			} else if m.What != "output" {
				wrong[k] = "error"
			}
		}
		for _, c := range g.Cases {
			for i, cl := range c.Calls {
				read := false
				if g.Read != nil {
					if r, ok := g.Read(cl.Name); ok {
						read = r
						rep.LabelSource = "reference"
					}
				} else if t := srv.Tool(toolIdent(cl.Name)); t != nil {
					read = t.ReadOnly
				}
				var o OracleTally
				o.Calls = 1
				if !cl.Error {
					o.Successes = 1
				}
				switch wrong[at{c.ID, i}] {
				case "":
					o.ErrorRight, o.Right = 1, 1
					if !cl.Error {
						o.OutputRight = 1
					}
				case "output":
					o.ErrorRight = 1
					rep.Misses[cl.Name+": output"]++
				default:
					rep.Misses[cl.Name+": error"]++
				}
				class := ""
				if g.Class != nil {
					class = g.Class(cl.Name)
				}
				for _, s := range []*OracleSplit{&rep.Total, rep.split(class)} {
					if s == nil {
						continue
					}
					if read {
						s.Read.add(o)
					} else {
						s.Write.add(o)
					}
				}
			}
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func (r *OracleReport) split(class string) *OracleSplit {
	if class == "" {
		return nil
	}
	s := r.ByClass[class]
	if s == nil {
		s = &OracleSplit{}
		r.ByClass[class] = s
	}
	return s
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(d))
}

// Table prints the report as a Markdown table: one row per class (or the
// file), read and write apart.
func (r *OracleReport) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | read calls | error class right | fully right | output right / reference successes | write calls | error class right | fully right | output right / reference successes |\n|---|---|---|---|---|---|---|---|---|\n", r.File)
	row := func(name string, s *OracleSplit) {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %d / %d | %d | %s | %s | %d / %d |\n", name,
			s.Read.Calls, pct(s.Read.ErrorRight, s.Read.Calls), pct(s.Read.Right, s.Read.Calls), s.Read.OutputRight, s.Read.Successes,
			s.Write.Calls, pct(s.Write.ErrorRight, s.Write.Calls), pct(s.Write.Right, s.Write.Calls), s.Write.OutputRight, s.Write.Successes)
	}
	for _, c := range sortedKeysSplit(r.ByClass) {
		row(c, r.ByClass[c])
	}
	row("**all**", &r.Total)
	return b.String()
}

func sortedKeysSplit(m map[string]*OracleSplit) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TopMisses lists the n most frequent misses, "tool: kind count".
func (r *OracleReport) TopMisses(n int) []string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range r.Misses {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].v != l[j].v {
			return l[i].v > l[j].v
		}
		return l[i].k < l[j].k
	})
	var out []string
	for i := 0; i < len(l) && i < n; i++ {
		out = append(out, fmt.Sprintf("%s ×%d", l[i].k, l[i].v))
	}
	return out
}

// decodeState decodes JSON with numbers as float64 (StateSeed's input).
func decodeState(b []byte) (any, error) {
	var v any
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
