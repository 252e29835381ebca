package module

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestEverythingGetPrompt(t *testing.T) {
	m := everything(t)
	ctx := context.Background()
	s := &Session{Workspace: fxWorkspace(t)}
	hash := s.Workspace.Hash()
	get := func(name string, args map[string]string) string {
		t.Helper()
		p, err := m.GetPrompt(ctx, s, name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"test_simple_prompt", nil,
			`{"description":"A simple prompt without arguments","messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]}`},
		{"test_simple_prompt", map[string]string{},
			`{"description":"A simple prompt without arguments","messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]}`},
		{"test_prompt_with_arguments", map[string]string{"arg1": "hello", "arg2": "world"},
			`{"description":"A prompt with required arguments","messages":[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='hello', arg2='world'"}}]}`},
		{"test_prompt_with_arguments", map[string]string{"arg1": "testValue1", "arg2": "testValue2"},
			`{"description":"A prompt with required arguments","messages":[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]}`},
		{"test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"},
			`{"description":"A prompt that includes an embedded resource","messages":[` +
				`{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}}},` +
				`{"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]}`},
		{"test_prompt_with_image", nil,
			`{"description":"A prompt that includes image content","messages":[` +
				`{"role":"user","content":{"type":"image","data":"` + everythingPNG + `","mimeType":"image/png"}},` +
				`{"role":"user","content":{"type":"text","text":"Please analyze the image above."}}]}`},
	} {
		if got := get(tc.name, tc.args); got != tc.want {
			t.Errorf("%s %v:\n got %s\nwant %s", tc.name, tc.args, got, tc.want)
		}
	}

	// The caller's mistakes are refused before the module runs.
	_, err := m.GetPrompt(ctx, s, "test_prompt_with_arguments", map[string]string{"arg1": "x"})
	var ae *ArgumentError
	if !errors.As(err, &ae) || !errors.Is(err, ErrInvalidArguments) || ae.Tool != "test_prompt_with_arguments" || ae.Pointer != "/arg2" {
		t.Errorf("missing arg2: %#v", err)
	}
	_, err = m.GetPrompt(ctx, s, "test_prompt_with_arguments", nil)
	if !errors.As(err, &ae) || ae.Pointer != "/arg1" {
		t.Errorf("no arguments: %v", err)
	}
	_, err = m.GetPrompt(ctx, s, "test_simple_prompt", map[string]string{"extra": "1"})
	if !errors.As(err, &ae) || ae.Pointer != "/extra" {
		t.Errorf("undeclared argument: %v", err)
	}
	for _, name := range []string{"nope", "", "test_simple_text", PromptGetRequest} {
		if _, err := m.GetPrompt(ctx, s, name, nil); !errors.Is(err, ErrUnknownPrompt) {
			t.Errorf("prompt %q: %v, want ErrUnknownPrompt", name, err)
		}
	}
	// The handler's own refusal.
	_, err = m.GetPrompt(ctx, s, "test_prompt_with_embedded_resource", map[string]string{"resourceUri": ""})
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || re.Message != "resourceUri is empty" {
		t.Errorf("empty resourceUri: %v", err)
	}
	if s.Seq() != 0 || s.Workspace.Hash() != hash {
		t.Fatalf("prompts consumed sequence numbers (%d) or changed the workspace", s.Seq())
	}
}
