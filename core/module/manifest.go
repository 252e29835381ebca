package module

import "encoding/json"

// ABIVersion is the manifest "abi" value of ABI v1 (docs/abi.md).
const ABIVersion = "weft/v1"

// ExportTool is the reserved tool name of the export hook (docs/abi.md).
const ExportTool = "weft.export"

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
