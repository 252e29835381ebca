package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/sdk/abi"
)

// PromptInfo describes a prompt (MCP Prompt): Name is unique within the
// module and must not start with "weft."; Title and Description are
// optional (the description is also that of every rendering); Arguments
// lists the string arguments it takes.
type PromptInfo struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is one argument of a prompt (the manifest's
// abi.PromptArgument). The host refuses a request that lacks a required
// argument or names one the prompt does not declare, so the handler sees
// only declared arguments and all required ones.
type PromptArgument = abi.PromptArgument

type promptDef struct {
	info PromptInfo
	fn   func(ctx context.Context, args map[string]string) ([]PromptMessage, error)
}

// Prompt adds the prompt p, rendered by fn, to the module. Call it from
// init.
//
// fn gets the request's arguments (never nil) and returns the prompt's
// messages. It runs like a resource handler: read-only (DB writes fail with
// a *SQLError of KindDenied, nothing is kept); an error is the request's
// error (its text reaches the client); a panic is an internal error.
//
// Prompt panics when fn is nil, p.Name is empty, reserved ("weft." prefix)
// or already registered, or an argument name is empty or repeated.
func Prompt(p PromptInfo, fn func(ctx context.Context, args map[string]string) ([]PromptMessage, error)) {
	if fn == nil {
		panic(fmt.Sprintf("tool: Prompt(%q): nil function", p.Name))
	}
	if strings.TrimSpace(p.Name) == "" || strings.HasPrefix(p.Name, "weft.") {
		panic(fmt.Sprintf("tool: Prompt(%q): the name must be non-empty and not start with weft.", p.Name))
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if strings.TrimSpace(a.Name) == "" || seen[a.Name] {
			panic(fmt.Sprintf("tool: Prompt(%q): argument name %q is empty or repeated", p.Name, a.Name))
		}
		seen[a.Name] = true
	}
	p.Arguments = append([]PromptArgument(nil), p.Arguments...)
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, d := range reg.prompts {
		if d.info.Name == p.Name {
			panic(fmt.Sprintf("tool: Prompt(%q) registered twice", p.Name))
		}
	}
	reg.prompts = append(reg.prompts, &promptDef{info: p, fn: fn})
}

// getPrompt answers a prompt get request: {"name": ..., "arguments": {...}}
// (docs/abi.md).
func getPrompt(ctx context.Context, args json.RawMessage) []byte {
	var req abi.PromptGetArgs
	if err := json.Unmarshal(args, &req); err != nil {
		return internalError("malformed prompt request: " + err.Error())
	}
	reg.mu.Lock()
	var pd *promptDef
	for _, d := range reg.prompts {
		if d.info.Name == req.Name {
			pd = d
		}
	}
	reg.mu.Unlock()
	if pd == nil {
		return refusal(fmt.Sprintf("unknown prompt %q", req.Name), false)
	}
	if req.Arguments == nil {
		req.Arguments = map[string]string{}
	}
	for _, a := range pd.info.Arguments {
		if _, ok := req.Arguments[a.Name]; a.Required && !ok {
			return refusal(fmt.Sprintf("prompt %s needs argument %q", req.Name, a.Name), false)
		}
	}
	msgs, err := pd.fn(ctx, req.Arguments)
	if err != nil {
		return refusal(err.Error(), false)
	}
	out := abi.PromptResult{Description: pd.info.Description, Messages: make([]abi.PromptMessage, len(msgs))}
	for i, m := range msgs {
		c, err := m.Content.wire()
		if err != nil {
			return internalError(fmt.Sprintf("encoding the prompt: message %d: %v", i, err))
		}
		out.Messages[i] = abi.PromptMessage{Role: m.Role, Content: c}
	}
	b, merr := marshal(out)
	if merr != nil {
		return internalError("encoding the prompt: " + merr.Error())
	}
	return b
}
