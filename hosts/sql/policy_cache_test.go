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

// TestCheckCacheKeyUnambiguous is issue 15 item 2: the cache key joined
// table names with "," and "|", so a module owning a table named
// "notes,secret" got the verdict cached for a module owning notes and
// secret. Two policies with other table sets never share a verdict.
func TestCheckCacheKeyUnambiguous(t *testing.T) {
	cases := []struct {
		stmt          string
		allowed, same Policy
	}{
		{"SELECT * FROM ck_secret",
			Policy{Owns: []string{"ck_notes", "ck_secret"}},
			Policy{Owns: []string{"ck_notes,ck_secret"}}},
		{"UPDATE ck_t SET v = 1",
			Policy{Owns: []string{"ck_t"}, Reads: []string{"ck_s|"}},
			Policy{Owns: []string{"ck_t|ck_s"}}},
	}
	for _, c := range cases {
		if _, err := c.allowed.Check(c.stmt); err != nil {
			t.Fatalf("%s under %+v: %v", c.stmt, c.allowed, err)
		}
		var d *DeniedError
		if _, err := c.same.Check(c.stmt); !errors.As(err, &d) {
			t.Errorf("%s under %+v: %v, want denied (a verdict cached for %+v was reused)", c.stmt, c.same, err, c.allowed)
		}
	}
}
