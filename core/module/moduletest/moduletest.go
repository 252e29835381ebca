package moduletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
)

// File is a cases file (format: docs/module-test.md; decode it with Read).
type File struct {
	Source string `json:"source,omitempty"`
	Cases  []Case `json:"cases"`
}

// Case is one recorded call sequence, run from a fresh seed state.
type Case struct {
	ID           string                                `json:"id"`
	Calls        []Call                                `json:"calls"`
	FinalChanges map[string]map[string]json.RawMessage `json:"final_changes"`
}

// Call is one recorded tool call and what the reference did.
type Call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Error     bool            `json:"error"`
	Output    json.RawMessage `json:"output"`
}

// Mismatch is one difference between the module and the reference.
type Mismatch struct {
	Case string `json:"case"`
	Call int    `json:"call"` // index in the case's calls; -1 for the final state
	Tool string `json:"tool,omitempty"`
	What string `json:"what"` // "error", "output", "infrastructure", "final_changes"
	Want string `json:"want"`
	Got  string `json:"got"`
}

func (m Mismatch) String() string {
	where := fmt.Sprintf("call %d (%s)", m.Call, m.Tool)
	if m.Call < 0 {
		where = "final state"
	}
	return fmt.Sprintf("%s: %s: %s differs\n    want: %s\n    got:  %s", m.Case, where, m.What, m.Want, m.Got)
}

// Report is the outcome of a run: a case passes when it has no mismatch.
type Report struct {
	Passed     int        `json:"passed"`
	Failed     int        `json:"failed"`
	Calls      int        `json:"calls"`
	Mismatches []Mismatch `json:"mismatches"`
}

// Summary is the line "N passed, M failed".
func (r *Report) Summary() string { return fmt.Sprintf("%d passed, %d failed", r.Passed, r.Failed) }

// Run replays every case against mod, each from a fresh fork of seed, and
// compares. A case's session seed is derived from its id, so runs are
// reproducible. Infrastructure errors (a trap, a deadline, invalid
// arguments) count as mismatches of the call. The error return is for
// problems of the harness itself (the export hook failing on the seed).
//
// Cases run concurrently on GOMAXPROCS workers (each on its own fork; the
// module's instance pool is shared); the report lists them in case order.
// progress, when not nil, is called after each case with the number of cases
// done and the total, never concurrently.
func Run(ctx context.Context, mod *module.Module, seed *state.Version, cases []Case, progress func(done, total int)) (*Report, error) {
	store := seed.Store()
	var base snapshot
	if mod.Manifest().Export {
		raw, err := export(ctx, mod, store.Fork(seed), 0)
		if err != nil {
			return nil, fmt.Errorf("moduletest: export hook on the seed state: %w", err)
		}
		base = snapshotOf(raw)
	}
	// Cases are independent (each forks the seed): run them on GOMAXPROCS
	// workers, then report in case order.
	results := make([][]Mismatch, len(cases))
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(len(cases), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = runCase(ctx, mod, store, seed, base, cases[i])
				mu.Lock()
				done++
				if progress != nil {
					progress(done, len(cases))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	rep := &Report{Mismatches: []Mismatch{}}
	for i, c := range cases {
		rep.Calls += len(c.Calls)
		if len(results[i]) == 0 {
			rep.Passed++
		} else {
			rep.Failed++
			rep.Mismatches = append(rep.Mismatches, results[i]...)
		}
	}
	return rep, nil
}

func caseSeed(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

func runCase(ctx context.Context, mod *module.Module, store *state.Store, seed *state.Version, base snapshot, c Case) []Mismatch {
	var ms []Mismatch
	sess := &module.Session{Workspace: store.Fork(seed), Seed: caseSeed(c.ID)}
	for i, call := range c.Calls {
		args := call.Arguments
		if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
			args = json.RawMessage("{}")
		}
		res, err := mod.Call(ctx, sess, call.Name, args)
		if err != nil && (errors.Is(err, module.ErrInvalidArguments) || errors.Is(err, module.ErrUnknownTool)) {
			// The caller's mistake, refused before the module ran: a tool
			// error as far as the reference is concerned.
			res, err = module.ErrorResult(err.Error()), nil
		}
		if err != nil {
			ms = append(ms, Mismatch{Case: c.ID, Call: i, Tool: call.Name, What: "infrastructure", Want: classify(call.Error), Got: err.Error()})
			continue
		}
		if res.IsError != call.Error {
			ms = append(ms, Mismatch{Case: c.ID, Call: i, Tool: call.Name, What: "error", Want: classify(call.Error), Got: classify(res.IsError) + ": " + firstText(res)})
			continue
		}
		if call.Error {
			continue
		}
		got := outputValue(firstText(res))
		want, err := decode(call.Output)
		if err != nil {
			ms = append(ms, Mismatch{Case: c.ID, Call: i, Tool: call.Name, What: "output", Want: string(call.Output), Got: "unreadable expected output: " + err.Error()})
			continue
		}
		if !Equal(want, got) {
			ms = append(ms, Mismatch{Case: c.ID, Call: i, Tool: call.Name, What: "output", Want: compact(call.Output), Got: firstText(res)})
		}
	}
	if base == nil {
		return ms
	}
	// A module is deterministic in its state, so an unchanged state exports
	// as the seed did: skip the (whole-state) export hook call.
	if sess.Workspace.Hash() == seed.Hash() {
		return append(ms, compareFinal(c, base, base)...)
	}
	var final snapshot
	if mod.Manifest().ExportChanged {
		// Only the records the changed rows belong to, laid over the
		// seed's export: a few keyed reads instead of the whole state.
		part, err := exportChanged(ctx, mod, sess.Workspace, seed, sess.Seq()+1)
		if err != nil {
			return append(ms, Mismatch{Case: c.ID, Call: -1, What: "infrastructure", Want: "export of changed records", Got: err.Error()})
		}
		final = base.overlay(part)
	} else {
		raw, err := export(ctx, mod, sess.Workspace, sess.Seq()+1)
		if err != nil {
			return append(ms, Mismatch{Case: c.ID, Call: -1, What: "infrastructure", Want: "export hook result", Got: err.Error()})
		}
		final = snapshotOf(raw)
	}
	return append(ms, compareFinal(c, base, final)...)
}

func classify(isErr bool) string {
	if isErr {
		return "tool error"
	}
	return "success"
}

func firstText(r *module.Result) string {
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// outputValue parses a tool's text as JSON, or keeps it as a string.
func outputValue(text string) any {
	v, err := decode([]byte(text))
	if err != nil {
		return text
	}
	return v
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// Equal compares two decoded JSON values (numbers as json.Number): objects
// by key, arrays in order, numbers by value with a 1e-9 relative tolerance.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, err1 := x.Float64()
		fy, err2 := y.Float64()
		if err1 != nil || err2 != nil {
			return false
		}
		return math.Abs(fx-fy) <= 1e-9*math.Max(1, math.Max(math.Abs(fx), math.Abs(fy)))
	default:
		return a == b
	}
}

// export calls the export hook and splits its object into collections.
func export(ctx context.Context, mod *module.Module, ws *state.Workspace, seed uint64) (map[string]json.RawMessage, error) {
	res, err := mod.Call(ctx, &module.Session{Workspace: ws, Seed: seed}, module.ExportTool, nil)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("export hook returned a tool error: %s", firstText(res))
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(firstText(res)), &out); err != nil {
		return nil, fmt.Errorf("export hook output is not a JSON object: %w", err)
	}
	return out, nil
}

// snapshot is an export split into collections: an object of records
// keyed by id as its records' raw JSON (recs), any other value as is (raw,
// recs nil).
type snapshot map[string]collection

type collection struct {
	recs map[string]json.RawMessage
	raw  json.RawMessage
}

func snapshotOf(raw map[string]json.RawMessage) snapshot {
	s := make(snapshot, len(raw))
	for k, v := range raw {
		if recs, err := records(v); err == nil {
			s[k] = collection{recs: recs}
		} else {
			s[k] = collection{raw: v}
		}
	}
	return s
}

// overlay is s with the records of part (an export of changed records:
// collection -> key -> record, null for a record that no longer exists)
// put in; a collection s does not hold as records is replaced whole.
func (s snapshot) overlay(part map[string]map[string]json.RawMessage) snapshot {
	out := make(snapshot, len(s)+len(part))
	for k, v := range s {
		out[k] = v
	}
	for coll, recs := range part {
		old := s[coll].recs
		merged := make(map[string]json.RawMessage, len(old)+len(recs))
		for k, v := range old {
			merged[k] = v
		}
		for k, v := range recs {
			if t := bytes.TrimSpace(v); len(t) == 0 || string(t) == "null" {
				delete(merged, k)
			} else {
				merged[k] = v
			}
		}
		out[coll] = collection{recs: merged}
	}
	return out
}

// ChangedKeys lists the rows of changes (added, removed or changed) by
// table as abi.ExportChangedArgs wants them: each row's primary key as
// {column: value}, or all its columns for a table without one.
func ChangedKeys(changes *state.Changes) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, td := range changes.Tables {
		cols := td.PrimaryKey
		keyOf := func(key, values []any) map[string]any {
			m := map[string]any{}
			if len(cols) == 0 {
				for i, c := range td.Columns {
					if i < len(values) {
						m[c] = values[i]
					}
				}
				return m
			}
			for i, c := range cols {
				if i < len(key) {
					m[c] = key[i]
				}
			}
			return m
		}
		var rows []map[string]any
		for _, r := range td.Added {
			rows = append(rows, keyOf(r.Key, r.Values))
		}
		for _, r := range td.Removed {
			rows = append(rows, keyOf(r.Key, r.Values))
		}
		for _, r := range td.Changed {
			rows = append(rows, keyOf(r.Key, nil))
		}
		if len(rows) > 0 {
			out[td.Table] = rows
		}
	}
	return out
}

// exportChanged asks the module for the records of its export the rows
// changed from seed to ws belong to (module.ExportChangedTool).
func exportChanged(ctx context.Context, mod *module.Module, ws *state.Workspace, seed *state.Version, sessSeed uint64) (map[string]map[string]json.RawMessage, error) {
	args, err := json.Marshal(abi.ExportChangedArgs{Changed: ChangedKeys(ws.DiffWorkspace(seed))})
	if err != nil {
		return nil, err
	}
	res, err := mod.Call(ctx, &module.Session{Workspace: ws, Seed: sessSeed}, module.ExportChangedTool, args)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("export of changed records returned a tool error: %s", firstText(res))
	}
	var out map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(firstText(res)), &out); err != nil {
		return nil, fmt.Errorf("export of changed records is not an object of collections of records: %w", err)
	}
	return out, nil
}

// compareFinal checks that the records changed from base to final are
// exactly the case's final_changes.
func compareFinal(c Case, base, final snapshot) []Mismatch {
	var ms []Mismatch
	colls := map[string]bool{}
	for k := range base {
		colls[k] = true
	}
	for k := range final {
		colls[k] = true
	}
	for k := range c.FinalChanges {
		colls[k] = true
	}
	names := make([]string, 0, len(colls))
	for k := range colls {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, coll := range names {
		bc, bok := base[coll]
		fc, fok := final[coll]
		if (bok && bc.recs == nil) || (fok && fc.recs == nil) {
			// Not an object of records: it can only be checked unchanged.
			bv, _ := decode(orNull(bc.raw))
			fv, _ := decode(orNull(fc.raw))
			switch {
			case c.FinalChanges[coll] != nil:
				ms = append(ms, Mismatch{Case: c.ID, Call: -1, What: "final_changes", Want: "export hook collection " + coll + " as an object of records keyed by id", Got: describe(fv)})
			case !Equal(bv, fv):
				ms = append(ms, Mismatch{Case: c.ID, Call: -1, What: "final_changes", Want: coll + " unchanged: " + describe(bv), Got: describe(fv)})
			}
			continue
		}
		b, f := bc.recs, fc.recs
		want := c.FinalChanges[coll]
		keys := map[string]bool{}
		for k := range b {
			keys[k] = true
		}
		for k := range f {
			keys[k] = true
		}
		for k := range want {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			// The export hook's encoding is deterministic: byte-equal
			// records are unchanged without decoding them.
			changed := !bytes.Equal(b[k], f[k]) && !Equal(dropNulls(value(b[k])), dropNulls(value(f[k])))
			w, expected := want[k]
			switch {
			case changed && !expected:
				ms = append(ms, Mismatch{Case: c.ID, Call: -1, What: "final_changes", Want: fmt.Sprintf("%s[%s] unchanged", coll, k), Got: describe(value(f[k]))})
			case expected:
				wv, err := decode(w)
				if fv := value(f[k]); err != nil || !Equal(dropNulls(wv), dropNulls(fv)) {
					ms = append(ms, Mismatch{Case: c.ID, Call: -1, What: "final_changes", Want: fmt.Sprintf("%s[%s] = %s", coll, k, compact(w)), Got: describe(fv)})
				}
			}
		}
	}
	return ms
}

func orNull(b json.RawMessage) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

// records splits an export collection, an object of records keyed by id,
// into the records' raw JSON.
func records(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if len(raw) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

// value decodes a record's raw JSON (numbers as json.Number); an absent
// record is nil.
func value(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	v, err := decode(raw)
	if err != nil {
		return nil
	}
	return v
}

func describe(v any) string {
	if v == nil {
		return "absent"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return strings.TrimSpace(s)
}

// dropNulls removes object keys whose value is null, recursively.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = dropNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropNulls(e)
		}
		return out
	}
	return v
}
