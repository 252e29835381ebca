package verify_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// fakePolicy answers each request with the next answer and records the
// requests.
type fakePolicy struct {
	mu      sync.Mutex
	answers []string
	err     error
	reqs    []*model.Request
}

func (p *fakePolicy) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
	if p.err != nil {
		return nil, p.err
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: a}}, nil
}

func TestParseJudgment(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		score      float64
		rationale  string
		err        string
	}{
		{"plain", `{"score": 0.75, "rationale": "mostly polite"}`, 0.75, "mostly polite", ""},
		{"fenced", "Here is my grade:\n```json\n{\"score\": 1, \"rationale\": \"confirmed first\"}\n```\n", 1, "confirmed first", ""},
		{"prose and trailing text", `I think {"score": 0, "rationale": "never asked"} is fair.`, 0, "never asked", ""},
		{"string score", `{"score": "0.5"}`, 0.5, "", ""},
		{"garbage", `The agent did fine.`, 0, "", "no JSON object"},
		{"broken json", `{"score": 0.5, "rationale": `, 0, "", "not a JSON object"},
		{"no score", `{"rationale": "x"}`, 0, "", "no score"},
		{"out of range", `{"score": 7}`, 0, "", "outside [0, 1]"},
		{"not a number", `{"score": "high"}`, 0, "", "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, why, err := verify.ParseJudgment(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || s != tc.score || why != tc.rationale {
				t.Errorf("= %v, %q, %v; want %v, %q", s, why, err, tc.score, tc.rationale)
			}
		})
	}
}

func rubricTask() *task.Task {
	return &task.Task{
		ID:     "r",
		Atomic: []task.Atomic{{ID: "a", Rubric: []task.RubricItem{{ID: "polite", Criterion: "The agent is polite.", Weight: 3}}}},
		Checks: []task.Check{{Kind: task.CheckUnchanged}},
		Rubric: []task.RubricItem{{ID: "confirm", Criterion: "The agent confirms before acting."}},
	}
}

func TestModelJudgeRubric(t *testing.T) {
	f := newFixture(t)
	p := &fakePolicy{answers: []string{"```json\n{\"score\": 0.5, \"rationale\": \"half\"}\n```", `{"score": 1, "rationale": "yes"}`}}
	in := verify.Input{Task: rubricTask(), Messages: conversation(), Judge: verify.NewModelJudge(p)}
	res, err := verify.Verify(context.Background(), in, f.evidence(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []verify.RubricScore{{ID: "confirm", Score: 0.5, Rationale: "half"}, {ID: "polite", Score: 1, Rationale: "yes"}}
	if d := cmp.Diff(want, res.Rubric); d != "" {
		t.Errorf("Rubric (-want +got):\n%s", d)
	}
	// (1*0.5 + 3*1) / 4
	if res.RubricScore == nil || *res.RubricScore != 0.875 {
		t.Errorf("RubricScore = %v, want 0.875", res.RubricScore)
	}
	// The rubric never enters R: both checkpoints pass.
	if res.Score != 1 {
		t.Errorf("R = %v, want 1", res.Score)
	}
	if len(p.reqs) != 2 {
		t.Fatalf("%d judge requests", len(p.reqs))
	}
	r := p.reqs[0]
	if r.Format != model.FormatNative || len(r.Tools) != 0 || len(r.Messages) != 2 || r.Messages[0].Role != model.RoleSystem {
		t.Errorf("judge request = %+v", r)
	}
	u := r.Messages[1].Content
	for _, s := range []string{"Criterion: The agent confirms before acting.", "USER: Refund 5,000 please", "-> refund({})", "TOOL refund: refunded 31"} {
		if !strings.Contains(u, s) {
			t.Errorf("judge prompt lacks %q:\n%s", s, u)
		}
	}
	if strings.Contains(u, "Your refund is 999") {
		t.Errorf("judge prompt holds the system prompt:\n%s", u)
	}
}

func TestJudgeFailureIsError(t *testing.T) {
	f := newFixture(t)
	errEndpoint := errors.New("endpoint down")
	for _, tc := range []struct {
		name string
		p    *fakePolicy
		is   error
	}{
		{"garbage", &fakePolicy{answers: []string{"I cannot grade this."}}, verify.ErrJudge},
		{"model error", &fakePolicy{err: errEndpoint}, errEndpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := verify.Input{Task: rubricTask(), Judge: verify.NewModelJudge(tc.p)}
			res, err := verify.Verify(context.Background(), in, f.evidence(t))
			if !errors.Is(err, tc.is) || !errors.Is(err, verify.ErrJudge) || res != nil {
				t.Errorf("= %+v, %v; want an error wrapping %v and ErrJudge", res, err, tc.is)
			}
		})
	}
}

func TestNoRubricNoJudgeCalls(t *testing.T) {
	f := newFixture(t)
	p := &fakePolicy{}
	res, err := verify.Verify(context.Background(), verify.Input{Task: &task.Task{ID: "n"}, Judge: verify.NewModelJudge(p)}, f.evidence(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.reqs) != 0 || res.Rubric != nil || res.RubricScore != nil {
		t.Errorf("judge called %d times, rubric %+v", len(p.reqs), res.Rubric)
	}
}
