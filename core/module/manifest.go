package module

import "encoding/json"

// ABIVersion is the manifest "abi" value of ABI v1 (docs/abi.md).
const ABIVersion = "weft/v1"

// ExportTool is the reserved tool name of the export hook (docs/abi.md).
const ExportTool = "weft.export"

// Reserved request names (the "tool" of a call request, docs/abi.md) under
// which the host asks a module to read a resource (Module.ReadResource) and
// to render a prompt (Module.GetPrompt). Like ExportTool they can never be
// declared as tools, and Module.Call refuses them (ErrUnknownTool).
const (
	ResourceReadRequest = "weft.resource.read"
	PromptGetRequest    = "weft.prompt.get"
)

// Manifest describes a tool module: what weft_v1_manifest returns, and
// manifest.json in a bundle. See docs/abi.md for the field meanings.
type Manifest struct {
	ABI         string            `json:"abi"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Tools       []Tool            `json:"tools"`
	Tables      Tables            `json:"tables"`
	Hosts       map[string]string `json:"hosts"`  // host library -> version, e.g. "sql": "v1"
	Export      bool              `json:"export"` // answers the weft.export hook

	// The module's MCP resources, resource templates and prompts (all
	// optional; field names as in MCP 2025-11-25).
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`
}

// Tool is one MCP tool of a module.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`            // JSON Schema (draft 2020-12) of the arguments object
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"` // JSON Schema of structuredContent, when the tool returns an object
	Annotations  *Annotations    `json:"annotations,omitempty"`
}

// Annotations are MCP tool annotations.
type Annotations struct {
	ReadOnlyHint bool `json:"readOnlyHint,omitempty"`
}

// Tables lists the state tables a module may touch: Owns for reads and
// writes, Reads for reads only. Names are case-insensitive.
type Tables struct {
	Owns  []string `json:"owns"`
	Reads []string `json:"reads,omitempty"`
}

// Resource is a static MCP resource of a module: a read of URI runs the
// module's handler (Module.ReadResource). URI is an absolute URI, unique
// within the module; Name is unique among the resources and templates.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// ResourceTemplate is an MCP resource template: URITemplate is an RFC 6570
// level-1 template ({name} expressions only, e.g. "test://items/{id}"), and
// a read of a URI it matches runs the module's handler with the matched
// variables. Name is unique among the resources and templates.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// Prompt is an MCP prompt of a module, rendered by the module's handler
// (Module.GetPrompt) from string arguments.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a prompt; a required one must be given
// to Module.GetPrompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}
