package host_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/host"
)

// serveEnv makes the test binary serve a built-in harness: the launcher
// re-executes the test binary with it, as weft re-executes itself.
const serveEnv = "WEFT_TEST_SERVE_HARNESS"

func TestMain(m *testing.M) {
	if name := os.Getenv(serveEnv); name != "" {
		if err := host.ServeBuiltin(name); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	for i := len(fixClose) - 1; i >= 0; i-- {
		fixClose[i]()
	}
	os.Exit(code)
}

// testCommand serves built-in harness name from this test binary.
func testCommand(name string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+name)
	return cmd, nil
}

// The server and the launcher are shared by the package's tests: opening
// a server over the retail module and starting a race-instrumented plugin
// process cost seconds each.
var (
	fixOnce     sync.Once
	fixErr      error
	fixServer   *megamcp.Server
	fixLauncher *host.Launcher
	fixClose    []func()
)

// inject is the shared server's fault injector (megamcp.Config.Inject);
// tests that set it do not run in parallel and reset it.
var inject atomic.Pointer[func(session, module, tool string, seq uint64) error]

func setInject(t testing.TB, f func(session, module, tool string, seq uint64) error) {
	inject.Store(&f)
	t.Cleanup(func() { inject.Store(nil) })
}

func newLauncher(t testing.TB) *host.Launcher {
	fixture(t)
	return fixLauncher
}

// newServer returns the shared MegaMCP server (no data dir) over the test
// modules (hello, retail, fx), in a registry of its own.
func newServer(t testing.TB) *megamcp.Server {
	fixture(t)
	return fixServer
}

func fixture(t testing.TB) {
	t.Helper()
	fixOnce.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "weft-host-test-")
		if err != nil {
			fixErr = err
			return
		}
		fixClose = append(fixClose, func() { os.RemoveAll(dir) })
		reg, err := module.OpenRegistry(dir)
		if err != nil {
			fixErr = err
			return
		}
		for _, name := range megamcptest.Modules {
			d, err := reg.PutTar(megamcptest.Bundle(t, name), "")
			if err != nil {
				fixErr = err
				return
			}
			if err := reg.Tag(name, "latest", d); err != nil {
				fixErr = err
				return
			}
		}
		rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
		if err != nil {
			fixErr = err
			return
		}
		fixClose = append(fixClose, func() { rt.Close(ctx) })
		fixServer, fixErr = megamcp.Open(ctx, megamcp.Config{Runtime: rt, Registry: reg, CheckpointInterval: -1,
			Inject: func(session, module, tool string, seq uint64) error {
				if f := inject.Load(); f != nil {
					return (*f)(session, module, tool, seq)
				}
				return nil
			}})
		if fixErr != nil {
			return
		}
		fixClose = append(fixClose, func() { fixServer.Close() })
		fixLauncher = &host.Launcher{Command: testCommand}
		fixClose = append(fixClose, fixLauncher.Close)
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
}

var (
	tasksOnce sync.Once
	tasks     []*task.Tau2Task
	tasksErr  error
	policyMD  string
)

// retailTasks loads the 114 tau2-retail tasks and weft's retail agent
// policy.
func retailTasks(t testing.TB) ([]*task.Tau2Task, string) {
	t.Helper()
	tasksOnce.Do(func() {
		root := megamcptest.Root()
		tasks, tasksErr = task.LoadTau2File(filepath.Join(root, "examples/data/tau2-retail/tasks.json"))
		if tasksErr == nil {
			var b []byte
			b, tasksErr = os.ReadFile(filepath.Join(root, "examples/data/tau2-retail/policy.md"))
			policyMD = string(b)
		}
	})
	if tasksErr != nil {
		t.Fatal(tasksErr)
	}
	return tasks, policyMD
}

// reference replays a task's gold actions on a fresh retail session and
// returns the final state's hash.
func reference(t testing.TB, srv *megamcp.Server, tk *task.Tau2Task) string {
	t.Helper()
	ctx := context.Background()
	info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: []string{"retail"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Delete(ctx, info.ID, 0)
	for _, a := range tk.Actions {
		if _, err := srv.Call(ctx, info.ID, megamcp.CallRequest{Tool: a.Name, Arguments: json.RawMessage(a.Arguments)}); err != nil {
			t.Fatalf("task %s: reference call %s: %v", tk.ID, a.Name, err)
		}
	}
	v, err := srv.Current(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	return v.Hash().String()
}

// retailTools is the tool set the tau2 conversion takes for the retail
// module: every tool of its manifest, read-only when it carries MCP's
// readOnlyHint (as weft run derives it).
func retailTools(t testing.TB) task.Tau2Tools {
	t.Helper()
	b, _, err := megamcptest.Registry(t).Get("retail")
	if err != nil {
		t.Fatal(err)
	}
	out := task.Tau2Tools{}
	for _, tl := range b.Manifest.Tools {
		out[tl.Name] = tl.Annotations != nil && tl.Annotations.ReadOnlyHint
	}
	return out
}
