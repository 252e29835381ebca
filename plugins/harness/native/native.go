package native

import (
	"context"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/plugins/harness/internal/loop"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Name and Version are what Describe reports.
const (
	Name    = "native"
	Version = "1.0.0"
)

// SettingsSchema is the JSON Schema of the settings object.
const SettingsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "$defs": {
    "globs": {"type": "array", "items": {"type": "string"}}
  },
  "properties": {
    "skills": {"type": "array", "description": "Inline skills.", "items": {
      "type": "object", "additionalProperties": false, "required": ["name", "description"],
      "properties": {"name": {"type": "string", "minLength": 1}, "description": {"type": "string", "minLength": 1}, "body": {"type": "string"}}}},
    "skills_dirs": {"type": "array", "items": {"type": "string"}, "description": "Directories holding <name>/SKILL.md and *.md skill files."},
    "skills_mode": {"enum": ["inline", "path"], "default": "inline", "description": "Render each skill's body, or its file's path."},
    "allow": {"$ref": "#/$defs/globs", "description": "path.Match globs on tool names; non-empty = only matching tools are offered."},
    "deny": {"$ref": "#/$defs/globs", "description": "path.Match globs on tool names; matching tools are never offered."},
    "profile": {"type": "string", "default": "full", "description": "\"full\", \"readonly\" or a key of profiles."},
    "profiles": {"type": "object", "additionalProperties": {
      "type": "object", "additionalProperties": false,
      "properties": {"allow": {"$ref": "#/$defs/globs"}, "deny": {"$ref": "#/$defs/globs"}, "read_only": {"type": "boolean"}}}}
  }
}`

// Settings are the harness's settings (see the package documentation).
type Settings struct {
	Skills     []Skill            `json:"skills,omitempty"`
	SkillsDirs []string           `json:"skills_dirs,omitempty"`
	SkillsMode string             `json:"skills_mode"`
	Allow      []string           `json:"allow,omitempty"`
	Deny       []string           `json:"deny,omitempty"`
	Profile    string             `json:"profile"`
	Profiles   map[string]Profile `json:"profiles,omitempty"`
}

// Profile is a named tool filter: globs as in Settings, and ReadOnly to
// permit only tools marked read_only.
type Profile struct {
	Allow    []string `json:"allow,omitempty"`
	Deny     []string `json:"deny,omitempty"`
	ReadOnly bool     `json:"read_only,omitempty"`
}

// Built-in profiles.
var builtinProfiles = map[string]Profile{
	"full":     {},
	"readonly": {ReadOnly: true},
}

// DefaultSettings are the settings of "".
func DefaultSettings() Settings { return Settings{SkillsMode: "inline", Profile: "full"} }

// config is an episode's resolved settings.
type config struct {
	s       Settings
	profile Profile
	skills  []Skill
}

// resolve decodes and checks settings and loads the skills.
func resolve(settings string) (*config, error) {
	s := DefaultSettings()
	if err := loop.DecodeSettings(Name, settings, &s); err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("native harness: settings: "+format, a...)
	}
	if s.SkillsMode != "inline" && s.SkillsMode != "path" {
		return nil, bad(`skills_mode is %q, want "inline" or "path"`, s.SkillsMode)
	}
	for name, p := range s.Profiles {
		if _, ok := builtinProfiles[name]; ok {
			return nil, bad("profiles: %q is a built-in profile", name)
		}
		if err := checkGlobs("profiles."+name+".allow", p.Allow); err != nil {
			return nil, bad("%v", err)
		}
		if err := checkGlobs("profiles."+name+".deny", p.Deny); err != nil {
			return nil, bad("%v", err)
		}
	}
	if err := checkGlobs("allow", s.Allow); err != nil {
		return nil, bad("%v", err)
	}
	if err := checkGlobs("deny", s.Deny); err != nil {
		return nil, bad("%v", err)
	}
	c := &config{s: s}
	var ok bool
	if c.profile, ok = builtinProfiles[s.Profile]; !ok {
		if c.profile, ok = s.Profiles[s.Profile]; !ok {
			return nil, bad("unknown profile %q (built-in: full, readonly)", s.Profile)
		}
	}
	skills, err := loadSkills(s.Skills, s.SkillsDirs)
	if err != nil {
		return nil, bad("%v", err)
	}
	c.skills = skills
	return c, nil
}

type harness struct{}

// New returns the native function-calling harness.
func New() plugin.Harness { return harness{} }

func (harness) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name = Name
	resp.Version = Version
	resp.Format = plugin.FormatNative
	resp.Capabilities = []string{"parallel_calls", plugin.CapabilityResume, "skills", "tool_filter"}
	resp.SettingsSchema = plugin.MustJSONValue(SettingsSchema)
	return nil
}

// RunEpisode runs one episode (see sdk/plugin.Harness), resuming from
// req.History when it is set. It returns an error only for invalid
// settings, unreadable skills or an invalid history ("native harness:
// history: ...").
func (harness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	c, err := resolve(plugin.SettingsJSON(req.GetSettings()))
	if err != nil {
		return err
	}
	if err := loop.Run(ctx, host, req, resp, &protocol{c: c}); err != nil {
		return fmt.Errorf("%s harness: %w", Name, err)
	}
	return nil
}

type protocol struct {
	c       *config
	listed  map[string]bool
	offered map[string]bool
}

func (p *protocol) Format() plugin.OutputFormat { return plugin.FormatNative }
func (p *protocol) NativeTools() bool           { return true }

func (p *protocol) Offer(listed []*plugin.Tool) []*plugin.Tool {
	p.listed, p.offered = map[string]bool{}, map[string]bool{}
	var out []*plugin.Tool
	for _, t := range listed {
		p.listed[t.Name] = true
		if p.c.permits(t) {
			p.offered[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

func (p *protocol) Refuse(call *plugin.ToolCall) (string, bool) {
	if p.offered[call.Name] || (!p.listed[call.Name] && p.c.globsPermit(call.Name)) {
		return "", false
	}
	return fmt.Sprintf("tool %s is not allowed", call.Name), true
}

func (p *protocol) System(policy string, _ []*plugin.Tool) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(policy))
	if sk := renderSkills(p.c.skills, p.c.s.SkillsMode); sk != "" {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(sk)
	}
	return b.String()
}

func (p *protocol) Parse(m *plugin.Message, turn int) loop.Parsed { return Parse(m, turn) }

// Render gives a canonical assistant message back as Parse's Prompt
// would: role, content and tool calls (copied), reasoning dropped.
func (p *protocol) Render(m *plugin.Message) *plugin.Message {
	var calls []*plugin.ToolCall
	for _, c := range m.GetToolCalls() {
		calls = append(calls, &plugin.ToolCall{Id: c.GetId(), Name: c.GetName(), Arguments: c.GetArguments()})
	}
	return &plugin.Message{Role: plugin.RoleAssistant, Content: m.GetContent(), ToolCalls: calls}
}

func (p *protocol) Observe(results []*plugin.ToolResult, formatError string) []*plugin.Message {
	var out []*plugin.Message
	for _, r := range results {
		out = append(out, &plugin.Message{Role: plugin.RoleTool, ToolCallId: r.CallId, Name: r.Name, Content: r.Content})
	}
	if formatError != "" {
		out = append(out, &plugin.Message{Role: plugin.RoleUser, Content: "Your last reply could not be parsed: " + formatError + ". Call a tool or reply to the user."})
	}
	return out
}

// Parse reads one function-calling response of turn (0-based): its tool
// calls (ids kept, missing ones assigned), else a message to the user, else
// (blank content) a format error. It never panics.
func Parse(m *plugin.Message, turn int) loop.Parsed {
	var calls []*plugin.ToolCall
	for i, c := range m.GetToolCalls() {
		id := c.GetId()
		if id == "" {
			id = loop.CallID(turn, i)
		}
		calls = append(calls, &plugin.ToolCall{Id: id, Name: c.GetName(), Arguments: c.GetArguments()})
	}
	if len(calls) == 0 && strings.TrimSpace(m.GetContent()) == "" {
		return loop.Parsed{FormatError: "the reply is empty (no tool calls and no content)"}
	}
	return loop.Parsed{
		Calls: calls,
		Canonical: &plugin.Message{Role: plugin.RoleAssistant, Content: m.GetContent(),
			ReasoningContent: m.GetReasoningContent(), ToolCalls: calls},
		Prompt: &plugin.Message{Role: plugin.RoleAssistant, Content: m.GetContent(), ToolCalls: calls},
	}
}
