package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// recoveryFixture is a data directory with three sessions of acknowledged
// calls and what each looked like when the first server stopped.
type recoveryFixture struct {
	dir  string
	reg  *module.Registry
	ids  []string
	want map[string]sessionDigest
}

// sessionDigest is what must survive a restart: the ledger's records
// (their count and content) and the state.
type sessionDigest struct {
	Records int
	Calls   uint64
	Hash    string
	Ledger  string // the records' JSON, wall times and durations removed
}

func digestOf(t *testing.T, s *Server, id string) sessionDigest {
	t.Helper()
	ctx := context.Background()
	info := mustInfo(t, s, id)
	recs, err := s.Ledger(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].Time, recs[i].DurationMs = time.Time{}, 0
	}
	b, _ := json.Marshal(recs)
	return sessionDigest{Records: len(recs), Calls: info.Calls, Hash: info.Hash, Ledger: string(b)}
}

// acked counts the calls acknowledged to clients, per session: the number
// of Call returns without error.
func newRecoveryFixture(t *testing.T) *recoveryFixture {
	t.Helper()
	ctx := context.Background()
	f := &recoveryFixture{dir: t.TempDir(), reg: megamcptest.Registry(t), want: map[string]sessionDigest{}}
	s := newServer(t, f.dir, f.reg)
	acked := map[string]int{}
	for i := range 3 {
		info, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		f.ids = append(f.ids, info.ID)
		for j := range 3 + i {
			if _, err := s.Call(ctx, info.ID, CallRequest{Tool: "add_note", Arguments: json.RawMessage(`{"text":"n` + string(rune('a'+j)) + `"}`)}); err != nil {
				t.Fatal(err)
			}
			acked[info.ID]++
		}
	}
	// A checkpoint covering the first calls, then one more call each.
	if err := s.checkpointAll(false); err != nil {
		t.Fatal(err)
	}
	for _, id := range f.ids {
		if _, err := s.Call(ctx, id, CallRequest{Tool: "add_note", Arguments: json.RawMessage(`{"text":"after"}`)}); err != nil {
			t.Fatal(err)
		}
		acked[id]++
		f.want[id] = digestOf(t, s, id)
		if f.want[id].Records != acked[id] {
			t.Fatalf("session %s: %d ledger records for %d acknowledged calls", id, f.want[id].Records, acked[id])
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// open starts a server on the fixture's directory with cfg's fault hook,
// registry (nil: the fixture's) and a log buffer.
func (f *recoveryFixture) open(t *testing.T, reg *module.Registry, fault func(op, path string) error) (*Server, *Metrics, *logBuf, error) {
	t.Helper()
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: 2 * time.Second, CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	if reg == nil {
		reg = f.reg
	}
	lb := &logBuf{}
	met := NewMetrics()
	s, err := Open(ctx, Config{Runtime: rt, Registry: reg, DataDir: f.dir, CheckpointInterval: -1, Fsync: FsyncNever,
		Logger: slog.New(slog.NewTextHandler(lb, nil)), Metrics: met, fault: fault})
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, met, lb, err
}

// checkAll asserts that every session of the fixture is live in s with
// exactly the acknowledged records and state it had (none lost, none
// invented), except the ids in skip.
func (f *recoveryFixture) checkAll(t *testing.T, s *Server, skip ...string) {
	t.Helper()
	want := map[string]sessionDigest{}
	got := map[string]sessionDigest{}
	for _, id := range f.ids {
		if !containsStr(skip, id) {
			want[id] = f.want[id]
			got[id] = digestOf(t, s, id)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("recovered sessions differ from the acknowledged ones (-want +got):\n%s", d)
	}
	if n := len(s.Sessions()); n != len(want) {
		t.Fatalf("%d live sessions, want %d: %v", n, len(want), s.Sessions())
	}
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// sessionDirs lists sessions/ (names only).
func (f *recoveryFixture) sessionDirs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(f.dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestRecoveryMatrix is issue 15's recovery test matrix: for each fault,
// what the server does, and that no acknowledged call is lost or invented
// (each session's ledger and state compared with what the first server
// acknowledged).
func TestRecoveryMatrix(t *testing.T) {
	t.Run("transient EMFILE is retried", func(t *testing.T) {
		f := newRecoveryFixture(t)
		var n atomic.Int32
		victim := filepath.Join(f.ids[1], "ledger.wal")
		s, met, lb, err := f.open(t, nil, func(op, p string) error {
			if op == "open" && strings.HasSuffix(p, victim) && n.Add(1) <= 2 {
				return &os.PathError{Op: "open", Path: p, Err: syscall.EMFILE}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		f.checkAll(t, s)
		if got := n.Load(); got != 3 {
			t.Errorf("ledger opened %d times, want 3 (2 EMFILE, then success)", got)
		}
		if !strings.Contains(lb.String(), "transient error; retrying") {
			t.Errorf("no retry log line:\n%s", lb)
		}
		if got := metricValue(met.recovered.WithLabelValues("recovered")); got != 3 {
			t.Errorf("weft_recovery_sessions_total{recovered} = %v", got)
		}
	})
	t.Run("persistent EMFILE refuses to start and keeps the session", func(t *testing.T) {
		f := newRecoveryFixture(t)
		before := f.sessionDirs(t)
		victim := filepath.Join(f.ids[0], "ledger.wal")
		_, _, _, err := f.open(t, nil, func(op, p string) error {
			if op == "open" && strings.HasSuffix(p, victim) {
				return &os.PathError{Op: "open", Path: p, Err: syscall.EMFILE}
			}
			return nil
		})
		if !errors.Is(err, ErrRecovery) || !strings.Contains(err.Error(), f.ids[0]) || !strings.Contains(err.Error(), "transient error after 4 attempt(s)") {
			t.Fatalf("Open under persistent EMFILE: %v", err)
		}
		if d := cmp.Diff(before, f.sessionDirs(t)); d != "" {
			t.Fatalf("session directories changed (-before +after):\n%s", d)
		}
		s, _, _, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s)
	})
	t.Run("wrong registry refuses to start; the right one recovers all", func(t *testing.T) {
		f := newRecoveryFixture(t)
		before := f.sessionDirs(t)
		empty, err := module.OpenRegistry(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, met, _, err := f.open(t, empty, nil)
		if !errors.Is(err, ErrRecovery) || !errors.Is(err, ErrNoSuchModule) && !strings.Contains(err.Error(), "configuration error") {
			t.Fatalf("Open with a registry without the modules: %v", err)
		}
		if got := metricValue(met.recovered.WithLabelValues("kept_configuration")); got != 3 {
			t.Errorf("kept_configuration = %v, want 3", got)
		}
		if d := cmp.Diff(before, f.sessionDirs(t)); d != "" {
			t.Fatalf("session directories changed (-before +after):\n%s", d)
		}
		s, _, _, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s)
	})
	t.Run("missing meta.json sets the session aside whole", func(t *testing.T) {
		f := newRecoveryFixture(t)
		victim := f.ids[2]
		led, _ := os.ReadFile(filepath.Join(f.dir, "sessions", victim, "ledger.wal"))
		os.Remove(filepath.Join(f.dir, "sessions", victim, "meta.json"))
		s, met, lb, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s, victim)
		kept, err := os.ReadFile(filepath.Join(f.dir, "sessions", victim+".failed", "ledger.wal"))
		if err != nil || !bytes.Equal(kept, led) {
			t.Fatalf("set-aside ledger: %d bytes of %d (%v)", len(kept), len(led), err)
		}
		if !strings.Contains(lb.String(), "meta.json is missing but the ledger holds 6 record(s)") {
			t.Errorf("log does not say what was kept:\n%s", lb)
		}
		if got := metricValue(met.recovered.WithLabelValues("set_aside")); got != 1 {
			t.Errorf("set_aside = %v", got)
		}
	})
	t.Run("failed creations leave nothing that is resurrected", func(t *testing.T) {
		f := newRecoveryFixture(t)
		s, _, _, err := f.open(t, nil, func(op, p string) error {
			if op == "write" && strings.HasSuffix(p, "meta.json") {
				return &os.PathError{Op: "open", Path: p, Err: syscall.EMFILE}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := s.Create(context.Background(), CreateOptions{Modules: []string{"hello"}}); !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("Create under EMFILE: %v", err)
			}
		}
		// And a creation a crash interrupted before meta.json: a
		// directory with an empty ledger.
		half := filepath.Join(f.dir, "sessions", newID())
		os.Mkdir(half, 0o755)
		os.WriteFile(filepath.Join(half, "ledger.wal"), []byte(walMagic), 0o644)
		s.Close()
		s2, met, _, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s2)
		ids := append([]string(nil), f.ids...)
		sort.Strings(ids)
		if d := cmp.Diff(ids, f.sessionDirs(t)); d != "" {
			t.Fatalf("session directories after failed creations (-want +got):\n%s", d)
		}
		if got := metricValue(met.recovered.WithLabelValues("removed_incomplete")); got != 1 {
			t.Errorf("removed_incomplete = %v", got)
		}
	})
	t.Run("torn tail is cut, logged and counted", func(t *testing.T) {
		f := newRecoveryFixture(t)
		p := filepath.Join(f.dir, "sessions", f.ids[0], "ledger.wal")
		st, _ := os.Stat(p)
		fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		fh.Write([]byte{200, 0, 0, 0, 1, 2, 3})
		fh.Close()
		s, met, lb, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s)
		want := "offset=" + itoa(uint64(st.Size())) + " bytes=7 records_cut=1 records_kept=4"
		if !strings.Contains(lb.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, lb)
		}
		if r, b := metricValue(met.tailCutRecords), metricValue(met.tailCutBytes); r != 1 || b != 7 {
			t.Errorf("tail cut metrics: %v records, %v bytes", r, b)
		}
	})
	t.Run("bit-flipped last frame", func(t *testing.T) {
		f := newRecoveryFixture(t)
		// Session 1: the final checkpoint covers the last frame, so it
		// was acknowledged: the frame is lost (error log), the checkpoint
		// is removed and the complete frames before it are kept. Session
		// 2: no checkpoint covers it: cut like a torn tail, and the log
		// and metrics say what was cut. Neither is set aside.
		flipped := map[string][]byte{}
		flip := func(id string) {
			p := filepath.Join(f.dir, "sessions", id, "ledger.wal")
			data, _ := os.ReadFile(p)
			data[len(data)-5] ^= 0x01
			os.WriteFile(p, data, 0o644)
			flipped[id] = data
		}
		flip(f.ids[1])
		flip(f.ids[2])
		os.Remove(filepath.Join(f.dir, "sessions", f.ids[2], "checkpoint.json"))
		s, met, lb, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(f.want[f.ids[0]], digestOf(t, s, f.ids[0])); d != "" || len(s.Sessions()) != 3 {
			t.Fatalf("undamaged session (-want +got):\n%s\nlive: %v", d, s.Sessions())
		}
		if got := digestOf(t, s, f.ids[1]); got.Records != f.want[f.ids[1]].Records-1 || got.Calls != f.want[f.ids[1]].Calls-1 {
			t.Fatalf("covered frame flipped: %+v, want the %d records before it", got, f.want[f.ids[1]].Records-1)
		}
		if _, err := os.Stat(filepath.Join(f.dir, "sessions", f.ids[1], "checkpoint.json")); !os.IsNotExist(err) {
			t.Fatalf("covered frame flipped: the checkpoint covering it is kept (%v)", err)
		}
		if !strings.Contains(lb.String(), "torn tail covered by the checkpoint") || !strings.Contains(lb.String(), "records_lost=1") {
			t.Errorf("no error line for the lost covered frame:\n%s", lb)
		}
		got := digestOf(t, s, f.ids[2])
		if got.Records != f.want[f.ids[2]].Records-1 || metricValue(met.tailCutRecords) != 2 {
			t.Fatalf("uncovered frame flipped: %d records (want %d), %v cut", got.Records, f.want[f.ids[2]].Records-1, metricValue(met.tailCutRecords))
		}
		if !strings.Contains(lb.String(), "torn tail cut") || !strings.Contains(lb.String(), "records_kept=5") {
			t.Errorf("no log line for the cut:\n%s", lb)
		}
	})
	t.Run("emptied ledger is noticed and set aside", func(t *testing.T) {
		f := newRecoveryFixture(t)
		victim := f.ids[0]
		os.Truncate(filepath.Join(f.dir, "sessions", victim, "ledger.wal"), 0)
		os.Remove(filepath.Join(f.dir, "sessions", victim, "checkpoint.json"))
		s, _, lb, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s, victim)
		if !strings.Contains(lb.String(), "ledger.wal lost its header") {
			t.Errorf("no log line for the emptied ledger:\n%s", lb)
		}
		if _, err := os.Stat(filepath.Join(f.dir, "sessions", victim+".failed", "meta.json")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("tampered checkpoint is refused and the ledger replayed", func(t *testing.T) {
		f := newRecoveryFixture(t)
		for i, tamper := range []func(ck map[string]any){
			func(ck map[string]any) { ck["seq"] = ck["seq"].(float64) - 2 },     // seq going backwards
			func(ck map[string]any) { ck["calls"] = ck["calls"].(float64) + 1 }, // a call counted twice
			func(ck map[string]any) { ck["generation"] = float64(7) },
		} {
			p := filepath.Join(f.dir, "sessions", f.ids[i], "checkpoint.json")
			raw, _ := os.ReadFile(p)
			var ck map[string]any
			json.Unmarshal(raw, &ck)
			tamper(ck)
			b, _ := json.Marshal(ck)
			os.WriteFile(p, b, 0o644)
		}
		s, met, lb, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s)
		if got := metricValue(met.checkpointsRefused); got != 3 {
			t.Errorf("checkpoints refused = %v, want 3\n%s", got, lb)
		}
		for _, want := range []string{"next sequence number", "calls, the ledger's first", "generation 7, the ledger gives 1"} {
			if !strings.Contains(lb.String(), want) {
				t.Errorf("log lacks %q", want)
			}
		}
	})
	t.Run("checkpoint beyond the ledger sets the session aside", func(t *testing.T) {
		f := newRecoveryFixture(t)
		victim := f.ids[2]
		p := filepath.Join(f.dir, "sessions", victim, "ledger.wal")
		os.Truncate(p, int64(len(walMagic)))
		s, _, _, err := f.open(t, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s, victim)
		if _, err := os.Stat(filepath.Join(f.dir, "sessions", victim+".failed", "ledger.wal")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("read-only data dir refuses to start; a later write failure is unhealthy", func(t *testing.T) {
		f := newRecoveryFixture(t)
		before := f.sessionDirs(t)
		erofs := func(op, p string) error {
			if op == "create" || op == "write" || op == "mkdir" {
				return &os.PathError{Op: op, Path: p, Err: syscall.EROFS}
			}
			return nil
		}
		if _, _, _, err := f.open(t, nil, erofs); !errors.Is(err, ErrDataDir) || !strings.Contains(err.Error(), "read-only file system") {
			t.Fatalf("Open on a read-only data dir: %v", err)
		}
		if d := cmp.Diff(before, f.sessionDirs(t)); d != "" {
			t.Fatal(d)
		}
		var ro atomic.Bool
		s, _, _, err := f.open(t, nil, func(op, p string) error {
			if ro.Load() {
				return erofs(op, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		f.checkAll(t, s)
		if err := s.Health(); err != nil {
			t.Fatalf("healthy server: %v", err)
		}
		ro.Store(true)
		if _, err := s.Create(context.Background(), CreateOptions{Modules: []string{"hello"}}); !errors.Is(err, syscall.EROFS) {
			t.Fatalf("Create on a read-only dir: %v", err)
		}
		if _, err := s.Call(context.Background(), f.ids[0], CallRequest{Tool: "add_note", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
			t.Fatal(err)
		}
		if err := s.checkpointAll(false); !errors.Is(err, syscall.EROFS) {
			t.Fatalf("checkpoint on a read-only dir: %v", err)
		}
		if err := s.Health(); !errors.Is(err, ErrDataDir) {
			t.Fatalf("Health after a failed checkpoint: %v", err)
		}
		ro.Store(false)
		if err := s.checkpointAll(false); err != nil {
			t.Fatal(err)
		}
		if err := s.Health(); err != nil {
			t.Fatalf("Health after the dir is writable again: %v", err)
		}
	})
}

// metricValue reads a counter or gauge.
func metricValue(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
