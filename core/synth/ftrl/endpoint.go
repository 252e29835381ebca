package ftrl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/model"
)

// EndpointWriter is the endpoint variant of stages (a) and (b): an
// OpenAI-compatible model (core/model.Client, or any model.Policy) rewrites
// a scenario's templated question and its documents' descriptions in
// natural language, answering in JSON under a JSON-schema response format
// ("ftrl_rewrite": {"question": string, "descriptions": {tool: string}}).
// The decomposition, answers, tools and grounding stay the generator's:
// only text changes, so the deployed servers and the accounting are the
// same as offline.
type EndpointWriter struct {
	Model    model.Policy
	Sampling model.Sampling
	Strict   bool
}

// ErrRewrite marks an answer of the model that Run cannot use (not the
// schema's JSON, a question that drops an entity id, a missing
// description); the scenario keeps its templated text only when the
// caller decides so — Run fails.
var ErrRewrite = errors.New("ftrl: unusable rewrite")

// RewriteSchema is the response format's JSON Schema for documents named
// names.
func RewriteSchema(names []string) json.RawMessage {
	props := map[string]any{}
	for _, n := range names {
		props[n] = map[string]any{"type": "string"}
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"question", "descriptions"},
		"properties": map[string]any{
			"question":     map[string]any{"type": "string"},
			"descriptions": map[string]any{"type": "object", "additionalProperties": false, "required": names, "properties": props},
		}}
	b, _ := json.Marshal(s)
	return b
}

// Rewrite asks the model once. Errors: the model's (*model.Error), or
// ErrRewrite (wrapped) when the answer is unusable; sc and docs are then
// unchanged.
func (e *EndpointWriter) Rewrite(ctx context.Context, sc *Scenario, docs []Tool) error {
	if e.Model == nil {
		return errors.New("ftrl: endpoint writer without a model")
	}
	var names []string
	var b strings.Builder
	fmt.Fprintf(&b, "Rewrite this %s question as a real customer would ask it, in one message. Keep every id exactly as written and keep the order of the parts.\n\nQuestion: %s\n\n", strings.ReplaceAll(string(sc.Type), "_", " "), sc.Question)
	b.WriteString("Then write a clear one-sentence description for each tool:\n")
	for _, d := range docs {
		if !containsStr(names, d.Name) {
			names = append(names, d.Name)
			fmt.Fprintf(&b, "- %s: %s\n", d.Name, d.Description)
		}
	}
	resp, err := e.Model.Generate(ctx, &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You write tool-use training data. Answer with JSON only."},
			{Role: model.RoleUser, Content: b.String()},
		},
		Sampling:       e.Sampling,
		Format:         model.FormatNative,
		ResponseFormat: &model.ResponseFormat{Name: "ftrl_rewrite", Description: "a rewritten question and tool descriptions", Schema: RewriteSchema(names), Strict: e.Strict},
	})
	if err != nil {
		return err
	}
	var ans struct {
		Question     string            `json:"question"`
		Descriptions map[string]string `json:"descriptions"`
	}
	if err := json.Unmarshal([]byte(resp.Message.Content), &ans); err != nil {
		return fmt.Errorf("%w for %s: not the schema's JSON: %v", ErrRewrite, sc.ID, err)
	}
	for _, q := range sc.SubQuestions {
		if q.DependsOn != "" {
			continue
		}
		for _, k := range q.Key {
			if !strings.Contains(ans.Question, k) {
				return fmt.Errorf("%w for %s: the question lost the id %q", ErrRewrite, sc.ID, k)
			}
		}
	}
	for _, n := range names {
		if strings.TrimSpace(ans.Descriptions[n]) == "" {
			return fmt.Errorf("%w for %s: no description of %s", ErrRewrite, sc.ID, n)
		}
	}
	sc.Question = strings.TrimSpace(ans.Question)
	for i := range docs {
		docs[i].Description = strings.TrimSpace(ans.Descriptions[docs[i].Name])
	}
	return nil
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
