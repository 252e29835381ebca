package plugin

import (
	"context"

	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// ProtocolVersion is the go-plugin protocol version of this SDK's plugin
// set (weft.plugin.v2). A host and a plugin agree on it in the handshake;
// the host offers only this version, so a plugin built for weft.plugin.v1
// fails to start with a *PluginError of Kind failure.Protocol saying so.
const ProtocolVersion = 2

// Plugin names in the plugin set: a plugin binary serves one or more of
// them.
const (
	HarnessPlugin    = "harness"
	VerifierPlugin   = "verifier"
	AttributorPlugin = "attributor"
)

// Protocol types. They are the generated protocol buffer messages of
// weft.plugin.v2 (plugins/proto/weft/plugin/v2/plugin.proto), aliased here
// so that plugin authors import only this package. Pass them by pointer
// (they must not be copied).
type (
	Message            = pluginpb.Message
	ToolCall           = pluginpb.ToolCall
	Tool               = pluginpb.Tool
	Sampling           = pluginpb.Sampling
	Limits             = pluginpb.Limits
	OutputFormat       = pluginpb.OutputFormat
	Usage              = pluginpb.Usage
	GenerateRequest    = pluginpb.GenerateRequest
	GenerateResponse   = pluginpb.GenerateResponse
	ListToolsRequest   = pluginpb.ListToolsRequest
	ListToolsResponse  = pluginpb.ListToolsResponse
	CallToolRequest    = pluginpb.CallToolRequest
	CallToolResponse   = pluginpb.CallToolResponse
	UserRequest        = pluginpb.UserRequest
	UserResponse       = pluginpb.UserResponse
	QueryRequest       = pluginpb.QueryRequest
	QueryResponse      = pluginpb.QueryResponse
	HashRequest        = pluginpb.HashRequest
	HashResponse       = pluginpb.HashResponse
	DiffRequest        = pluginpb.DiffRequest
	DiffResponse       = pluginpb.DiffResponse
	ReadFileRequest    = pluginpb.ReadFileRequest
	ReadFileResponse   = pluginpb.ReadFileResponse
	DescribeRequest    = pluginpb.DescribeRequest
	DescribeResponse   = pluginpb.DescribeResponse
	RunEpisodeRequest  = pluginpb.RunEpisodeRequest
	RunEpisodeResponse = pluginpb.RunEpisodeResponse
	Trajectory         = pluginpb.Trajectory
	Turn               = pluginpb.Turn
	ToolResult         = pluginpb.ToolResult
	Failure            = pluginpb.Failure
	VerifyRequest      = pluginpb.VerifyRequest
	VerifyResponse     = pluginpb.VerifyResponse
	Checkpoint         = pluginpb.Checkpoint
	AttributeRequest   = pluginpb.AttributeRequest
	AttributeResponse  = pluginpb.AttributeResponse
	Attribution        = pluginpb.Attribution
	Blame              = pluginpb.Blame
	Value              = pluginpb.Value
	ValueList          = pluginpb.ValueList
	ValueObject        = pluginpb.ValueObject
	HostAccess         = pluginpb.HostAccess
	Task               = pluginpb.Task
	AtomicTask         = pluginpb.AtomicTask
	ReferenceCall      = pluginpb.ReferenceCall
	ArgumentNames      = pluginpb.ArgumentNames
	Check              = pluginpb.Check
	CheckKind          = pluginpb.CheckKind
	RubricItem         = pluginpb.RubricItem
	CheckResult        = pluginpb.CheckResult
	LedgerCall         = pluginpb.LedgerCall
	LedgerRecordKind   = pluginpb.LedgerRecordKind
	Content            = pluginpb.Content
	ResourceContents   = pluginpb.ResourceContents
	ToolCallResult     = pluginpb.ToolCallResult
	Changes            = pluginpb.Changes
	TableDiff          = pluginpb.TableDiff
	RowValues          = pluginpb.RowValues
	RowChange          = pluginpb.RowChange
	ColumnChange       = pluginpb.ColumnChange
	FileDiff           = pluginpb.FileDiff
	UnsolvedAnswers    = pluginpb.UnsolvedAnswers
	StepUnsolved       = pluginpb.StepUnsolved
	ReferenceReplay    = pluginpb.ReferenceReplayCall
)

// Output formats (see OutputFormat).
const (
	FormatNative = pluginpb.OutputFormat_OUTPUT_FORMAT_NATIVE
	FormatHermes = pluginpb.OutputFormat_OUTPUT_FORMAT_HERMES
	FormatReAct  = pluginpb.OutputFormat_OUTPUT_FORMAT_REACT
)

// Blame classes (see Attribution).
const (
	BlamePolicy      = pluginpb.Blame_BLAME_POLICY
	BlameEnvironment = pluginpb.Blame_BLAME_ENVIRONMENT
	BlameTask        = pluginpb.Blame_BLAME_TASK
	BlameVerifier    = pluginpb.Blame_BLAME_VERIFIER
)

// Chat roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Terminations (Trajectory.Termination).
const (
	TerminationDone            = "done"
	TerminationStop            = "stop"
	TerminationMaxTurns        = "max_turns"
	TerminationMaxToolCalls    = "max_tool_calls"
	TerminationTurnDeadline    = "turn_deadline"
	TerminationEpisodeDeadline = "episode_deadline"
	TerminationFailure         = "failure"
)

// CapabilityResume is the DescribeResponse capability of a harness that
// honours RunEpisodeRequest.History: it resumes a conversation from
// canonical messages (the training-data drivers run one atomic turn at a
// time with it and refuse harnesses without it).
const CapabilityResume = "resume"

// Harness is what a harness plugin implements. Methods take a request and
// fill a response, so fields can be added to either without breaking a
// plugin. RunEpisode may be called concurrently for different episodes.
//
// RunEpisode drives one episode through host: it asks the User for the
// opening message, renders prompts, calls host.Model, parses tool calls,
// runs them through host.Env and records every turn in resp.Trajectory. A
// failure of a host service (a *HostError) ends the episode: set
// resp.Failure (FailureFromError does it) and return nil, keeping the
// partial trajectory. Returning an error reports the plugin's own failure.
type Harness interface {
	Describe(ctx context.Context, req *DescribeRequest, resp *DescribeResponse) error
	RunEpisode(ctx context.Context, host Host, req *RunEpisodeRequest, resp *RunEpisodeResponse) error
}

// Verifier is what a verifier plugin implements; host offers the State
// service of the episode.
type Verifier interface {
	Describe(ctx context.Context, req *DescribeRequest, resp *DescribeResponse) error
	Verify(ctx context.Context, host Host, req *VerifyRequest, resp *VerifyResponse) error
}

// Attributor is what an attributor plugin implements.
type Attributor interface {
	Describe(ctx context.Context, req *DescribeRequest, resp *DescribeResponse) error
	Attribute(ctx context.Context, host Host, req *AttributeRequest, resp *AttributeResponse) error
}

// Host is the set of host services one episode's plugin call can reach.
// The episode id is filled in by the SDK: requests need not set it. A
// service the host does not offer for this call returns a *HostError with
// Kind "unavailable".
type Host interface {
	Model() Model
	Env() Env
	User() User
	State() State
}

// Model is the host's policy.
type Model interface {
	Generate(ctx context.Context, req *GenerateRequest, resp *GenerateResponse) error
}

// Env is the episode's tool environment (a MegaMCP session on the host).
type Env interface {
	ListTools(ctx context.Context, req *ListToolsRequest, resp *ListToolsResponse) error
	CallTool(ctx context.Context, req *CallToolRequest, resp *CallToolResponse) error
}

// User is the other side of the conversation.
type User interface {
	Next(ctx context.Context, req *UserRequest, resp *UserResponse) error
}

// State is privileged read-only access to an episode's states (verifiers
// and attributors only). Versions are named "initial", "final",
// "reference", "reference:<k>" (the reference replay after atomic task k)
// or by a version id the host knows.
//
// Query runs a read-only SQL statement on a version (rows of typed
// values). Hash returns a version's content hash (64 lower-case hex
// digits). Diff returns the row-level changes from one version to another
// (typed Changes). ReadFile reads a workspace file of a version: Found
// and Data when a file is at the path, Exists when any entry (file or
// directory) is. A version the host does not have is a *HostError with
// Kind failure.NoSuchVersion ("no_such_version").
type State interface {
	Query(ctx context.Context, req *QueryRequest, resp *QueryResponse) error
	Hash(ctx context.Context, req *HashRequest, resp *HashResponse) error
	Diff(ctx context.Context, req *DiffRequest, resp *DiffResponse) error
	ReadFile(ctx context.Context, req *ReadFileRequest, resp *ReadFileResponse) error
}
