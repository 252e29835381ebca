package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

// WriterSchema is the JSON Schema of the endpoint writer's answer: the
// natural request, the user brief and 1..5 rubric criteria.
const WriterSchema = `{"type":"object","properties":{` +
	`"request":{"type":"string"},"brief":{"type":"string"},` +
	`"rubric":{"type":"array","items":{"type":"string"}}},` +
	`"required":["request","brief","rubric"],"additionalProperties":false}`

// ModelWriter is the endpoint RequestWriter: a model behind core/model
// (an OpenAI-compatible Client, or any Policy) writes the request in the
// user's words, a brief and rubric items from the task's reference calls
// and their outputs, with JSON-schema structured output (WriterSchema).
// The request must still name every binding value (a sentence that drops
// an id would make the task unfeasible); answers that do not are errors.
type ModelWriter struct {
	Model    model.Policy
	Sampling model.Sampling
}

// WriterError is a model answer the writer cannot use.
type WriterError struct {
	Task    string
	Excerpt string
	Err     error
}

func (e *WriterError) Error() string {
	return fmt.Sprintf("task %s: the writer's answer %q: %v", e.Task, e.Excerpt, e.Err)
}

func (e *WriterError) Unwrap() error { return e.Err }

// Write implements RequestWriter.
func (w *ModelWriter) Write(ctx context.Context, t *task.Task, run *Run) error {
	if w.Model == nil {
		return errors.New("tasks: model writer without a model")
	}
	a := &t.Atomic[0]
	var b strings.Builder
	b.WriteString("Write what a customer says to ask an assistant with tools for the task below, in one or two natural sentences that name every id and value listed under bindings exactly as given; a brief stating the customer's whole goal; and 1 to 5 rubric criteria a judge can score the assistant's conversation by.\n\nReference tool calls and their outputs:\n")
	for i, c := range run.Calls {
		fmt.Fprintf(&b, "%d. %s(%s) -> %s\n", i+1, c.Tool, c.Arguments, clip(c.Output, 400))
	}
	bind, _ := json.Marshal(a.Bindings)
	fmt.Fprintf(&b, "\nBindings: %s\nTemplate request: %s\n", bind, a.Request)
	resp, err := w.Model.Generate(ctx, &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You write customer requests, briefs and rubric items for tool-use tasks. Answer with one JSON object."},
			{Role: model.RoleUser, Content: b.String()},
		},
		Sampling:       w.Sampling,
		ResponseFormat: &model.ResponseFormat{Name: "weft_task_text", Description: "request, brief and rubric of a generated atomic task", Schema: json.RawMessage(WriterSchema)},
	})
	if err != nil {
		return fmt.Errorf("tasks: model writer, task %s: %w", t.ID, err)
	}
	text := strings.TrimSpace(resp.Message.Content)
	text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```")
	var ans struct {
		Request string   `json:"request"`
		Brief   string   `json:"brief"`
		Rubric  []string `json:"rubric"`
	}
	bad := func(err error) error {
		return &WriterError{Task: t.ID, Excerpt: clip(resp.Message.Content, 120), Err: err}
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(&ans); err != nil {
		return bad(err)
	}
	if strings.TrimSpace(ans.Request) == "" || strings.TrimSpace(ans.Brief) == "" {
		return bad(errors.New("empty request or brief"))
	}
	if len(ans.Rubric) == 0 || len(ans.Rubric) > 5 {
		return bad(fmt.Errorf("%d rubric items, want 1 to 5", len(ans.Rubric)))
	}
	for _, k := range sortedKeys(a.Bindings) {
		for _, v := range bindingValues(k, a.Bindings[k]) {
			if !strings.Contains(ans.Request, v) {
				return bad(fmt.Errorf("the request does not name binding %s=%q", k, v))
			}
		}
	}
	a.Request = strings.TrimSpace(ans.Request)
	t.Brief = strings.TrimSpace(ans.Brief)
	a.Rubric = nil
	for i, c := range ans.Rubric {
		if strings.TrimSpace(c) == "" {
			return bad(fmt.Errorf("rubric item %d is empty", i+1))
		}
		a.Rubric = append(a.Rubric, task.RubricItem{ID: fmt.Sprintf("r%d", i+1), Criterion: strings.TrimSpace(c)})
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
