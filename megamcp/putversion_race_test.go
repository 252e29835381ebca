package megamcp_test

import (
	"context"
	"sync"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestConcurrentFirstCreate: the first sessions of a group, created
// concurrently on a fresh data directory, all persist the group's seed
// version (versions/<id>.json) at once; none may fail. (The crash test
// found concurrent writers sharing one temporary file name: "rename
// ....json.tmp: no such file or directory".)
func TestConcurrentFirstCreate(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for round := range 3 {
		s, err := megamcp.Open(ctx, megamcp.Config{Runtime: rt, Registry: reg, DataDir: t.TempDir(), CheckpointInterval: -1, Fsync: megamcp.FsyncAlways})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mod := "hello"
				if i%2 == 1 {
					mod = "retail"
				}
				if _, err := s.Create(ctx, megamcp.CreateOptions{Modules: []string{mod}}); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		s.Close()
	}
}
