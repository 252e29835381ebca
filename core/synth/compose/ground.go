package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/weft-dev/weft/core/state"
)

// GroundStats are the figures of one grounding (or, summed, of many).
type GroundStats struct {
	// EntityRows are the rows of round 1 (entity initialization): the
	// rows whose primary key is a binding or a reference argument.
	EntityRows int `json:"entity_rows"`
	// RelationRows are the rows of round 2 (relation completion): the
	// foreign-key closure of the entity rows (rows they name, rows naming
	// them, rows the reference's reads returned) and whole small tables.
	RelationRows int `json:"relation_rows"`
	// ContextRows are the rows of round 3 (context enrichment): near-miss
	// distractors of the entity rows, kept only when
	// every identifying query still resolves as before.
	ContextRows int `json:"context_rows"`
	// DistractorsDropped are distractor rows removed because a uniqueness
	// check failed.
	DistractorsDropped int `json:"distractors_dropped"`
	// UniquenessChecks counts the identifying (read-only) reference calls
	// compared with and without the distractors; UniquenessFailed those
	// whose output changed (the query no longer resolved to exactly the
	// same entity).
	UniquenessChecks int `json:"uniqueness_checks"`
	UniquenessFailed int `json:"uniqueness_failed"`
}

func (g *GroundStats) add(o GroundStats) {
	g.EntityRows += o.EntityRows
	g.RelationRows += o.RelationRows
	g.ContextRows += o.ContextRows
	g.DistractorsDropped += o.DistractorsDropped
	g.UniquenessChecks += o.UniquenessChecks
	g.UniquenessFailed += o.UniquenessFailed
}

// Rows is the total rows of the grounded state.
func (g GroundStats) Rows() int { return g.EntityRows + g.RelationRows + g.ContextRows }

// doc is a weft.state/v1 export (core/state's format).
type doc struct {
	Format string   `json:"format"`
	DDL    []string `json:"ddl"`
	Tables []table  `json:"tables"`
}

type table struct {
	Name          string              `json:"name"`
	Columns       []string            `json:"columns"`
	AutoIncrement uint64              `json:"auto_increment,omitempty"`
	Rows          [][]json.RawMessage `json:"rows"`
}

type rowRef struct{ t, r int }

// world indexes a group seed for grounding.
type world struct {
	doc   doc
	pk    [][]int             // per table, primary key column ordinals
	json  [][]bool            // per table and column: the column holds JSON objects/arrays
	byKey map[string][]rowRef // first primary-key value -> rows
	byRef map[string][]rowRef // scalar non-key value -> rows
	small map[int]bool        // tables copied whole
	leafs map[rowRef][]string // cached leaves of a row's non-key values
}

// smallTable: tables with at most this many rows are reference data,
// copied whole by relation completion (airports).
const smallTable = 32

// rareValue: a non-key value names an entity only when at most this many
// rows hold it (an email, a zip code; not a cabin class or a date).
const rareValue = 8

// reverseCap bounds the rows naming one entity that relation completion
// adds (a user's payment methods and orders).
const reverseCap = 16

func newWorld(ctx context.Context, seed *state.Version) (*world, error) {
	var buf bytes.Buffer
	if err := seed.Export(&buf); err != nil {
		return nil, err
	}
	w := &world{byKey: map[string][]rowRef{}, byRef: map[string][]rowRef{}, small: map[int]bool{}, leafs: map[rowRef][]string{}}
	if err := json.Unmarshal(buf.Bytes(), &w.doc); err != nil {
		return nil, err
	}
	// The primary keys, from the diff of an empty state of the same schema.
	empty := w.doc
	empty.Tables = make([]table, len(w.doc.Tables))
	for i, t := range w.doc.Tables {
		empty.Tables[i] = table{Name: t.Name, Columns: t.Columns, Rows: [][]json.RawMessage{}}
	}
	ev, err := importDoc(ctx, seed.Store(), empty)
	if err != nil {
		return nil, fmt.Errorf("compose: empty state: %w", err)
	}
	pks := map[string][]string{}
	for _, td := range state.Diff(ev, seed).Tables {
		pks[td.Table] = td.PrimaryKey
	}
	w.pk = make([][]int, len(w.doc.Tables))
	w.json = make([][]bool, len(w.doc.Tables))
	for ti, t := range w.doc.Tables {
		for _, k := range pks[t.Name] {
			w.pk[ti] = append(w.pk[ti], slices.Index(t.Columns, k))
		}
		w.json[ti] = make([]bool, len(t.Columns))
		if len(t.Rows) <= smallTable {
			w.small[ti] = true
		}
		for ri, row := range t.Rows {
			ref := rowRef{ti, ri}
			if len(w.pk[ti]) > 0 {
				if s, ok := scalar(row[w.pk[ti][0]]); ok {
					w.byKey[s] = append(w.byKey[s], ref)
				}
			}
			for ci, v := range row {
				if len(v) > 0 && (v[0] == '[' || v[0] == '{') {
					w.json[ti][ci] = true
					continue
				}
				if s, ok := scalar(v); ok && len(s) >= 3 {
					w.byRef[s] = append(w.byRef[s], ref)
				}
			}
		}
	}
	return w, nil
}

func importDoc(ctx context.Context, st *state.Store, d doc) (*state.Version, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return st.Import(ctx, bytes.NewReader(b))
}

// scalar is the text of a JSON string or number.
func scalar(v json.RawMessage) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, true
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(v), true
	}
	return "", false
}

// leaves appends the strings and numbers inside JSON value v.
func leaves(out []string, v any) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case json.Number:
		out = append(out, x.String())
	case float64:
		out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
	case []any:
		for _, e := range x {
			out = leaves(out, e)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = leaves(out, x[k])
		}
	}
	return out
}

// textLeaves returns the leaves of text that parses as JSON, else nothing.
func textLeaves(text string) []string {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return leaves(nil, v)
}

func (w *world) rowLeaves(ref rowRef) []string {
	if l, ok := w.leafs[ref]; ok {
		return l
	}
	var out []string
	for ci, v := range w.doc.Tables[ref.t].Rows[ref.r] {
		if slices.Contains(w.pk[ref.t], ci) {
			continue
		}
		if s, ok := scalar(v); ok {
			out = append(out, s)
			continue
		}
		if w.json[ref.t][ci] {
			out = append(out, textLeaves(string(v))...)
		}
	}
	w.leafs[ref] = out
	return out
}

// lookup returns the rows whose primary key v names: rows with v as their
// first key column whose other key columns' values are all in have (a
// flight's date row is named by a flight number and that date together).
func (w *world) lookup(v string, have map[string]bool) []rowRef {
	rs := w.byKey[v]
	var out []rowRef
	for _, r := range rs {
		ok := true
		for _, ci := range w.pk[r.t][1:] {
			if s, _ := scalar(w.doc.Tables[r.t].Rows[r.r][ci]); !have[s] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func set(vs []string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// grounding is one task's selection of rows.
type grounding struct {
	w   *world
	sel map[rowRef]int // row -> round (1, 2, 3)
}

func (g *grounding) add(ref rowRef, round int) bool {
	if _, ok := g.sel[ref]; ok {
		return false
	}
	g.sel[ref] = round
	return true
}

// maxHops bounds the foreign-key closure: rows at most this many
// references away from an entity row (an order's user and payment method,
// a reservation's flights and their dates).
const maxHops = 2

// closure adds, at round, the rows the values of queue's rows name by
// primary key, up to maxHops from the rows queued (hops[i] is how far
// queue[i] already is).
func (g *grounding) closure(queue []rowRef, hops []int, round int) {
	for len(queue) > 0 {
		ref, h := queue[0], hops[0]
		queue, hops = queue[1:], hops[1:]
		if h >= maxHops {
			continue
		}
		ls := g.w.rowLeaves(ref)
		have := set(ls)
		for _, v := range ls {
			for _, r := range g.w.lookup(v, have) {
				if g.add(r, round) {
					queue = append(queue, r)
					hops = append(hops, h+1)
				}
			}
		}
	}
}

// version builds the state of the selected rows (every table kept, rows
// in seed order).
func (g *grounding) version(ctx context.Context, st *state.Store, upTo int) (*state.Version, error) {
	d := g.w.doc
	d.Tables = make([]table, len(g.w.doc.Tables))
	for ti, t := range g.w.doc.Tables {
		nt := table{Name: t.Name, Columns: t.Columns, AutoIncrement: t.AutoIncrement, Rows: [][]json.RawMessage{}}
		for ri, row := range t.Rows {
			if round, ok := g.sel[rowRef{ti, ri}]; ok && round <= upTo {
				nt.Rows = append(nt.Rows, row)
			}
		}
		d.Tables[ti] = nt
	}
	return importDoc(ctx, st, d)
}

// groundInput is what grounding needs of a composed task.
type groundInput struct {
	// values are, per atomic task, its bindings and the leaves of its
	// reference arguments.
	values [][]string
	// outputs are the leaves of the reference's outputs on the full seed.
	outputs []string
	// rerun runs the composite reference from v and returns the outputs
	// of its read-only calls, in order.
	rerun func(v *state.Version) ([]string, error)
}

// ground runs the three rounds and returns the initial state and its
// figures.
func (w *world) ground(ctx context.Context, st *state.Store, in groundInput, distractors int, rng *rand.Rand) (*state.Version, GroundStats, error) {
	g := &grounding{w: w, sel: map[rowRef]int{}}
	var gs GroundStats
	// Round 1: entity initialization.
	var entities []rowRef
	for _, vs := range in.values {
		have := set(vs)
		for _, v := range vs {
			for _, r := range w.lookup(v, have) {
				if g.add(r, 1) {
					entities = append(entities, r)
				}
			}
			// A row named by non-key values: an email, or a name and zip
			// (at least two of the task's values when it has several).
			need := min(2, len(have))
			if len(w.byRef[v]) > rareValue {
				continue // a status or a city names no entity
			}
			for _, r := range w.byRef[v] {
				if _, ok := g.sel[r]; ok || w.small[r.t] {
					continue
				}
				n := 0
				for _, c := range w.doc.Tables[r.t].Rows[r.r] {
					if s, ok := scalar(c); ok && have[s] {
						n++
					}
				}
				if n >= need && g.add(r, 1) {
					entities = append(entities, r)
				}
			}
		}
	}
	// Round 2: relation completion.
	var queue []rowRef
	var hops []int
	queue = append(queue, entities...)
	hops = append(hops, make([]int, len(entities))...)
	for _, e := range entities {
		if w.small[e.t] {
			continue // an airport names no one's flights
		}
		k, _ := scalar(w.doc.Tables[e.t].Rows[e.r][w.pk[e.t][0]])
		n := 0
		for _, r := range w.byRef[k] {
			if n >= reverseCap {
				break
			}
			if g.add(r, 2) {
				queue = append(queue, r)
				hops = append(hops, maxHops-1)
				n++
			}
		}
	}
	// Rows the reference's reads returned on the full seed, without
	// what they name in turn (a search's flights, not their passengers).
	haveOut := set(in.outputs)
	for _, v := range in.outputs {
		for _, r := range w.lookup(v, haveOut) {
			g.add(r, 2)
		}
	}
	for ti := range w.doc.Tables {
		if w.small[ti] {
			for ri := range w.doc.Tables[ti].Rows {
				g.add(rowRef{ti, ri}, 2)
			}
		}
	}
	g.closure(queue, hops, 2)
	// Round 3: context enrichment, near-miss distractors per entity.
	if distractors > 0 {
		for _, e := range entities {
			t := w.doc.Tables[e.t]
			if w.small[e.t] || len(t.Rows) < 2 {
				continue
			}
			cands := rng.Perm(len(t.Rows))
			if len(cands) > 300 {
				cands = cands[:300]
			}
			type scored struct{ r, s int }
			var best []scored
			for _, ri := range cands {
				if _, ok := g.sel[rowRef{e.t, ri}]; ok {
					continue
				}
				s := 0
				for ci, v := range t.Rows[ri] {
					if !slices.Contains(w.pk[e.t], ci) && !w.json[e.t][ci] && bytes.Equal(v, t.Rows[e.r][ci]) {
						s++
					}
				}
				best = append(best, scored{ri, s})
			}
			sort.SliceStable(best, func(i, j int) bool { return best[i].s > best[j].s })
			for i := 0; i < distractors && i < len(best); i++ {
				d := rowRef{e.t, best[i].r}
				g.add(d, 3) // the near miss alone: what it names need not resolve

			}
		}
	}
	base, err := g.version(ctx, st, 2)
	if err != nil {
		return nil, gs, err
	}
	full, err := g.version(ctx, st, 3)
	if err != nil {
		return nil, gs, err
	}
	if full.Hash() != base.Hash() {
		want, err := in.rerun(base)
		if err != nil {
			return nil, gs, err
		}
		got, err := in.rerun(full)
		if err != nil {
			return nil, gs, err
		}
		gs.UniquenessChecks += len(want)
		failed := 0
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				failed++
			}
		}
		gs.UniquenessFailed += failed
		if failed > 0 {
			// Some identifying query now resolves differently: drop the
			// context round.
			for ref, round := range g.sel {
				if round == 3 {
					delete(g.sel, ref)
					gs.DistractorsDropped++
				}
			}
			full = base
		}
	}
	for _, round := range g.sel {
		switch round {
		case 1:
			gs.EntityRows++
		case 2:
			gs.RelationRows++
		case 3:
			gs.ContextRows++
		}
	}
	return full, gs, nil
}
