package megamcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/sdk/spec"
)

// BenchmarkSynthServers is the scale figure of synthesized servers
// (docs/benchmarks.md, "Synthesized servers"): N servers registered and
// loaded in ONE MegaMCP server at once, all on one interpreter module, then
// a new session on every server in random order and its first call
// (get_account). The servers are generated variants of the bank spec
// (core/module/testdata/servers/bank): each its own name, description
// ("generated variant") and program (a comment differs), so its own
// manifest, program digest, seed state and bundle digest. N is 1,000 (100
// under -short; WEFT_BENCH_SERVERS overrides). The whole measurement runs
// once per iteration; -benchtime=1x is enough.
//
// Metrics: rss-MiB (process resident set with all N loaded and one
// session each), rss-KiB/server (resident-set growth per server, loaded
// with its seed and one session after two calls), load-ms/server, the
// cold first call (a new session on a server never called):
// first-call-p50/p99-ms (the call alone), create+call-p50-ms; the second
// call of the same session (second-call-p50-ms, the peer); the warm first
// call (a new session on a server called before, each deleted after):
// warm-first-call-p50/p99-ms; and the ratios warm/second-p50 and
// cold/second-p50.
func BenchmarkSynthServers(b *testing.B) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	if v, err := strconv.Atoi(os.Getenv("WEFT_BENCH_SERVERS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	reg, err := module.OpenRegistry(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	megamcptest.PutServer(b, reg, bankSpec)
	interp, err := reg.Resolve(module.InterpreterName)
	if err != nil {
		b.Fatal(err)
	}
	base, err := spec.Load(megamcptest.Root() + "/" + bankSpec)
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, n)
	for i := range n {
		v := *base
		v.Name = fmt.Sprintf("bank-v%04d", i)
		v.Description = fmt.Sprintf("generated variant %d of the bank spec (the memory figure)", i)
		v.Program = fmt.Sprintf("# generated variant %d\n%s", i, base.Program)
		bb, err := module.ServerBundle(&v, interp)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := reg.Put(bb); err != nil {
			b.Fatal(err)
		}
		names[i] = v.Name
	}
	req := CallRequest{Tool: "get_account", Arguments: json.RawMessage(`{"account_id":"a1"}`)}
	for it := 0; it < b.N; it++ {
		_, r0 := settled(b)
		rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir(), CallTimeout: 30 * time.Second}) // 30 s: the load of a shared machine, as synthscale's --call-timeout
		if err != nil {
			b.Fatal(err)
		}
		s, err := Open(ctx, Config{Runtime: rt, Registry: reg, CheckpointInterval: -1, Fsync: FsyncNever, MaxSessions: -1}) // one live session per server at 10,000
		if err != nil {
			b.Fatal(err)
		}
		// The interpreter compiled and one warm call (fixed cost).
		if _, _, err := firstResult(ctx, s, []string{names[0]}, req); err != nil {
			b.Fatal(err)
		}
		_, r1 := settled(b)
		t0 := time.Now()
		for _, name := range names {
			if _, err := s.group(ctx, []string{name}); err != nil {
				b.Fatal(err)
			}
		}
		load := time.Since(t0)
		rng := rand.New(rand.NewPCG(1, uint64(it)))
		var first, both, second, warm []time.Duration
		timedCall := func(id, name string) time.Duration {
			t0 := time.Now()
			r, err := s.Call(ctx, id, req)
			if err != nil || r.Result.IsError {
				b.Fatalf("%s: %v", name, err)
			}
			return time.Since(t0)
		}
		for _, i := range rng.Perm(n) {
			t0 := time.Now()
			info, err := s.Create(ctx, CreateOptions{Modules: []string{names[i]}})
			if err != nil {
				b.Fatal(err)
			}
			first = append(first, timedCall(info.ID, names[i]))
			both = append(both, time.Since(t0))
			second = append(second, timedCall(info.ID, names[i]))
		}
		_, r2 := settled(b)
		// Warm: a new session on every server again (each called before),
		// in another order; deleted after its call.
		for _, i := range rng.Perm(n) {
			info, err := s.Create(ctx, CreateOptions{Modules: []string{names[i]}})
			if err != nil {
				b.Fatal(err)
			}
			warm = append(warm, timedCall(info.ID, names[i]))
			if err := s.Delete(ctx, info.ID, 0); err != nil {
				b.Fatal(err)
			}
		}
		if got := len(s.Sessions()); got != n+1 {
			b.Fatalf("%d sessions, want %d", got, n+1)
		}
		b.ReportMetric(float64(n), "servers")
		b.ReportMetric(float64(r2)/(1<<20), "rss-MiB")
		b.ReportMetric(float64(r2-r1)/float64(n)/(1<<10), "rss-KiB/server")
		b.ReportMetric(float64(r1-r0)/(1<<20), "fixed-rss-MiB")
		b.ReportMetric(ms(load)/float64(n), "load-ms/server")
		b.ReportMetric(ms(percentile(first, 0.5)), "first-call-p50-ms")
		b.ReportMetric(ms(percentile(first, 0.99)), "first-call-p99-ms")
		b.ReportMetric(ms(percentile(second, 0.5)), "second-call-p50-ms")
		b.ReportMetric(ms(percentile(warm, 0.5)), "warm-first-call-p50-ms")
		b.ReportMetric(ms(percentile(warm, 0.99)), "warm-first-call-p99-ms")
		b.ReportMetric(float64(percentile(warm, 0.5))/float64(percentile(second, 0.5)), "warm/second-p50")
		b.ReportMetric(float64(percentile(first, 0.5))/float64(percentile(second, 0.5)), "cold/second-p50")
		b.ReportMetric(ms(percentile(both, 0.5)), "create+call-p50-ms")
		b.ReportMetric(ms(percentile(both, 0.99)), "create+call-p99-ms")
		s.Close()
		rt.Close(ctx)
	}
}
