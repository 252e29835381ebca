package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Error is an invalid task or task file: which task (its id; "" for faults
// of the file as a whole), which atomic task ("" when the fault is not
// inside one) and which field, as a JSON path relative to the task or atomic
// task (e.g. "after[1]", "checks[0].sql"), are at fault.
type Error struct {
	Task   string
	Atomic string
	Field  string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("task")
	if e.Task != "" {
		fmt.Fprintf(&b, " %q", e.Task)
	}
	if e.Atomic != "" {
		fmt.Fprintf(&b, ": atomic %q", e.Atomic)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Sentinel causes wrapped by *Error (match with errors.Is).
var (
	// ErrCycle: the atomic tasks' After edges form a cycle.
	ErrCycle = errors.New("the After edges form a cycle")
	// ErrUnknownCheck: a check's Kind is not one of the Check* kinds.
	ErrUnknownCheck = errors.New("unknown check kind")
	// ErrVersion: a task's Version is negative.
	ErrVersion = errors.New("version must be 0 or more")
)

// Load reads a weft task file ({"format": "weft.tasks/v1", "tasks": [...]},
// one JSON object; unknown fields and trailing data are errors), checks that
// task ids are non-empty and unique, and validates every task (see
// (*Task).Validate). Errors are *Error naming the task, atomic task and
// field. A file naming a state set ("states", see SaveSplit) loads with
// the states unresolved: LoadFile resolves them.
func Load(r io.Reader) ([]*Task, error) {
	f, err := load(r)
	if err != nil {
		return nil, err
	}
	return f.Tasks, nil
}

// LoadUnvalidated reads a weft task file as Load does (format, no unknown
// fields, no trailing data, defaults filled) but does not validate the
// tasks, so a caller can reject each invalid task on its own (weft synth
// certify: invalid_task) instead of the whole file. Null tasks are
// dropped. A file naming a state set loads with the states unresolved.
// Errors: as Load's, for the file.
func LoadUnvalidated(r io.Reader) ([]*Task, error) {
	f, err := decodeFile(r)
	if err != nil {
		return nil, err
	}
	out := f.Tasks[:0]
	for _, t := range f.Tasks {
		if t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// LoadFileUnvalidated is LoadUnvalidated on the file at path, with the
// initial states of a state set ("states") resolved as LoadFile does.
// Errors: as LoadFile's, for the file.
func LoadFileUnvalidated(path string) ([]*Task, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := decodeFile(r)
	if err == nil {
		out := f.Tasks[:0]
		for _, t := range f.Tasks {
			if t != nil {
				out = append(out, t)
			}
		}
		f.Tasks = out
		err = resolveStates(f, filepath.Dir(path))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Tasks, nil
}

// load is Load returning the file (its States unresolved).
func load(r io.Reader) (*File, error) {
	f, err := decodeFile(r)
	if err != nil {
		return nil, err
	}
	if err := validateAll(f.Tasks); err != nil {
		return nil, err
	}
	return f, nil
}

// decodeFile reads and normalizes the file without validating its tasks.
func decodeFile(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, &Error{Err: fmt.Errorf("not a weft task file: %w", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Err: errors.New("trailing data after the task file object")}
	}
	if f.Format != Format {
		return nil, &Error{Field: "format", Err: fmt.Errorf("got %q, want %q", f.Format, Format)}
	}
	for _, t := range f.Tasks {
		normalize(t)
	}
	return &f, nil
}

// normalize fills what the format lets a file leave out: reference-call
// arguments default to {} (so Save writes an object, not null).
func normalize(t *Task) {
	if t == nil {
		return
	}
	for i := range t.Atomic {
		for j := range t.Atomic[i].Reference {
			if c := &t.Atomic[i].Reference[j]; len(c.Arguments) == 0 || string(c.Arguments) == "null" {
				c.Arguments = json.RawMessage("{}")
			}
		}
	}
}

// LoadFile is Load on the file at path; errors are prefixed with the path.
func LoadFile(path string) ([]*Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	file, err := load(f)
	if err == nil {
		err = resolveStates(file, filepath.Dir(path))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return file.Tasks, nil
}

// Save validates tasks as Load does and writes them as a weft task file:
// JSON indented by two spaces, HTML characters unescaped, ending in a
// newline. The same tasks always give the same bytes, and Save(Load(b))
// gives b back for a file Save wrote. Nothing is written when a task is
// invalid.
func Save(w io.Writer, tasks []*Task) error {
	if err := validateAll(tasks); err != nil {
		return err
	}
	if tasks == nil {
		tasks = []*Task{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(File{Format: Format, Tasks: tasks}); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func validateAll(tasks []*Task) error {
	seen := make(map[string]int, len(tasks))
	for i, t := range tasks {
		if t == nil {
			return &Error{Field: fmt.Sprintf("tasks[%d]", i), Err: errors.New("null task")}
		}
		if err := t.Validate(); err != nil {
			return err
		}
		if j, dup := seen[t.ID]; dup {
			return &Error{Task: t.ID, Field: "id", Err: fmt.Errorf("tasks[%d] duplicates tasks[%d]", i, j)}
		}
		seen[t.ID] = i
	}
	return nil
}

// Validate checks a task: a non-empty ID and Brief; atomic ids non-empty
// and unique, each with a Request, every After id naming another atomic
// task of this task, the After edges acyclic (ErrCycle) and the atomic tasks
// listed in a topological order (every After id listed earlier); reference
// calls with a Tool and a JSON object (or empty) Arguments; every check's
// Kind known (ErrUnknownCheck) with its required fields (sql: SQL and an
// Expect that is a JSON array of arrays; required_call and forbidden_call:
// Tool, and Arguments a JSON object when given; communicate: Text;
// file_equal, file_contains and file_absent: a workspace file Path in
// io/fs.ValidPath form other than ".", and Text for file_contains;
// changed_rows: only in an atomic task with a non-empty Reference); rubric
// ids non-empty and unique per list, each with a Criterion and a Weight >= 0.
// The error is an *Error naming the task, the atomic task and the field.
func (t *Task) Validate() error {
	fail := func(atomic, field string, err error) error {
		return &Error{Task: t.ID, Atomic: atomic, Field: field, Err: err}
	}
	if t.ID == "" {
		return fail("", "id", errors.New("missing"))
	}
	if strings.TrimSpace(t.Brief) == "" {
		return fail("", "brief", errors.New("missing"))
	}
	if t.Version < 0 {
		return fail("", "version", fmt.Errorf("%w: got %d", ErrVersion, t.Version))
	}
	index := make(map[string]int, len(t.Atomic))
	for i, a := range t.Atomic {
		if a.ID == "" {
			return fail("", fmt.Sprintf("atomic[%d].id", i), errors.New("missing"))
		}
		if j, dup := index[a.ID]; dup {
			return fail(a.ID, "id", fmt.Errorf("atomic[%d] duplicates atomic[%d]", i, j))
		}
		index[a.ID] = i
	}
	for _, a := range t.Atomic {
		if strings.TrimSpace(a.Request) == "" {
			return fail(a.ID, "request", errors.New("missing"))
		}
		for k, dep := range a.After {
			if _, ok := index[dep]; !ok {
				return fail(a.ID, fmt.Sprintf("after[%d]", k), fmt.Errorf("unknown atomic task %q", dep))
			}
			if dep == a.ID {
				return fail(a.ID, fmt.Sprintf("after[%d]", k), fmt.Errorf("%w: %q after itself", ErrCycle, dep))
			}
		}
		for k, c := range a.Reference {
			field := fmt.Sprintf("reference[%d]", k)
			if c.Tool == "" {
				return fail(a.ID, field+".tool", errors.New("missing"))
			}
			if len(c.Arguments) > 0 && !isObject(c.Arguments) {
				return fail(a.ID, field+".arguments", errors.New("not a JSON object"))
			}
		}
		if err := validateChecks(a.Checks, true, len(a.Reference) > 0); err != nil {
			return fail(a.ID, err.field, err.err)
		}
		if err := validateRubric(a.Rubric); err != nil {
			return fail(a.ID, err.field, err.err)
		}
	}
	if len(t.Order()) != len(t.Atomic) {
		return fail("", "atomic", ErrCycle)
	}
	for i, a := range t.Atomic {
		for k, dep := range a.After {
			if j := index[dep]; j > i {
				return fail(a.ID, fmt.Sprintf("after[%d]", k),
					fmt.Errorf("%q is listed after this task (atomic[%d] > atomic[%d]): atomic tasks must be in a topological order", dep, j, i))
			}
		}
	}
	if err := validateChecks(t.Checks, false, false); err != nil {
		return fail("", err.field, err.err)
	}
	if err := validateRubric(t.Rubric); err != nil {
		return fail("", err.field, err.err)
	}
	return nil
}

type fieldErr struct {
	field string
	err   error
}

func validateChecks(checks []Check, atomic, hasReference bool) *fieldErr {
	for i, c := range checks {
		p := fmt.Sprintf("checks[%d]", i)
		bad := func(field string, err error) *fieldErr { return &fieldErr{p + field, err} }
		if c.Overwritten != "" && c.Kind != CheckChangedRows {
			return bad(".overwritten", errors.New("only a changed_rows check has one"))
		}
		switch c.Kind {
		case CheckStateEqual, CheckUnchanged:
		case CheckChangedRows:
			if !atomic {
				return bad(".kind", errors.New("changed_rows belongs to an atomic task, not the overall checks"))
			}
			if !hasReference {
				return bad(".kind", errors.New("changed_rows needs a reference solution"))
			}
			if c.Overwritten != "" && c.Overwritten != OverwrittenReference && c.Overwritten != OverwrittenLast {
				return bad(".overwritten", fmt.Errorf("%q is neither %q nor %q", c.Overwritten, OverwrittenReference, OverwrittenLast))
			}
		case CheckSQL:
			if strings.TrimSpace(c.SQL) == "" {
				return bad(".sql", errors.New("missing"))
			}
			var rows [][]json.RawMessage
			if len(c.Expect) == 0 {
				return bad(".expect", errors.New("missing"))
			}
			if err := json.Unmarshal(c.Expect, &rows); err != nil || rows == nil {
				return bad(".expect", errors.New("not a JSON array of rows (each an array of values)"))
			}
		case CheckRequiredCall, CheckForbiddenCall:
			if c.Tool == "" {
				return bad(".tool", errors.New("missing"))
			}
			if len(c.Arguments) > 0 && !isObject(c.Arguments) {
				return bad(".arguments", errors.New("not a JSON object"))
			}
		case CheckCommunicate:
			if strings.TrimSpace(c.Text) == "" {
				return bad(".text", errors.New("missing"))
			}
			if strings.TrimSpace(strings.ReplaceAll(c.Text, ",", "")) == "" {
				// Commas are ignored when matching: this would match anything.
				return bad(".text", errors.New("has nothing but commas and spaces (commas are ignored when matching, so it would match every message)"))
			}
		case CheckFileEqual, CheckFileContains, CheckFileAbsent:
			if !fs.ValidPath(c.Path) || c.Path == "." {
				return bad(".path", fmt.Errorf("%q is not a workspace file path (relative, slash-separated, no . or .. elements)", c.Path))
			}
			if c.Kind == CheckFileContains && c.Text == "" {
				return bad(".text", errors.New("missing"))
			}
		case "":
			return bad(".kind", errors.New("missing"))
		default:
			return bad(".kind", fmt.Errorf("%w %q", ErrUnknownCheck, c.Kind))
		}
	}
	return nil
}

func validateRubric(items []RubricItem) *fieldErr {
	seen := map[string]bool{}
	for i, r := range items {
		p := fmt.Sprintf("rubric[%d]", i)
		switch {
		case r.ID == "":
			return &fieldErr{p + ".id", errors.New("missing")}
		case seen[r.ID]:
			return &fieldErr{p + ".id", fmt.Errorf("duplicate %q", r.ID)}
		case strings.TrimSpace(r.Criterion) == "":
			return &fieldErr{p + ".criterion", errors.New("missing")}
		case !(r.Weight >= 0):
			return &fieldErr{p + ".weight", fmt.Errorf("%v, want >= 0", r.Weight)}
		}
		seen[r.ID] = true
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// Order returns the indexes into t.Atomic in a topological order of the
// After edges: among the tasks whose dependencies are all placed, the one
// listed first in t.Atomic comes next (Kahn's algorithm with ties broken by
// position), so the same task always gives the same order, and a task whose
// atomic tasks are already in a topological order gives 0, 1, ..., n-1.
// After ids that name no atomic task are ignored. When the edges form a
// cycle the result is shorter than t.Atomic: the tasks on or behind the
// cycle are left out (Validate reports ErrCycle).
func (t *Task) Order() []int {
	n := len(t.Atomic)
	index := make(map[string]int, n)
	for i, a := range t.Atomic {
		if _, dup := index[a.ID]; !dup {
			index[a.ID] = i
		}
	}
	indeg := make([]int, n)
	next := make([][]int, n)
	for i, a := range t.Atomic {
		seen := map[int]bool{}
		for _, dep := range a.After {
			j, ok := index[dep]
			if !ok || seen[j] {
				continue
			}
			seen[j] = true
			indeg[i]++
			next[j] = append(next[j], i)
		}
	}
	placed := make([]bool, n)
	order := make([]int, 0, n)
	for len(order) < n {
		pick := -1
		for i := 0; i < n; i++ {
			if !placed[i] && indeg[i] == 0 {
				pick = i
				break
			}
		}
		if pick < 0 {
			break
		}
		placed[pick] = true
		order = append(order, pick)
		for _, k := range next[pick] {
			indeg[k]--
		}
	}
	return order
}
