package module

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SupportedHosts are the host libraries and versions this runtime provides.
var SupportedHosts = map[string][]string{
	"sql":   {"v1"},
	"clock": {"v1"},
	"rand":  {"v1"},
	"log":   {"v1"},
}

// Validate checks a manifest: ABI version, supported host libraries,
// non-empty unique tool names (none reserved), compilable input schemas, and
// non-empty unique table names. It returns the compiled input schemas by
// tool name.
func (m *Manifest) Validate() error {
	_, err := m.compileSchemas()
	return err
}

func (m *Manifest) compileSchemas() (map[string]*jsonschema.Schema, error) {
	if m.ABI != ABIVersion {
		return nil, fmt.Errorf("manifest abi %q, want %q", m.ABI, ABIVersion)
	}
	if m.Name == "" {
		return nil, errors.New("manifest has no name")
	}
	for h, v := range m.Hosts {
		vs, ok := SupportedHosts[h]
		if !ok {
			return nil, fmt.Errorf("host library %q is not provided", h)
		}
		found := false
		for _, s := range vs {
			found = found || s == v
		}
		if !found {
			return nil, fmt.Errorf("host library %s version %q is not provided (have %v)", h, v, vs)
		}
	}
	seen := map[string]bool{}
	for _, list := range [][]string{m.Tables.Owns, m.Tables.Reads} {
		for _, t := range list {
			if strings.TrimSpace(t) == "" {
				return nil, errors.New("empty table name in manifest tables")
			}
			k := strings.ToLower(t)
			if seen[k] {
				return nil, fmt.Errorf("table %q declared twice", t)
			}
			seen[k] = true
		}
	}
	schemas := make(map[string]*jsonschema.Schema, len(m.Tools))
	for _, t := range m.Tools {
		if t.Name == "" {
			return nil, errors.New("tool with an empty name")
		}
		if t.Name == ExportTool || strings.HasPrefix(t.Name, "weft.") {
			return nil, fmt.Errorf("tool name %q is reserved", t.Name)
		}
		if schemas[t.Name] != nil {
			return nil, fmt.Errorf("tool %q declared twice", t.Name)
		}
		s, err := compileSchema(t.Name, t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		schemas[t.Name] = s
		if len(t.OutputSchema) > 0 {
			if _, err := compileSchema(t.Name+"/output", t.OutputSchema); err != nil {
				return nil, fmt.Errorf("tool %s: output schema: %w", t.Name, err)
			}
		}
	}
	return schemas, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %s not allowed", url)
}

func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("missing")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if _, ok := doc.(map[string]any); !ok {
		if b, ok := doc.(bool); !ok || !b {
			return nil, errors.New("not a JSON Schema object")
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "weft:tool/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

var printer = message.NewPrinter(language.English)

// validateArgs checks args against s; the error names the JSON pointer of
// the deepest failing value.
func validateArgs(tool string, s *jsonschema.Schema, args json.RawMessage) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &ArgumentError{Tool: tool, Message: "arguments are not JSON: " + err.Error()}
	}
	if _, ok := inst.(map[string]any); !ok {
		return &ArgumentError{Tool: tool, Message: "arguments must be a JSON object"}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Tool: tool, Message: err.Error()}
	}
	leaf := deepest(ve)
	return &ArgumentError{Tool: tool, Pointer: jsonPointer(leaf.InstanceLocation), Message: leaf.ErrorKind.LocalizedString(printer)}
}

// deepest returns the first leaf cause with the longest instance location.
func deepest(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	best := e
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			if len(v.InstanceLocation) > len(best.InstanceLocation) || len(best.Causes) > 0 {
				best = v
			}
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(e)
	return best
}

func jsonPointer(loc []string) string {
	var b strings.Builder
	for _, p := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}
