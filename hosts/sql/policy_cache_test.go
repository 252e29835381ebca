package sqlhost

import (
	"errors"
	"testing"
)

// TestCheckCacheKeyedByPolicy: a cached verdict is never reused for a policy
// with other tables, and repeated checks return the first verdict.
func TestCheckCacheKeyedByPolicy(t *testing.T) {
	const stmt = "UPDATE cache_probe_t SET v = ? WHERE id = ?"
	owner := Policy{Owns: []string{"cache_probe_t"}}
	reader := Policy{Reads: []string{"cache_probe_t"}}
	stranger := Policy{Owns: []string{"other"}}
	for i := 0; i < 3; i++ {
		if k, err := owner.Check(stmt); err != nil || k != KindExec {
			t.Fatalf("owner round %d: %v %v", i, k, err)
		}
		var d *DeniedError
		if _, err := reader.Check(stmt); !errors.As(err, &d) || !d.Write || d.Table != "cache_probe_t" {
			t.Fatalf("reader round %d: %v", i, err)
		}
		if _, err := stranger.Check(stmt); !errors.As(err, &d) || d.Write {
			t.Fatalf("stranger round %d: %v", i, err)
		}
	}
	if _, ok := checkCache.Load(checkKey{policy: owner.key(), stmt: stmt}); !ok {
		t.Fatal("verdict not cached")
	}
	if _, err := owner.Check("SELEC nonsense"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("syntax: %v", err)
	}
	if _, err := owner.Check("SELEC nonsense"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("cached syntax: %v", err)
	}
}
