package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// loadShape is one bounded load test: idle keep-alive connections and
// slow bodies held open against the server while sessions keep calling.
type loadShape struct {
	Idle, Slow, Sessions int
	Duration             time.Duration
	Limits               Limits
	MaxHeapBytes         uint64 // stated cap: Go heap in use above the process's heap before this server started (after a GC), so what earlier tests of the package left resident is not charged to the load
	// The stated descriptor cap (those not held by the test's own
	// clients) is MaxConnections + MaxRefusing + Sessions (a ledger each)
	// + 64 (listener, runtime, data directory).
}

// TestLoadSlice is the small representative slice of the load test that
// runs with the normal suite: 300 idle connections and 100 slow bodies
// against a 128-connection cap while 10 sessions keep calling. The full
// size (2,000 idle, 1,000 slow, 100 sessions, cap 1,024) runs with
// WEFT_LOAD_TEST=1 (make load-test).
func TestLoadSlice(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	runLoad(t, loadShape{Idle: 300, Slow: 100, Sessions: 10, Duration: 3 * time.Second,
		Limits:       Limits{MaxConnections: 128, BodyTimeout: time.Second, IdleTimeout: 5 * time.Second, MinIdleForEviction: 2 * time.Second},
		MaxHeapBytes: 256 << 20})
}

// TestLoadFull is the load test at full size (WEFT_LOAD_TEST=1).
func TestLoadFull(t *testing.T) {
	if os.Getenv("WEFT_LOAD_TEST") == "" {
		t.Skip("set WEFT_LOAD_TEST=1 (make load-test)")
	}
	runLoad(t, loadShape{Idle: 2000, Slow: 1000, Sessions: 100, Duration: 20 * time.Second,
		Limits:       Limits{MaxConnections: 1024},
		MaxHeapBytes: 1 << 30})
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func runLoad(t *testing.T, shape loadShape) {
	ctx := context.Background()
	reg := megamcptest.Registry(t)
	rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: 5 * time.Second, CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	met := NewMetrics()
	s, err := Open(ctx, Config{Runtime: rt, Registry: reg, DataDir: t.TempDir(), Fsync: FsyncNever, CheckpointInterval: 200 * time.Millisecond, Metrics: met})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Handler(ctx, HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, hl := s.HTTPServer(h, ln, shape.Limits)
	go hs.Serve(hl)
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	lim := hl.(*connLimiter)
	fds0 := openFDs()
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	heap0 := int64(ms0.HeapInuse)

	// The callers: one session and one keep-alive connection each,
	// established before the flood.
	type caller struct {
		id     string
		client *http.Client
	}
	callers := make([]caller, shape.Sessions)
	for i := range callers {
		info, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}})
		if err != nil {
			t.Fatal(err)
		}
		callers[i] = caller{info.ID, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}}
	}
	callOnce := func(c caller, n int) error {
		body := fmt.Sprintf(`{"tool":"add_note","arguments":{"text":"n%d"}}`, n)
		resp, err := c.client.Post(base+"/v1/sessions/"+c.id+"/calls", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
		}
		var res CallResult
		if err := json.Unmarshal(b, &res); err != nil || res.Result == nil || res.Result.IsError {
			return fmt.Errorf("call result %s (%v)", b, err)
		}
		return nil
	}
	for i, c := range callers {
		if err := callOnce(c, i); err != nil {
			t.Fatal(err)
		}
	}

	// The flood: idle connections (some with no request, some keep-alive
	// after one), then slow bodies (a byte every 200 ms).
	var clientConns atomic.Int64
	var held sync.WaitGroup
	stop := make(chan struct{})
	var refused503, cut atomic.Int64
	hold := func(c net.Conn) {
		defer held.Done()
		defer clientConns.Add(-1)
		defer c.Close()
		buf := make([]byte, 512)
		go func() { <-stop; c.Close() }()
		for {
			n, err := c.Read(buf)
			if n > 0 && bytes.Contains(buf[:n], []byte(`"code":"at_capacity"`)) {
				refused503.Add(1)
			}
			if err != nil {
				cut.Add(1)
				return
			}
		}
	}
	for i := 0; i < shape.Idle; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		clientConns.Add(1)
		if i%2 == 1 {
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		held.Add(1)
		go hold(c)
	}
	for i := 0; i < shape.Slow; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("slow connection %d: %v", i, err)
		}
		clientConns.Add(1)
		held.Add(1)
		go func(c net.Conn, i int) {
			fmt.Fprintf(c, "POST /v1/sessions/%s/calls HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", callers[i%len(callers)].id)
			go func() {
				tk := time.NewTicker(200 * time.Millisecond)
				defer tk.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tk.C:
						if _, err := c.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			hold(c)
		}(c, i)
	}

	// The callers keep calling through it all.
	var calls, failures atomic.Int64
	acked := make([]int, len(callers)) // per caller, after the first call
	var firstErr atomic.Value
	var maxHeap, maxServerFDs, maxOpen atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(shape.Duration)
	var lat []time.Duration
	var latMu sync.Mutex
	for i, c := range callers {
		wg.Add(1)
		go func(i int, c caller) {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				t0 := time.Now()
				if err := callOnce(c, n); err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				latMu.Lock()
				lat = append(lat, time.Since(t0))
				latMu.Unlock()
				calls.Add(1)
				acked[i]++
			}
		}(i, c)
	}
	// A sampler: the stated caps are checked throughout, not only at the
	// end.
	sampleDone := make(chan struct{})
	go func() {
		defer close(sampleDone)
		var ms runtime.MemStats
		for time.Now().Before(deadline) {
			runtime.ReadMemStats(&ms)
			maxHeap.Store(max(maxHeap.Load(), int64(ms.HeapInuse)-heap0))
			// The test's own descriptors: the flood's connections and one
			// keep-alive connection per caller.
			maxServerFDs.Store(max(maxServerFDs.Load(), int64(openFDs()-fds0)-clientConns.Load()-int64(len(callers))))
			maxOpen.Store(max(maxOpen.Load(), int64(lim.open())))
			time.Sleep(100 * time.Millisecond)
		}
	}()
	wg.Wait()
	<-sampleDone
	// Snapshot and fork still work under the load (they failed when
	// descriptors ran out).
	if _, err := s.Fork(ctx, callers[0].id, 0, ""); err != nil {
		t.Errorf("fork under load: %v", err)
	}
	close(stop)
	held.Wait()

	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p99 := time.Duration(0)
	if len(lat) > 0 {
		p99 = lat[len(lat)*99/100]
	}
	t.Logf("load %+v: %d calls ok, %d failed, p99 %v; peak heap %d MiB, peak server fds %d, peak tracked connections %d; %d client connections refused with 503 at_capacity, %d cut; evicted idle %v, evicted slow body %v, refused %v",
		shape, calls.Load(), failures.Load(), p99, maxHeap.Load()>>20, maxServerFDs.Load(), maxOpen.Load(), refused503.Load(), cut.Load(),
		metricValue(met.connsRefused.WithLabelValues("evicted_idle")), metricValue(met.connsRefused.WithLabelValues("evicted_slow_body")), metricValue(met.connsRefused.WithLabelValues("at_capacity")))
	if failures.Load() > 0 {
		t.Errorf("%d calls failed under load; first: %v", failures.Load(), firstErr.Load())
	}
	if calls.Load() < int64(shape.Sessions) {
		t.Errorf("only %d calls succeeded", calls.Load())
	}
	if got := uint64(maxHeap.Load()); got > shape.MaxHeapBytes {
		t.Errorf("peak heap %d bytes, over the stated cap %d", got, shape.MaxHeapBytes)
	}
	if got, fdCap := int(maxServerFDs.Load()), shape.Limits.withDefaults().MaxConnections+MaxRefusing+shape.Sessions+64; got > fdCap {
		t.Errorf("peak server descriptors %d, over the stated cap %d", got, fdCap)
	}
	if got := int(maxOpen.Load()); got > shape.Limits.withDefaults().MaxConnections+shape.Sessions {
		t.Errorf("peak tracked connections %d over the cap %d", got, shape.Limits.withDefaults().MaxConnections)
	}
	if refused503.Load() == 0 || metricValue(met.connsRefused.WithLabelValues("at_capacity")) == 0 {
		t.Errorf("no connection was refused at the cap: the test did not reach it")
	}
	// Every acknowledged call is in its session's ledger, and nothing
	// else: the slow bodies never became calls.
	for i, c := range callers {
		recs, _ := s.Ledger(ctx, c.id, 0, 0)
		if want := 1 + acked[i]; len(recs) != want {
			t.Errorf("session %s: %d ledger records, %d calls acknowledged", c.id, len(recs), want)
		}
	}
}
