package hermes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/plugins/harness/internal/callparse"
	"github.com/weft-dev/weft/plugins/harness/internal/loop"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Name and Version are what Describe reports.
const (
	Name    = "hermes"
	Version = "1.0.0"
)

// SettingsSchema is the JSON Schema of the settings object.
const SettingsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "calls_in_think": {"enum": ["fallback", "ignore"], "default": "fallback", "description": "Whether <tool_call> blocks inside <think> are used when there is none outside it."}
  }
}`

// Settings are the harness's settings (see the package documentation).
type Settings struct {
	CallsInThink string `json:"calls_in_think"`
}

// DefaultSettings are the settings of "".
func DefaultSettings() Settings { return Settings{CallsInThink: "fallback"} }

// ParseSettings decodes settings over the defaults. Errors: invalid JSON,
// unknown fields, a calls_in_think other than "fallback" or "ignore".
func ParseSettings(settings string) (Settings, error) {
	s := DefaultSettings()
	if err := loop.DecodeSettings(Name, settings, &s); err != nil {
		return s, err
	}
	if s.CallsInThink != "fallback" && s.CallsInThink != "ignore" {
		return s, fmt.Errorf(`hermes harness: settings: calls_in_think is %q, want "fallback" or "ignore"`, s.CallsInThink)
	}
	return s, nil
}

type harness struct{}

// New returns the Hermes harness.
func New() plugin.Harness { return harness{} }

func (harness) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name = Name
	resp.Version = Version
	resp.Format = plugin.FormatHermes
	resp.Capabilities = []string{"format_feedback", "parallel_calls", plugin.CapabilityResume}
	resp.SettingsSchema = plugin.MustJSONValue(SettingsSchema)
	return nil
}

// RunEpisode runs one episode (see sdk/plugin.Harness), resuming from
// req.History when it is set. It returns an error only for invalid
// settings or an invalid history ("hermes harness: history: ...").
func (harness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	s, err := ParseSettings(plugin.SettingsJSON(req.GetSettings()))
	if err != nil {
		return err
	}
	if err := loop.Run(ctx, host, req, resp, &protocol{useThink: s.CallsInThink == "fallback"}); err != nil {
		return fmt.Errorf("%s harness: %w", Name, err)
	}
	return nil
}

type protocol struct{ useThink bool }

func (p *protocol) Format() plugin.OutputFormat                { return plugin.FormatHermes }
func (p *protocol) Offer(listed []*plugin.Tool) []*plugin.Tool { return listed }
func (p *protocol) NativeTools() bool                          { return false }
func (p *protocol) Refuse(*plugin.ToolCall) (string, bool)     { return "", false }
func (p *protocol) Parse(m *plugin.Message, turn int) loop.Parsed {
	return Parse(m, turn, p.useThink)
}

func (p *protocol) Render(m *plugin.Message) *plugin.Message {
	return &plugin.Message{Role: plugin.RoleAssistant, Content: Render(m)}
}

// Render writes a canonical assistant message as the Hermes reply that
// Parse reads back to it: the content, then (after a newline when the
// content is not empty) one block per call, newline-separated:
//
//	<tool_call>
//	{"name": <tool>, "arguments": <arguments>}
//	</tool_call>
//
// Arguments are compacted JSON (see callparse.Encode). The
// reasoning_content is not rendered: earlier turns' reasoning is not part
// of the prompt of a resumed conversation.
func Render(m *plugin.Message) string {
	parts := []string{}
	if c := m.GetContent(); c != "" {
		parts = append(parts, c)
	}
	for _, c := range m.GetToolCalls() {
		parts = append(parts, openCall+"\n"+callparse.Encode(c.GetName(), c.GetArguments())+"\n"+closeCall)
	}
	return strings.Join(parts, "\n")
}

type function struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

func (p *protocol) System(policy string, tools []*plugin.Tool) string {
	var b strings.Builder
	if policy = strings.TrimSpace(policy); policy != "" {
		b.WriteString(policy)
		b.WriteString("\n\n")
	}
	b.WriteString("# Tools\n\nYou may call one or more functions to help with the user's request.\n\n")
	b.WriteString("The function signatures are within <tools></tools> XML tags:\n<tools>\n")
	for _, t := range tools {
		line, _ := json.Marshal(struct {
			Type     string   `json:"type"`
			Function function `json:"function"`
		}{"function", function{t.Name, t.Description, loop.Schema(t)}})
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString(`</tools>

For each function call, return a JSON object with the function name and its arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>

The results come back within <tool_response></tool_response> XML tags. To talk to the user, reply with plain text and no <tool_call> block.
`)
	return b.String()
}

func (p *protocol) Observe(results []*plugin.ToolResult, formatError string) []*plugin.Message {
	var parts []string
	for _, r := range results {
		c := r.Content
		if r.IsError {
			c = "Error: " + c
		}
		parts = append(parts, "<tool_response>\n"+c+"\n</tool_response>")
	}
	if formatError != "" {
		parts = append(parts, "Your last reply could not be parsed: "+formatError+
			". Write each call as <tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>, or reply to the user in plain text.")
	}
	if len(parts) == 0 {
		return nil
	}
	return []*plugin.Message{{Role: plugin.RoleUser, Content: strings.Join(parts, "\n")}}
}

const (
	openThink  = "<think>"
	closeThink = "</think>"
	openCall   = "<tool_call>"
	closeCall  = "</tool_call>"
)

// segment is a stretch of the reply, inside or outside the reasoning.
type segment struct {
	text  string
	think bool
}

// segments splits s into reasoning and other text.
func segments(s string) []segment {
	var out []segment
	if i := strings.Index(s, closeThink); i >= 0 && !strings.Contains(s[:i], openThink) {
		out = append(out, segment{s[:i], true})
		s = s[i+len(closeThink):]
	}
	for s != "" {
		i := strings.Index(s, openThink)
		if i < 0 {
			out = append(out, segment{s, false})
			break
		}
		out = append(out, segment{s[:i], false})
		s = s[i+len(openThink):]
		j := strings.Index(s, closeThink)
		if j < 0 {
			out = append(out, segment{s, true})
			break
		}
		out = append(out, segment{s[:j], true})
		s = s[j+len(closeThink):]
	}
	return out
}

// blocks cuts the <tool_call> blocks out of s: their inner texts, and s
// without them. An unclosed final block runs to the end of s.
func blocks(s string) (inner []string, rest string) {
	var b strings.Builder
	for {
		i := strings.Index(s, openCall)
		if i < 0 {
			b.WriteString(s)
			return inner, b.String()
		}
		b.WriteString(s[:i])
		s = s[i+len(openCall):]
		j := strings.Index(s, closeCall)
		if j < 0 {
			return append(inner, s), b.String()
		}
		inner = append(inner, s[:j])
		s = s[j+len(closeCall):]
	}
}

// Parse reads one Hermes reply of turn (0-based); useThink says whether
// blocks inside reasoning are used when none is outside it. It never
// panics.
func Parse(m *plugin.Message, turn int, useThink bool) loop.Parsed {
	segs := segments(m.GetContent())
	var outside, reasoning []string
	var found []string
	if r := strings.TrimSpace(m.GetReasoningContent()); r != "" {
		reasoning = append(reasoning, r)
	}
	for _, sg := range segs {
		if !sg.think {
			in, rest := blocks(sg.text)
			found = append(found, in...)
			outside = append(outside, rest)
		}
	}
	fromThink := len(found) == 0 && useThink
	for _, sg := range segs {
		if !sg.think {
			continue
		}
		text := sg.text
		if fromThink {
			var in []string
			in, text = blocks(text)
			found = append(found, in...)
		}
		if t := strings.TrimSpace(text); t != "" {
			reasoning = append(reasoning, t)
		}
	}
	content := strings.TrimSpace(strings.Join(outside, ""))
	canonical := &plugin.Message{Role: plugin.RoleAssistant, Content: content, ReasoningContent: strings.Join(reasoning, "\n\n")}
	if len(found) == 0 {
		if content == "" {
			return loop.Parsed{FormatError: "the reply has neither a <tool_call> block nor a message to the user"}
		}
		return loop.Parsed{Canonical: canonical}
	}
	var errs []string
	for k, in := range found {
		name, args, err := callparse.Decode(in)
		if err != nil {
			errs = append(errs, fmt.Sprintf("<tool_call> block %d: %v", k+1, err))
			continue
		}
		canonical.ToolCalls = append(canonical.ToolCalls, &plugin.ToolCall{
			Id: loop.CallID(turn, len(canonical.ToolCalls)), Name: name, Arguments: args,
		})
	}
	p := loop.Parsed{Calls: canonical.ToolCalls, FormatError: strings.Join(errs, "; ")}
	if len(p.Calls) > 0 {
		p.Canonical = canonical
	}
	return p
}
