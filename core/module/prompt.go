package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ErrUnknownPrompt: the manifest declares no prompt of that name; the module
// was not run.
var ErrUnknownPrompt = errors.New("unknown prompt")

// PromptResult is the MCP GetPromptResult of a prompt.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	// Denied lists the SQL statements the table policy refused while the
	// prompt was rendered (every write is refused). Not part of MCP.
	Denied []string `json:"-"`
}

// PromptMessage is one message of a prompt: Role "user" or "assistant", and
// one content item of any type Content supports.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// promptRequest is the arguments of a PromptGetRequest.
type promptRequest struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

// GetPrompt renders the prompt name with args for session s. The arguments
// are checked against the manifest first: a missing required argument or
// one the prompt does not declare is an *ArgumentError (ErrInvalidArguments;
// its Tool is the prompt name, its Pointer "/<argument>"), an undeclared
// prompt ErrUnknownPrompt; the module is not run then. The module's handler
// runs exactly like a resource read (see ReadResource): read-only, rolled
// back, without consuming a sequence number, with the same error
// classification (*RefusedError for the handler's error answer, *CallError
// for traps, deadlines and malformed responses: no messages array, a role
// other than user or assistant, an invalid content item).
func (m *Module) GetPrompt(ctx context.Context, s *Session, name string, args map[string]string) (*PromptResult, error) {
	i := slices.IndexFunc(m.manifest.Prompts, func(p Prompt) bool { return p.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("%w: %q in module %s", ErrUnknownPrompt, name, m.manifest.Name)
	}
	p := m.manifest.Prompts[i]
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, &ArgumentError{Tool: name, Pointer: "/" + a.Name, Message: fmt.Sprintf("prompt %s needs argument %q", name, a.Name)}
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.ContainsFunc(p.Arguments, func(a PromptArgument) bool { return a.Name == k }) {
			return nil, &ArgumentError{Tool: name, Pointer: "/" + k, Message: fmt.Sprintf("prompt %s has no argument %q", name, k)}
		}
	}
	if args == nil {
		args = map[string]string{}
	}
	var res *PromptResult
	denied, err := m.readOnly(ctx, s, PromptGetRequest, name, promptRequest{Name: name, Arguments: args},
		func(out []byte) error {
			var perr error
			res, perr = parsePromptResponse(out, name)
			return perr
		})
	if err != nil {
		return nil, err
	}
	res.Denied = denied
	return res, nil
}

// parsePromptResponse decodes {"description": ..., "messages": [...]} or an
// error answer.
func parsePromptResponse(out []byte, name string) (*PromptResult, error) {
	var raw struct {
		Description string             `json:"description"`
		Messages    *[]json.RawMessage `json:"messages"`
	}
	if _, err := decodeAnswer(out, &raw, PromptGetRequest, name); err != nil {
		return nil, err
	}
	malformed := func(format string, a ...any) error {
		return &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf(format, a...)}
	}
	if raw.Messages == nil {
		return nil, malformed("response has no messages array (%s)", excerpt(out))
	}
	res := &PromptResult{Description: raw.Description, Messages: make([]PromptMessage, 0, len(*raw.Messages))}
	for i, rm := range *raw.Messages {
		var msg PromptMessage
		if err := json.Unmarshal(rm, &msg); err != nil {
			return nil, malformed("messages[%d]: %v", i, err)
		}
		if msg.Role != "user" && msg.Role != "assistant" {
			return nil, malformed("messages[%d]: role %q (want user or assistant)", i, msg.Role)
		}
		if err := msg.Content.check(); err != nil {
			return nil, malformed("messages[%d].content: %v", i, err)
		}
		res.Messages = append(res.Messages, msg)
	}
	return res, nil
}
