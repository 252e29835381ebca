package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

// Judge scores one rubric item of an episode from its conversation: score
// in [0, 1] and a one-line rationale. An error is a judge failure (never a
// score of 0).
type Judge interface {
	Score(ctx context.Context, item task.RubricItem, transcript []Message) (score float64, rationale string, err error)
}

// NewModelJudge returns a Judge that asks p (an OpenAI-compatible policy,
// FormatNative, no tools, temperature 0) to grade the transcript on the
// item's criterion and answer with the JSON object
// {"score": <0..1>, "rationale": "..."}. The answer is parsed tolerantly
// (see ParseJudgment); a model error or an unparsable answer is an error.
func NewModelJudge(p model.Policy) Judge { return modelJudge{p: p} }

type modelJudge struct{ p model.Policy }

const judgeSystem = `You grade a conversation between a customer-service agent and a user against one criterion.
Read the transcript, decide how well the agent met the criterion, and answer with only a JSON object:
{"score": <number from 0 (not met) to 1 (fully met)>, "rationale": "<one sentence>"}`

func (j modelJudge) Score(ctx context.Context, item task.RubricItem, transcript []Message) (float64, string, error) {
	zero := 0.0
	req := &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: judgeSystem},
			{Role: model.RoleUser, Content: "Criterion: " + item.Criterion + "\n\nTranscript:\n" + RenderTranscript(transcript)},
		},
		Format:   model.FormatNative,
		Sampling: model.Sampling{Temperature: &zero},
	}
	resp, err := j.p.Generate(ctx, req)
	if err != nil {
		return 0, "", fmt.Errorf("judge model: %w", err)
	}
	return ParseJudgment(resp.Message.Content)
}

// RenderTranscript renders messages as the judge reads them: one block per
// message, "ROLE: content", tool calls as "-> name(arguments)", tool results
// as "TOOL name: content". System messages are left out.
func RenderTranscript(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case model.RoleSystem:
			continue
		case model.RoleTool:
			fmt.Fprintf(&b, "TOOL %s: %s\n", m.Name, m.Content)
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", strings.ToUpper(m.Role), m.Content)
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "  -> %s(%s)\n", tc.Function.Name, tc.Function.Arguments)
		}
	}
	return b.String()
}

// ParseJudgment reads a judge's answer: the first JSON object in text
// (inside a ``` fence or surrounded by prose) with a "score" in [0, 1]
// (a number or a numeric string) and an optional "rationale". Errors: no
// JSON object, no score, a score outside [0, 1].
func ParseJudgment(text string) (float64, string, error) {
	start := strings.IndexByte(text, '{')
	if start < 0 {
		return 0, "", fmt.Errorf("judge answer has no JSON object: %q", clip(text))
	}
	var obj struct {
		Score     json.RawMessage `json:"score"`
		Rationale string          `json:"rationale"`
	}
	dec := json.NewDecoder(strings.NewReader(text[start:]))
	if err := dec.Decode(&obj); err != nil {
		return 0, "", fmt.Errorf("judge answer is not a JSON object: %w: %q", err, clip(text))
	}
	if len(obj.Score) == 0 || string(obj.Score) == "null" {
		return 0, "", fmt.Errorf("judge answer has no score: %q", clip(text))
	}
	raw := strings.Trim(string(obj.Score), `"`)
	score, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil {
		return 0, "", fmt.Errorf("judge score %s is not a number", obj.Score)
	}
	if score < 0 || score > 1 {
		return 0, "", fmt.Errorf("judge score %v is outside [0, 1]", score)
	}
	return score, obj.Rationale, nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// ScoreRubric scores t's rubric items (the task's, then each atomic
// task's, in order) on transcript msgs with judge j and returns one score
// per item and their weighted mean (weight 0 counts as 1); (nil, nil, nil)
// when t has no rubric items. Errors wrap ErrJudge and name the item.
func ScoreRubric(ctx context.Context, t *task.Task, msgs []Message, j Judge) ([]RubricScore, *float64, error) {
	var res Result
	if err := scoreRubric(ctx, Input{Task: t, Messages: msgs, Judge: j}, &res); err != nil {
		return nil, nil, err
	}
	return res.Rubric, res.RubricScore, nil
}

// scoreRubric fills res.Rubric and res.RubricScore (weighted mean).
func scoreRubric(ctx context.Context, in Input, res *Result) error {
	items := append([]task.RubricItem(nil), in.Task.Rubric...)
	for _, a := range in.Task.Atomic {
		items = append(items, a.Rubric...)
	}
	if len(items) == 0 {
		return nil
	}
	var num, den float64
	for _, it := range items {
		s, why, err := in.Judge.Score(ctx, it, in.Messages)
		if err != nil {
			return fmt.Errorf("%w: rubric item %s: %w", ErrJudge, it.ID, err)
		}
		w := it.Weight
		if w == 0 {
			w = 1
		}
		num += w * s
		den += w
		res.Rubric = append(res.Rubric, RubricScore{ID: it.ID, Score: s, Rationale: why})
	}
	m := num / den
	res.RubricScore = &m
	return nil
}
