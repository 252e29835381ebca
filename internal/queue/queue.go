package queue

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/internal/pipeline"
)

// Stream, consumer and subject names.
const (
	JobsStream    = "WEFT_JOBS"
	ResultsStream = "WEFT_RESULTS"
	// WorkersConsumer is the durable pull consumer every worker shares.
	WorkersConsumer = "workers"
	jobsPrefix      = "weft.jobs."
	resultsPrefix   = "weft.results."
)

// Version is the version of the job and result messages ("v").
const Version = 1

// Options configure Connect.
type Options struct {
	// AckWait is how long a job may go without an ack or an in-progress
	// sign before the server redelivers it (0 = 30 s). Every process of a
	// queue should use the same: the consumer is created or updated with
	// the last one connected.
	AckWait time.Duration
	// MaxRefusals is how many workers may refuse one unit (a module digest
	// they cannot get) before the coordinator records it as that
	// infrastructure failure (0 = 10).
	MaxRefusals int
	// Name names the client in the server's connection list.
	Name string
	// Log receives reconnects, dropped messages and refusals (nil =
	// discarded).
	Log *slog.Logger
	// Wait is how long Connect keeps trying a server that is not up yet
	// (0 = one try): a worker started before its coordinator waits.
	Wait time.Duration
}

// Queue is a connection to a NATS server with weft's streams.
type Queue struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	opts Options
	log  *slog.Logger
}

// Connect connects to the NATS server at url (reconnecting for ever when
// it goes away) and creates or updates weft's streams and the workers'
// consumer. While the server cannot be reached it retries every 250 ms
// for up to o.Wait, logging a warning at the first failed attempt and
// every 10 s after. Errors: the server cannot be reached within o.Wait,
// or has no JetStream.
func Connect(ctx context.Context, url string, o Options) (*Queue, error) {
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.MaxRefusals <= 0 {
		o.MaxRefusals = 10
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	deadline := time.Now().Add(o.Wait)
	var nextWarn time.Time // the first failed attempt is logged at once, then every 10 s
	var nc *nats.Conn
	for {
		var err error
		nc, err = nats.Connect(url, nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond),
			nats.Timeout(10*time.Second),
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("queue: disconnected", "err", err) }),
			nats.ReconnectHandler(func(c *nats.Conn) { log.Info("queue: reconnected", "url", c.ConnectedUrl()) }))
		if err == nil {
			break
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return nil, fmt.Errorf("queue: connect %s: %w", url, err)
		}
		if now := time.Now(); now.After(nextWarn) {
			// A worker waits long for its server (it may start first);
			// say so instead of looking alive and idle.
			log.Warn("queue: waiting for the NATS server", "url", url, "err", err, "gives_up_in", time.Until(deadline).Round(time.Second).String())
			nextWarn = now.Add(10 * time.Second)
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("queue: %s: %w", url, err)
	}
	q := &Queue{nc: nc, js: js, opts: o, log: log}
	if err := q.ensure(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("queue: %s: %w", url, err)
	}
	return q, nil
}

func (q *Queue) ensure(ctx context.Context) error {
	if _, err := q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: JobsStream, Subjects: []string{jobsPrefix + ">"}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, Duplicates: 10 * time.Minute,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", JobsStream, err)
	}
	if _, err := q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: ResultsStream, Subjects: []string{resultsPrefix + ">"}, Retention: jetstream.LimitsPolicy,
		Storage: jetstream.FileStorage, MaxAge: 24 * time.Hour, Duplicates: 10 * time.Minute,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", ResultsStream, err)
	}
	if _, err := q.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable: WorkersConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: q.opts.AckWait,
		MaxDeliver: -1, MaxAckPending: 10000,
	}); err != nil {
		return fmt.Errorf("consumer %s: %w", WorkersConsumer, err)
	}
	return nil
}

// Close closes the connection.
func (q *Queue) Close() { q.nc.Close() }

// Run describes one coordinator run; it travels in every job, so a worker
// can rebuild the experiment's Spec: the config's HCL source (relative
// paths in it resolve against File's directory, so task and data files
// must be at the same paths on the worker: one machine, or a shared
// volume) and the modules pinned by digest.
type Run struct {
	// ID is unique per coordinator run (NewRunID); letters, digits, '-'
	// and '_' only (it is a subject token).
	ID     string            `json:"id"`
	Config []byte            `json:"config"`
	File   string            `json:"file"`
	Vars   map[string]string `json:"vars,omitempty"`
	// Modules maps each module block's name to the sha256 digest of its
	// bundle in the coordinator's registry.
	Modules map[string]string `json:"modules,omitempty"`
	// Batch, when set, is a rollout-service batch: its grpo units run
	// with the batch's settings against the trainer's endpoint
	// (pipeline.UnitRunner.WithBatch; the API key from the worker's
	// environment variable Batch.Endpoint.APIKeyEnv). The experiment is
	// built once per config, whatever the batch.
	Batch *pipeline.Batch `json:"batch,omitempty"`
}

// NewRunID returns a fresh random run id (16 hex digits).
func NewRunID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// buildKey identifies what a worker builds for a run: every field but ID,
// so runs of the same config share one built Spec.
func (r *Run) buildKey() string {
	b, _ := json.Marshal(Run{Config: r.Config, File: r.File, Vars: r.Vars, Modules: r.Modules})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func validRunID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// JobMsg is a job message on "weft.jobs.<run id>".
type JobMsg struct {
	V    int           `json:"v"`
	Run  Run           `json:"run"`
	Unit pipeline.Unit `json:"unit"`
}

// ResultMsg is a result message on "weft.results.<run id>": a unit's
// result, or a worker's refusal of it (Refused: the infrastructure
// failure that kept it from running the unit; the job went back to the
// queue).
type ResultMsg struct {
	V       int                  `json:"v"`
	Run     string               `json:"run"`
	Worker  string               `json:"worker"`
	Result  *pipeline.UnitResult `json:"result,omitempty"`
	Unit    *pipeline.Unit       `json:"unit,omitempty"`
	Refused *rollout.InfraError  `json:"refused,omitempty"`
}

// MessageError is a message on a weft subject that is not a usable job or
// result: its subject, stream sequence (0 = unknown) and what is wrong.
type MessageError struct {
	Subject string
	Seq     uint64
	Reason  string
}

func (e *MessageError) Error() string {
	return fmt.Sprintf("queue: malformed message on %s (stream seq %d): %s", e.Subject, e.Seq, e.Reason)
}

// ErrMalformed is matched by every *MessageError (errors.Is).
var ErrMalformed = errors.New("queue: malformed message")

// Is makes errors.Is(err, ErrMalformed) hold.
func (e *MessageError) Is(target error) bool { return target == ErrMalformed }

func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// DecodeJob decodes and checks a job message from subject; a bad one is a
// *MessageError: not JSON, unknown fields, another version, a run id that
// is not the subject's, no config, an unknown stage or no key.
func DecodeJob(subject string, data []byte) (*JobMsg, error) {
	bad := func(f string, a ...any) (*JobMsg, error) {
		return nil, &MessageError{Subject: subject, Reason: fmt.Sprintf(f, a...)}
	}
	var m JobMsg
	if err := decodeStrict(data, &m); err != nil {
		return bad("job does not decode: %v", err)
	}
	switch {
	case m.V != Version:
		return bad("job version %d, want %d", m.V, Version)
	case !validRunID(m.Run.ID):
		return bad("job run id %q is not a subject token", m.Run.ID)
	case subject != jobsPrefix+m.Run.ID:
		return bad("job of run %q on subject %s", m.Run.ID, subject)
	case len(m.Run.Config) == 0:
		return bad("job of run %q carries no config", m.Run.ID)
	case m.Unit.Key == "":
		return bad("job with no unit key")
	}
	switch m.Unit.Stage {
	case pipeline.StageRollout, pipeline.StageSFT, pipeline.StageGRPO:
	default:
		return bad("job of unknown stage %q", m.Unit.Stage)
	}
	return &m, nil
}

// DecodeResult decodes and checks a result message from subject; a bad
// one is a *MessageError: not JSON, unknown fields, another version, a run
// not the subject's, neither or both of a result and a refusal, a result
// that fails pipeline.UnitResult.Check.
func DecodeResult(subject string, data []byte) (*ResultMsg, error) {
	bad := func(f string, a ...any) (*ResultMsg, error) {
		return nil, &MessageError{Subject: subject, Reason: fmt.Sprintf(f, a...)}
	}
	var m ResultMsg
	if err := decodeStrict(data, &m); err != nil {
		return bad("result does not decode: %v", err)
	}
	switch {
	case m.V != Version:
		return bad("result version %d, want %d", m.V, Version)
	case subject != resultsPrefix+m.Run:
		return bad("result of run %q on subject %s", m.Run, subject)
	case (m.Result == nil) == (m.Refused == nil):
		return bad("result message needs exactly one of result and refused")
	case m.Refused != nil && (m.Unit == nil || m.Unit.Key == ""):
		return bad("refusal names no unit")
	}
	if m.Result != nil {
		if err := m.Result.Check(); err != nil {
			return bad("%v", err)
		}
	}
	return &m, nil
}
