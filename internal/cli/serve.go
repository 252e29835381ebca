package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/inspect"
	"github.com/weft-dev/weft/megamcp/registry"
)

type serveFlags struct {
	moduleFlags
	addr           string
	data           string
	modules        []string
	token          string
	fsync          string
	checkpoint     time.Duration
	sessionTimeout time.Duration
	callTimeout    time.Duration
	mysqlAddr      string
	maxConns       int
	maxSessions    int
	maxMCPSessions int
	preload        []string
	preloadAll     bool
	moduleMemMiB   int
	cpuProfile     string
	mcpResponse    string
	mcpResumption  bool
}

const serveLong = `Serve tool modules to MCP clients and trainers over HTTP (MegaMCP).

Endpoints (see docs/api.md):
  /mcp                MCP Streamable HTTP: every new MCP session gets a fresh
                      weft session over the --module modules and their seed
                      state; the Mcp-Session-Id is the weft session id
  /mcp/sessions/{id}  MCP for a session created with the admin API
  /v1/...             admin API (HTTP+JSON, bearer token)
  /v1/registry/...    module push/pull (weft module push/pull)
  /metrics            Prometheus metrics (bearer token)

With --mysql-addr, any MySQL client can read a session's state (read-only):
  mysql -h 127.0.0.1 -P PORT -u weft -p"$WEFT_TOKEN" SESSION_ID

With --data, every tool call is appended to the session's ledger before it
is acknowledged, sessions are checkpointed in the background, and a restart
on the same --data recovers every session (checkpoint + ledger replay).

The admin token comes from --token or $WEFT_TOKEN; when neither is set a
random one is generated and printed on stderr. /mcp itself is not
authenticated: an --addr that is not loopback prints a warning on stderr.`

const serveExample = `  # Serve the retail module on loopback, state and ledgers under ./weft-data
  weft serve --addr 127.0.0.1:7420 --data ./weft-data --module retail

  # Any MCP client: http://127.0.0.1:7420/mcp
  npx @modelcontextprotocol/inspector --cli http://127.0.0.1:7420/mcp --transport http --method tools/list

  # A session through the admin API
  curl -s -H "Authorization: Bearer $WEFT_TOKEN" -d '{"modules":["retail"],"seed":1}' http://127.0.0.1:7420/v1/sessions`

func newServeCmd(a *app) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "Serve tool modules over MCP (Streamable HTTP) with the admin API",
		Long:    serveLong,
		Example: serveExample,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), a, f)
		},
	}
	f.moduleFlags.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:7420", "listen address HOST:PORT (port 0 picks a free one)")
	fl.StringVar(&f.data, "data", "", "data directory for ledgers, checkpoints and versions (empty: in memory, nothing survives a restart)")
	fl.StringArrayVar(&f.modules, "module", nil, "module reference (name[:tag] or sha256:...) served on /mcp; repeat for a lifecycle group")
	fl.StringVar(&f.token, "token", "", "admin API bearer token (default $WEFT_TOKEN, else random)")
	fl.StringVar(&f.fsync, "fsync", "always", "ledger fsync policy: always (survives power loss) or never (survives a crash of weft)")
	fl.DurationVar(&f.checkpoint, "checkpoint-interval", time.Second, "debounce period of session checkpoints (0 disables)")
	fl.DurationVar(&f.sessionTimeout, "mcp-idle-timeout", 30*time.Minute, "close MCP sessions idle this long (0: never)")
	fl.DurationVar(&f.callTimeout, "call-timeout", 0, "per tool call deadline (default 2s)")
	fl.IntVar(&f.maxConns, "max-connections", megamcp.DefaultMaxConnections, "open HTTP connections at most (idle ones are evicted first; then new ones get 503 at_capacity)")
	fl.IntVar(&f.maxSessions, "max-sessions", megamcp.DefaultMaxSessions, "live sessions at most (a create at the bound gets 503 at_capacity; -1: no bound)")
	fl.IntVar(&f.maxMCPSessions, "max-mcp-sessions", megamcp.DefaultMaxEphemeralSessions, "MCP sessions on the unauthenticated /mcp at most (-1: no bound)")
	fl.StringArrayVar(&f.preload, "preload", nil, "load this module or synthesized server (and its seed) before serving; repeat for more")
	fl.BoolVar(&f.preloadAll, "preload-all", false, "load every name:latest module and synthesized server of the registry before serving (GET /v1/modules lists them)")
	fl.StringVar(&f.mysqlAddr, "mysql-addr", "", "also serve sessions read-only over the MySQL protocol on this loopback HOST:PORT (user weft, password = the admin token, database = session id); empty: off")
	fl.IntVar(&f.moduleMemMiB, "module-memory-mib", 0, "memory budget in MiB of the compiled wasm modules kept resident (estimated compiled code + idle instances); over it the least recently used are evicted and recompiled from the compilation cache on their next call (0: no budget)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the server (go tool pprof) to this file, from start to shutdown")
	fl.StringVar(&f.mcpResponse, "mcp-response", "sse", "how MCP answers a POSTed request: sse (a text/event-stream; a call's progress and log notifications on it) or json (one application/json body; notifications on the GET stream only; less CPU per call)")
	fl.BoolVar(&f.mcpResumption, "mcp-resumption", true, "keep MCP SSE events in a memory store (10 MiB) so a client can resume a broken response stream with Last-Event-ID (false: less CPU per call)")
	return cmd
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// openServer makes the runtime, registry and megamcp server of serve/mcp.
// rc is the runtime's configuration beyond --cache-dir (CallTimeout,
// ModuleMemoryMiB).
func openServer(ctx context.Context, a *app, f *moduleFlags, data string, fsync string, ckpt time.Duration, rc module.Config, tune ...func(*megamcp.Config)) (*megamcp.Server, *module.Registry, func(), error) {
	pol, err := megamcp.ParseFsyncPolicy(fsync)
	if err != nil {
		return nil, nil, nil, usageErrorf("--fsync: %v", err)
	}
	reg, err := f.openRegistry()
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := f.runtimeWith(ctx, rc)
	if err != nil {
		return nil, nil, nil, err
	}
	if ckpt == 0 {
		ckpt = -1
	}
	met := megamcp.NewMetrics()
	cfg := megamcp.Config{Runtime: rt, Registry: reg, DataDir: data, Fsync: pol,
		CheckpointInterval: ckpt, Logger: a.log(), Metrics: met}
	for _, t := range tune {
		t(&cfg)
	}
	srv, err := megamcp.Open(ctx, cfg)
	if err != nil {
		rt.Close(ctx)
		return nil, nil, nil, err
	}
	met.RegisterPools(srv)
	closeFn := func() {
		if err := srv.Close(); err != nil {
			a.log().Error("closing server", "err", err)
		}
		rt.Close(context.WithoutCancel(ctx))
	}
	return srv, reg, closeFn, nil
}

func runServe(ctx context.Context, a *app, f *serveFlags) error {
	if err := flagAtLeast("--max-connections", f.maxConns, 1, false); err != nil {
		return err
	}
	if err := flagAtLeast("--max-mcp-sessions", f.maxMCPSessions, 1, true); err != nil {
		return err
	}
	for _, err := range []error{
		flagNotNegative("--module-memory-mib", f.moduleMemMiB, "0 means no budget"),
		flagNotNegative("--call-timeout", f.callTimeout, "0 means the default, 2s"),
		flagNotNegative("--checkpoint-interval", f.checkpoint, "0 disables checkpoints"),
		flagNotNegative("--mcp-idle-timeout", f.sessionTimeout, "0 means never"),
	} {
		if err != nil {
			return err
		}
	}
	if f.mcpResponse != "sse" && f.mcpResponse != "json" {
		return usageErrorf("--mcp-response: %q; give sse or json", f.mcpResponse)
	}
	if err := flagAtLeast("--max-sessions", f.maxSessions, 1, true); err != nil {
		return err
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := pf.Close(); err != nil {
				a.log().Error("--cpuprofile", "err", err)
			}
		}()
	}
	token := f.token
	if token == "" {
		token = os.Getenv("WEFT_TOKEN")
	}
	generated := token == ""
	if generated {
		token = randomToken()
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if w := exposureWarning(ln.Addr()); w != "" {
		fmt.Fprintf(a.env.Stderr, "weft: warning: %s\n", w)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, reg, closeSrv, err := openServer(ctx, a, &f.moduleFlags, f.data, f.fsync, f.checkpoint, module.Config{CallTimeout: f.callTimeout, ModuleMemoryMiB: f.moduleMemMiB}, func(c *megamcp.Config) {
		c.MaxSessions, c.MaxEphemeralSessions = f.maxSessions, f.maxMCPSessions
	})
	if err != nil {
		return err
	}
	defer closeSrv()
	var pre *megamcp.PreloadReport
	if f.preloadAll {
		pre, err = srv.PreloadAll(ctx)
	} else if len(f.preload) > 0 {
		pre, err = srv.Preload(ctx, f.preload)
	}
	if err != nil {
		return err
	}
	met := promhttp.HandlerFor(srvMetrics(srv), promhttp.HandlerOpts{})
	h, err := srv.Handler(ctx, megamcp.HTTPOptions{
		Token: token, DefaultModules: f.modules, SessionTimeout: f.sessionTimeout,
		Registry: registry.NewHandler(reg, registry.HandlerOptions{}), Metrics: met,
		JSONResponse: f.mcpResponse == "json", NoResumption: !f.mcpResumption,
	})
	if err != nil {
		return err
	}
	if f.mysqlAddr != "" {
		// go-mysql-server and vitess log through logrus: keep their records
		// in weft's format and level.
		logrus.SetOutput(a.env.Stderr)
		if a.logFormat == "json" {
			logrus.SetFormatter(&logrus.JSONFormatter{})
		}
		switch lv := slog.Level(a.logLevel); {
		case lv <= slog.LevelDebug:
			logrus.SetLevel(logrus.DebugLevel)
		case lv <= slog.LevelInfo:
			logrus.SetLevel(logrus.InfoLevel)
		case lv <= slog.LevelWarn:
			logrus.SetLevel(logrus.WarnLevel)
		default:
			logrus.SetLevel(logrus.ErrorLevel)
		}
		ms, err := inspect.Serve(srv, inspect.Config{Address: f.mysqlAddr, Token: token})
		if err != nil {
			return fmt.Errorf("--mysql-addr: %w", err)
		}
		defer ms.Close()
		a.log().Info("MySQL inspection", "addr", ms.Addr().String(), "user", "weft")
	}
	hs, hl := srv.HTTPServer(h, ln, megamcp.Limits{MaxConnections: f.maxConns})
	base := "http://" + ln.Addr().String()
	info := map[string]any{"addr": ln.Addr().String(), "mcp": base + "/mcp", "admin": base + "/v1", "data": f.data, "modules": f.modules, "sessions": len(srv.Sessions()), "module_memory_mib": srv.Runtime().Config().ModuleMemoryMiB, "mcp_response": f.mcpResponse, "mcp_resumption": f.mcpResumption}
	if pre != nil {
		info["preloaded"], info["preloaded_servers"], info["preload_ms"] = pre.Loaded, pre.Servers, pre.Elapsed.Milliseconds()
	}
	if generated {
		info["token"] = token
		fmt.Fprintf(a.env.Stderr, "weft: admin token (set WEFT_TOKEN to choose one): %s\n", token)
	}
	if err := a.print(info, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "weft serve: listening on %s (MCP %s/mcp, admin %s/v1, %d sessions recovered)\n", ln.Addr(), base, base, len(srv.Sessions()))
		if err == nil && pre != nil {
			_, err = fmt.Fprintf(w, "weft serve: preloaded %d modules (%d synthesized servers) in %v\n", pre.Loaded, pre.Servers, pre.Elapsed.Round(time.Millisecond))
		}
		return err
	}); err != nil {
		return err
	}
	if fl, ok := a.env.Stdout.(interface{ Sync() error }); ok {
		_ = fl.Sync()
	}
	return serveUntilDone(ctx, a, hs, hl, nil)
}

// serveUntilDone serves hs on ln until ctx ends (Ctrl-C, SIGTERM), then
// calls stopping (nil = none) and shuts hs down, waiting up to 10 s for
// requests in flight. A serve error other than the shutdown is returned.
func serveUntilDone(ctx context.Context, a *app, hs *http.Server, ln net.Listener, stopping func()) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.log().Info("shutting down")
	if stopping != nil {
		stopping()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type mcpFlags struct {
	moduleFlags
	modules  []string
	seed     uint64
	stateOut string
	stateIn  string // --state-in (formerly --version)
}

func newMCPCmd(a *app) *cobra.Command {
	f := &mcpFlags{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve one session of tool modules over MCP stdio (for desktop MCP clients)",
		Long: `Serve one weft session over MCP's stdio transport: JSON-RPC messages on
stdin/stdout, logs on stderr. The session starts from the modules' seed state
(or --state-in FILE, a weft.state/v1 export) and lives as long as the
process; --state-out writes its final state (weft.state/v1) on exit. The old
name of --state-in, --version, still works and is deprecated (--version means
the program's version everywhere else: weft --version).`,
		Example: `  # In an MCP client's configuration (clients often start servers with a
  # filtered environment, so name the registry explicitly):
  #   command "weft", args ["mcp", "--module", "retail", "--registry", "/path/to/registry"]
  weft mcp --module retail --state-out final.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.Context(), a, f)
		},
	}
	f.moduleFlags.add(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&f.modules, "module", nil, "module reference; repeat for a lifecycle group (required)")
	fl.Uint64Var(&f.seed, "seed", 0, "session seed")
	fl.StringVar(&f.stateOut, "state-out", "", "write the session's final state here on exit (weft.state/v1)")
	fl.StringVar(&f.stateIn, "state-in", "", "start from this state file (weft.state/v1) instead of the seed")
	fl.StringVar(&f.stateIn, "version", "", "deprecated name of --state-in")
	_ = fl.MarkDeprecated("version", "use --state-in FILE (--version means the program's version: weft --version)")
	return cmd
}

func runMCP(ctx context.Context, a *app, f *mcpFlags) error {
	if len(f.modules) == 0 {
		return usageErrorf("weft mcp needs at least one --module")
	}
	srv, _, closeSrv, err := openServer(ctx, a, &f.moduleFlags, "", "never", 0, module.Config{})
	if err != nil {
		return err
	}
	defer closeSrv()
	opts := megamcp.CreateOptions{Modules: f.modules, Seed: f.seed}
	if f.stateIn != "" {
		b, err := os.ReadFile(f.stateIn)
		if err != nil {
			return err
		}
		if opts.Version, err = srv.ImportVersion(ctx, b); err != nil {
			return err
		}
	}
	ms, id, err := srv.StdioServer(ctx, opts)
	if err != nil {
		return err
	}
	a.log().Info("weft mcp: serving on stdio", "session", id, "modules", f.modules)
	// weft's transport answers malformed lines and, at stdin EOF, lets the
	// calls in flight finish before Run returns (so --state-out has them).
	runErr := ms.Run(ctx, &megamcp.StdioTransport{In: os.Stdin, Out: os.Stdout})
	if errors.Is(runErr, context.Canceled) || errors.Is(runErr, io.EOF) {
		runErr = nil
	}
	if f.stateOut != "" {
		v, err := srv.Current(ctx, id)
		if err != nil {
			return errors.Join(runErr, err)
		}
		// Written to a temporary file and renamed, so a reader never sees
		// a half-written state.
		fh, err := os.CreateTemp(filepath.Dir(f.stateOut), filepath.Base(f.stateOut)+".*.tmp")
		if err != nil {
			return errors.Join(runErr, err)
		}
		if err := v.Export(fh); err != nil {
			fh.Close()
			os.Remove(fh.Name())
			return errors.Join(runErr, err)
		}
		if err := fh.Close(); err != nil {
			os.Remove(fh.Name())
			return errors.Join(runErr, err)
		}
		if err := os.Rename(fh.Name(), f.stateOut); err != nil {
			os.Remove(fh.Name())
			return errors.Join(runErr, err)
		}
		a.log().Info("state written", "file", f.stateOut, "hash", v.Hash().String())
	}
	return runErr
}

func srvMetrics(s *megamcp.Server) *prometheus.Registry { return s.Metrics().Registry }

// exposureWarning says what a listen address exposes when it is not
// loopback ("" for loopback): /mcp has no authentication, so anyone who can
// reach the address can create sessions and call tools.
func exposureWarning(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if ok && tcp.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("listening on %s, which is not loopback: /mcp is unauthenticated, so anyone who can reach this address can create sessions and call tools (the admin API and /metrics need the token); use --addr 127.0.0.1:PORT or put an authenticating proxy in front", addr)
}
