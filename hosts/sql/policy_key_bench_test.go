package sqlhost

import "testing"

// BenchmarkHandlerPolicyKey is the policy-key cost of one call of the C
// retail module's modify_pending_order_items: a new Handler and 15
// statements (the key is computed at the first and compared at the rest).
func BenchmarkHandlerPolicyKey(b *testing.B) {
	p := Policy{Owns: []string{"orders", "order_items", "payments", "users"}, Reads: []string{"products", "variants", "variant_options"}}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		h := &Handler{Policy: p}
		for range 15 {
			n += len(h.policyKey())
		}
	}
	if n == 0 {
		b.Fatal("empty key")
	}
}
