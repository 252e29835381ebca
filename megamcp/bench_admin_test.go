package megamcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// BenchmarkAdminCallLayers splits the admin API's first call of a fresh
// retail session into its layers, in process, one run (so the ratios see
// the same load): per tool,
//
//	module   the group module's Call on a module.Session like the
//	         server's (a fork of the seed, the group's tables, a virtual
//	         clock): the floor
//	server   Server.Call (fence, unit of work, rows_changed diff, ledger
//	         record, metrics), no HTTP
//	http     POST /v1/sessions/{id}/calls through httptest (the client's
//	         CPU is in this figure too)
//
// Each layer's cpu-µs/call is the process's user + system CPU over b.N
// calls, each on a session made (not measured) just before; sessions are
// made in batches of 100, then a GC, so the creations' garbage is not
// charged to the calls. With -cpuprofile this is the profile of the serve
// path (docs/benchmarks.md, "Admin API: where the serve overhead went").
func BenchmarkAdminCallLayers(b *testing.B) {
	ctx := context.Background()
	reg := benchRegistry(b)
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	s, err := Open(ctx, Config{Runtime: rt, Registry: reg, CheckpointInterval: -1, Metrics: NewMetrics()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h, err := s.Handler(ctx, HTTPOptions{Token: benchToken})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer hc.CloseIdleConnections()

	for _, rm := range retailModules(b) {
		for _, c := range serveRetailCalls {
			for _, layer := range []string{"module", "server", "http"} {
				b.Run("module="+rm.name+"/"+c.tool+"/"+layer, func(b *testing.B) {
					if rm.skip != "" {
						b.Skip(rm.skip)
					}
					const batch = 100
					body := `{"tool":"` + c.tool + `","arguments":` + c.args + `}`
					var cpu time.Duration
					b.ReportAllocs()
					b.ResetTimer()
					b.StopTimer()
					for done := 0; done < b.N; {
						n := min(batch, b.N-done)
						sess := make([]*Session, n)
						for i := range sess {
							ss, err := s.create(ctx, CreateOptions{Modules: []string{rm.name}})
							if err != nil {
								b.Fatal(err)
							}
							sess[i] = ss
						}
						if os.Getenv("WEFT_BENCH_NOGC") == "" {
							runtime.GC()
						} else {
							time.Sleep(20 * time.Millisecond)
						}
						b.StartTimer()
						c0 := cpuTime()
						for _, ss := range sess {
							switch layer {
							case "module":
								gt := ss.group.tools[ss.group.byName[c.tool]]
								res, err := gt.mod.mod.Call(ctx, ss.ms, gt.Tool.Name, json.RawMessage(c.args))
								if err != nil || res.IsError {
									b.Fatalf("%s: %v %+v", c.tool, err, res)
								}
							case "server":
								res, err := ss.Call(ctx, CallRequest{Tool: c.tool, Arguments: json.RawMessage(c.args)})
								if err != nil || res.Result.IsError {
									b.Fatalf("%s: %v %+v", c.tool, err, res)
								}
							case "http":
								req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/"+ss.id+"/calls", strings.NewReader(body))
								req.Header.Set("Authorization", "Bearer "+benchToken)
								resp, err := hc.Do(req)
								if err != nil {
									b.Fatal(err)
								}
								data, _ := io.ReadAll(resp.Body)
								resp.Body.Close()
								if resp.StatusCode != http.StatusOK || strings.Contains(string(data), `"isError":true`) {
									b.Fatalf("%s: %d %s", c.tool, resp.StatusCode, data)
								}
							}
						}
						cpu += cpuTime() - c0
						b.StopTimer()
						for _, ss := range sess {
							if err := s.Delete(ctx, ss.id, 0); err != nil {
								b.Fatal(err)
							}
						}
						done += n
					}
					b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
				})
			}
		}
	}
}
