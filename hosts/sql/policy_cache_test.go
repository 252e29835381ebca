package sqlhost

import (
	"context"
	"errors"
	"strings"
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

// TestHandlerPolicyChangeNotCached: a Handler's verdicts come from the
// process-wide cache under its policy's key. After a statement was allowed
// (and its verdict cached), changing the handler's Policy (replaced, or a
// table name changed in place in a shared slice) must refuse it, never
// reuse the old policy's allow, and must not run it.
func TestHandlerPolicyChangeNotCached(t *testing.T) {
	const stmt = "UPDATE hpc_orders SET v = 1"
	req := []byte(`{"sql":"` + stmt + `"}`)
	owns := []string{"hpc_orders"}
	f := &fakeExec{}
	var denied []*DeniedError
	h := &Handler{Exec: f, Policy: Policy{Owns: owns}, OnDenied: func(d *DeniedError) { denied = append(denied, d) }}
	ctx := context.Background()
	for i := range 3 { // allowed, then from the cache
		if got := string(h.Handle(ctx, req)); !strings.Contains(got, `"error":null`) {
			t.Fatalf("owner round %d: %s", i, got)
		}
	}
	if len(f.calls) != 3 || len(denied) != 0 {
		t.Fatalf("after 3 allowed: %d executed, %d denied; want 3, 0", len(f.calls), len(denied))
	}

	h.Policy = Policy{Reads: []string{"hpc_orders"}} // replaced: read-only now
	got := string(h.Handle(ctx, req))
	if !strings.Contains(got, `"kind":"denied"`) || !strings.Contains(got, "read-only") {
		t.Fatalf("read-only policy: %s, want a denied read-only reply", got)
	}
	if len(f.calls) != 3 || len(denied) != 1 || !denied[0].Write || denied[0].Table != "hpc_orders" {
		t.Fatalf("read-only policy: %d executed, denied %+v", len(f.calls), denied)
	}

	h.Policy = Policy{Owns: owns} // back: allowed again
	if got := string(h.Handle(ctx, req)); !strings.Contains(got, `"error":null`) {
		t.Fatalf("owner again: %s", got)
	}
	owns[0] = "hpc_other" // changed in place in the slice the policy shares
	got = string(h.Handle(ctx, req))
	if !strings.Contains(got, `"kind":"denied"`) || !strings.Contains(got, "not declared") {
		t.Fatalf("in-place change: %s, want a denied not-declared reply", got)
	}
	if len(f.calls) != 4 || len(denied) != 2 || denied[1].Write {
		t.Fatalf("in-place change: %d executed, denied %+v; want 4 executed", len(f.calls), denied)
	}
}
