package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
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

	mu    sync.Mutex       // guards slots, never held while starting
	slots map[string]*slot // by key
}

// slot is one key's process; its own lock serializes starting it, so
// plugins under different keys start concurrently.
type slot struct {
	mu sync.Mutex
	p  *launched // nil when not running
}

type launched struct {
	client  *plugin.Client
	harness *plugin.HarnessClient
}

// slot returns key's slot, creating it.
func (l *Launcher) slot(key string) *slot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.slots == nil {
		l.slots = map[string]*slot{}
	}
	s := l.slots[key]
	if s == nil {
		s = &slot{}
		l.slots[key] = s
	}
	return s
}

// BinaryKey is the key of the process Binary(path, args...) runs:
// "binary:PATH", followed by each argument quoted when there are any.
func BinaryKey(path string, args ...string) string {
	key := "binary:" + path
	for _, a := range args {
		key += " " + strconv.Quote(a)
	}
	return key
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
// plugin.Serve), starting it if needed. Each distinct args runs its own
// process.
func (l *Launcher) Binary(ctx context.Context, path string, args ...string) (plugin.Harness, error) {
	return l.start(ctx, BinaryKey(path, args...), func() (*exec.Cmd, error) { return exec.Command(path, args...), nil })
}

func (l *Launcher) start(ctx context.Context, key string, mk func() (*exec.Cmd, error)) (plugin.Harness, error) {
	s := l.slot(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.p; p != nil {
		if !p.client.Exited() {
			return p.harness, nil
		}
		p.client.Kill()
		s.p = nil
	}
	cmd, err := mk()
	if err != nil {
		return nil, err
	}
	logger := l.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// "harness", not "plugin": go-plugin's own records carry a plugin
	// attribute (the binary's path).
	c, err := plugin.Start(ctx, plugin.StartConfig{Cmd: cmd, Logger: logger.With("harness", key), Name: key})
	if err != nil {
		return nil, fmt.Errorf("starting harness plugin %s: %w", key, err)
	}
	h, err := c.Harness()
	if err != nil {
		c.Kill()
		return nil, fmt.Errorf("harness plugin %s: %w", key, err)
	}
	s.p = &launched{client: c, harness: h}
	return h, nil
}

// Kill stops the process of key ("builtin:NAME" or BinaryKey), if
// running (tests use it to crash a plugin mid-episode). It waits for a
// start of key in progress.
func (l *Launcher) Kill(key string) {
	l.mu.Lock()
	s := l.slots[key]
	l.mu.Unlock()
	if s != nil {
		s.kill()
	}
}

func (s *slot) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		s.p.client.Kill()
		s.p = nil
	}
}

// Close stops every plugin process.
func (l *Launcher) Close() {
	l.mu.Lock()
	slots := make([]*slot, 0, len(l.slots))
	for _, s := range l.slots {
		slots = append(slots, s)
	}
	l.mu.Unlock()
	for _, s := range slots {
		s.kill()
	}
}
