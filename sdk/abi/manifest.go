package abi

import "encoding/json"

// Version is the manifest "abi" value of ABI v1.
const Version = "weft/v1"

// SQLVersion is the version of the SQL host library a module declares
// when it imports weft_sql_v2 ("sql": "v2", which provides weft_sql_v1 as
// well); the Go SDK's modules do.
const SQLVersion = "v2"

// FSVersion is the version of the workspace-file host library
// (weft_fs_v1) in a manifest's "hosts": "fs": "v1".
const FSVersion = "v1"

// Reserved request names: the "tool" of a CallRequest with which the host
// calls the export hook (ExportTool, with {} arguments) and the export of
// changed records (ExportChangedTool, arguments ExportChangedArgs), reads a resource
// (ResourceReadRequest, arguments ResourceReadArgs) and renders a prompt
// (PromptGetRequest, arguments PromptGetArgs). No tool or prompt may be
// named with ReservedPrefix.
const (
	ExportTool          = "weft.export"
	ExportChangedTool   = "weft.export_changed"
	ResourceReadRequest = "weft.resource.read"
	PromptGetRequest    = "weft.prompt.get"
	ReservedPrefix      = "weft."
)

// HostVersions lists the host libraries every ABI v1 module may use and
// their versions, as a manifest's "hosts" declares them: library name ->
// version. The workspace-file library ("fs": FSVersion) is declared only by
// modules that use files (with a Files policy).
func HostVersions() map[string]string {
	return map[string]string{"sql": "v1", "clock": "v1", "rand": "v1", "log": "v1"}
}

// Manifest describes a tool module: the JSON weft_v1_manifest returns and
// manifest.json in a bundle (docs/abi.md, "Manifest"). Tools and
// Tables.Owns are always written (possibly empty); Resources,
// ResourceTemplates and Prompts are omitted when empty.
type Manifest struct {
	ABI         string `json:"abi"` // Version
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	Tools       []Tool `json:"tools"`
	Tables      Tables `json:"tables"`
	// Files is the workspace-file policy (weft_fs_v1); nil: no file access.
	Files  *Files            `json:"files,omitempty"`
	Hosts  map[string]string `json:"hosts"`  // host library -> version, e.g. "sql": "v1"
	Export bool              `json:"export"` // answers the ExportTool hook
	// ErrorsKeepState: a tool error commits the call's state changes
	// instead of rolling them back (the default). For reference
	// implementations whose error answers are ordinary return values
	// that may follow a mutation (BFCL's APIs: add_contact counts the
	// user before refusing a duplicate id).
	ErrorsKeepState bool `json:"errors_keep_state,omitempty"`
	// ExportChanged (only with Export) says the module also answers
	// ExportChangedTool: the records of its export that given rows belong
	// to, so a host comparing states after a few changes need not export
	// the whole state (docs/abi.md, "Export of changed records").
	ExportChanged bool `json:"export_changed,omitempty"`

	// The module's MCP resources, resource templates and prompts (all
	// optional; field names as in MCP 2025-11-25).
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`

	// Interpreter is set only in the bundle manifest of a synthesized
	// server (docs/abi.md, "Server bundle"): the bundle digest
	// ("sha256:<hex>") of the interpreter module that runs its program. A
	// wasm module's own manifest never sets it.
	Interpreter string `json:"interpreter,omitempty"`
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
// module's handler. URI is an absolute URI, unique within the module; Name
// is unique among the resources and templates.
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
// from string arguments.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a prompt; the host refuses a request
// without a required one.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Host is the host libraries of ABI v1 as Go methods, one call's worth:
// what a module's Go code uses when it runs natively instead of through the
// wasm imports. The guest SDK's tool.Dispatch takes one; core/module's
// NativeHost is the host's (the real libraries on a state workspace).
type Host interface {
	// SQL runs one weft_sql_v1 request (SQLRequest JSON) and returns the
	// response JSON (SQLResponse).
	SQL(req []byte) []byte
	// Now is the session's virtual clock, nanoseconds since the Unix epoch
	// (weft_clock_v1.now).
	Now() int64
	// Rand fills p from the session's deterministic random stream
	// (weft_rand_v1.fill).
	Rand(p []byte)
	// Log writes one log record; level 0 debug, 1 info, 2 warn, 3 error
	// (weft_log_v1.write).
	Log(level int, msg string)
	// Progress sends an MCP progress notification for the current call;
	// total 0 means unknown (weft_log_v1.progress).
	Progress(progress, total float64, msg string)
}

// SQLBatchHost is implemented by a Host that serves weft_sql_v2: several
// statements in one call, in the compact encoding (EncodeSQLBatch,
// DecodeSQLResults). The guest SDK uses it when the host has it and falls
// back to one weft_sql_v1 request per statement otherwise.
type SQLBatchHost interface {
	SQLBatch(req []byte) []byte
}

// ExportChangedArgs is the arguments object of an ExportChangedTool
// request: Changed maps a table name to the primary keys of its rows that
// were added, removed or changed since a base state, each key a JSON object
// {primary key column: value} (all columns for a table without a primary
// key). The answer's text is a JSON object {collection: {record key:
// record or null}} in the export hook's shape, holding at least every
// record of the export any listed row belongs to, each as the export hook
// would print it in the current state, and null for such a record that no
// longer exists; records it leaves out are unchanged.
type ExportChangedArgs struct {
	Changed map[string][]map[string]any `json:"changed"`
}
