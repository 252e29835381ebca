package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Content types of MCP 2025-11-25 content blocks, the values of
// Content.Type.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// Content is one MCP content item of a tool result or a prompt message
// (docs/abi.md, "Content items"). Binary data travels as base64 text (Data,
// ResourceContents.Blob), passed on unchecked.
//
// It encodes the members its Type uses, in the order type, text, data,
// mimeType, uri, name, resource: text always writes "text" (also when
// empty); image and audio write "data" (omitted when empty) and "mimeType";
// resource_link writes "mimeType" (omitted when empty), "uri" and "name";
// resource writes "resource". An item of another type writes its non-empty
// members. Check tells whether an item is well-formed.
type Content struct {
	Type     string            `json:"type"` // one of the Content* constants
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"`     // image, audio: base64
	MimeType string            `json:"mimeType,omitempty"` // image, audio (required), resource_link (optional)
	URI      string            `json:"uri,omitempty"`      // resource_link
	Name     string            `json:"name,omitempty"`     // resource_link
	Resource *ResourceContents `json:"resource,omitempty"` // resource: the embedded resource
}

// Text is a text content item.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// contentJSON fixes the member order and which members are written.
type contentJSON struct {
	Type     string            `json:"type"`
	Text     *string           `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"`
	MimeType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     *string           `json:"name,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
}

// MarshalJSON writes the members of c's type (see Content).
func (c Content) MarshalJSON() ([]byte, error) {
	j := contentJSON{Type: c.Type}
	switch c.Type {
	case ContentText:
		j.Text = &c.Text
	case ContentImage, ContentAudio:
		j.Data, j.MimeType = c.Data, c.MimeType
	case ContentResourceLink:
		j.URI, j.Name, j.MimeType = c.URI, &c.Name, c.MimeType
	case ContentResource:
		j.Resource = c.Resource
	default:
		j.Data, j.MimeType, j.URI, j.Resource = c.Data, c.MimeType, c.URI, c.Resource
		if c.Text != "" {
			j.Text = &c.Text
		}
		if c.Name != "" {
			j.Name = &c.Name
		}
	}
	return Marshal(j)
}

// Check verifies the members c's type needs: image and audio need data and
// mimeType, resource_link a uri, resource an embedded resource with a uri.
// Any other type is an error. Base64 is not checked.
func (c *Content) Check() error {
	switch c.Type {
	case ContentText:
	case ContentImage, ContentAudio:
		if c.Data == "" || c.MimeType == "" {
			return fmt.Errorf("%s needs data and mimeType", c.Type)
		}
	case ContentResourceLink:
		if c.URI == "" {
			return errors.New("resource_link needs uri")
		}
	case ContentResource:
		if c.Resource == nil {
			return errors.New("resource needs an embedded resource")
		}
		if err := c.Resource.Check(); err != nil {
			return fmt.Errorf("resource: %v", err)
		}
	default:
		return fmt.Errorf("unknown content type %q", c.Type)
	}
	return nil
}

// ResourceContents is one item of a resource read, or the resource of an
// embedded "resource" content: text contents (Text) or binary contents
// (Blob, base64). It encodes as MCP BlobResourceContents ({"uri",
// "mimeType"?, "blob"}) when Blob is set or EmptyBlob is true, else as
// TextResourceContents ({"uri", "mimeType"?, "text"}, "text" written also
// when empty); decoding requires exactly one of "text" and "blob".
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"` // base64
	// EmptyBlob marks empty binary contents ("blob": ""), which Blob alone
	// cannot tell from empty text; decoding sets it for "blob": "" only.
	EmptyBlob bool `json:"-"`
}

type resourceContentsJSON struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// MarshalJSON writes "blob" when Blob is set or EmptyBlob, else "text"
// (even when empty).
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	j := resourceContentsJSON{URI: r.URI, MimeType: r.MimeType}
	if r.Blob != "" || r.EmptyBlob {
		j.Blob = &r.Blob
	} else {
		j.Text = &r.Text
	}
	return Marshal(j)
}

// UnmarshalJSON requires exactly one of "text" and "blob".
func (r *ResourceContents) UnmarshalJSON(b []byte) error {
	var j resourceContentsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if (j.Text == nil) == (j.Blob == nil) {
		return errors.New("resource contents need exactly one of text and blob")
	}
	*r = ResourceContents{URI: j.URI, MimeType: j.MimeType}
	if j.Text != nil {
		r.Text = *j.Text
	} else {
		r.Blob, r.EmptyBlob = *j.Blob, *j.Blob == ""
	}
	return nil
}

// Check verifies that r has a uri.
func (r *ResourceContents) Check() error {
	if r.URI == "" {
		return errors.New("resource contents need a uri")
	}
	return nil
}

// CallRequest is what the host passes to weft_v1_call: the tool (or a
// reserved request name) and its arguments, a JSON object passed on byte for
// byte as the client sent it (a schema "integer" may arrive as 1.0 or 1e2).
type CallRequest struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Program is set only for a synthesized server run by the shared
	// interpreter module (sdk/interp, sdk/spec): the server's program.
	Program *Program `json:"program,omitempty"`
}

// Program is the program of a synthesized server, as the host passes it
// to the interpreter with each call: Digest (sdk/spec.ProgramDigest of
// Source and Errors) always, Source and Errors when the host does not know
// that the instance has compiled it already. An interpreter that has no
// compiled program under Digest and got no Source answers an
// InternalError with Code ProgramMissing; the host then sends it again
// with Source.
type Program struct {
	Digest string   `json:"digest"`
	Source string   `json:"source,omitempty"`
	Errors []string `json:"errors,omitempty"` // the closed set of tool error codes
	// Compiled is the program compiled by the host (sdk/interp.Compile:
	// go.starlark.net's compiled-program encoding), sent with Source; an
	// interpreter that can decode it skips parsing and compiling Source.
	Compiled []byte `json:"compiled,omitempty"`
}

// CallResult is the MCP CallToolResult a module answers a tool call with.
// The first text content is the tool's output as a client sees it;
// StructuredContent, when present, is a JSON object equal to that text.
// IsError marks a tool error (the agent's problem), whose SQL writes are
// rolled back.
type CallResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// ResourceReadArgs are the arguments of a ResourceReadRequest: the URI read
// and, when it matched a resource template rather than a resource, the
// template and its percent-decoded variables.
type ResourceReadArgs struct {
	URI       string            `json:"uri"`
	Template  string            `json:"template,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
}

// ResourceResult is the MCP ReadResourceResult a module answers a
// ResourceReadRequest with; each item has a uri and exactly one of text and
// blob.
type ResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// PromptGetArgs are the arguments of a PromptGetRequest: the prompt name and
// its string arguments (always an object).
type PromptGetArgs struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

// PromptResult is the MCP GetPromptResult a module answers a
// PromptGetRequest with.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a prompt: Role "user" or "assistant" and
// one content item.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Refusal is the error answer of a resource read or prompt get handler (an
// unknown record, a bad argument value): {"content": [text], "isError":
// true}, with "notFound": true on a resource read to say the resource does
// not exist (MCP's resource-not-found error).
type Refusal struct {
	Content  []Content `json:"content"`
	IsError  bool      `json:"isError"`
	NotFound bool      `json:"notFound,omitempty"`
}

// NewRefusal is the Refusal with msg as its one text item.
func NewRefusal(msg string, notFound bool) Refusal {
	return Refusal{Content: []Content{Text(msg)}, IsError: true, NotFound: notFound}
}

// InternalError is the answer of a module that cannot produce a response (a
// bug): {"internalError": "message"}. The host turns it into an
// infrastructure error, never into a tool result.
type InternalError struct {
	Message string `json:"internalError"`
	// Code, when set, says which internal error it is, for the host to
	// classify: one of the Internal* codes.
	Code string `json:"code,omitempty"`
}

// Codes of an InternalError.
const (
	InternalProgramMissing = "program_missing" // no compiled program under the request's digest: send Source
	InternalProgram        = "program"         // the program does not compile, or a tool is not defined in it
	InternalSteps          = "step_budget"     // the call ran out of its interpreter step budget
	InternalSQL            = "sql"             // a statement of the program failed (a module bug)
	InternalFail           = "fail"            // the program called fail() or hit a runtime error
	InternalDeadline       = "deadline"        // the call's deadline cancelled the program
)

// Answer holds every member an answer of weft_v1_call may have, for a host
// that decodes an answer before telling which kind it is: a CallResult
// (Content, StructuredContent, IsError), a ResourceResult (Contents), a
// PromptResult (Description, Messages), a Refusal (IsError, Content,
// NotFound) or an InternalError. Lists and the members of one kind of
// answer only are kept raw, so that each item can be checked on its own and
// a member an answer of another kind does not use is ignored whatever it
// holds; a list absent or null is nil, an empty list is empty and not nil.
type Answer struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
	NotFound          bool              `json:"notFound"`
	InternalError     *string           `json:"internalError"`
	Code              string            `json:"code"` // an InternalError's code
	Contents          json.RawMessage   `json:"contents"`
	Description       json.RawMessage   `json:"description"`
	Messages          json.RawMessage   `json:"messages"`
}

// DecodeAnswer decodes one answer: a single JSON object, nothing after it.
//
// The answers modules write (each member spelt exactly and given once,
// booleans true or false, strings without escapes) are decoded by a scanner
// of their own; anything else by encoding/json, with the same result
// (FuzzDecodeAnswer).
func DecodeAnswer(b []byte) (*Answer, error) {
	if a, ok := decodeAnswerFast(b); ok {
		return a, nil
	}
	return decodeAnswerJSON(b)
}

// decodeAnswerJSON is DecodeAnswer by encoding/json.
func decodeAnswerJSON(b []byte) (*Answer, error) {
	var a Answer
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("response is not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the response")
	}
	return &a, nil
}

// FirstText is the text of the first text item of content, or "".
func FirstText(content []Content) string {
	for _, c := range content {
		if c.Type == ContentText {
			return c.Text
		}
	}
	return ""
}

// Marshal is json.Marshal without HTML escaping (the ABI's encoding: "<" is
// written as is), without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
