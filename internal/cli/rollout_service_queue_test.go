package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/internal/queue"
	"github.com/weft-dev/weft/internal/service"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// submit posts a batch to the service at url and returns its group lines
// (in task, turn order, without batch id, time and stream place), its sft
// lines (in task order, without batch id and time) and the types of all its lines.
func submit(t *testing.T, url, token, body string) ([]service.GroupLine, []service.SFTLine, map[string]int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/rollouts", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/rollouts: %s", resp.Status)
	}
	var groups []service.GroupLine
	var sfts []service.SFTLine
	types := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		types[head.Type]++
		switch head.Type {
		case "group":
			var g service.GroupLine
			if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
				t.Fatal(err)
			}
			g.BatchID, g.ElapsedMS = "", 0 // where and when it ran
			if g.Verl != nil {
				g.Verl.ExtraInfo.Index = 0 // the group's place in the stream: arrival order
			}
			groups = append(groups, g)
		case "sft":
			var l service.SFTLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			l.BatchID, l.ElapsedMS = "", 0
			sfts = append(sfts, l)
		case "task_error":
			t.Errorf("task error: %s", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if groups[i].TaskID != groups[j].TaskID {
			return groups[i].TaskID < groups[j].TaskID
		}
		return groups[i].Turn < groups[j].Turn
	})
	sort.Slice(sfts, func(i, j int) bool { return sfts[i].TaskID < sfts[j].TaskID })
	return groups, sfts, types
}

// The rollout service on the work queue (--queue, service.Queue): an
// embedded NATS server and 2 in-test workers over the service's registry
// run each task's GRPO against the trainer's endpoint (the local test
// model server); the streamed groups (rewards, advantages, masks,
// segments) equal the in-process service's for the same batch, and both
// workers took jobs.
func TestRolloutServiceQueue(t *testing.T) {
	skipUnderRace(t)
	const token = "queue-test-token"
	policy := modeltest.NewServer(t, modeltest.WithModels("test-model"), modeltest.WithHandler(solverPolicy(t)))
	nats, err := queue.StartEmbedded(queue.EmbeddedOptions{Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Shutdown)
	regDir := t.TempDir()
	inProc := startRolloutService(t, token, 4)
	viaQueue := startRolloutService(t, token, 4, "--registry", regDir, "--queue", nats.URL())

	rt, err := module.NewRuntime(context.Background(), module.Config{CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait(); rt.Close(context.Background()) })
	var workers []*queue.Worker
	for i := range 2 {
		q, err := queue.Connect(ctx, nats.URL(), queue.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(q.Close)
		reg, err := module.OpenRegistry(regDir)
		if err != nil {
			t.Fatal(err)
		}
		w := q.Worker(queue.WorkerOptions{Name: fmt.Sprintf("w%d", i), Concurrency: 1, Registry: reg, Runtime: rt})
		workers = append(workers, w)
		wg.Go(func() {
			if err := w.Run(ctx); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
		})
	}

	body := fmt.Sprintf(`{"tasks": ["0", "1", "2", "3"], "group_size": 2, "seed": 5, "sampling": {"seed": 11}, "sft": {"mode": "prefix"},
		"policy": {"base_url": %q, "model": "test-model"}}`, policy.URL())
	start := time.Now()
	want, wantSFT, wantTypes := submit(t, inProc, token, body)
	t.Logf("in process: %d groups in %s", len(want), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	got, gotSFT, gotTypes := submit(t, viaQueue, token, body)
	t.Logf("through the queue (2 workers): %d groups in %s", len(got), time.Since(start).Round(time.Millisecond))
	if len(want) < 4 {
		t.Fatalf("in process: %d groups, want at least one per task (4)", len(want))
	}
	nonzero := 0
	for _, g := range want {
		if len(g.Rewards) != 2 || len(g.Segments) != 2 {
			t.Errorf("task %s turn %d: %d rewards, %d segments; want G = 2", g.TaskID, g.Turn, len(g.Rewards), len(g.Segments))
		}
		for _, a := range g.Advantages {
			if a != 0 {
				nonzero++
				break
			}
		}
	}
	if nonzero == 0 {
		t.Errorf("no group with a nonzero advantage: the comparison checks nothing the policy varies")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups through the queue differ from in process (-in process +queue):\n%s", diff)
	}
	if len(wantSFT) != 4 {
		t.Errorf("in process: %d sft lines, want one per task (4)", len(wantSFT))
	}
	if diff := cmp.Diff(wantSFT, gotSFT); diff != "" {
		t.Errorf("sft lines through the queue differ from in process (-in process +queue):\n%s", diff)
	}
	if diff := cmp.Diff(wantTypes, gotTypes); diff != "" {
		t.Errorf("line types (-in process +queue):\n%s", diff)
	}
	for _, w := range workers {
		if w.Stats().Done == 0 {
			t.Errorf("worker took no job (stats %+v): the jobs did not spread", w.Stats())
		}
	}
}

// weft worker refuses an "embedded" queue (it would wait on a server no
// coordinator publishes to) and a missing --queue, as usage errors.
func TestWorkerQueueUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"worker"}, "weft worker needs --queue URL"},
		{[]string{"worker", "--queue", "embedded"}, `"embedded" starts one inside weft run`},
		{[]string{"worker", "--queue", "embedded://127.0.0.1:4333"}, "a worker connects to the NATS server of a coordinator"},
		{[]string{"worker", "--queue", "nats://127.0.0.1:1", "--max-built", "0"}, "--max-built must be at least 1, got 0"},
	} {
		code, stdout, stderr := run(t, stamped, tc.args...)
		if code != ExitUsage {
			t.Errorf("weft %v: exit %d, want %d (usage); stderr: %s", tc.args, code, ExitUsage, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("weft %v: stderr %q lacks %q", tc.args, stderr, tc.want)
		}
		if stdout != "" {
			t.Errorf("weft %v: stdout = %q, want nothing", tc.args, stdout)
		}
	}
}
