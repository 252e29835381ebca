package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/model"
)

// ParaphrasePrompt is the system prompt of ModelParaphrase.
const ParaphrasePrompt = `You play a customer talking to a support agent. Rewrite the request you are given as the customer would say it, in one or two sentences, in the first person. Keep every id, name, number and value exactly as given; add nothing and drop nothing. Answer with the rewritten request only.`

// ModelParaphrase returns a task.UserOptions.Paraphrase hook that makes the
// simulated user an LLM-backed one: each atomic request is rewritten by the
// policy p (an OpenAI-compatible endpoint, core/model.Client) before the
// user says it. An endpoint failure is returned as the user's error (the
// episode ends as an infrastructure failure of the user service); an empty
// answer is an error too.
func ModelParaphrase(p model.Policy) func(ctx context.Context, request string) (string, error) {
	return func(ctx context.Context, request string) (string, error) {
		resp, err := p.Generate(ctx, &model.Request{Format: model.FormatNative, Messages: []model.Message{
			{Role: model.RoleSystem, Content: ParaphrasePrompt},
			{Role: model.RoleUser, Content: request},
		}})
		if err != nil {
			return "", fmt.Errorf("simulated user: %w", err)
		}
		out := strings.TrimSpace(resp.Message.Content)
		if out == "" {
			return "", fmt.Errorf("simulated user: the model returned an empty paraphrase")
		}
		return out, nil
	}
}
