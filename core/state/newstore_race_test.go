package state

import (
	"sync"
	"testing"
)

// Stores made at once (weft worker builds experiments concurrently) must
// not race in go-mysql-server's process-wide initialization (run with
// -race); each gets its own engine.
func TestNewStoreConcurrent(t *testing.T) {
	const n = 4
	stores := make([]*Store, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i] = NewStore()
		}()
	}
	wg.Wait()
	seen := map[any]bool{}
	for i, s := range stores {
		if s == nil || s.engine == nil {
			t.Fatalf("store %d has no engine", i)
		}
		if seen[s.engine] {
			t.Fatalf("store %d shares an engine", i)
		}
		seen[s.engine] = true
	}
}
