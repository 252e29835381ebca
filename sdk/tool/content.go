package tool

import (
	"encoding/base64"
	"fmt"
)

// Content is one MCP content item of a tool result (Result) or of a prompt
// message (PromptMessage). Build it with Text, Image, Audio, ResourceLink or
// Embedded; the fields a type does not use are ignored. Encoding a Content
// of another Type fails (for a tool: an internal error).
type Content struct {
	Type     string            // "text", "image", "audio", "resource_link" or "resource"
	Text     string            // text: the text
	Data     []byte            // image, audio: the raw bytes, base64-encoded on the wire
	MimeType string            // image, audio: required; resource_link: optional
	URI      string            // resource_link: the linked resource
	Name     string            // resource_link: its name
	Resource *ResourceContents // resource: the embedded resource
}

// Text is a text content item: {"type": "text", "text": s}.
func Text(s string) Content { return Content{Type: "text", Text: s} }

// Image is an image content item: {"type": "image", "data": <base64 of
// data>, "mimeType": mimeType}, mimeType such as "image/png".
func Image(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: data, MimeType: mimeType}
}

// Audio is an audio content item: {"type": "audio", "data": <base64 of
// data>, "mimeType": mimeType}, mimeType such as "audio/wav".
func Audio(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: data, MimeType: mimeType}
}

// ResourceLink is a link to a resource the client may read: {"type":
// "resource_link", "uri": uri, "name": name, "mimeType": mimeType}
// (mimeType omitted when empty).
func ResourceLink(uri, name, mimeType string) Content {
	return Content{Type: "resource_link", URI: uri, Name: name, MimeType: mimeType}
}

// Embedded is an embedded resource content item: {"type": "resource",
// "resource": r}.
func Embedded(r ResourceContents) Content { return Content{Type: "resource", Resource: &r} }

type contentJSON struct {
	Type     string            `json:"type"`
	Text     *string           `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"`
	MimeType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     *string           `json:"name,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
}

// MarshalJSON writes the MCP shape of c's type.
func (c Content) MarshalJSON() ([]byte, error) {
	j := contentJSON{Type: c.Type}
	switch c.Type {
	case "text":
		j.Text = &c.Text
	case "image", "audio":
		if c.MimeType == "" {
			return nil, fmt.Errorf("tool: %s content without a mimeType", c.Type)
		}
		j.Data, j.MimeType = base64.StdEncoding.EncodeToString(c.Data), c.MimeType
	case "resource_link":
		if c.URI == "" {
			return nil, fmt.Errorf("tool: resource_link content without a uri")
		}
		j.URI, j.Name, j.MimeType = c.URI, &c.Name, c.MimeType
	case "resource":
		if c.Resource == nil || c.Resource.URI == "" {
			return nil, fmt.Errorf("tool: resource content without a resource uri")
		}
		j.Resource = c.Resource
	default:
		return nil, fmt.Errorf("tool: unknown content type %q", c.Type)
	}
	return marshal(j)
}

// ResourceContents is the contents of a resource: what a resource handler
// returns, and the resource of an Embedded content item. It encodes as
// {"uri", "mimeType", "text"} or, when Blob is not nil, as {"uri",
// "mimeType", "blob": <base64 of Blob>}.
type ResourceContents struct {
	URI      string // the resource's URI; a handler may leave it empty for the URI read
	MimeType string // optional; a handler may leave it empty for the declared one
	Text     string // text contents
	Blob     []byte // binary contents; not nil selects them over Text
}

type resourceContentsJSON struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// MarshalJSON writes MCP TextResourceContents or BlobResourceContents.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	j := resourceContentsJSON{URI: r.URI, MimeType: r.MimeType}
	if r.Blob != nil {
		b := base64.StdEncoding.EncodeToString(r.Blob)
		j.Blob = &b
	} else {
		j.Text = &r.Text
	}
	return marshal(j)
}

// Result is a tool result with explicit content: a tool whose Out is Result
// or *Result (see Register) returns it as is, with no output schema and no
// structuredContent. IsError marks a tool error (its writes are rolled
// back). A nil *Result is an internal error.
type Result struct {
	Content []Content
	IsError bool
}

// PromptMessage is one message of a rendered prompt: Role "user" or
// "assistant" and one content item.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}
