package tool

import (
	"encoding/base64"
	"fmt"

	"github.com/weft-dev/weft/sdk/abi"
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

// wire is c as the ABI's content item (abi.Content): Data and a resource's
// Blob base64-encoded. It fails for an unknown Type, an image or audio item
// without a mimeType, a resource_link without a uri and an embedded
// resource without a uri.
func (c Content) wire() (abi.Content, error) {
	w := abi.Content{Type: c.Type}
	switch c.Type {
	case abi.ContentText:
		w.Text = c.Text
	case abi.ContentImage, abi.ContentAudio:
		if c.MimeType == "" {
			return w, fmt.Errorf("tool: %s content without a mimeType", c.Type)
		}
		w.Data, w.MimeType = base64.StdEncoding.EncodeToString(c.Data), c.MimeType
	case abi.ContentResourceLink:
		if c.URI == "" {
			return w, fmt.Errorf("tool: resource_link content without a uri")
		}
		w.URI, w.Name, w.MimeType = c.URI, c.Name, c.MimeType
	case abi.ContentResource:
		if c.Resource == nil || c.Resource.URI == "" {
			return w, fmt.Errorf("tool: resource content without a resource uri")
		}
		r := c.Resource.wire()
		w.Resource = &r
	default:
		return w, fmt.Errorf("tool: unknown content type %q", c.Type)
	}
	return w, nil
}

// MarshalJSON writes the MCP shape of c's type (abi.Content).
func (c Content) MarshalJSON() ([]byte, error) {
	w, err := c.wire()
	if err != nil {
		return nil, err
	}
	return marshal(w)
}

// ResourceContents is the contents of a resource: what a resource handler
// returns, and the resource of an Embedded content item. It encodes as
// abi.ResourceContents: {"uri", "mimeType", "text"} or, when Blob is not
// nil, {"uri", "mimeType", "blob": <base64 of Blob>}.
type ResourceContents struct {
	URI      string // the resource's URI; a handler may leave it empty for the URI read
	MimeType string // optional; a handler may leave it empty for the declared one
	Text     string // text contents
	Blob     []byte // binary contents; not nil selects them over Text
}

func (r ResourceContents) wire() abi.ResourceContents {
	w := abi.ResourceContents{URI: r.URI, MimeType: r.MimeType, Text: r.Text}
	if r.Blob != nil {
		w.Text, w.Blob, w.EmptyBlob = "", base64.StdEncoding.EncodeToString(r.Blob), len(r.Blob) == 0
	}
	return w
}

// MarshalJSON writes MCP TextResourceContents or BlobResourceContents.
func (r ResourceContents) MarshalJSON() ([]byte, error) { return marshal(r.wire()) }

// Result is a tool result with explicit content: a tool whose Out is Result
// or *Result (see Register) returns it as is, with no output schema and no
// structuredContent. IsError marks a tool error (its writes are rolled
// back). A nil *Result is an internal error.
type Result struct {
	Content []Content
	IsError bool
}

// PromptMessage is one message of a rendered prompt: Role "user" or
// "assistant" and one content item (abi.PromptMessage on the wire).
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}
