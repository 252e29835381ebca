package abi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestContentEncoding pins the member order and omission rules of every
// content type: the ABI v1 encoding modules already produce.
func TestContentEncoding(t *testing.T) {
	for _, tc := range []struct {
		c    Content
		want string
	}{
		{Text(""), `{"type":"text","text":""}`},
		{Text("a<b>"), `{"type":"text","text":"a<b>"}`},
		{Content{Type: ContentImage, Data: "AAEC", MimeType: "image/png", Text: "ignored"}, `{"type":"image","data":"AAEC","mimeType":"image/png"}`},
		{Content{Type: ContentAudio, MimeType: "audio/wav"}, `{"type":"audio","mimeType":"audio/wav"}`},
		{Content{Type: ContentResourceLink, URI: "test://x", MimeType: "text/plain"}, `{"type":"resource_link","mimeType":"text/plain","uri":"test://x","name":""}`},
		{Content{Type: ContentResource, Resource: &ResourceContents{URI: "test://r", Blob: "AA=="}}, `{"type":"resource","resource":{"uri":"test://r","blob":"AA=="}}`},
		{Content{Type: ContentResource, Resource: &ResourceContents{URI: "test://r", EmptyBlob: true}}, `{"type":"resource","resource":{"uri":"test://r","blob":""}}`},
		{Content{Type: ContentResource, Resource: &ResourceContents{URI: "test://r", MimeType: "text/plain"}}, `{"type":"resource","resource":{"uri":"test://r","mimeType":"text/plain","text":""}}`},
		{Content{Type: "video", URI: "test://v"}, `{"type":"video","uri":"test://v"}`},
	} {
		b, err := Marshal(tc.c)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: got %s (%v), want %s", tc.c, b, err, tc.want)
		}
	}
}

func TestContentCheckAndResourceDecoding(t *testing.T) {
	for raw, want := range map[string]string{
		`{"type":"text"}`:                            "",
		`{"type":"image","data":"AA"}`:               "image needs data and mimeType",
		`{"type":"resource_link"}`:                   "resource_link needs uri",
		`{"type":"resource"}`:                        "resource needs an embedded resource",
		`{"type":"resource","resource":{"text":""}}`: "resource: resource contents need a uri",
		`{"type":"video"}`:                           `unknown content type "video"`,
	} {
		var c Content
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got := ""
		if err := c.Check(); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: Check() = %q, want %q", raw, got, want)
		}
	}
	var rc ResourceContents
	for _, bad := range []string{`{"uri":"u"}`, `{"uri":"u","text":"","blob":""}`} {
		if err := json.Unmarshal([]byte(bad), &rc); err == nil {
			t.Errorf("%s: decoded, want exactly-one error", bad)
		}
	}
	for raw, want := range map[string]ResourceContents{
		`{"uri":"u","blob":""}`:                  {URI: "u", EmptyBlob: true},
		`{"uri":"u","blob":"AA=="}`:              {URI: "u", Blob: "AA=="},
		`{"uri":"u","mimeType":"m","text":"hi"}`: {URI: "u", MimeType: "m", Text: "hi"},
	} {
		var got ResourceContents
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", raw, d)
		}
		if b, _ := Marshal(got); string(b) != raw {
			t.Errorf("round trip of %s: %s", raw, b)
		}
	}
}

func TestDecodeAnswer(t *testing.T) {
	a, err := DecodeAnswer([]byte(`{"content":[],"contents":5,"description":{"x":1},"isError":true,"notFound":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Content == nil || len(a.Content) != 0 || !a.IsError || !a.NotFound || a.InternalError != nil || string(a.Contents) != "5" {
		t.Errorf("answer %+v", a)
	}
	for _, bad := range []string{``, `[]`, `{"content":{}}`, `{} {}`, `{"isError":"yes"}`} {
		if _, err := DecodeAnswer([]byte(bad)); err == nil {
			t.Errorf("%q: decoded", bad)
		}
	}
}
