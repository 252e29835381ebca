package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weft-dev/weft/sdk/abi"
	"slices"
)

// ErrUnknownPrompt: the manifest declares no prompt of that name; the module
// was not run.
var ErrUnknownPrompt = errors.New("unknown prompt")

// PromptResult is the MCP GetPromptResult of a prompt (abi.PromptResult:
// Description, Messages).
type PromptResult struct {
	abi.PromptResult
	// Denied lists the SQL statements the table policy refused while the
	// prompt was rendered (every write is refused). Not part of MCP.
	Denied []string `json:"-"`
}

// PromptMessage is one message of a prompt: Role "user" or "assistant", and
// one content item of any type Content supports (abi.PromptMessage).
type PromptMessage = abi.PromptMessage

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
func (m *Module) GetPrompt(ctx context.Context, s *Session, name string, args map[string]string, opts ...CallOption) (*PromptResult, error) {
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
	denied, err := m.readOnly(ctx, s, PromptGetRequest, name, abi.PromptGetArgs{Name: name, Arguments: args}, opts,
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
	ans, err := decodeAnswer(out, PromptGetRequest, name)
	if err != nil {
		return nil, err
	}
	malformed := func(format string, a ...any) error {
		return &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf(format, a...)}
	}
	var description string
	if d := ans.Description; len(d) > 0 && string(d) != "null" {
		if err := json.Unmarshal(d, &description); err != nil {
			return nil, malformed("description: %v (%s)", err, excerpt(out))
		}
	}
	messages, err := rawList(ans.Messages)
	if err != nil {
		return nil, malformed("messages: %v (%s)", err, excerpt(out))
	}
	if messages == nil {
		return nil, malformed("response has no messages array (%s)", excerpt(out))
	}
	res := &PromptResult{PromptResult: abi.PromptResult{Description: description, Messages: make([]PromptMessage, 0, len(messages))}}
	for i, rm := range messages {
		var msg PromptMessage
		if err := json.Unmarshal(rm, &msg); err != nil {
			return nil, malformed("messages[%d]: %v", i, err)
		}
		if msg.Role != "user" && msg.Role != "assistant" {
			return nil, malformed("messages[%d]: role %q (want user or assistant)", i, msg.Role)
		}
		if err := msg.Content.Check(); err != nil {
			return nil, malformed("messages[%d].content: %v", i, err)
		}
		res.Messages = append(res.Messages, msg)
	}
	return res, nil
}
