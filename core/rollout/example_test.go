package rollout_test

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
)

// Five rollouts of one task, two of which pass and one of which hits a
// flaky endpoint once before passing; pass@k and pass^k follow from the
// scored episodes.
func Example() {
	t := &task.Task{ID: "tau2-retail:12"}
	var jobs []rollout.Job
	for s := range 5 {
		jobs = append(jobs, rollout.Job{Task: t, View: task.ViewAgentic, Harness: "react", Policy: "scripted", Sample: s, Seed: uint64(s)})
	}
	ex := rollout.ExecutorFunc(func(ctx context.Context, j rollout.Job, attempt int) (*rollout.Outcome, error) {
		if j.Sample == 1 && attempt == 1 {
			return nil, &rollout.InfraError{Kind: "endpoint", Message: "connection refused", Retryable: true}
		}
		score := 0.5
		if j.Sample <= 1 {
			score = 1
		}
		return &rollout.Outcome{Score: &score}, nil
	})
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 2, Retries: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(outs[1].Key, "attempts:", outs[1].Attempts, "passed:", outs[1].Passed)
	for _, s := range rollout.Summarize(outs, []int{1, 2, 3}) {
		fmt.Printf("%s n=%d c=%d pass@1=%.2f pass@2=%.2f pass^2=%.2f mean=%.2f\n",
			s.TaskID, s.N, s.C, s.PassAtK[1], s.PassAtK[2], s.PassHatK[2], *s.MeanScore)
	}
	// Output:
	// tau2-retail:12/agentic/react/scripted/1 attempts: 2 passed: true
	// tau2-retail:12 n=5 c=2 pass@1=0.40 pass@2=0.70 pass^2=0.10 mean=0.70
}
