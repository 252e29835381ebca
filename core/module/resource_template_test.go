package module

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestURITemplateMatch(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/a%20b%2Fc/data", map[string]string{"id": "a b/c"}},
		{"test://template/{id}/data", "test://template//data", nil},      // empty value
		{"test://template/{id}/data", "test://template/1/2/data", nil},   // no / in a value
		{"test://template/{id}/data", "test://template/123/data/x", nil}, // whole URI
		{"test://template/{id}/data", "xtest://template/123/data", nil},  // anchored
		{"test://template/{id}/data", "test://template/%zz/data", nil},   // does not decode
		{"test://template/{id}/data", "test://template/1?x=2/data", nil}, // no ? in a value
		{"db://{table}/{id}.json", "db://users/u.1.json", map[string]string{"table": "users", "id": "u.1"}},
		{"db://{table}/{id}.json", "db://users/u1.jsonx", nil},
		{"q://search?q={term}", "q://search?q=go%20lang", map[string]string{"term": "go lang"}},
		{"a+b.c://x/{v}", "a+b.c://x/(1)", map[string]string{"v": "(1)"}}, // literal regexp metacharacters
		{"a+b.c://x/{v}", "aab.c://x/1", nil},
	}
	for _, tc := range tests {
		tp, err := parseURITemplate(tc.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tc.tmpl, err)
		}
		got, ok := tp.match(tc.uri)
		if ok != (tc.want != nil) || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s match %s = %v %v, want %v", tc.tmpl, tc.uri, got, ok, tc.want)
		}
	}
}

func TestURITemplateErrors(t *testing.T) {
	for tmpl, want := range map[string]string{
		"test://x/{+id}":     "only level-1",
		"test://x/{#id}":     "only level-1",
		"test://x{/id}":      "only level-1",
		"test://x{?q}":       "only level-1",
		"test://x/{.id}":     "only level-1",
		"test://x/{a,b}":     "lists and value modifiers",
		"test://x/{id:3}":    "lists and value modifiers",
		"test://x/{ids*}":    "lists and value modifiers",
		"test://x/{a}{b}":    "ambiguous",
		"test://x/{id}/{id}": "appears twice",
		"test://x/{id":       "unclosed {",
		"test://x/id}":       "unmatched }",
		"test://x/{}":        "empty expression",
		"test://x/{a-b}":     "invalid variable name",
		"test://x/{a.}":      "invalid variable name",
		"test://x y/{id}":    "not allowed",
		"test://x/%zz/{id}":  "percent-encoded",
		"test://x/static":    "no {variable}",
		"//host/{id}":        "absolute URI",
		"/relative/{id}":     "absolute URI",
	} {
		_, err := parseURITemplate(tmpl)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", tmpl, err, want)
		}
	}
	for _, ok := range []string{"test://x/{a.b}", "test://x/{a_1}/{B%41}", "urn:x:{id}"} {
		if _, err := parseURITemplate(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestManifestValidateMCP(t *testing.T) {
	base := func() *Manifest {
		return &Manifest{
			ABI: ABIVersion, Name: "m", Tools: []Tool{},
			Resources:         []Resource{{URI: "test://a", Name: "a", MimeType: "text/plain"}},
			ResourceTemplates: []ResourceTemplate{{URITemplate: "test://t/{id}", Name: "t"}},
			Prompts:           []Prompt{{Name: "p", Arguments: []PromptArgument{{Name: "x", Required: true}}}},
		}
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("valid manifest: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*Manifest)
		want string
	}{
		"resource without uri":      {func(m *Manifest) { m.Resources[0].URI = "" }, "has no uri"},
		"relative uri":              {func(m *Manifest) { m.Resources[0].URI = "/a" }, "not an absolute URI"},
		"uri with braces":           {func(m *Manifest) { m.Resources[0].URI = "test://{id}" }, "belongs under resourceTemplates"},
		"uri with space":            {func(m *Manifest) { m.Resources[0].URI = "test://a b" }, "spaces or control"},
		"duplicate uri":             {func(m *Manifest) { m.Resources = append(m.Resources, Resource{URI: "test://a", Name: "b"}) }, `resource "test://a" declared twice`},
		"resource without name":     {func(m *Manifest) { m.Resources[0].Name = " " }, "empty name"},
		"duplicate resource name":   {func(m *Manifest) { m.Resources = append(m.Resources, Resource{URI: "test://b", Name: "a"}) }, `name "a" is already used`},
		"name shared with template": {func(m *Manifest) { m.ResourceTemplates[0].Name = "a" }, `name "a" is already used by resource "test://a"`},
		"bad mime type":             {func(m *Manifest) { m.Resources[0].MimeType = "text" }, "not a media type"},
		"template without text":     {func(m *Manifest) { m.ResourceTemplates[0].URITemplate = "" }, "has no uriTemplate"},
		"level-2 template":          {func(m *Manifest) { m.ResourceTemplates[0].URITemplate = "test://t/{+id}" }, "only level-1"},
		"duplicate template": {func(m *Manifest) {
			m.ResourceTemplates = append(m.ResourceTemplates, ResourceTemplate{URITemplate: "test://t/{id}", Name: "u"})
		}, "declared twice"},
		"template mime type":  {func(m *Manifest) { m.ResourceTemplates[0].MimeType = "a b" }, "not a media type"},
		"prompt without name": {func(m *Manifest) { m.Prompts[0].Name = "" }, "prompt 0 has an empty name"},
		"reserved prompt":     {func(m *Manifest) { m.Prompts[0].Name = "weft.x" }, "reserved"},
		"duplicate prompt":    {func(m *Manifest) { m.Prompts = append(m.Prompts, Prompt{Name: "p"}) }, `prompt "p" declared twice`},
		"empty argument name": {func(m *Manifest) { m.Prompts[0].Arguments[0].Name = "" }, "argument 0 has an empty name"},
		"duplicate argument": {func(m *Manifest) {
			m.Prompts[0].Arguments = append(m.Prompts[0].Arguments, PromptArgument{Name: "x"})
		}, `argument "x" declared twice`},
	} {
		m := base()
		tc.edit(m)
		err := m.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

// The new manifest fields are optional: a manifest without them encodes as
// before, and their JSON names are MCP's.
func TestManifestMCPFieldsJSON(t *testing.T) {
	m := Manifest{ABI: ABIVersion, Name: "m", Tools: []Tool{}}
	b, _ := json.Marshal(m)
	if strings.Contains(string(b), "resource") || strings.Contains(string(b), "prompts") {
		t.Fatalf("empty lists are encoded: %s", b)
	}
	m.Resources = []Resource{{URI: "test://a", Name: "a", Title: "A", Description: "d", MimeType: "text/plain"}}
	m.ResourceTemplates = []ResourceTemplate{{URITemplate: "test://t/{id}", Name: "t"}}
	m.Prompts = []Prompt{{Name: "p", Title: "P", Arguments: []PromptArgument{{Name: "x", Description: "an x", Required: true}, {Name: "y"}}}}
	b, _ = json.Marshal(m)
	for _, want := range []string{
		`"resources":[{"uri":"test://a","name":"a","title":"A","description":"d","mimeType":"text/plain"}]`,
		`"resourceTemplates":[{"uriTemplate":"test://t/{id}","name":"t"}]`,
		`"prompts":[{"name":"p","title":"P","arguments":[{"name":"x","description":"an x","required":true},{"name":"y"}]}]`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("manifest JSON %s\nlacks %s", b, want)
		}
	}
}

func TestContentJSON(t *testing.T) {
	// Existing shapes decode and encode as before.
	for _, s := range []string{
		`{"type":"text","text":"hi"}`,
		`{"type":"image","data":"AAE=","mimeType":"image/png"}`,
		`{"type":"resource_link","mimeType":"text/plain","uri":"test://a","name":"a"}`,
		`{"type":"audio","data":"AAE=","mimeType":"audio/wav"}`,
		`{"type":"resource","resource":{"uri":"test://a","mimeType":"text/plain","text":"x"}}`,
		`{"type":"resource","resource":{"uri":"test://a","text":""}}`,
		`{"type":"resource","resource":{"uri":"test://b","mimeType":"image/png","blob":"AAE="}}`,
	} {
		var c Content
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if err := c.Check(); err != nil {
			t.Errorf("%s: %v", s, err)
		}
		b, err := json.Marshal(c)
		if err != nil || string(b) != s {
			t.Errorf("round trip of %s: %s %v", s, b, err)
		}
	}
	for s, want := range map[string]string{
		`{"type":"audio","data":"AAE="}`:              "audio needs data and mimeType",
		`{"type":"image","mimeType":"image/png"}`:     "image needs data and mimeType",
		`{"type":"resource"}`:                         "needs an embedded resource",
		`{"type":"resource","resource":{"text":"x"}}`: "need a uri",
		`{"type":"resource_link","name":"a"}`:         "resource_link needs uri",
		`{"type":"video"}`:                            "unknown content type",
	} {
		var c Content
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", s, err, want)
		}
	}
	for _, s := range []string{
		`{"uri":"test://a"}`,
		`{"uri":"test://a","text":"x","blob":"AAE="}`,
	} {
		var rc ResourceContents
		if err := json.Unmarshal([]byte(s), &rc); err == nil {
			t.Errorf("%s decoded: %+v", s, rc)
		}
	}
}
