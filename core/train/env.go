package train

import (
	"context"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// Env opens episodes that the training-data drivers (RejectionSample, GRPO)
// run one atomic turn at a time. plugins/host.TrainEnv implements it over
// MegaMCP sessions, harness plugins and the exec verifier; tests use fakes.
type Env interface {
	// Open starts an episode of t at the task's initial state with an
	// empty conversation. The caller closes it.
	Open(ctx context.Context, t *task.Task, opts EpisodeOptions) (Episode, error)
}

// EpisodeOptions say how an episode's turns run.
type EpisodeOptions struct {
	// View is the task view that writes each turn's user message
	// (task.ViewSimUser: one atomic request per turn, the natural view for
	// turn-level sampling; task.ViewAgentic: the whole brief on turn 0).
	View string
	// Harness names the harness plugin that runs each turn (it must
	// declare the "resume" capability).
	Harness string
	// Seed is the episode seed (the session seed); candidate policies are
	// seeded from (Seed, turn, TurnOptions.Sample).
	Seed uint64
}

// TurnOptions choose the candidate a Turn runs.
type TurnOptions struct {
	// Sample distinguishes candidates of one turn: the same (episode seed,
	// turn, Sample) gives the same candidate with a deterministic policy.
	Sample uint64
	// Reference runs the atomic task's reference solution instead of the
	// policy (the "reference" continuation of GRPO).
	Reference bool
}

// Episode is a conversation and the environment state it reached, at a
// turn boundary. An Episode is not safe for concurrent use; episodes
// returned by Fork are independent of it and of each other and may run
// concurrently.
type Episode interface {
	// Turn runs the next atomic turn (index Next()) from the current state
	// and conversation, verifies it and advances the episode by one turn,
	// whatever the outcome. Errors are infrastructure failures
	// (*rollout.InfraError): the episode is then undefined until Restore.
	Turn(ctx context.Context, opts TurnOptions) (*TurnResult, error)
	// Next is the index of the next turn in Task.Order() (0-based); equal
	// to the number of atomic tasks when the episode is complete.
	Next() int
	// Snapshot records the current state, conversation and turn index.
	Snapshot(ctx context.Context) (Snapshot, error)
	// Restore returns the episode to a snapshot taken on it or on the
	// episode it was forked from.
	Restore(ctx context.Context, s Snapshot) error
	// Fork returns a new episode at the current state, conversation and
	// turn index; its state starts hash-equal to this one's.
	Fork(ctx context.Context) (Episode, error)
	// Hash is the content hash of the current environment state.
	Hash(ctx context.Context) (string, error)
	// Messages returns the canonical conversation so far, system message
	// first (a copy).
	Messages() []model.Message
	// Close releases the episode's session. Idempotent.
	Close() error
}

// Snapshot is an opaque point of an Episode (see Episode.Snapshot).
type Snapshot interface{ snapshot() }

// SnapshotBase is embedded by Env implementations' snapshot types; it seals
// Snapshot to this package's notion of one.
type SnapshotBase struct{}

func (SnapshotBase) snapshot() {}

// TurnResult is one atomic turn as it ran: its conversation, its calls and
// its verification.
type TurnResult struct {
	// Turn is the 0-based index in Task.Order(); Atomic the atomic task's id.
	Turn   int    `json:"turn"`
	Atomic string `json:"atomic"`
	// Prompt is the canonical conversation the policy continued: the system
	// message, every earlier turn, then this turn's user message.
	Prompt []model.Message `json:"prompt"`
	// Completion is what this turn added after Prompt: assistant messages
	// (with tool_calls) and tool messages, in order.
	Completion []model.Message `json:"completion"`
	// Tools are the tools the harness offered (function definitions).
	Tools []model.Tool `json:"tools"`
	// Segment is the turn as the undesirable-pattern detectors see it
	// (calls with outcomes, the text to the user, offered tools with their
	// schemas, earlier turns' calls, forbidden tools, early stop).
	Segment Segment `json:"segment"`
	// Reward is the binary completion of the atomic task: 1 when every
	// checkpoint verified after this turn passed (the atomic tasks so far
	// and, after the last turn, the overall checks), else 0.
	Reward float64 `json:"reward"`
	// Checkpoints are the verifier's checkpoints after this turn: the
	// atomic tasks 0..Turn (and "overall" after the last turn).
	Checkpoints []verify.Checkpoint `json:"checkpoints"`
	// Termination is the harness's termination of the turn ("done" when
	// it ended by addressing the user).
	Termination string `json:"termination"`
	// Reference is true for a turn run with TurnOptions.Reference.
	Reference bool `json:"reference"`
}
