package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"

	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/sdk/plugin"
)

// DefaultCommand is the command that serves the built-in harness name: the
// running weft binary re-executed as `weft plugin serve NAME`, so every
// built-in harness is its own process.
func DefaultCommand(name string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating the weft binary to serve the %s harness: %w", name, err)
	}
	return exec.Command(exe, "plugin", "serve", name), nil
}

// ServeBuiltin serves the built-in harness name as a plugin process (the
// body of `weft plugin serve NAME`); it returns only on error or when the
// host goes away.
func ServeBuiltin(name string) error {
	h, ok := builtin.Harness(name)
	if !ok {
		return fmt.Errorf("no built-in harness %q (have %v)", name, builtin.Names())
	}
	plugin.Serve(&plugin.ServeConfig{Harness: h})
	return nil
}

// Launcher starts harness plugin processes on first use and keeps one
// process per harness, shared by all episodes (RunEpisode calls are
// concurrent). A process that has exited is started again on the next
// Harness call. Safe for concurrent use.
type Launcher struct {
	// Command returns the command serving built-in harness name; nil is
	// DefaultCommand. Tests re-execute the test binary here.
	Command func(name string) (*exec.Cmd, error)
	// Logger receives the plugins' logs; nil discards them.
	Logger *slog.Logger

	mu      sync.Mutex
	running map[string]*launched
}

type launched struct {
	client  *plugin.Client
	harness *plugin.HarnessClient
}

// Builtin returns the running built-in harness name ("react", "hermes",
// "native"), starting its process if needed.
func (l *Launcher) Builtin(ctx context.Context, name string) (plugin.Harness, error) {
	if _, ok := builtin.Harness(name); !ok {
		return nil, fmt.Errorf("no built-in harness %q (have %v)", name, builtin.Names())
	}
	cmd := l.Command
	if cmd == nil {
		cmd = DefaultCommand
	}
	return l.start(ctx, "builtin:"+name, func() (*exec.Cmd, error) { return cmd(name) })
}

// Binary returns the running harness plugin at path (a binary that calls
// plugin.Serve), starting it if needed.
func (l *Launcher) Binary(ctx context.Context, path string, args ...string) (plugin.Harness, error) {
	return l.start(ctx, "binary:"+path, func() (*exec.Cmd, error) { return exec.Command(path, args...), nil })
}

func (l *Launcher) start(ctx context.Context, key string, mk func() (*exec.Cmd, error)) (plugin.Harness, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.running[key]; p != nil {
		if !p.client.Exited() {
			return p.harness, nil
		}
		p.client.Kill()
		delete(l.running, key)
	}
	cmd, err := mk()
	if err != nil {
		return nil, err
	}
	logger := l.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c, err := plugin.Start(ctx, plugin.StartConfig{Cmd: cmd, Logger: logger.With("plugin", key)})
	if err != nil {
		return nil, fmt.Errorf("starting harness plugin %s: %w", key, err)
	}
	h, err := c.Harness()
	if err != nil {
		c.Kill()
		return nil, fmt.Errorf("harness plugin %s: %w", key, err)
	}
	if l.running == nil {
		l.running = map[string]*launched{}
	}
	l.running[key] = &launched{client: c, harness: h}
	return h, nil
}

// Kill stops the process of key ("builtin:NAME" or "binary:PATH"), if
// running (tests use it to crash a plugin mid-episode).
func (l *Launcher) Kill(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.running[key]; p != nil {
		p.client.Kill()
		delete(l.running, key)
	}
}

// Close stops every plugin process.
func (l *Launcher) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, p := range l.running {
		p.client.Kill()
		delete(l.running, k)
	}
}
