package megamcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/internal/suggest"
)

// Config configures a Server. The zero value of every optional field is a
// sensible default; Runtime and Registry are required.
type Config struct {
	// Runtime compiles and runs the tool modules; shared by every session.
	Runtime *module.Runtime
	// Registry resolves module references (name[:tag] or sha256:...).
	Registry *module.Registry
	// DataDir holds ledgers, checkpoints and versions. Empty: nothing is
	// written to disk and nothing survives the process (tests, benchmarks).
	DataDir string
	// Fsync says when ledger appends reach stable storage (FsyncAlways by
	// default).
	Fsync FsyncPolicy
	// CheckpointInterval is the debounce period of asynchronous session
	// checkpoints: a session with calls not yet checkpointed is checkpointed
	// at most once per interval. Default 1 s; negative disables
	// checkpoints (recovery then replays whole ledgers).
	CheckpointInterval time.Duration
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Metrics, if non-nil, is updated by the server (see NewMetrics).
	Metrics *Metrics
	// Inject, if set, is called before every module call with the
	// session id, the module and tool names and the call's sequence number;
	// a non-nil error fails the call as a module trap (a *module.CallError
	// of kind module.ErrTrap carrying the error's text), recorded in the
	// ledger like a real one. It exists for fault-injection tests of the
	// layers above (infrastructure-failure handling, attribution); leave it
	// nil in production.
	Inject func(session, module, tool string, seq uint64) error
	// MaxSessions bounds the live sessions (0: DefaultMaxSessions;
	// negative: no bound). A creation at the bound fails with
	// ErrAtCapacity.
	MaxSessions int
	// MaxEphemeralSessions bounds the live ephemeral sessions, made by
	// unauthenticated MCP clients on /mcp (0: DefaultMaxEphemeralSessions;
	// negative: no bound; never above MaxSessions).
	MaxEphemeralSessions int
	// RecoveryAttempts is how many times recovery tries a session that
	// fails with a transient error (too many open files, out of memory, a
	// replay deadline) before Open gives up (0: 4).
	RecoveryAttempts int

	// fault, if set, is consulted before the server opens, creates or
	// writes a file of the data directory (op "open", "create", "write",
	// "mkdir", "read"); a non-nil error is returned as that operation's
	// error. Tests inject EMFILE and EROFS with it.
	fault func(op, path string) error
}

// Defaults of Config's bounds.
const (
	DefaultMaxSessions          = 10000
	DefaultMaxEphemeralSessions = 1000
)

// Server holds the sessions of one weft serve process: loaded modules
// (shared), lifecycle groups, sessions with private workspaces, the
// versions they start from and restore to, the ledger and checkpoints. Its
// methods are safe for concurrent use; calls of one session run one at a
// time in arrival order.
type Server struct {
	cfg   Config
	store *state.Store
	log   *slog.Logger
	met   *Metrics

	mu       sync.RWMutex
	sessions map[string]*Session
	modules  map[string]*loadedModule // by digest
	groups   map[string]*Group        // by group key
	versions map[string]*state.Version

	loadMu sync.Mutex // serializes module loading and version persistence
	ephMu  sync.Mutex // serializes creation of ephemeral MCP sessions

	defaultModules []string // modules of /mcp's ephemeral sessions
	stdioSession   string   // the one session of a stdio server
	bound          sync.Map // MCP session id -> weft session id (see mcpSession)

	stop   chan struct{}
	done   chan struct{}
	closed bool
	unlock func() // releases the data directory's lock (nil: no DataDir)

	health atomic.Pointer[writeHealth] // see Health
}

type loadedModule struct {
	digest string
	ref    string
	mod    *module.Module
	bundle *module.Bundle
	seed   *state.Version
}

// Open starts a server. With a DataDir it recovers every session found
// there: the last checkpoint, then the ledger records after it replayed, so
// no acknowledged call is lost.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Runtime == nil || cfg.Registry == nil {
		return nil, errors.New("megamcp: Config needs a Runtime and a Registry")
	}
	if cfg.CheckpointInterval == 0 {
		cfg.CheckpointInterval = time.Second
	}
	if cfg.MaxSessions == 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxEphemeralSessions == 0 {
		cfg.MaxEphemeralSessions = DefaultMaxEphemeralSessions
	}
	if cfg.RecoveryAttempts <= 0 {
		cfg.RecoveryAttempts = 4
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg: cfg, store: state.NewStore(), log: lg, met: cfg.Metrics,
		sessions: map[string]*Session{}, modules: map[string]*loadedModule{},
		groups: map[string]*Group{}, versions: map[string]*state.Version{},
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	if cfg.DataDir != "" {
		for _, d := range []string{"sessions", "versions"} {
			if err := os.MkdirAll(filepath.Join(cfg.DataDir, d), 0o755); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrDataDir, err)
			}
		}
		unlock, err := lockDataDir(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		if err := s.probeWritable(); err != nil {
			unlock()
			return nil, err
		}
		if err := s.recover(ctx); err != nil {
			s.closeSessions()
			unlock()
			return nil, err
		}
		s.unlock = unlock
	}
	if cfg.DataDir != "" && cfg.CheckpointInterval > 0 {
		go s.checkpointLoop()
	} else {
		close(s.done)
	}
	return s, nil
}

// Runtime returns the module runtime the server was opened with
// (Config.Runtime); its Config() is the runtime's effective configuration.
func (s *Server) Runtime() *module.Runtime { return s.cfg.Runtime }

// Close stops the checkpointer, writes a last checkpoint of every session
// with new calls and closes the ledgers. Sessions stay on disk for the next
// Open.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	var errs []error
	if s.cfg.DataDir != "" {
		errs = append(errs, s.checkpointAll(true))
	}
	errs = append(errs, s.closeSessions())
	if s.unlock != nil {
		s.unlock()
	}
	return errors.Join(errs...)
}

// closeSessions closes every session's ledger (Close, and Open when
// recovery gives up).
func (s *Server) closeSessions() error {
	var errs []error
	s.mu.Lock()
	for _, ss := range s.sessions {
		ss.mu.Lock()
		if ss.wal != nil {
			errs = append(errs, ss.wal.close())
		}
		ss.closed = true
		ss.mu.Unlock()
	}
	s.mu.Unlock()
	return errors.Join(errs...)
}

// Metrics returns the server's metrics (nil when Config.Metrics was nil).
func (s *Server) Metrics() *Metrics { return s.met }

// Store returns the state store of the server's versions and workspaces.
func (s *Server) Store() *state.Store { return s.store }

// moduleLookupError is ErrNoSuchModule (404) for a reference the registry
// does not hold, with "(did you mean "NAME"?)" when the registry lists a
// close name (name:tag when ref has a tag), and an internal error (500)
// when the registry could not be read: an I/O failure is not an unknown
// module.
func moduleLookupError(reg *module.Registry, ref string, err error) error {
	if errors.Is(err, module.ErrNotFound) {
		msg := fmt.Sprintf("%s: %v", ref, err)
		if near := closestModule(reg, ref); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return fmt.Errorf("%w: %s", ErrNoSuchModule, msg)
	}
	return fmt.Errorf("module %s: %w", ref, err)
}

// closestModule is the registry's reference closest to ref ("" for none or
// an unreadable registry): among names, or name:tag references when ref
// has a tag. Digests get no suggestion.
func closestModule(reg *module.Registry, ref string) string {
	if reg == nil || strings.HasPrefix(ref, "sha256:") {
		return ""
	}
	refs, err := reg.List()
	if err != nil {
		return ""
	}
	var names []string
	for _, r := range refs {
		n := r.Name
		if strings.Contains(ref, ":") {
			n += ":" + r.Tag
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return suggest.Closest(ref, names)
}

// loadModule resolves ref in the registry and compiles it once per digest.
func (s *Server) loadModule(ctx context.Context, ref string) (*loadedModule, error) {
	digest, err := s.cfg.Registry.Resolve(ref)
	if err != nil {
		return nil, moduleLookupError(s.cfg.Registry, ref, err)
	}
	s.mu.RLock()
	lm := s.modules[digest]
	s.mu.RUnlock()
	if lm != nil {
		return lm, nil
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	s.mu.RLock()
	lm = s.modules[digest]
	s.mu.RUnlock()
	if lm != nil {
		return lm, nil
	}
	b, _, err := s.cfg.Registry.Get(digest)
	if err != nil {
		return nil, moduleLookupError(s.cfg.Registry, ref, err)
	}
	// A module bundle's wasm is compiled once per digest; a server bundle
	// (a synthesized server) is loaded on its interpreter module, which the
	// registry must hold (module.ErrNoInterpreter: run make build).
	mod, err := s.cfg.Runtime.Load(ctx, s.cfg.Registry, b)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", ref, err)
	}
	seed, err := b.SeedVersion(ctx, s.store)
	if err != nil {
		return nil, fmt.Errorf("module %s: seed: %w", ref, err)
	}
	lm = &loadedModule{digest: digest, ref: ref, mod: mod, bundle: b, seed: seed}
	s.mu.Lock()
	s.modules[digest] = lm
	s.mu.Unlock()
	s.log.Info("module loaded", "ref", ref, "digest", digest, "tools", len(mod.Manifest().Tools))
	return lm, nil
}

// Group is a lifecycle group: the modules of one task, served together over
// one workspace. Tools are exposed under their own names; a tool name that
// two modules of the group share is exposed as "<module>__<tool>" for each
// of them (the prefix rule, docs/api.md).
type Group struct {
	key     string
	modules []*loadedModule
	tools   []GroupTool
	byName  map[string]int
	seed    *state.Version
	tables  module.GroupTables

	mcpOnce sync.Once
	mcp     *mcp.Server
}

// didYouMean is ` (did you mean "NAME"?)` for the group's exposed tool
// name closest to name, or "" when none is close.
func (g *Group) didYouMean(name string) string {
	names := make([]string, len(g.tools))
	for i, t := range g.tools {
		names[i] = t.Name
	}
	if near := suggest.Closest(name, names); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

// GroupTool is one tool as the group exposes it.
type GroupTool struct {
	Name   string // exposed name
	Module string // module name
	Tool   module.Tool
	mod    *loadedModule
}

// Key identifies the group: its module digests joined by "+", in order.
func (g *Group) Key() string { return g.key }

// Tools lists the group's tools in exposure order (modules in group order,
// tools in manifest order).
func (g *Group) Tools() []GroupTool { return g.tools }

// Tables returns how the group's modules keep their tables (namespaced
// when two of them own a table of the same name).
func (g *Group) Tables() module.GroupTables { return g.tables }

// Modules returns the group's modules.
func (g *Group) Modules() []*module.Module {
	out := make([]*module.Module, len(g.modules))
	for i, m := range g.modules {
		out[i] = m.mod
	}
	return out
}

// group returns the lifecycle group of refs (at least one), building it once.
func (s *Server) group(ctx context.Context, refs []string) (*Group, error) {
	if len(refs) == 0 {
		return nil, fmt.Errorf("%w: a session needs at least one module", ErrBadRequest)
	}
	var mods []*loadedModule
	var digests []string
	for _, r := range refs {
		lm, err := s.loadModule(ctx, r)
		if err != nil {
			return nil, err
		}
		if slices.Contains(digests, lm.digest) {
			continue
		}
		mods = append(mods, lm)
		digests = append(digests, lm.digest)
	}
	key := strings.Join(digests, "+")
	s.mu.RLock()
	g := s.groups[key]
	s.mu.RUnlock()
	if g != nil {
		return g, nil
	}
	seeds := make([]*state.Version, len(mods))
	mfs := make([]*module.Manifest, len(mods))
	for i, m := range mods {
		seeds[i] = m.seed
		mfs[i] = m.mod.Manifest()
	}
	// Modules owning tables of the same name keep their own, each under
	// its namespace (docs/design/026-composition.md); other groups are
	// stored as they always were.
	tables, err := module.TableNamespaces(mfs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	seed, err := tables.Seed(seeds)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}

	g = &Group{key: key, modules: mods, seed: seed, tables: tables, byName: map[string]int{}}
	names := module.ToolNames(mfs)
	for i, m := range mods {
		mf := mfs[i]
		for j, t := range mf.Tools {
			name := names[i][j]
			g.byName[name] = len(g.tools)
			g.tools = append(g.tools, GroupTool{Name: name, Module: mf.Name, Tool: t, mod: m})
		}
	}
	s.mu.Lock()
	if prev := s.groups[key]; prev != nil {
		g = prev
	} else {
		s.groups[key] = g
	}
	s.mu.Unlock()
	return g, nil
}

// checkReads reports a module of g that owns or reads a table v does not
// have (a session over it could only fail).
func (g *Group) checkReads(v *state.Version) error {
	have := map[string]bool{}
	for _, t := range v.Tables() {
		have[strings.ToLower(t)] = true
	}
	for _, m := range g.modules {
		name := m.mod.Manifest().Name
		for _, t := range m.mod.Manifest().Tables.Owns {
			if !have[strings.ToLower(g.tables.Stored(name, t))] {
				return fmt.Errorf("%w: module %s owns table %s, which the version does not have", ErrBadRequest, m.mod.Manifest().Name, t)
			}
		}
		for _, t := range m.mod.Manifest().Tables.Reads {
			if !have[strings.ToLower(g.tables.Stored(name, t))] {
				return fmt.Errorf("%w: module %s reads table %s, which neither the group's modules nor the version create", ErrBadRequest, m.mod.Manifest().Name, t)
			}
		}
	}
	return nil
}

// VersionID is the id of a version: the hex SHA-256 state hash
// (state.Version.Hash), so equal states share an id across processes.
func VersionID(v *state.Version) string { return v.Hash().String() }

// putVersion registers v and, with a DataDir, writes it to
// versions/<id>.json (once per id) before returning its id.
func (s *Server) putVersion(ctx context.Context, v *state.Version) (string, error) {
	id := VersionID(v)
	s.mu.RLock()
	_, ok := s.versions[id]
	s.mu.RUnlock()
	if ok {
		return id, nil
	}
	if s.cfg.DataDir != "" {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		p := filepath.Join(s.cfg.DataDir, "versions", id+".json")
		if _, err := os.Stat(p); err != nil {
			var buf bytes.Buffer
			if err := v.Export(&buf); err != nil {
				return "", err
			}
			if err := s.writeFile(p, buf.Bytes()); err != nil {
				return "", err
			}
		}
	}
	s.mu.Lock()
	if _, ok := s.versions[id]; !ok {
		s.versions[id] = v
	}
	s.mu.Unlock()
	return id, nil
}

// Version returns the version with the given id, loading it from the data
// directory if needed (ctx bounds the import). Errors: ErrNoSuchVersion.
func (s *Server) Version(ctx context.Context, id string) (*state.Version, error) {
	s.mu.RLock()
	v, ok := s.versions[id]
	s.mu.RUnlock()
	if ok {
		return v, nil
	}
	if s.cfg.DataDir == "" || !isHex64(id) {
		return nil, fmt.Errorf("%w: %q", ErrNoSuchVersion, id)
	}
	p := filepath.Join(s.cfg.DataDir, "versions", id+".json")
	err := s.fault("open", p)
	var f *os.File
	if err == nil {
		f, err = os.Open(p)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", ErrNoSuchVersion, id)
	}
	if err != nil {
		// Not "no such version": the file may be there (too many open
		// files, an I/O error) and recovery must not condemn a session
		// for it.
		return nil, fmt.Errorf("version %s: %w", id, err)
	}
	defer f.Close()
	v, err = s.store.Import(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("version %s: %w", id, err)
	}
	s.mu.Lock()
	if prev, ok := s.versions[id]; ok {
		v = prev
	} else {
		s.versions[id] = v
	}
	s.mu.Unlock()
	return v, nil
}

// ImportVersion reads a weft.state/v1 document (state.Version.Export) and
// registers it as a version sessions can start from or restore to.
func (s *Server) ImportVersion(ctx context.Context, doc []byte) (string, error) {
	v, err := s.store.Import(ctx, bytes.NewReader(doc))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	return s.putVersion(ctx, v)
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// newID returns an unguessable session id: 128 random bits from
// crypto/rand, base32 without padding, lower case (26 characters).
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

func validID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// writeFileAtomic writes data to path through a temporary file of its own
// (concurrent writers of the same path, e.g. two sessions persisting the
// same version, must not share one) renamed over path.
func writeFileAtomic(path string, data []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if sync {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return nil
}

// Sessions lists the ids of live sessions, sorted.
func (s *Server) Sessions() []string {
	s.mu.RLock()
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	s.mu.RUnlock()
	sort.Strings(ids)
	return ids
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
