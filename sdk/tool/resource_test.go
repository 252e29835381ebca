package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weft-dev/weft/sdk/abi"
)

func TestManifestResourcesAndPrompts(t *testing.T) {
	useRegistry(t)
	Module(Info{Name: "m", Version: "1"})
	Register("schema", "Raw schema.", func(context.Context, map[string]any) (string, error) { return "", nil },
		InputSchema(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
			"$defs": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a"}}, "additionalProperties": false}`))
	Register("media", "Media.", func(context.Context, struct{}) (*Result, error) { return nil, nil })
	none := func(context.Context, string) ([]ResourceContents, error) { return nil, nil }
	Resource(ResourceInfo{URI: "test://a", Name: "a", Title: "A <1>", Description: "The a.", MimeType: "text/plain"}, none)
	Resource(ResourceInfo{URI: "test://b", Name: "b"}, none)
	ResourceTemplate(TemplateInfo{URITemplate: "test://t/{id}", Name: "t", MimeType: "application/json"},
		func(context.Context, string, map[string]string) ([]ResourceContents, error) { return nil, nil })
	Prompt(PromptInfo{Name: "p", Title: "P", Description: "A p.", Arguments: []PromptArgument{{Name: "x", Description: "an x", Required: true}, {Name: "y"}}},
		func(context.Context, map[string]string) ([]PromptMessage, error) { return nil, nil })
	Prompt(PromptInfo{Name: "q"}, func(context.Context, map[string]string) ([]PromptMessage, error) { return nil, nil })
	want := `{"abi":"weft/v1","name":"m","version":"1","tools":[` +
		`{"name":"schema","description":"Raw schema.","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}},"additionalProperties":false}},` +
		`{"name":"media","description":"Media.","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}],` +
		`"tables":{"owns":[]},"hosts":{"clock":"v1","log":"v1","rand":"v1","sql":"v2"},"export":false,` +
		`"resources":[{"uri":"test://a","name":"a","title":"A <1>","description":"The a.","mimeType":"text/plain"},{"uri":"test://b","name":"b"}],` +
		`"resourceTemplates":[{"uriTemplate":"test://t/{id}","name":"t","mimeType":"application/json"}],` +
		`"prompts":[{"name":"p","title":"P","description":"A p.","arguments":[{"name":"x","description":"an x","required":true},{"name":"y"}]},{"name":"q"}]}`
	if got := string(ManifestJSON()); got != want {
		t.Errorf("manifest:\n got %s\nwant %s", got, want)
	}
}

func TestResourceRegistrationPanics(t *testing.T) {
	useRegistry(t)
	none := func(context.Context, string) ([]ResourceContents, error) { return nil, nil }
	tnone := func(context.Context, string, map[string]string) ([]ResourceContents, error) { return nil, nil }
	pnone := func(context.Context, map[string]string) ([]PromptMessage, error) { return nil, nil }
	Resource(ResourceInfo{URI: "test://a", Name: "a"}, none)
	ResourceTemplate(TemplateInfo{URITemplate: "test://t/{id}", Name: "t"}, tnone)
	Prompt(PromptInfo{Name: "p"}, pnone)
	ok := func(context.Context, struct{}) (string, error) { return "", nil }
	for name, f := range map[string]func(){
		"nil resource fn":       func() { Resource(ResourceInfo{URI: "test://x", Name: "x"}, nil) },
		"relative uri":          func() { Resource(ResourceInfo{URI: "/x", Name: "x"}, none) },
		"uri with braces":       func() { Resource(ResourceInfo{URI: "test://{x}", Name: "x"}, none) },
		"bad scheme":            func() { Resource(ResourceInfo{URI: "1test://x", Name: "x"}, none) },
		"duplicate uri":         func() { Resource(ResourceInfo{URI: "test://a", Name: "x"}, none) },
		"empty resource name":   func() { Resource(ResourceInfo{URI: "test://x"}, none) },
		"name of a template":    func() { Resource(ResourceInfo{URI: "test://x", Name: "t"}, none) },
		"nil template fn":       func() { ResourceTemplate(TemplateInfo{URITemplate: "test://u/{id}", Name: "u"}, nil) },
		"template without var":  func() { ResourceTemplate(TemplateInfo{URITemplate: "test://u", Name: "u"}, tnone) },
		"duplicate template":    func() { ResourceTemplate(TemplateInfo{URITemplate: "test://t/{id}", Name: "u"}, tnone) },
		"name of a resource":    func() { ResourceTemplate(TemplateInfo{URITemplate: "test://u/{id}", Name: "a"}, tnone) },
		"nil prompt fn":         func() { Prompt(PromptInfo{Name: "x"}, nil) },
		"empty prompt name":     func() { Prompt(PromptInfo{}, pnone) },
		"reserved prompt name":  func() { Prompt(PromptInfo{Name: "weft.x"}, pnone) },
		"duplicate prompt":      func() { Prompt(PromptInfo{Name: "p"}, pnone) },
		"repeated argument":     func() { Prompt(PromptInfo{Name: "x", Arguments: []PromptArgument{{Name: "a"}, {Name: "a"}}}, pnone) },
		"empty argument":        func() { Prompt(PromptInfo{Name: "x", Arguments: []PromptArgument{{}}}, pnone) },
		"input schema not JSON": func() { Register("x", "", ok, InputSchema(`{`)) },
		"input schema an array": func() { Register("x", "", ok, InputSchema(`[]`)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestDispatchResourceRead(t *testing.T) {
	useRegistry(t)
	var gotURI string
	Resource(ResourceInfo{URI: "test://text", Name: "text", MimeType: "text/plain"}, func(_ context.Context, uri string) ([]ResourceContents, error) {
		gotURI = uri
		Log(1, "reading")
		return []ResourceContents{{Text: "hello <world>"}}, nil
	})
	Resource(ResourceInfo{URI: "test://bin", Name: "bin"}, func(context.Context, string) ([]ResourceContents, error) {
		return []ResourceContents{{MimeType: "application/octet-stream", Blob: []byte{0, 1, 2}}, {URI: "test://other", Blob: []byte{}}}, nil
	})
	Resource(ResourceInfo{URI: "test://empty", Name: "empty"}, func(context.Context, string) ([]ResourceContents, error) { return nil, nil })
	Resource(ResourceInfo{URI: "test://boom", Name: "boom"}, func(context.Context, string) ([]ResourceContents, error) { panic("kaboom") })
	ResourceTemplate(TemplateInfo{URITemplate: "test://items/{id}", Name: "item", MimeType: "application/json"},
		func(_ context.Context, uri string, vars map[string]string) ([]ResourceContents, error) {
			switch vars["id"] {
			case "missing":
				return nil, fmt.Errorf("no item %q: %w", vars["id"], ErrNotFound)
			case "broken":
				return nil, errors.New("disk on fire")
			}
			return []ResourceContents{{Text: fmt.Sprintf(`{"id":%q}`, vars["id"])}}, nil
		})
	h := &fakeHost{}
	for _, tc := range []struct{ args, want string }{
		{`{"uri":"test://text"}`, `{"contents":[{"uri":"test://text","mimeType":"text/plain","text":"hello <world>"}]}`},
		{`{"uri":"test://bin"}`, `{"contents":[{"uri":"test://bin","mimeType":"application/octet-stream","blob":"AAEC"},{"uri":"test://other","blob":""}]}`},
		{`{"uri":"test://empty"}`, `{"contents":[]}`},
		{`{"uri":"test://items/a b","template":"test://items/{id}","variables":{"id":"a b"}}`, `{"contents":[{"uri":"test://items/a b","mimeType":"application/json","text":"{\"id\":\"a b\"}"}]}`},
		{`{"uri":"test://items/missing","template":"test://items/{id}","variables":{"id":"missing"}}`, `{"content":[{"type":"text","text":"no item \"missing\": resource not found"}],"isError":true,"notFound":true}`},
		{`{"uri":"test://items/broken","template":"test://items/{id}","variables":{"id":"broken"}}`, `{"content":[{"type":"text","text":"disk on fire"}],"isError":true}`},
		{`{"uri":"test://items/x","template":"test://nope/{id}","variables":{"id":"x"}}`, `{"content":[{"type":"text","text":"unknown resource \"test://items/x\""}],"isError":true,"notFound":true}`},
		{`{"uri":"test://nope"}`, `{"content":[{"type":"text","text":"unknown resource \"test://nope\""}],"isError":true,"notFound":true}`},
		{`{"uri":"test://boom"}`, `{"internalError":"panic: kaboom"}`},
		{`[]`, `{"internalError":"malformed resource read request: json: cannot unmarshal array into Go value of type abi.ResourceReadArgs"}`},
	} {
		if got := call(t, h, abi.ResourceReadRequest, tc.args); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
	if gotURI != "test://text" || len(h.logs) < 1 || h.logs[0] != "1:reading" {
		t.Errorf("handler saw uri %q, logs %q", gotURI, h.logs)
	}
}

func TestDispatchPromptGet(t *testing.T) {
	useRegistry(t)
	Prompt(PromptInfo{Name: "greet", Description: "Greets.", Arguments: []PromptArgument{{Name: "who", Required: true}, {Name: "tone"}}},
		func(_ context.Context, args map[string]string) ([]PromptMessage, error) {
			if args["who"] == "nobody" {
				return nil, Errorf("cannot greet %s", args["who"])
			}
			return []PromptMessage{
				{Role: "user", Content: Text("Greet " + args["who"] + " " + args["tone"])},
				{Role: "assistant", Content: Embedded(ResourceContents{URI: "test://who", Text: args["who"]})},
			}, nil
		})
	Prompt(PromptInfo{Name: "nil"}, func(context.Context, map[string]string) ([]PromptMessage, error) { return nil, nil })
	Prompt(PromptInfo{Name: "bad"}, func(context.Context, map[string]string) ([]PromptMessage, error) {
		return []PromptMessage{{Role: "user", Content: Content{Type: "video"}}}, nil
	})
	h := &fakeHost{}
	for _, tc := range []struct{ args, want string }{
		{`{"name":"greet","arguments":{"who":"Ada","tone":"warmly"}}`,
			`{"description":"Greets.","messages":[{"role":"user","content":{"type":"text","text":"Greet Ada warmly"}},{"role":"assistant","content":{"type":"resource","resource":{"uri":"test://who","text":"Ada"}}}]}`},
		{`{"name":"greet","arguments":{}}`, `{"content":[{"type":"text","text":"prompt greet needs argument \"who\""}],"isError":true}`},
		{`{"name":"greet","arguments":{"who":"nobody"}}`, `{"content":[{"type":"text","text":"cannot greet nobody"}],"isError":true}`},
		{`{"name":"nil"}`, `{"messages":[]}`},
		{`{"name":"bad"}`, `{"internalError":"encoding the prompt: message 0: tool: unknown content type \"video\""}`},
		{`{"name":"nope","arguments":{}}`, `{"content":[{"type":"text","text":"unknown prompt \"nope\""}],"isError":true}`},
	} {
		if got := call(t, h, abi.PromptGetRequest, tc.args); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
}

func TestDispatchContentResults(t *testing.T) {
	useRegistry(t)
	Register("media", "", func(context.Context, struct{}) (Result, error) {
		return Result{Content: []Content{
			Text("look <here>"),
			Image([]byte{1, 2, 3}, "image/png"),
			Audio([]byte{4, 5}, "audio/wav"),
			ResourceLink("test://a", "a", ""),
			ResourceLink("test://b", "b", "text/plain"),
			Embedded(ResourceContents{URI: "test://c", MimeType: "text/plain", Text: ""}),
			Embedded(ResourceContents{URI: "test://d", Blob: []byte("hi")}),
		}}, nil
	})
	Register("failing", "", func(context.Context, struct{}) (*Result, error) {
		return &Result{Content: []Content{Text("partial"), Image([]byte{1}, "image/gif")}, IsError: true}, nil
	})
	Register("empty", "", func(context.Context, struct{}) (*Result, error) { return &Result{}, nil })
	Register("nil", "", func(context.Context, struct{}) (*Result, error) { return nil, nil })
	Register("anyresult", "", func(context.Context, struct{}) (any, error) {
		return Result{Content: []Content{Audio(nil, "audio/wav")}}, nil
	})
	Register("badtype", "", func(context.Context, struct{}) (Result, error) {
		return Result{Content: []Content{{Type: "video"}}}, nil
	})
	Register("nomime", "", func(context.Context, struct{}) (Result, error) {
		return Result{Content: []Content{Image([]byte{1}, "")}}, nil
	})
	Register("err", "", func(context.Context, struct{}) (Result, error) { return Result{}, errors.New("nope") })
	h := &fakeHost{}
	for _, tc := range []struct{ tool, want string }{
		{"media", `{"content":[{"type":"text","text":"look <here>"},{"type":"image","data":"AQID","mimeType":"image/png"},{"type":"audio","data":"BAU=","mimeType":"audio/wav"},` +
			`{"type":"resource_link","uri":"test://a","name":"a"},{"type":"resource_link","mimeType":"text/plain","uri":"test://b","name":"b"},` +
			`{"type":"resource","resource":{"uri":"test://c","mimeType":"text/plain","text":""}},{"type":"resource","resource":{"uri":"test://d","blob":"aGk="}}]}`},
		{"failing", `{"content":[{"type":"text","text":"partial"},{"type":"image","data":"AQ==","mimeType":"image/gif"}],"isError":true}`},
		{"empty", `{"content":[]}`},
		{"nil", `{"internalError":"the tool returned a nil *tool.Result"}`},
		{"anyresult", `{"content":[{"type":"audio","mimeType":"audio/wav"}]}`},
		{"badtype", `{"internalError":"encoding the result: content 0: tool: unknown content type \"video\""}`},
		{"nomime", `{"internalError":"encoding the result: content 0: tool: image content without a mimeType"}`},
		{"err", `{"content":[{"type":"text","text":"nope"}],"isError":true}`},
	} {
		if got := call(t, h, tc.tool, `{}`); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.tool, got, tc.want)
		}
	}
	// A Result tool has no output schema.
	if m := string(ManifestJSON()); strings.Contains(m, "outputSchema") {
		t.Errorf("manifest has an output schema: %s", m)
	}
}
