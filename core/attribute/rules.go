package attribute

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// finding is what a matching rule reports: Attribution.Evidence and
// Attribution.Revise.
type finding struct {
	Evidence string
	Revise   string
}

// rule is one attribution rule. Match reports whether the rule assigns the
// failed checkpoint to Class; an error aborts Attribute.
type rule struct {
	Name  string
	Class Class
	Match func(ctx context.Context, ep *episode, tg *target) (finding, bool, error)
}

// rules are tried in order for each failed checkpoint; the first match
// wins, and a checkpoint no rule matches is the policy's. To add a rule,
// write a small function of the Match shape and insert it here at the
// priority it deserves.
var rules = []rule{
	{"module-failure", ClassEnvironment, moduleFailure},
	{"reference-failure", ClassTask, referenceFailure},
	{"check-contradicted", ClassVerifier, checkContradicted},
}

// moduleFailure (environment): the ledger has a call that failed inside its
// module (failure.Kind.InModule) of a tool the checkpoint needs: a tool of its
// atomic task's reference solution, or, for Overall, any tool. Revise names
// the module and tool of the first such call.
func moduleFailure(_ context.Context, ep *episode, tg *target) (finding, bool, error) {
	var needed map[string]bool
	if tg.atomic != nil {
		needed = map[string]bool{}
		for _, c := range tg.atomic.Reference {
			needed[c.Tool] = true
		}
	}
	var hits []verify.LedgerCall
	for _, c := range ep.in.Ledger {
		if c.ErrorKind.InModule() && (needed == nil || needed[c.Tool]) {
			hits = append(hits, c)
		}
	}
	if len(hits) == 0 {
		return finding{}, false, nil
	}
	c := hits[0]
	ev := fmt.Sprintf("ledger call #%d %s failed in module %s (%s)", c.Index, c.Tool, ep.module(c.Tool), c.ErrorKind)
	if c.Output != "" {
		ev += ": " + clip(c.Output)
	}
	if tg.atomic != nil {
		ev += fmt.Sprintf("; atomic task %s needs %s (its reference solution calls it)", tg.atomic.ID, c.Tool)
	}
	if len(hits) > 1 {
		ev += fmt.Sprintf("; %d more module failures (first at ledger call #%d)", len(hits)-1, hits[1].Index)
	}
	return finding{Evidence: ev, Revise: "module:" + ep.module(c.Tool) + "/tool:" + c.Tool}, true, nil
}

// referenceFailure (task): in the reference replay from the initial state,
// the action of the checkpoint's atomic task (for Overall, of any atomic
// task) answered with an error or failed (ErrorKind set). The action is the
// atomic task's last reference call; the reads before it may fail on
// purpose (a gold solution can look up a wrong id first), so their errors
// do not count. The task's reference or initial state is wrong, so the
// agent could not have succeeded either.
func referenceFailure(_ context.Context, ep *episode, tg *target) (finding, bool, error) {
	last := map[string]int{}
	for _, a := range ep.in.Task.Atomic {
		last[a.ID] = len(a.Reference) - 1
	}
	for _, c := range ep.in.Reference.Calls {
		if tg.atomic != nil && c.Atomic != tg.atomic.ID {
			continue
		}
		if !c.IsError && c.ErrorKind == "" {
			continue
		}
		if i, ok := last[c.Atomic]; ok && c.Index != i && c.ErrorKind == "" {
			continue
		}
		how := "answered with an error"
		if c.ErrorKind != "" {
			how = "failed (" + string(c.ErrorKind) + ")"
		}
		ev := fmt.Sprintf("the reference replay from the initial state fails: reference call %d of atomic task %s (%s) %s", c.Index, c.Atomic, c.Tool, how)
		if c.Output != "" {
			ev += ": " + clip(c.Output)
		}
		return finding{Evidence: ev, Revise: "task:" + ep.in.Task.ID + "/atomic:" + c.Atomic}, true, nil
	}
	return finding{}, false, nil
}

// checkContradicted (verifier): every failed check of the checkpoint is
// contradicted by the evidence (see contradiction). A checkpoint with one
// genuinely failed check stays with the policy. Revise names the first
// contradicted check.
func checkContradicted(ctx context.Context, ep *episode, tg *target) (finding, bool, error) {
	used := map[int]bool{}
	var evs []string
	first := ""
	for i, r := range tg.cp.Checks {
		def := checkFor(tg, i, r.Kind, used)
		if r.Passed {
			continue
		}
		ev, ok, err := contradiction(ctx, ep, tg, r, def)
		if err != nil || !ok {
			return finding{}, false, err
		}
		if first == "" {
			first = r.Kind
		}
		evs = append(evs, ev)
	}
	if first == "" {
		return finding{}, false, nil
	}
	return finding{
		Evidence: "the checks report missing what the episode did: " + strings.Join(evs, "; "),
		Revise:   "verifier:" + tg.cp.Name + "/" + first,
	}, true, nil
}

// contradiction reports whether the evidence shows what the failed check r
// (defined by def, nil when the task has no such check) says is missing:
//
//   - changed_rows, sql, state_equal: missingRowsPresent or
//     referenceEffectDone;
//   - required_call: requiredCallMade;
//   - communicate: textCommunicated;
//   - other kinds are never contradicted.
func contradiction(ctx context.Context, ep *episode, tg *target, r verify.CheckResult, def *task.Check) (string, bool, error) {
	switch r.Kind {
	case task.CheckChangedRows, task.CheckSQL, task.CheckStateEqual:
		ev, ok, err := missingRowsPresent(ctx, ep, r)
		if err != nil || ok {
			return ev, ok, err
		}
		return referenceEffectDone(ctx, ep, tg, r)
	case task.CheckRequiredCall:
		return requiredCallMade(ep, def)
	case task.CheckCommunicate:
		return textCommunicated(ep, def)
	}
	return "", false, nil
}

// missingRowsPresent: the check lists rows as Missing
// ("table[key].column=value", composite keys comma-separated) and every one
// of them is in the diff from the initial to the final state (an added row,
// or a changed column) with that value.
func missingRowsPresent(ctx context.Context, ep *episode, r verify.CheckResult) (string, bool, error) {
	if len(r.Missing) == 0 {
		return "", false, nil
	}
	d, err := ep.diff(ctx, verify.Initial, verify.Final)
	if err != nil || d == nil {
		return "", false, err
	}
	var found []string
	for _, m := range r.Missing {
		cell, ok := parseCell(m)
		if !ok {
			return "", false, nil
		}
		how, ok := cellInDiff(d, cell)
		if !ok {
			return "", false, nil
		}
		found = append(found, m+" "+how)
	}
	return fmt.Sprintf("%s check lists as missing %s, but the final state has it: %s",
		r.Kind, strings.Join(r.Missing, ", "), strings.Join(found, ", ")), true, nil
}

// referenceEffectDone: the ledger holds a successful call equal (tool and
// JSON-equal arguments) to every state-changing reference call of the
// target's atomic task (for Overall, of all of them), and the final state
// has the reference replay's changes for it: every row the reference
// added, removed or changed (ReferenceAfter(k-1) -> ReferenceAfter(k); for
// Overall Initial -> Reference) is added, removed or has the same new
// values in the diff from Initial to Final, and the final state has no
// change beyond the reference's (Reference -> Final is empty).
func referenceEffectDone(ctx context.Context, ep *episode, tg *target, r verify.CheckResult) (string, bool, error) {
	var cites []string
	for _, a := range ep.atomics(tg) {
		calls := ep.stateChanging(a)
		if tg.atomic != nil && len(calls) == 0 {
			return "", false, nil
		}
		for _, rc := range calls {
			lc, ok := findCall(ep.in.Ledger, rc.Tool, func(got json.RawMessage) bool { return jsonEqual(rc.Arguments, got) })
			if !ok {
				return "", false, nil
			}
			cites = append(cites, fmt.Sprintf("ledger call #%d %s equals the reference action of %s", lc.Index, lc.Tool, a.ID))
		}
	}
	if len(cites) == 0 {
		return "", false, nil
	}
	from, to := verify.Initial, verify.Reference
	if tg.atomic != nil {
		from, to = verify.ReferenceAfter(tg.k-1), verify.ReferenceAfter(tg.k)
	}
	ref, err := ep.diff(ctx, from, to)
	if err != nil || ref == nil {
		return "", false, err
	}
	fin, err := ep.diff(ctx, verify.Initial, verify.Final)
	if err != nil || fin == nil {
		return "", false, err
	}
	rows, ok := changesIn(ref, fin)
	if !ok {
		return "", false, nil
	}
	// The reference's effect alone is not enough: a final state with more
	// changes than the reference (an extra write, a side effect) fails
	// state_equal and guarding checks rightly, and that is the policy's
	// doing. The check is contradicted only when the final state is the
	// reference's.
	extra, err := ep.diff(ctx, verify.Reference, verify.Final)
	if err != nil || extra == nil || !extra.Empty() {
		return "", false, err
	}
	return fmt.Sprintf("%s check failed, but %s, and the final state has the reference's %d row change(s) (%s)",
		r.Kind, strings.Join(cites, ", "), len(rows), strings.Join(rows, ", ")), true, nil
}

// requiredCallMade: the ledger holds a successful call of the check's Tool
// whose arguments match (on Compare, or all of them).
func requiredCallMade(ep *episode, def *task.Check) (string, bool, error) {
	if def == nil || def.Tool == "" {
		return "", false, nil
	}
	lc, ok := findCall(ep.in.Ledger, def.Tool, func(got json.RawMessage) bool { return argsMatch(def.Arguments, got, def.Compare) })
	if !ok {
		return "", false, nil
	}
	return fmt.Sprintf("required_call check failed, but ledger call #%d %s %s succeeded with matching arguments",
		lc.Index, lc.Tool, clip(string(lc.Arguments))), true, nil
}

// textCommunicated: the check's Text appears, case-insensitively, in an
// agent message to the user.
func textCommunicated(ep *episode, def *task.Check) (string, bool, error) {
	if def == nil || def.Text == "" {
		return "", false, nil
	}
	// As the verifier matches (tau2): case-insensitive, commas ignored.
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), ",", "") }
	want := norm(def.Text)
	for i, m := range ep.in.Messages {
		if strings.Contains(norm(m), want) {
			return fmt.Sprintf("communicate check failed, but agent message %d says %q", i, def.Text), true, nil
		}
	}
	return "", false, nil
}

// stateChanging returns the atomic task's state-changing reference calls:
// those the reference report shows changing rows, else its last call.
func (ep *episode) stateChanging(a *task.Atomic) []task.Call {
	var out []task.Call
	for _, rc := range ep.in.Reference.Calls {
		if rc.Atomic == a.ID && rc.RowsChanged > 0 && rc.Index >= 0 && rc.Index < len(a.Reference) {
			out = append(out, a.Reference[rc.Index])
		}
	}
	if len(out) == 0 && len(a.Reference) > 0 {
		out = append(out, a.Reference[len(a.Reference)-1])
	}
	return out
}

// findCall returns the first successful ledger call of tool whose
// arguments satisfy ok.
func findCall(ledger []verify.LedgerCall, tool string, ok func(json.RawMessage) bool) (verify.LedgerCall, bool) {
	for _, c := range ledger {
		if c.Tool == tool && !c.IsError && c.ErrorKind == "" && ok(c.Arguments) {
			return c, true
		}
	}
	return verify.LedgerCall{}, false
}

func decodeArgs(raw json.RawMessage) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, true
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false
	}
	if v == nil {
		return map[string]any{}, true
	}
	return v, true
}

// jsonEqual reports whether a and b are the same JSON value (empty and
// null count as {}).
func jsonEqual(a, b json.RawMessage) bool {
	x, ok1 := decodeArgs(a)
	y, ok2 := decodeArgs(b)
	return ok1 && ok2 && reflect.DeepEqual(x, y)
}

// argsMatch: got equals want on the keys of compare (nil = all: JSON
// equality).
func argsMatch(want, got json.RawMessage, compare []string) bool {
	if compare == nil {
		return jsonEqual(want, got)
	}
	w, ok1 := decodeArgs(want)
	g, ok2 := decodeArgs(got)
	wm, ok3 := w.(map[string]any)
	gm, ok4 := g.(map[string]any)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return false
	}
	for _, k := range compare {
		if !reflect.DeepEqual(wm[k], gm[k]) {
			return false
		}
	}
	return true
}

// cell is one parsed Missing entry "table[key].column=value".
type cell struct {
	table, key, column, value string
}

func parseCell(s string) (cell, bool) {
	open := strings.IndexByte(s, '[')
	end := strings.Index(s, "].")
	if open <= 0 || end < open {
		return cell{}, false
	}
	rest := s[end+2:]
	eq := strings.IndexByte(rest, '=')
	if eq <= 0 {
		return cell{}, false
	}
	return cell{table: s[:open], key: s[open+1 : end], column: rest[:eq], value: unquote(rest[eq+1:])}, true
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		var u string
		if json.Unmarshal([]byte(s), &u) == nil {
			return u
		}
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}

// formatValue renders a diff value as a Missing entry writes it.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return string(x)
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

func formatKey(key []any) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = formatValue(k)
	}
	return strings.Join(parts, ",")
}

func sameValue(want string, got any) bool {
	g := formatValue(got)
	if g == want {
		return true
	}
	if got == nil {
		return strings.EqualFold(want, "null")
	}
	// numbers written differently (5 vs 5.0, decimals as strings)
	a, err1 := strconv.ParseFloat(want, 64)
	b, err2 := strconv.ParseFloat(g, 64)
	return err1 == nil && err2 == nil && a == b
}

// cellInDiff finds c among the added rows and changed columns of d and
// says how it got there.
func cellInDiff(d *state.Changes, c cell) (string, bool) {
	for _, t := range d.Tables {
		if !strings.EqualFold(t.Table, c.table) {
			continue
		}
		for _, ch := range t.Changed {
			if formatKey(ch.Key) != c.key {
				continue
			}
			for _, cc := range ch.Columns {
				if strings.EqualFold(cc.Column, c.column) && sameValue(c.value, cc.New) {
					return "(changed from " + formatValue(cc.Old) + ")", true
				}
			}
		}
		for _, row := range t.Added {
			if formatKey(row.Key) != c.key {
				continue
			}
			for i, col := range t.Columns {
				if strings.EqualFold(col, c.column) && i < len(row.Values) && sameValue(c.value, row.Values[i]) {
					return "(added row)", true
				}
			}
		}
	}
	return "", false
}

// changesIn reports whether every change of ref is in fin (same table and
// key; removed rows removed, added rows added with the same values, changed
// columns with the same new values) and lists them.
func changesIn(ref, fin *state.Changes) ([]string, bool) {
	byTable := map[string]*state.TableDiff{}
	for i := range fin.Tables {
		byTable[strings.ToLower(fin.Tables[i].Table)] = &fin.Tables[i]
	}
	var rows []string
	for _, rt := range ref.Tables {
		ft := byTable[strings.ToLower(rt.Table)]
		if ft == nil {
			return nil, false
		}
		for _, rr := range rt.Removed {
			if !hasRow(ft.Removed, rr.Key) {
				return nil, false
			}
			rows = append(rows, rt.Table+"["+formatKey(rr.Key)+"] removed")
		}
		for _, ra := range rt.Added {
			fa, ok := findRow(ft.Added, ra.Key)
			if !ok || !reflect.DeepEqual(normalize(fa.Values), normalize(ra.Values)) {
				return nil, false
			}
			rows = append(rows, rt.Table+"["+formatKey(ra.Key)+"] added")
		}
		for _, rc := range rt.Changed {
			key := formatKey(rc.Key)
			var fc *state.RowChange
			for i := range ft.Changed {
				if formatKey(ft.Changed[i].Key) == key {
					fc = &ft.Changed[i]
					break
				}
			}
			if fc == nil {
				return nil, false
			}
			for _, col := range rc.Columns {
				ok := false
				for _, fcol := range fc.Columns {
					if fcol.Column == col.Column && formatValue(fcol.New) == formatValue(col.New) {
						ok = true
					}
				}
				if !ok {
					return nil, false
				}
				rows = append(rows, rt.Table+"["+key+"]."+col.Column+"="+formatValue(col.New))
			}
		}
	}
	return rows, true
}

func normalize(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = formatValue(v)
	}
	return out
}

func hasRow(rows []state.Row, key []any) bool {
	_, ok := findRow(rows, key)
	return ok
}

func findRow(rows []state.Row, key []any) (state.Row, bool) {
	k := formatKey(key)
	for _, r := range rows {
		if formatKey(r.Key) == k {
			return r, true
		}
	}
	return state.Row{}, false
}

// clip shortens s for evidence text.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 160 {
		return string(r[:160]) + "..."
	}
	return s
}
