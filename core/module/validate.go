package module

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	fshost "github.com/weft-dev/weft/hosts/fs"
	"github.com/weft-dev/weft/sdk/abi"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SupportedHosts are the host libraries and versions this runtime provides.
var SupportedHosts = map[string][]string{
	"sql":   {"v1", "v2"}, // v2 provides weft_sql_v1 and weft_sql_v2
	"clock": {"v1"},
	"rand":  {"v1"},
	"log":   {"v1"},
	"fs":    {"v1"},
}

// tableNameRE is the charset of manifest table names: MySQL's unquoted
// identifiers (docs/design/015-sql-sandbox.md: no separator or quote can
// then hide in a name).
var tableNameRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]{0,63}$`)

// Validate checks a manifest: ABI version, supported host libraries,
// non-empty unique tool names (none reserved), compilable input schemas,
// unique table names of the identifier charset (tableNameRE), and the resources, resource templates and
// prompts (see validateMCP).
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
	if m.ExportChanged && !m.Export {
		return nil, errors.New("manifest says export_changed without export")
	}
	seen := map[string]bool{}
	for _, list := range [][]string{m.Tables.Owns, m.Tables.Reads} {
		for _, t := range list {
			if strings.TrimSpace(t) == "" {
				return nil, errors.New("empty table name in manifest tables")
			}
			if !tableNameRE.MatchString(t) {
				return nil, fmt.Errorf("table name %q in manifest tables: names are plain SQL identifiers (letters, digits, _ and $, not starting with a digit, at most 64)", t)
			}
			k := strings.ToLower(t)
			if seen[k] {
				return nil, fmt.Errorf("table %q declared twice", t)
			}
			seen[k] = true
		}
	}
	if f := m.Files; f != nil {
		for _, list := range [][]string{f.Reads, f.Writes} {
			for _, pat := range list {
				if err := fshost.CheckPattern(pat); err != nil {
					return nil, fmt.Errorf("manifest files: %w", err)
				}
			}
		}
		if len(f.Reads)+len(f.Writes) > 0 && m.Hosts["fs"] == "" {
			return nil, errors.New(`manifest declares files but not the host library "fs": "v1"`)
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
	if err := m.validateMCP(); err != nil {
		return nil, err
	}
	return schemas, nil
}

// validateMCP checks the resources, resource templates and prompts:
// resources have an absolute URI without template braces, unique among the
// resources; templates are RFC 6570 level-1 (parseURITemplate) and unique;
// resource and template names are non-empty and unique across both lists;
// mime types parse; prompt names are non-empty, unique and not reserved
// ("weft." prefix), and each prompt's argument names are non-empty and
// unique.
func (m *Manifest) validateMCP() error {
	names := map[string]string{} // resource or template name -> what declared it
	claim := func(name, what string) error {
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("%s has an empty name", what)
		}
		if prev, ok := names[name]; ok {
			return fmt.Errorf("%s: name %q is already used by %s", what, name, prev)
		}
		names[name] = what
		return nil
	}
	uris := map[string]bool{}
	for i, r := range m.Resources {
		what := fmt.Sprintf("resource %q", r.URI)
		if r.URI == "" {
			return fmt.Errorf("resource %d (%q) has no uri", i, r.Name)
		}
		if strings.ContainsAny(r.URI, "{}") {
			return fmt.Errorf("%s: a uri with {variables} belongs under resourceTemplates", what)
		}
		if strings.ContainsFunc(r.URI, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
			return fmt.Errorf("%s: uri contains spaces or control characters", what)
		}
		if u, err := url.Parse(r.URI); err != nil || u.Scheme == "" {
			return fmt.Errorf("%s: uri is not an absolute URI (scheme:...)", what)
		}
		if uris[r.URI] {
			return fmt.Errorf("%s declared twice", what)
		}
		uris[r.URI] = true
		if err := claim(r.Name, what); err != nil {
			return err
		}
		if err := checkMimeType(what, r.MimeType); err != nil {
			return err
		}
	}
	templates := map[string]bool{}
	for i, t := range m.ResourceTemplates {
		what := fmt.Sprintf("resource template %q", t.URITemplate)
		if t.URITemplate == "" {
			return fmt.Errorf("resource template %d (%q) has no uriTemplate", i, t.Name)
		}
		if _, err := parseURITemplate(t.URITemplate); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if templates[t.URITemplate] {
			return fmt.Errorf("%s declared twice", what)
		}
		templates[t.URITemplate] = true
		if err := claim(t.Name, what); err != nil {
			return err
		}
		if err := checkMimeType(what, t.MimeType); err != nil {
			return err
		}
	}
	prompts := map[string]bool{}
	for i, p := range m.Prompts {
		if strings.TrimSpace(p.Name) == "" {
			return fmt.Errorf("prompt %d has an empty name", i)
		}
		if strings.HasPrefix(p.Name, "weft.") {
			return fmt.Errorf("prompt name %q is reserved (weft. prefix)", p.Name)
		}
		if prompts[p.Name] {
			return fmt.Errorf("prompt %q declared twice", p.Name)
		}
		prompts[p.Name] = true
		args := map[string]bool{}
		for j, a := range p.Arguments {
			if strings.TrimSpace(a.Name) == "" {
				return fmt.Errorf("prompt %q: argument %d has an empty name", p.Name, j)
			}
			if args[a.Name] {
				return fmt.Errorf("prompt %q: argument %q declared twice", p.Name, a.Name)
			}
			args[a.Name] = true
		}
	}
	return nil
}

func checkMimeType(what, mt string) error {
	if mt == "" {
		return nil
	}
	if _, _, err := mime.ParseMediaType(mt); err != nil || !strings.Contains(mt, "/") {
		return fmt.Errorf("%s: mimeType %q is not a media type (type/subtype)", what, mt)
	}
	return nil
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
	// abi.DecodeValue is jsonschema.UnmarshalJSON's decoding (UseNumber)
	// without encoding/json's reflection; what it leaves goes to that.
	inst, ok := abi.DecodeValue(args)
	if !ok {
		var err error
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(args)); err != nil {
			return &ArgumentError{Tool: tool, Message: "arguments are not JSON: " + err.Error()}
		}
	}
	if _, ok := inst.(map[string]any); !ok {
		return &ArgumentError{Tool: tool, Message: "arguments must be a JSON object"}
	}
	err := s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Tool: tool, Message: err.Error()}
	}
	leaf := deepest(ve)
	return &ArgumentError{Tool: tool, Pointer: jsonPointer(leaf.InstanceLocation), Message: leafMessage(leaf)}
}

// deepest returns the leaf cause with the longest instance location; ties
// go to the earliest instance location (segment by segment, array indexes
// numerically), then the earliest schema location, so the same arguments
// always name the same failing value whatever order the validator walked
// the object's members in (it walks a Go map).
func deepest(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	best := e
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			if len(best.Causes) > 0 || deeperFirst(v, best) {
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

// deeperFirst reports whether leaf a goes before leaf b: longer instance
// location, then earlier instance location, then a "required" refusal,
// then earlier schema location, then earlier keyword path.
func deeperFirst(a, b *jsonschema.ValidationError) bool {
	if la, lb := len(a.InstanceLocation), len(b.InstanceLocation); la != lb {
		return la > lb
	}
	for i := range a.InstanceLocation {
		if c := compareSegment(a.InstanceLocation[i], b.InstanceLocation[i]); c != 0 {
			return c < 0
		}
	}
	// At one location a missing required member is named before anything
	// else (an extra member is often the missing one misspelt).
	if ra, rb := keywordRank(a), keywordRank(b); ra != rb {
		return ra < rb
	}
	if a.SchemaURL != b.SchemaURL {
		return a.SchemaURL < b.SchemaURL
	}
	return slices.Compare(a.ErrorKind.KeywordPath(), b.ErrorKind.KeywordPath()) < 0
}

// keywordRank is 0 for a leaf refused by "required", 1 for any other.
func keywordRank(v *jsonschema.ValidationError) int {
	if p := v.ErrorKind.KeywordPath(); len(p) > 0 && p[len(p)-1] == "required" {
		return 0
	}
	return 1
}

// compareSegment orders two instance-location segments: array indexes
// (decimal digits) numerically and before member names, names bytewise.
func compareSegment(a, b string) int {
	na, nb := isIndex(a), isIndex(b)
	switch {
	case na && nb:
		if len(a) != len(b) {
			return cmp.Compare(len(a), len(b))
		}
		return strings.Compare(a, b)
	case na:
		return -1
	case nb:
		return 1
	}
	return strings.Compare(a, b)
}

func isIndex(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// leafMessage is the leaf's message with the additional-properties list
// sorted: the validator collects those names in map order.
func leafMessage(v *jsonschema.ValidationError) string {
	if k, ok := v.ErrorKind.(*kind.AdditionalProperties); ok {
		k2 := *k
		k2.Properties = slices.Sorted(slices.Values(k.Properties))
		return k2.LocalizedString(printer)
	}
	return v.ErrorKind.LocalizedString(printer)
}

func jsonPointer(loc []string) string {
	var b strings.Builder
	for _, p := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}
