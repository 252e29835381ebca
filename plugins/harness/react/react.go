package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/plugins/harness/internal/callparse"
	"github.com/weft-dev/weft/plugins/harness/internal/loop"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Name and Version are what Describe reports.
const (
	Name    = "react"
	Version = "1.0.0"
)

// SettingsSchema is the JSON Schema of the settings object.
const SettingsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "observation_prefix": {"type": "string", "default": "API output: ", "description": "Text before a tool result in the user message that carries it back."},
    "respond_action": {"type": "string", "minLength": 1, "default": "respond", "description": "Action name of a message to the user."}
  }
}`

// Settings are the harness's settings (see the package documentation).
type Settings struct {
	ObservationPrefix string `json:"observation_prefix"`
	RespondAction     string `json:"respond_action"`
}

// DefaultSettings are the settings of "".
func DefaultSettings() Settings {
	return Settings{ObservationPrefix: "API output: ", RespondAction: "respond"}
}

// ParseSettings decodes settings over the defaults. Errors: invalid JSON,
// unknown fields, an empty respond_action.
func ParseSettings(settings string) (Settings, error) {
	s := DefaultSettings()
	if err := loop.DecodeSettings(Name, settings, &s); err != nil {
		return s, err
	}
	if strings.TrimSpace(s.RespondAction) == "" {
		return s, errors.New("react harness: settings: respond_action must not be empty")
	}
	return s, nil
}

type harness struct{}

// New returns the ReAct harness.
func New() plugin.Harness { return harness{} }

func (harness) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name = Name
	resp.Version = Version
	resp.Format = plugin.FormatReAct
	resp.Capabilities = []string{"format_feedback", plugin.CapabilityResume}
	resp.SettingsSchema = plugin.MustJSONValue(SettingsSchema)
	return nil
}

// RunEpisode runs one episode (see sdk/plugin.Harness), resuming from
// req.History when it is set. It returns an error only for invalid
// settings or an invalid history ("react harness: history: ...").
func (harness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	s, err := ParseSettings(plugin.SettingsJSON(req.GetSettings()))
	if err != nil {
		return err
	}
	if err := loop.Run(ctx, host, req, resp, &protocol{s: s}); err != nil {
		return fmt.Errorf("%s harness: %w", Name, err)
	}
	return nil
}

type protocol struct{ s Settings }

func (p *protocol) Format() plugin.OutputFormat                { return plugin.FormatReAct }
func (p *protocol) Offer(listed []*plugin.Tool) []*plugin.Tool { return listed }
func (p *protocol) NativeTools() bool                          { return false }
func (p *protocol) Refuse(*plugin.ToolCall) (string, bool)     { return "", false }
func (p *protocol) Parse(m *plugin.Message, turn int) loop.Parsed {
	return Parse(m, turn, p.s.RespondAction)
}

func (p *protocol) Render(m *plugin.Message) *plugin.Message {
	return &plugin.Message{Role: plugin.RoleAssistant, Content: Render(m, p.s.RespondAction)}
}

// Render writes a canonical assistant message as the ReAct reply that
// Parse reads back to it:
//
//	Thought:
//	<thought>
//	Action:
//	{"name": <tool>, "arguments": <arguments>}
//
// The thought of a tool-call message is its content (its
// reasoning_content when the content is empty), with one Action per call
// (a history written by another protocol may have several); a message
// without calls is the respond action with {"content": <content>}, its
// thought the reasoning_content. Arguments are compacted JSON (see
// callparse.Encode).
func Render(m *plugin.Message, respond string) string {
	var b strings.Builder
	b.WriteString("Thought:\n")
	if len(m.GetToolCalls()) == 0 {
		b.WriteString(m.GetReasoningContent())
		var content strings.Builder
		enc := json.NewEncoder(&content)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]string{"content": m.GetContent()}) // strings always encode
		b.WriteString("\nAction:\n" + callparse.Encode(respond, content.String()))
		return b.String()
	}
	thought := m.GetContent()
	if strings.TrimSpace(thought) == "" {
		thought = m.GetReasoningContent()
	}
	b.WriteString(thought)
	for _, c := range m.GetToolCalls() {
		b.WriteString("\nAction:\n" + callparse.Encode(c.GetName(), c.GetArguments()))
	}
	return b.String()
}

func (p *protocol) System(policy string, tools []*plugin.Tool) string {
	var b strings.Builder
	if policy = strings.TrimSpace(policy); policy != "" {
		b.WriteString(policy)
		b.WriteString("\n\n")
	}
	b.WriteString("# Available tools\n")
	for _, t := range tools {
		line, _ := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}{t.Name, t.Description, loop.Schema(t)})
		b.Write(line)
		b.WriteByte('\n')
	}
	r := p.s.RespondAction
	fmt.Fprintf(&b, `
# Instruction
You are an agent that helps the user with the tools above, following the policy above.

Every reply must have exactly this format:

Thought:
<one line of reasoning about what to do next>
Action:
{"name": <the action's name>, "arguments": <the action's arguments as a JSON object>}

The Action is parsed as JSON, so it must be valid JSON. Take exactly one action per reply, and do not make up arguments.

An action is one of the tools above, or %q to send a message to the user:
{"name": %q, "arguments": {"content": <your message to the user>}}

The result of a tool comes back as a message starting with %q.
`, r, r, strings.TrimSpace(p.s.ObservationPrefix))
	return b.String()
}

func (p *protocol) Observe(results []*plugin.ToolResult, formatError string) []*plugin.Message {
	var out []*plugin.Message
	for _, r := range results {
		c := r.Content
		if r.IsError {
			c = "Error: " + c
		}
		out = append(out, &plugin.Message{Role: plugin.RoleUser, Content: p.s.ObservationPrefix + c})
	}
	if formatError != "" {
		out = append(out, &plugin.Message{Role: plugin.RoleUser, Content: fmt.Sprintf(
			"Your last reply could not be parsed: %s. Reply in exactly this format:\nThought:\n<one line of reasoning>\nAction:\n{\"name\": <the action's name>, \"arguments\": <a JSON object>}",
			formatError)})
	}
	return out
}

// Parse reads one ReAct reply of turn (0-based): a tool call (id
// "call_<turn>_0"), a message to the user (the respond action), or a
// format error. It never panics.
func Parse(m *plugin.Message, turn int, respond string) loop.Parsed {
	text := m.GetContent()
	marks := labels(text, "action:")
	if len(marks) == 0 {
		return loop.Parsed{FormatError: `no "Action:" in the reply`}
	}
	var firstErr error
	for _, at := range marks {
		name, args, err := callparse.Decode(strings.TrimLeft(text[at+len("action:"):], "* \t"))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		thought := thoughtOf(text[:at])
		if name == respond {
			var a struct {
				Content *string `json:"content"`
			}
			if json.Unmarshal([]byte(args), &a) != nil || a.Content == nil {
				return loop.Parsed{FormatError: fmt.Sprintf(`the %q action needs {"content": <text>}`, respond)}
			}
			return loop.Parsed{Canonical: &plugin.Message{
				Role: plugin.RoleAssistant, Content: *a.Content, ReasoningContent: thought,
			}}
		}
		call := &plugin.ToolCall{Id: loop.CallID(turn, 0), Name: name, Arguments: args}
		return loop.Parsed{
			Calls:     []*plugin.ToolCall{call},
			Canonical: &plugin.Message{Role: plugin.RoleAssistant, Content: thought, ToolCalls: []*plugin.ToolCall{call}},
		}
	}
	return loop.Parsed{FormatError: "the Action is not a valid call: " + firstErr.Error()}
}

// thoughtOf is the text before the Action label without its "Thought:"
// label (and without markdown emphasis left around the labels).
func thoughtOf(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(strings.TrimRight(s, "*_#"))
	if at := labels(s, "thought:"); len(at) > 0 && strings.TrimSpace(strings.Trim(s[:at[0]], "*_# \n")) == "" {
		s = s[at[0]+len("thought:"):]
	}
	return strings.TrimSpace(strings.TrimLeft(s, "*_ "))
}

// labels returns the byte offsets of lower (ASCII, lower case) in s,
// matched case-insensitively, in order.
func labels(s, lower string) []int {
	var at []int
	for i := 0; i+len(lower) <= len(s); i++ {
		if asciiFold(s[i:i+len(lower)]) == lower {
			at = append(at, i)
		}
	}
	return at
}

func asciiFold(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
