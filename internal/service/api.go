package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/train"
)

// Request is the JSON body of POST /v1/rollouts: one trainer step's batch.
// Unknown fields are refused (400). Zero values mean the service's
// defaults (the config's grpo block, else DefaultSettings).
type Request struct {
	// BatchID names the batch for DELETE /v1/rollouts/{id} (at most 128
	// bytes of [A-Za-z0-9._-]); "" = the service makes one. An id of an
	// active batch is a 409.
	BatchID string `json:"batch_id,omitempty"`
	// Tasks are the task ids of the service's config, each once, at least
	// one, at most Options.MaxBatchTasks.
	Tasks []string `json:"tasks"`
	// GroupSize is G, the candidates per group (>= 2, <= MaxGroupSize);
	// 0 = the default.
	GroupSize int `json:"group_size,omitempty"`
	// Policy is the trainer's inference server. Required.
	Policy Endpoint `json:"policy"`
	// Sampling fills each request's sampling fields (temperature, top_p,
	// max_tokens, seed, stop, logprobs), as a config's sampling block. A
	// seed is mixed with each candidate's seed, so candidates differ.
	Sampling config.Sampling `json:"sampling"`
	// Level is "atomic_turn" or "trajectory"; Continue "first", "random"
	// or "reference" (core/train.GRPOConfig).
	Level    string `json:"level,omitempty"`
	Continue string `json:"continue,omitempty"`
	// Mask applies detector masking (A := min(A, 0) on a masked
	// candidate); nil = the default.
	Mask *bool `json:"mask,omitempty"`
	// Reward is "binary", "score" or an FTRL variant
	// (pipeline.RewardNames).
	Reward string `json:"reward,omitempty"`
	// Eps is the advantage stabiliser (> 0; 0 = the default).
	Eps float64 `json:"eps,omitempty"`
	// View ("agentic" or "simuser") and Harness (a harness of the config,
	// resume-capable) of the episodes.
	View    string `json:"view,omitempty"`
	Harness string `json:"harness,omitempty"`
	// Seed derives every episode and continuation seed (per task id, as
	// the grpo stage does).
	Seed uint64 `json:"seed,omitempty"`
	// SFT, when set, also runs rejection sampling per task with the same
	// policy and streams the kept SFT record ("sft" lines).
	SFT *SFTRequest `json:"sft,omitempty"`
	// DataSource is the verl rows' data_source ("" = "weft/<config name>").
	DataSource string `json:"data_source,omitempty"`
}

// Endpoint is the trainer's OpenAI-compatible server (vLLM, SGLang, ...).
type Endpoint struct {
	// BaseURL is the API root including /v1 (http or https). Required.
	BaseURL string `json:"base_url"`
	// Model is the served model name. Required.
	Model string `json:"model"`
	// APIKey is sent as the bearer token ("" = none).
	APIKey string `json:"api_key,omitempty"`
	// TimeoutSeconds bounds each HTTP attempt (0 = the client's default).
	TimeoutSeconds float64 `json:"timeout_s,omitempty"`
	// MaxRetries of a retryable endpoint failure (0 = default, -1 = none).
	MaxRetries int `json:"max_retries,omitempty"`
	// MaxConcurrency caps this batch's requests in flight (0 = no cap).
	MaxConcurrency int `json:"max_concurrency,omitempty"`
	// ExtraBody is a JSON object merged into every request body (e.g.
	// {"chat_template_kwargs": {"enable_thinking": false}}).
	ExtraBody json.RawMessage `json:"extra_body,omitempty"`
}

// SFTRequest asks for SFT records by rejection sampling (core/train).
type SFTRequest struct {
	// Mode is "prefix" ("" means it) or "end_to_end".
	Mode string `json:"mode,omitempty"`
	// Retries is the retry budget k per turn (>= 0).
	Retries int `json:"retries,omitempty"`
	// Threshold is the least reward a kept turn has (0 = 1).
	Threshold float64 `json:"threshold,omitempty"`
}

// Stream lines. Every line of a batch's NDJSON stream has "type" and
// "batch_id"; "accepted" is first and "done" last.
const (
	LineAccepted  = "accepted"
	LineGroup     = "group"
	LineSFT       = "sft"
	LineTaskDone  = "task_done"
	LineTaskError = "task_error"
	LineDone      = "done"
)

// Accepted is the first line: the batch was admitted.
type Accepted struct {
	Type      string `json:"type"`
	BatchID   string `json:"batch_id"`
	Tasks     int    `json:"tasks"`
	GroupSize int    `json:"group_size"`
	Level     string `json:"level"`
	View      string `json:"view"`
	Harness   string `json:"harness"`
}

// GroupLine is one finished GRPO group (core/train.Group): per candidate
// in sample order its reward, advantage (after masking) and mask; the
// candidates' segments exactly as rl.segments.jsonl holds them; the verl
// RL row of the group's state as rl.verl.parquet holds it; and the time
// from the batch's admission to this line, in milliseconds.
type GroupLine struct {
	Type       string              `json:"type"`
	BatchID    string              `json:"batch_id"`
	TaskID     string              `json:"task_id"`
	GroupID    string              `json:"group_id"`
	Turn       int                 `json:"turn"`
	Atomic     string              `json:"atomic"`
	Level      string              `json:"level"`
	Rewards    []float64           `json:"rewards"`
	Advantages []float64           `json:"advantages"`
	Masked     []bool              `json:"masked"`
	NonZero    bool                `json:"nonzero"`
	Continued  int                 `json:"continued"`
	Segments   []train.RLSegment   `json:"segments"`
	Verl       *train.VerlRLRecord `json:"verl"`
	ElapsedMS  float64             `json:"elapsed_ms"`
}

// SFTLine is one task's rejection sampling: the kept conversation as a TRL
// record (sft.trl.jsonl's line shape; nil when no turn was kept).
type SFTLine struct {
	Type      string           `json:"type"`
	BatchID   string           `json:"batch_id"`
	TaskID    string           `json:"task_id"`
	Mode      string           `json:"mode"`
	Accepted  bool             `json:"accepted"`
	KeptTurns int              `json:"kept_turns"`
	Attempts  int              `json:"attempts"`
	Record    *train.SFTRecord `json:"record"`
	ElapsedMS float64          `json:"elapsed_ms"`
}

// TaskDone ends one task whose work finished.
type TaskDone struct {
	Type       string  `json:"type"`
	BatchID    string  `json:"batch_id"`
	TaskID     string  `json:"task_id"`
	Groups     int     `json:"groups"`
	Stopped    bool    `json:"stopped"`
	StopReason string  `json:"stop_reason,omitempty"`
	ElapsedMS  float64 `json:"elapsed_ms"`
}

// TaskError ends one task that failed (an infrastructure failure that
// outlived the endpoint client's retries, say). Groups it streamed before
// stand: each is complete in itself.
type TaskError struct {
	Type    string    `json:"type"`
	BatchID string    `json:"batch_id"`
	TaskID  string    `json:"task_id"`
	Error   ErrorBody `json:"error"`
}

// Done is the last line of a batch's stream.
type Done struct {
	Type        string  `json:"type"`
	BatchID     string  `json:"batch_id"`
	Tasks       int     `json:"tasks"`
	TasksFailed int     `json:"tasks_failed"`
	Groups      int     `json:"groups"`
	Segments    int     `json:"segments"`
	Canceled    bool    `json:"canceled"`
	ElapsedMS   float64 `json:"elapsed_ms"`
}

// Error codes of the JSON error bodies ({"error": ErrorBody}).
const (
	CodeBadRequest      = "bad_request"  // 400: not JSON, unknown field, wrong type, missing field
	CodeUnauthorized    = "unauthorized" // 401
	CodeNotFound        = "not_found"    // 404: no such batch
	CodeMethod          = "method_not_allowed"
	CodeConflict        = "conflict"         // 409: batch_id of an active batch
	CodeTooLarge        = "too_large"        // 413: body, tasks, G or tasks x G past the bounds
	CodeInvalidArgument = "invalid_argument" // 422: G < 2, unknown level, view, harness, ...
	CodeUnknownTask     = "unknown_task"     // 422: details.tasks lists them
	CodeNotTrainable    = "not_trainable"    // 422: tasks without atomic tasks
	CodeAtCapacity      = "at_capacity"      // 429 with Retry-After
	CodeShuttingDown    = "shutting_down"    // 503
)

// ErrorBody is the "error" object of a refusal and of a task_error line.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Tasks are the task ids at fault (unknown_task, not_trainable).
	Tasks []string `json:"tasks,omitempty"`
}

// RequestError is a refused request: HTTP status and body.
type RequestError struct {
	Status int
	Body   ErrorBody
	// RetryAfter is sent as Retry-After (seconds, rounded up) when > 0.
	RetryAfter time.Duration
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Body.Code, e.Body.Message)
}

func refuse(status int, code, format string, args ...any) *RequestError {
	return &RequestError{Status: status, Body: ErrorBody{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// ErrStatus reports the RequestError in err's chain, if any.
func ErrStatus(err error) (*RequestError, bool) {
	var re *RequestError
	ok := errors.As(err, &re)
	return re, ok
}

func checkEndpoint(e Endpoint) *RequestError {
	if e.BaseURL == "" || e.Model == "" {
		return refuse(http.StatusBadRequest, CodeBadRequest, "policy.base_url and policy.model are required (the trainer's OpenAI-compatible server)")
	}
	u, err := url.Parse(e.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "policy.base_url %q is not an http(s) URL with a host", e.BaseURL)
	}
	if e.TimeoutSeconds < 0 || e.MaxConcurrency < 0 || e.MaxRetries < -1 {
		return refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "policy: timeout_s and max_concurrency must be >= 0, max_retries >= -1")
	}
	if len(e.ExtraBody) > 0 {
		var m map[string]any
		if json.Unmarshal(e.ExtraBody, &m) != nil || m == nil {
			return refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "policy.extra_body must be a JSON object")
		}
	}
	return nil
}
