package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
)

// Message is one message of the canonical conversation (OpenAI
// chat-completions shape: role, content, tool_calls).
type Message = model.Message

// Error classes of Verify. Every error Verify returns wraps exactly one of
// them; none of them is a score.
var (
	// ErrEvidence: a check could not be evaluated because the evidence
	// failed (a missing version, a failing query, a dead State service).
	// The caller treats it as an infrastructure failure.
	ErrEvidence = errors.New("verifier evidence failed")
	// ErrBadTask: the task cannot be verified as written (nil task, an
	// unknown check kind, an Expect or Arguments that is not JSON).
	ErrBadTask = errors.New("task cannot be verified")
	// ErrJudge: the rubric judge failed (model error, unparsable answer).
	ErrJudge = errors.New("rubric judge failed")
)

// Input is what Verify scores: the task, the session ledger (every tool
// call in ledger order), the canonical conversation and an optional rubric
// judge.
type Input struct {
	Task     *task.Task
	Ledger   []LedgerCall
	Messages []Message
	// Judge scores the rubric items; nil skips the rubric.
	Judge Judge
}

// Verify scores one episode: K = len(Task.Atomic)+1 checkpoints, atomic
// tasks in task order then Overall (Task.Checks). Checkpoint k scores
// r_k = 1 when every check of k passes, else 0 (a checkpoint without checks
// scores 1), and Result.Score is R = (1/K) Σ r_k (WEFT). Check semantics
// are those of core/task (see the Check* constants); Missing entries of a
// failed check say what was looked for:
//
//   - changed_rows: "table[key].column=value" (value as JSON) for every
//     column value the reference replay set in atomic task k's step and the
//     final state lacks, "table[key] deleted" for a row the step removed
//     that is still there; in the step diff's order (tables by name, then
//     added rows, removed rows, changed rows, each in key order); then the
//     workspace entries the step changed that the final state lacks, in
//     path order: "file PATH sha256:HEX" (its content), "directory PATH",
//     "file PATH deleted". With Check.Overwritten "last" the values a later
//     step changes again (even back) are not checked here but by the last
//     step that changes them;
//   - sql: the expected rows as JSON;
//   - required_call: "tool(arguments)";
//   - forbidden_call: "not tool(arguments)" with the offending call's
//     arguments;
//   - communicate: the text;
//   - state_equal / unchanged: the two hashes.
//
// When in.Judge is set and the task or its atomic tasks have rubric items,
// Result.Rubric holds one score per item (task items first, then atomic
// items in task order) and Result.RubricScore their weighted mean
// Σ w_i s_i / Σ w_i (weight 0 counts as 1); the rubric never enters R.
//
// Errors wrap ErrBadTask, ErrEvidence or ErrJudge; a check that cannot be
// evaluated is an error, never a 0.
func Verify(ctx context.Context, in Input, ev Evidence) (*Result, error) {
	t := in.Task
	if t == nil {
		return nil, fmt.Errorf("%w: no task", ErrBadTask)
	}
	v := &verifier{in: in, ev: ev, task: t, diffs: map[[2]string]*state.Changes{}}
	res := &Result{}
	for k := range t.Atomic {
		cp, err := v.checkpoint(ctx, t.Atomic[k].ID, k+1, t.Atomic[k].Checks)
		if err != nil {
			return nil, err
		}
		res.Checkpoints = append(res.Checkpoints, cp)
	}
	cp, err := v.checkpoint(ctx, Overall, 0, t.Checks)
	if err != nil {
		return nil, err
	}
	res.Checkpoints = append(res.Checkpoints, cp)
	sum := 0.0
	for _, c := range res.Checkpoints {
		sum += c.Score
	}
	res.Score = sum / float64(len(res.Checkpoints))
	if in.Judge != nil {
		if err := scoreRubric(ctx, in, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

type verifier struct {
	in    Input
	ev    Evidence
	task  *task.Task
	diffs map[[2]string]*state.Changes
	// hashes caches Evidence.Hash by version name.
	hashes map[string]string
}

// checkpoint evaluates checks; k is the 1-based atomic index (0 = overall).
func (v *verifier) checkpoint(ctx context.Context, name string, k int, checks []task.Check) (Checkpoint, error) {
	cp := Checkpoint{Name: name, Score: 1, Checks: []CheckResult{}}
	for i, c := range checks {
		r, err := v.check(ctx, k, c)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("checkpoint %s, check %d (%s): %w", name, i, c.Kind, err)
		}
		if !r.Passed {
			cp.Score = 0
		}
		cp.Checks = append(cp.Checks, r)
	}
	return cp, nil
}

func (v *verifier) check(ctx context.Context, k int, c task.Check) (CheckResult, error) {
	switch c.Kind {
	case task.CheckStateEqual:
		return v.hashEqual(ctx, c.Kind, Final, Reference)
	case task.CheckUnchanged:
		return v.hashEqual(ctx, c.Kind, Final, Initial)
	case task.CheckChangedRows:
		if k == 0 {
			return CheckResult{}, fmt.Errorf("%w: changed_rows belongs to an atomic task, not the overall checks", ErrBadTask)
		}
		return v.changedRows(ctx, k, c)
	case task.CheckSQL:
		return v.sqlCheck(ctx, c)
	case task.CheckRequiredCall:
		return requiredCall(v.in.Ledger, c)
	case task.CheckForbiddenCall:
		return forbiddenCall(v.in.Ledger, c)
	case task.CheckCommunicate:
		return communicate(v.in.Messages, c), nil
	case task.CheckFileEqual, task.CheckFileContains, task.CheckFileAbsent:
		return v.fileCheck(ctx, c)
	}
	return CheckResult{}, fmt.Errorf("%w: unknown check kind %q", ErrBadTask, c.Kind)
}

func (v *verifier) hash(ctx context.Context, version string) (string, error) {
	if h, ok := v.hashes[version]; ok {
		return h, nil
	}
	h, err := v.ev.Hash(ctx, version)
	if err != nil {
		return "", fmt.Errorf("%w: hash of %s: %w", ErrEvidence, version, err)
	}
	if v.hashes == nil {
		v.hashes = map[string]string{}
	}
	v.hashes[version] = h
	return h, nil
}

func (v *verifier) diff(ctx context.Context, from, to string) (*state.Changes, error) {
	key := [2]string{from, to}
	if d, ok := v.diffs[key]; ok {
		return d, nil
	}
	d, err := v.ev.Diff(ctx, from, to)
	if err != nil {
		return nil, fmt.Errorf("%w: diff %s -> %s: %w", ErrEvidence, from, to, err)
	}
	v.diffs[key] = d
	return d, nil
}

func (v *verifier) hashEqual(ctx context.Context, kind, a, b string) (CheckResult, error) {
	ha, err := v.hash(ctx, a)
	if err != nil {
		return CheckResult{}, err
	}
	hb, err := v.hash(ctx, b)
	if err != nil {
		return CheckResult{}, err
	}
	r := CheckResult{Kind: kind, Passed: ha == hb}
	if r.Passed {
		r.Evidence = fmt.Sprintf("%s and %s states have hash %s", a, b, ha)
	} else {
		r.Evidence = fmt.Sprintf("%s hash %s differs from %s hash %s", a, ha, b, hb)
		r.Missing = []string{b + "=" + hb}
	}
	return r, nil
}

// rowKey identifies a row of a table: lower-case table name and the key's
// JSON.
type rowKey struct{ table, key string }

// touched is the set of (row, column) a diff changes; column "" means the
// whole row (added or removed).
type touched map[rowKey]map[string]any

func (t touched) add(rk rowKey, col string, val any) {
	m := t[rk]
	if m == nil {
		m = map[string]any{}
		t[rk] = m
	}
	m[col] = val
}

// has reports whether the diff touched column col of row rk (or the whole
// row) and the value it left there (deletedMark for a removed row).
func (t touched) has(rk rowKey, col string) (any, bool) {
	m := t[rk]
	if m == nil {
		return nil, false
	}
	if v, ok := m[col]; ok {
		return v, true
	}
	v, ok := m[""]
	return v, ok
}

type deleted struct{}

var deletedMark = deleted{}

func touchedBy(d *state.Changes) touched {
	t := touched{}
	for _, td := range d.Tables {
		tn := strings.ToLower(td.Table)
		for _, r := range td.Added {
			rk := rowKey{tn, jsonText(r.Key)}
			t.add(rk, "", r.Values)
			for i, c := range td.Columns {
				if i < len(r.Values) {
					t.add(rk, c, r.Values[i])
				}
			}
		}
		for _, r := range td.Removed {
			rk := rowKey{tn, jsonText(r.Key)}
			if _, readded := t[rk]; !readded {
				t.add(rk, "", deletedMark)
			}
		}
		for _, rc := range td.Changed {
			rk := rowKey{tn, jsonText(rc.Key)}
			for _, cc := range rc.Columns {
				t.add(rk, cc.Column, cc.New)
			}
		}
	}
	for _, fc := range d.Files {
		t.add(rowKey{fileTable, fc.Path}, "", fileValue(fc))
	}
	return t
}

// fileTable is the rowKey table of workspace entries (key: the path), a
// name no SQL table has.
const fileTable = "\x00files"

type dirEntry struct{}

// fileValue is what a file change leaves at its path: deletedMark, a
// directory, or the file's content as "sha256:HEX".
func fileValue(fc state.FileChange) any {
	switch {
	case fc.Change == state.FileRemoved:
		return deletedMark
	case fc.NewSHA256 == "":
		return dirEntry{}
	}
	return "sha256:" + fc.NewSHA256
}

// expectation is one thing atomic task k's step did to the reference state.
type expectation struct {
	table, key string // display forms
	rk         rowKey
	column     string // "" for a removed row
	value      any
}

func (e expectation) String() string {
	if e.rk.table == fileTable {
		switch e.value {
		case deletedMark:
			return "file " + e.key + " deleted"
		case dirEntry{}:
			return "directory " + e.key
		}
		return fmt.Sprintf("file %s %s", e.key, e.value)
	}
	if e.column == "" {
		return fmt.Sprintf("%s[%s] deleted", e.table, e.key)
	}
	return fmt.Sprintf("%s[%s].%s=%s", e.table, e.key, e.column, jsonText(e.value))
}

func (v *verifier) changedRows(ctx context.Context, k int, c task.Check) (CheckResult, error) {
	step, err := v.diff(ctx, ReferenceAfter(k-1), ReferenceAfter(k))
	if err != nil {
		return CheckResult{}, err
	}
	var exps []expectation
	for _, td := range step.Tables {
		tn := strings.ToLower(td.Table)
		for _, r := range td.Added {
			kd := keyText(r.Key)
			for i, c := range td.Columns {
				if i < len(r.Values) {
					exps = append(exps, expectation{td.Table, kd, rowKey{tn, jsonText(r.Key)}, c, r.Values[i]})
				}
			}
		}
		for _, r := range td.Removed {
			exps = append(exps, expectation{td.Table, keyText(r.Key), rowKey{tn, jsonText(r.Key)}, "", deletedMark})
		}
		for _, rc := range td.Changed {
			for _, cc := range rc.Columns {
				exps = append(exps, expectation{td.Table, keyText(rc.Key), rowKey{tn, jsonText(rc.Key)}, cc.Column, cc.New})
			}
		}
	}
	for _, fc := range step.Files {
		exps = append(exps, expectation{"", fc.Path, rowKey{fileTable, fc.Path}, "", fileValue(fc)})
	}
	r := CheckResult{Kind: task.CheckChangedRows}
	if len(exps) == 0 {
		r.Passed = true
		r.Evidence = fmt.Sprintf("the reference step of atomic task %d changes no rows", k)
		return r, nil
	}
	var later, vsStep, vsRef touched
	last := c.Overwritten == task.OverwrittenLast
	if k < len(v.task.Atomic) && !last {
		d, err := v.diff(ctx, ReferenceAfter(k), Reference)
		if err != nil {
			return CheckResult{}, err
		}
		later = touchedBy(d)
	}
	if last {
		// What any later step changes, even back to this step's value.
		later = touched{}
		for m := k + 1; m <= len(v.task.Atomic); m++ {
			d, err := v.diff(ctx, ReferenceAfter(m-1), ReferenceAfter(m))
			if err != nil {
				return CheckResult{}, err
			}
			for rk, cols := range touchedBy(d) {
				for col, val := range cols {
					later.add(rk, col, val)
				}
			}
		}
	}
	laterCount, checked := 0, 0
	for _, e := range exps {
		against := ReferenceAfter(k)
		if _, ok := later.has(e.rk, e.column); ok && last {
			// Left to the last atomic task that changes it.
			laterCount++
			continue
		}
		checked++
		if nv, ok := later.has(e.rk, e.column); ok {
			// A later atomic task changes it again: the final state must
			// hold the reference's final value.
			against = Reference
			e.value = nv
			if nv == deletedMark {
				e.column = ""
			}
			laterCount++
		}
		var dv touched
		if against == Reference {
			if vsRef == nil {
				d, err := v.diff(ctx, Reference, Final)
				if err != nil {
					return CheckResult{}, err
				}
				vsRef = touchedBy(d)
			}
			dv = vsRef
		} else {
			if vsStep == nil {
				d, err := v.diff(ctx, ReferenceAfter(k), Final)
				if err != nil {
					return CheckResult{}, err
				}
				vsStep = touchedBy(d)
			}
			dv = vsStep
		}
		if _, differs := dv.has(e.rk, e.column); differs {
			r.Missing = append(r.Missing, e.String())
		}
	}
	r.Passed = len(r.Missing) == 0
	if last {
		r.Evidence = fmt.Sprintf("%d of %d values the reference step of atomic task %d sets hold in the final state (%d left to a later task that changes them again)",
			checked-len(r.Missing), checked, k, laterCount)
		return r, nil
	}
	r.Evidence = fmt.Sprintf("%d of %d values the reference step of atomic task %d sets hold in the final state (%d checked against the reference's final state because a later task changes them)",
		len(exps)-len(r.Missing), len(exps), k, laterCount)
	return r, nil
}

func (v *verifier) sqlCheck(ctx context.Context, c task.Check) (CheckResult, error) {
	var want any
	if err := decodeJSON(c.Expect, &want); err != nil {
		return CheckResult{}, fmt.Errorf("%w: sql check Expect is not JSON: %w", ErrBadTask, err)
	}
	if _, ok := want.([]any); !ok && want != nil {
		return CheckResult{}, fmt.Errorf("%w: sql check Expect is not a JSON array of rows", ErrBadTask)
	}
	_, rows, err := v.ev.Query(ctx, Final, c.SQL)
	if err != nil {
		return CheckResult{}, fmt.Errorf("%w: query on %s: %w", ErrEvidence, Final, err)
	}
	if rows == nil {
		rows = [][]any{}
	}
	raw, err := json.Marshal(rows)
	if err != nil {
		return CheckResult{}, fmt.Errorf("%w: query rows are not JSON: %w", ErrEvidence, err)
	}
	var got any
	if err := decodeJSON(raw, &got); err != nil {
		return CheckResult{}, fmt.Errorf("%w: query rows are not JSON: %w", ErrEvidence, err)
	}
	if want == nil {
		want = []any{}
	}
	r := CheckResult{Kind: task.CheckSQL, Passed: jsonEqual(got, want)}
	r.Evidence = fmt.Sprintf("%s returned %s, expected %s", c.SQL, jsonText(got), jsonText(want))
	if !r.Passed {
		r.Missing = []string{jsonText(want)}
	}
	return r, nil
}

// argsMatch reports whether call arguments got agree with want on the keys
// compare (nil = every key of want). A nil want matches any call.
func argsMatch(want map[string]any, compare []string, got map[string]any) bool {
	if want == nil {
		return true
	}
	keys := compare
	if keys == nil {
		for k := range want {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		wv, wok := want[k]
		gv, gok := got[k]
		if wok != gok || !jsonEqual(wv, gv) {
			return false
		}
	}
	return true
}

func checkArgs(c task.Check) (map[string]any, error) {
	if len(c.Arguments) == 0 || string(c.Arguments) == "null" {
		return nil, nil
	}
	var want map[string]any
	if err := decodeJSON(c.Arguments, &want); err != nil {
		return nil, fmt.Errorf("%w: %s check Arguments is not a JSON object: %w", ErrBadTask, c.Kind, err)
	}
	return want, nil
}

func callArgs(lc LedgerCall) map[string]any {
	var got map[string]any
	if err := decodeJSON(lc.Arguments, &got); err != nil {
		return nil
	}
	if got == nil {
		got = map[string]any{}
	}
	return got
}

func callText(tool string, args json.RawMessage) string {
	if len(args) == 0 {
		return tool + "()"
	}
	var v any
	if decodeJSON(args, &v) == nil {
		return tool + "(" + jsonText(v) + ")"
	}
	return tool + "(" + string(args) + ")"
}

func requiredCall(ledger []LedgerCall, c task.Check) (CheckResult, error) {
	want, err := checkArgs(c)
	if err != nil {
		return CheckResult{}, err
	}
	r := CheckResult{Kind: task.CheckRequiredCall}
	failed := 0
	for _, lc := range ledger {
		if lc.Tool != c.Tool {
			continue
		}
		got := callArgs(lc)
		if got == nil || !argsMatch(want, c.Compare, got) {
			continue
		}
		if lc.IsError || lc.ErrorKind != "" {
			failed++
			continue
		}
		r.Passed = true
		r.Evidence = fmt.Sprintf("ledger call %d is %s", lc.Index, callText(lc.Tool, lc.Arguments))
		return r, nil
	}
	r.Evidence = fmt.Sprintf("no successful matching call of %s in %d ledger calls (%d matching calls failed)", c.Tool, len(ledger), failed)
	r.Missing = []string{callText(c.Tool, c.Arguments)}
	return r, nil
}

func forbiddenCall(ledger []LedgerCall, c task.Check) (CheckResult, error) {
	want, err := checkArgs(c)
	if err != nil {
		return CheckResult{}, err
	}
	r := CheckResult{Kind: task.CheckForbiddenCall, Passed: true}
	for _, lc := range ledger {
		if lc.Tool != c.Tool {
			continue
		}
		got := callArgs(lc)
		if want != nil && (got == nil || !argsMatch(want, c.Compare, got)) {
			continue
		}
		r.Passed = false
		r.Evidence = fmt.Sprintf("ledger call %d is the forbidden %s", lc.Index, callText(lc.Tool, lc.Arguments))
		r.Missing = []string{"not " + callText(lc.Tool, lc.Arguments)}
		return r, nil
	}
	r.Evidence = fmt.Sprintf("no call of %s in %d ledger calls", callText(c.Tool, c.Arguments), len(ledger))
	return r, nil
}

// normText lower-cases s and drops commas, so that "1,000" matches "1000"
// (tau2's communicate_info check drops the commas of the message; here both
// sides lose them).
func normText(s string) string { return strings.ReplaceAll(strings.ToLower(s), ",", "") }

// communicate looks for c.Text in the content of every assistant message,
// those that also carry tool calls included: tau2's communicate_info check
// reads every assistant message's content, and a model may tell the user
// something in the same message that makes a call.
func communicate(msgs []Message, c task.Check) CheckResult {
	r := CheckResult{Kind: task.CheckCommunicate}
	want := normText(c.Text)
	n := 0
	for i, m := range msgs {
		if m.Role != model.RoleAssistant || m.Content == "" {
			continue
		}
		n++
		if strings.Contains(normText(m.Content), want) {
			r.Passed = true
			r.Evidence = fmt.Sprintf("message %d tells the user %q", i, c.Text)
			return r
		}
	}
	r.Evidence = fmt.Sprintf("none of %d assistant messages with text says %q", n, c.Text)
	r.Missing = []string{c.Text}
	return r
}

func decodeJSON(raw []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// jsonText is v's compact JSON (map keys sorted).
func jsonText(v any) string {
	if v == deletedMark {
		return "deleted"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// keyText renders a primary key for Missing entries: string values bare,
// others as JSON, several columns joined with ",".
func keyText(key []any) string {
	parts := make([]string, len(key))
	for i, k := range key {
		if s, ok := k.(string); ok {
			parts[i] = s
		} else {
			parts[i] = jsonText(k)
		}
	}
	return strings.Join(parts, ",")
}

// jsonEqual compares JSON values; numbers compare by value (12 = 12.0),
// and a number equals a string holding the same number (decimals are
// exported as strings).
func jsonEqual(a, b any) bool {
	if x, ok := numberOf(a); ok {
		y, ok := numberOf(b)
		if !ok {
			y, ok = numericString(b)
		}
		return ok && x == y
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case string:
		if y, ok := numberOf(b); ok {
			x, ok := numericString(x)
			return ok && x == y
		}
		y, ok := b.(string)
		return ok && x == y
	}
	return a == b
}

// numberOf returns the numeric value of a JSON number (json.Number or a Go
// number); a numeric string counts only when compared against a number.
func numberOf(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func numericString(v any) (float64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

// fileCheck evaluates file_equal, file_contains and file_absent on the
// final state's workspace files.
func (v *verifier) fileCheck(ctx context.Context, c task.Check) (CheckResult, error) {
	fe, ok := v.ev.(FileEvidence)
	if !ok {
		return CheckResult{}, fmt.Errorf("%w: %s needs evidence that reads workspace files (this Evidence has none)", ErrEvidence, c.Kind)
	}
	r := CheckResult{Kind: c.Kind}
	if c.Kind == task.CheckFileAbsent {
		found, err := fe.Exists(ctx, Final, c.Path)
		if err != nil {
			return CheckResult{}, fmt.Errorf("%w: file %s of %s: %w", ErrEvidence, c.Path, Final, err)
		}
		r.Passed = !found
		if r.Passed {
			r.Evidence = fmt.Sprintf("%s has no entry %s", Final, c.Path)
		} else {
			r.Evidence = fmt.Sprintf("%s still has %s", Final, c.Path)
			r.Missing = []string{"absent " + c.Path}
		}
		return r, nil
	}
	data, found, err := fe.ReadFile(ctx, Final, c.Path)
	if err != nil {
		return CheckResult{}, fmt.Errorf("%w: file %s of %s: %w", ErrEvidence, c.Path, Final, err)
	}
	want := "file " + c.Path + " = " + strconv.Quote(c.Text)
	if c.Kind == task.CheckFileContains {
		want = "file " + c.Path + " contains " + strconv.Quote(c.Text)
	}
	switch {
	case !found:
		r.Evidence = fmt.Sprintf("%s has no file %s", Final, c.Path)
	case c.Kind == task.CheckFileEqual:
		r.Passed = string(data) == c.Text
		if r.Passed {
			r.Evidence = fmt.Sprintf("%s of %s is exactly the expected %d bytes", c.Path, Final, len(data))
		} else {
			r.Evidence = fmt.Sprintf("%s of %s is %s, not %s", c.Path, Final, excerptText(data), strconv.Quote(c.Text))
		}
	default:
		r.Passed = strings.Contains(string(data), c.Text)
		if r.Passed {
			r.Evidence = fmt.Sprintf("%s of %s contains %s", c.Path, Final, strconv.Quote(c.Text))
		} else {
			r.Evidence = fmt.Sprintf("%s of %s (%s) does not contain %s", c.Path, Final, excerptText(data), strconv.Quote(c.Text))
		}
	}
	if !r.Passed {
		r.Missing = []string{want}
	}
	return r, nil
}

func excerptText(b []byte) string {
	if len(b) > 200 {
		return strconv.Quote(string(b[:200])) + "..."
	}
	return strconv.Quote(string(b))
}
