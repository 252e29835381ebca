package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// ErrOtherRun is returned (wrapped) by Run when the folder holds a run of
// a different config: resuming would mix two experiments' results.
var ErrOtherRun = errors.New("the run folder belongs to another experiment")

// ErrFolderBusy is returned (wrapped, naming the holder's pid) by Run when
// another process is running in the same folder: two runs would both do
// every job and interleave their journals.
var ErrFolderBusy = errors.New("the run folder is in use")

// Options configure Run.
type Options struct {
	// Dir is the run folder (created if missing; a folder holding an
	// earlier run of the same experiment is resumed).
	Dir string
	// Progress receives stage progress (nil = none). See Progress.
	Progress func(Event)
	// GeneratedAt is the report's time stamp text (the caller's clock).
	GeneratedAt string
	// Claim is Dir taken earlier by ClaimFolder (nil = Run takes it): Run
	// keeps its lock and releases it at the end.
	Claim *Claim
	// Dispatcher runs the rollout, sft and grpo units elsewhere (a work
	// queue of weft worker processes); nil runs them in this process. The
	// folder is the same either way.
	Dispatcher Dispatcher
}

// Event is a progress event: stage started (Total set), advanced (Done),
// or ended (End).
type Event struct {
	Stage       string
	Done, Total int
	Skipped     int
	End         bool
	// Stopped is set on the End event of a stage that stopped before its
	// work was done (the run was interrupted).
	Stopped bool
}

// Result is what Run leaves besides the folder.
type Result struct {
	Dir     string
	Metrics report.Metrics
	// Failures are the tasks the sft and grpo stages could not finish in
	// this run (also in DIR/failures.json); a rerun tries them again.
	Failures []Failure
	// Infra counts the rollout episodes in the folder that ended on an
	// infrastructure failure, per kind, most frequent first (ties by kind),
	// each with the message of its first episode.
	Infra []InfraCount
	// Report is the report.html this run wrote (the report stage ran);
	// "" when it did not, even if the folder holds one from an earlier run.
	Report string
}

// InfraCount is one kind of infrastructure failure of rollout episodes.
type InfraCount struct {
	Kind     string
	Episodes int
	Example  string
}

// infraCounts tallies eps' infrastructure failures (see Result.Infra).
func infraCounts(eps []report.Episode) []InfraCount {
	idx := map[string]int{}
	var out []InfraCount
	for _, e := range eps {
		if e.Infra == nil {
			continue
		}
		i, ok := idx[e.Infra.Code()]
		if !ok {
			i = len(out)
			idx[e.Infra.Code()] = i
			out = append(out, InfraCount{Kind: e.Infra.Code(), Example: e.Infra.Message})
		}
		out[i].Episodes++
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Episodes != out[j].Episodes {
			return out[i].Episodes > out[j].Episodes
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// Run runs spec's stages into opts.Dir. When ctx ends it stops starting
// work, keeps everything finished in the folder and returns ctx's error
// (a rerun resumes). Other errors: an invalid spec, a folder that cannot
// be written or read back.
func Run(ctx context.Context, spec *Spec, opts Options) (*Result, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if c := opts.Claim; c != nil && c.release != nil && c.dir == opts.Dir {
		defer c.end(true)
	} else {
		release, err := lockFolder(opts.Dir)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	r := newRunner(spec, opts)
	if len(spec.Config) > 0 {
		if err := checkOtherRun(opts.Dir, spec.Config); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(filepath.Join(opts.Dir, FileConfig), spec.Config); err != nil {
			return nil, err
		}
	}
	if spec.has(StageImport) {
		if err := r.importTasks(); err != nil {
			return nil, err
		}
	}
	if spec.has(StageRollout) {
		if err := r.rollout(ctx); err != nil {
			return nil, err
		}
	}
	if spec.has(StageSFT) {
		if err := r.sft(ctx); err != nil {
			return nil, err
		}
	}
	if spec.has(StageGRPO) {
		if err := r.grpo(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.load(); err != nil {
		return nil, err
	}
	if spec.has(StageExport) {
		if err := r.export(); err != nil {
			return nil, err
		}
	}
	failures := r.failures
	if failures == nil {
		failures = []Failure{}
	}
	if err := writeJSON(r.path(FileFailures), failures); err != nil {
		return nil, err
	}
	m := r.metrics()
	if err := writeJSON(filepath.Join(opts.Dir, FileMetrics), m); err != nil {
		return nil, err
	}
	var reportPath string
	if spec.has(StageReport) {
		if err := r.report(m); err != nil {
			return nil, err
		}
		reportPath = filepath.Join(opts.Dir, FileReport)
	}
	return &Result{Dir: opts.Dir, Metrics: m, Failures: r.failures, Infra: infraCounts(r.episodes), Report: reportPath}, nil
}

func newRunner(spec *Spec, opts Options) *runner {
	r := &runner{spec: spec, opts: opts, taskIndex: map[string]int{}}
	for i, t := range spec.Tasks {
		r.taskIndex[t.ID] = i
	}
	return r
}

type runner struct {
	spec *Spec
	opts Options
	refs host.ReferenceCache // shared by the executor and the training envs
	// sftStats and grpoStats are the stage figures (set by metrics).
	sftStats  *report.SFTStats
	grpoStats *report.GRPOStats
	// kept says which tasks the consistency filter keeps for GRPO (set by
	// the grpo stage).
	kept func(*task.Task) bool
	// failures are this run's training-stage tasks that did not finish.
	failures []Failure
	// taskIndex is each task's position in Spec.Tasks.
	taskIndex map[string]int

	// Loaded back from the folder after the work stages (load).
	episodes []report.Episode
	samples  []*train.SampleResult // the configured mode, in task order
	compare  []*train.SampleResult // the other mode (SFTSpec.Compare)
	groups   []*train.GRPOResult
}

func (r *runner) path(name string) string { return filepath.Join(r.opts.Dir, name) }

func (r *runner) event(e Event) {
	if r.opts.Progress != nil {
		r.opts.Progress(e)
	}
}

func (r *runner) importTasks() error {
	r.event(Event{Stage: StageImport, Total: len(r.spec.Tasks)})
	f, err := os.Create(r.path(FileTasks))
	if err != nil {
		return err
	}
	if err := task.Save(f, r.spec.Tasks); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	r.event(Event{Stage: StageImport, Done: len(r.spec.Tasks), Total: len(r.spec.Tasks), End: true})
	return nil
}

// seedOf derives a 64-bit seed from the run seed and a name (a job key, a
// task id): stable across runs and independent of scheduling.
func seedOf(run uint64, name string) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], run)
	h := sha256.New()
	h.Write(b[:])
	h.Write([]byte(name))
	return binary.LittleEndian.Uint64(h.Sum(nil))
}

// jobs lays out the rollout: per task EpisodesPerTask slots, the pair of
// each slot by Assign over all slots (task-major), the sample index the
// slot's count within its (task, pair).
func (r *runner) jobs() ([]rollout.Job, error) {
	s := r.spec
	n := s.Rollout.EpisodesPerTask
	slots, err := Assign(s.Mix, len(s.Tasks)*n)
	if err != nil {
		return nil, err
	}
	var jobs []rollout.Job
	for ti, t := range s.Tasks {
		count := map[int]int{}
		for j := 0; j < n; j++ {
			p := slots[ti*n+j]
			job := rollout.Job{Task: t, View: s.Mix[p].View, Harness: s.Mix[p].Harness, Policy: s.Rollout.Policy, Sample: count[p]}
			count[p]++
			job.Seed = seedOf(s.Rollout.Seed, job.Key())
			jobs = append(jobs, job)
		}
	}
	return jobs, nil
}

type trajectoryLine struct {
	Key        string          `json:"key"`
	Trajectory json.RawMessage `json:"trajectory"`
}

func (r *runner) rollout(ctx context.Context) error {
	s := r.spec
	jobs, err := r.jobs()
	if err != nil {
		return err
	}
	// Episodes that ended on an infrastructure failure run again on a
	// rerun (the endpoint may be back); their new outcome replaces the old.
	infra := map[string]bool{}
	eps, err := openJournal(r.path(FileEpisodes), "key", func(key string, line []byte) error {
		var e report.Episode
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		infra[key] = e.Score == nil
		return nil
	})
	if err != nil {
		return err
	}
	finished := func(key string) bool { return eps.has(key) && !infra[key] }
	defer eps.close()
	trs, err := openJournal(r.path(FileTrajectories), "key", func(string, []byte) error { return nil })
	if err != nil {
		return err
	}
	defer trs.close()

	var werr error // Progress is called one at a time, from Run's goroutine
	skipped := 0
	for _, j := range jobs {
		if finished(j.Key()) {
			skipped++
		}
	}
	total := len(jobs) - skipped
	r.event(Event{Stage: StageRollout, Total: total, Skipped: skipped})
	byKey := map[string]rollout.Job{}
	for _, j := range jobs {
		byKey[j.Key()] = j
	}
	record := func(p rollout.Progress) {
		o := p.Outcome
		ep := report.EpisodeFromOutcome(byKey[o.Key], o, nil)
		if len(o.Trajectory) > 0 {
			if err := trs.replace(o.Key, trajectoryLine{Key: o.Key, Trajectory: compactTrajectory(o.Trajectory)}); err != nil && werr == nil {
				werr = err
			}
		}
		if err := eps.replace(o.Key, ep); err != nil && werr == nil {
			werr = err
		}
		r.event(Event{Stage: StageRollout, Done: p.Done, Total: p.Total, Skipped: p.Skipped})
	}
	if r.opts.Dispatcher != nil {
		err = r.dispatchRollout(ctx, jobs, finished, record)
	} else {
		_, err = rollout.Run(ctx, jobs, r.executor(), rollout.Options{
			Concurrency:    max(1, s.Rollout.Concurrency),
			Retries:        s.Rollout.Retries,
			EpisodeTimeout: s.Rollout.EpisodeTimeout,
			Backoff:        s.Rollout.Backoff,
			Skip:           finished,
			Progress:       record,
		})
	}
	r.event(Event{Stage: StageRollout, End: true, Stopped: ctx.Err() != nil})
	if werr != nil {
		return werr
	}
	return err
}

// executor is the rollout stage's episode executor over the spec.
func (r *runner) executor() *host.Executor {
	s := r.spec
	pol := s.Policies[s.Rollout.Policy]
	ex := &host.Executor{
		Server:   s.Server,
		Launcher: s.Launcher,
		Harness:  s.harness,
		Policy: func(job rollout.Job) (model.Policy, error) {
			return pol.Episode(job.Task, job.View, job.Seed)
		},
		SystemPrompt: s.SystemPrompt,
		Limits:       s.Rollout.Limits,
		Settings:     s.settings(),
		References:   &r.refs,
	}
	ex.Verifier, ex.Attributor, ex.Judge = s.Verifier, s.Attributor, s.Judge
	if !s.has(StageAttribute) {
		ex.Attributor = noAttribution{}
	}
	return ex
}

// noAttribution is the attributor of a pipeline without the attribute
// stage: failed checkpoints stay unattributed.
type noAttribution struct{}

func (noAttribution) Describe(context.Context, *plugin.DescribeRequest, *plugin.DescribeResponse) error {
	return nil
}

func (noAttribution) Attribute(context.Context, plugin.Host, *plugin.AttributeRequest, *plugin.AttributeResponse) error {
	return nil
}

// load reads back what the work stages left in the folder (also what an
// earlier, interrupted run left), in a deterministic order.
func (r *runner) load() error {
	r.episodes = nil
	last := map[string]int{} // key -> index in r.episodes
	if _, err := openJournalRead(r.path(FileEpisodes), func(line []byte) error {
		var e report.Episode
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		if i, ok := last[e.Key]; ok {
			r.episodes[i] = e
			return nil
		}
		last[e.Key] = len(r.episodes)
		r.episodes = append(r.episodes, e)
		return nil
	}); err != nil {
		return err
	}
	sort.SliceStable(r.episodes, func(i, j int) bool { return r.episodeLess(r.episodes[i], r.episodes[j]) })
	var err error
	if r.samples, r.compare, err = r.loadSFT(); err != nil {
		return err
	}
	if r.groups, err = r.loadGRPO(); err != nil {
		return err
	}
	return nil
}

// openJournalRead calls fn for each complete line of path (none when it
// does not exist).
func openJournalRead(path string, fn func(line []byte) error) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		if err := fn(b[:i]); err != nil {
			return n, fmt.Errorf("%s: %w", path, err)
		}
		n++
		b = b[i+1:]
	}
	return n, nil
}

// compactTrajectory drops each turn's "prompt" (the exact messages sent to
// the model, which repeat the system prompt and the whole conversation at
// every turn) from a harness trajectory: trajectories.jsonl keeps the
// canonical messages and, per turn, the raw response, parsed calls,
// results and format errors. A trajectory that does not decode is kept as
// is.
func compactTrajectory(raw json.RawMessage) json.RawMessage {
	var tr map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tr); err != nil {
		return raw
	}
	var turns []map[string]json.RawMessage
	if err := json.Unmarshal(tr["turns"], &turns); err != nil {
		return raw
	}
	for _, t := range turns {
		delete(t, "prompt")
	}
	b, err := json.Marshal(turns)
	if err != nil {
		return raw
	}
	tr["turns"] = b
	out, err := json.Marshal(tr)
	if err != nil {
		return raw
	}
	return out
}

// resumeFree are the resolved-config fields a resumed run may change: they
// do not change any result already in the folder (output formats, stages,
// how many episodes run at once, how failures are retried, where the file
// is). Keys are "block" or "block.attribute".
var resumeFree = map[string]bool{
	"file": true, "dir": true, "variables": true, "output": true, "stages": true,
	"rollout.concurrency": true, "rollout.retries": true, "rollout.backoff": true,
	"sft.concurrency": true, "grpo.concurrency": true,
}

// stageJournals are the config blocks whose results are one stage's
// journal only: while that journal is empty, the block may change.
var stageJournals = map[string]string{"sft": FileSFT, "grpo": FileGRPO}

// noResultsIn reports whether nothing in folder dir came from the resolved
// config's top-level block key: a training-stage block (sft, grpo) whose
// journal is empty or absent. Any other block counts as having results.
func noResultsIn(dir, key string) bool {
	f, ok := stageJournals[key]
	if !ok {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, f))
	return err != nil || st.Size() == 0
}

// checkOtherRun returns ErrOtherRun (wrapped, naming the fields) when dir's
// config.json holds a run whose config differs from config in what the
// results there depend on. A folder without config.json is no other run.
func checkOtherRun(dir string, config []byte) error {
	old, err := os.ReadFile(filepath.Join(dir, FileConfig))
	if err != nil {
		return nil
	}
	if diff := configConflicts(old, config, func(key string) bool { return noResultsIn(dir, key) }); len(diff) > 0 {
		return fmt.Errorf("%w: %s holds a run whose config differs in %s, which the results depend on; use a new --out, or remove the folder to start over", ErrOtherRun, dir, strings.Join(diff, ", "))
	}
	return nil
}

// configConflicts compares two resolved configs (JSON objects) and returns
// the fields, sorted, whose values differ and matter to results already in
// the folder. A block the old config did not have (null or absent) may be
// added, and a block noResults reports nothing came from (a stage that has
// no results yet; nil = every block has results) may change: nothing in the
// folder came from it. Configs that are not JSON objects conflict as a
// whole ("config").
func configConflicts(old, cur []byte, noResults func(key string) bool) []string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(cur, &b) != nil {
		if bytes.Equal(old, cur) {
			return nil
		}
		return []string{"config"}
	}
	var out []string
	for k, av := range a {
		if resumeFree[k] || isNull(av) || noResults != nil && noResults(k) {
			continue
		}
		diffPaths(k, av, b[k], &out)
	}
	sort.Strings(out)
	return out
}

// diffPaths appends to out the dotted paths of the leaves where a and b
// differ, below path: objects by key, lists of equal length by element
// (an element named by its "name" field, as policies and modules are, else
// by its index); a value of another shape, or lists of different lengths,
// is one path. Paths resumeFree lists are skipped with everything below.
func diffPaths(path string, a, b json.RawMessage, out *[]string) {
	if resumeFree[path] || bytes.Equal(compactJSON(a), compactJSON(b)) {
		return
	}
	var ao, bo map[string]json.RawMessage
	if json.Unmarshal(a, &ao) == nil && json.Unmarshal(b, &bo) == nil && ao != nil && bo != nil {
		for f, av := range ao {
			diffPaths(path+"."+f, av, bo[f], out)
		}
		for f, bv := range bo {
			if _, had := ao[f]; !had {
				diffPaths(path+"."+f, nil, bv, out)
			}
		}
		return
	}
	var al, bl []json.RawMessage
	if json.Unmarshal(a, &al) == nil && json.Unmarshal(b, &bl) == nil && al != nil && bl != nil && len(al) == len(bl) {
		for i := range al {
			seg := strconv.Itoa(i)
			var an, bn struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(al[i], &an) == nil && json.Unmarshal(bl[i], &bn) == nil && an.Name != "" && an.Name == bn.Name {
				seg = an.Name
			}
			diffPaths(path+"."+seg, al[i], bl[i], out)
		}
		return
	}
	*out = append(*out, path)
}

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(bytes.TrimSpace(v)) == "null" }

func compactJSON(v json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}
