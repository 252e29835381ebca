package module

import "github.com/weft-dev/weft/sdk/abi"

// ABIVersion is the manifest "abi" value of ABI v1 (docs/abi.md).
const ABIVersion = abi.Version

// ExportTool is the reserved tool name of the export hook (docs/abi.md).
const ExportTool = abi.ExportTool

// ExportChangedTool is the reserved tool name of the export of changed
// records (docs/abi.md, "Export of changed records"): allowed when the
// manifest says export_changed, with abi.ExportChangedArgs as arguments.
const ExportChangedTool = abi.ExportChangedTool

// Reserved request names (the "tool" of a call request, docs/abi.md) under
// which the host asks a module to read a resource (Module.ReadResource) and
// to render a prompt (Module.GetPrompt). Like ExportTool they can never be
// declared as tools, and Module.Call refuses them (ErrUnknownTool).
const (
	ResourceReadRequest = abi.ResourceReadRequest
	PromptGetRequest    = abi.PromptGetRequest
)

// Manifest describes a tool module: what weft_v1_manifest returns, and
// manifest.json in a bundle. It is the wire type abi.Manifest (sdk/abi, the
// normative definition shared with the guest SDK; see docs/abi.md for the
// field meanings) with the host's methods: Validate, SQLPolicy.
type Manifest abi.Manifest

// The parts of a manifest, the sdk/abi wire types: a Tool (name,
// description, input and output JSON Schemas, Annotations), the Tables a
// module owns and reads, its MCP Resources, ResourceTemplates and Prompts
// with their PromptArguments.
type (
	Tool             = abi.Tool
	Annotations      = abi.Annotations
	Tables           = abi.Tables
	Resource         = abi.Resource
	ResourceTemplate = abi.ResourceTemplate
	Prompt           = abi.Prompt
	PromptArgument   = abi.PromptArgument
)
