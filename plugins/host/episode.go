package host

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Episode is one run of a harness: the task's prompt and limits, the
// policy, the user, and the MegaMCP session that is the environment.
type Episode struct {
	// ID names the episode (unique among concurrent episodes of one
	// harness process); "" = the session id.
	ID     string
	TaskID string
	// SystemPrompt is the domain policy the harness puts in its system
	// prompt.
	SystemPrompt string
	Limits       *plugin.Limits
	Sampling     *plugin.Sampling
	// Settings is the harness settings JSON object ("" = defaults).
	Settings string
	Seed     uint64
	// History is the canonical conversation (no system message) to resume
	// from (RunEpisodeRequest.history); nil = a new conversation. The
	// harness must declare the "resume" capability (CapabilityResume).
	History []*plugin.Message

	Policy model.Policy
	User   plugin.User
	// Server and Session are the environment: every tool call is a
	// ledgered call of this session, fenced at Generation (0 = unfenced).
	Server     *megamcp.Server
	Session    string
	Generation uint64
	// Tools, when set, restricts the tools the harness sees and may call
	// (task.Task.Tools); nil offers all of the session's.
	Tools []string
}

// Result is what an episode produced.
type Result struct {
	// Trajectory is the harness's record (canonical messages and turns);
	// partial when Failure is set.
	Trajectory *plugin.Trajectory
	// Failure is set when a host service failed during the episode (model
	// endpoint down, module trap, ...): an infrastructure failure, never
	// a score.
	Failure *plugin.Failure
	// Duration is the wall time of the episode.
	Duration time.Duration
}

// Run runs ep with harness h (an in-process plugin.Harness or a launched
// plugin's *plugin.HarnessClient). Errors: a *plugin.PluginError when the
// plugin process failed (errors.Is(err, plugin.ErrPluginExited) when it
// died), the harness's own error (e.g. invalid settings), or the context's
// error. Host-service failures are not errors: they are Result.Failure.
func Run(ctx context.Context, h plugin.Harness, ep *Episode) (*Result, error) {
	if ep.Server == nil || ep.Session == "" || ep.Policy == nil || ep.User == nil {
		return nil, fmt.Errorf("episode %q: server, session, policy and user are required", ep.ID)
	}
	id := ep.ID
	if id == "" {
		id = ep.Session
	}
	host := &plugin.HostSet{
		ModelService: &Model{Policy: ep.Policy},
		EnvService:   &Env{Server: ep.Server, Session: ep.Session, Generation: ep.Generation, Tools: ep.Tools},
		UserService:  ep.User,
	}
	settings, err := plugin.JSONValue([]byte(ep.Settings))
	if err != nil {
		return nil, fmt.Errorf("episode %s: harness settings: %w", id, err)
	}
	req := &plugin.RunEpisodeRequest{EpisodeId: id, TaskId: ep.TaskID, SystemPrompt: ep.SystemPrompt,
		Limits: ep.Limits, Sampling: ep.Sampling, Settings: settings, Seed: ep.Seed, History: ep.History}
	var resp plugin.RunEpisodeResponse
	start := time.Now()
	if err := h.RunEpisode(ctx, host, req, &resp); err != nil {
		return nil, fmt.Errorf("episode %s: %w", id, err)
	}
	return &Result{Trajectory: resp.Trajectory, Failure: resp.Failure, Duration: time.Since(start)}, nil
}
