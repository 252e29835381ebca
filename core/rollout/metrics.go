package rollout

import (
	"math"
	"slices"
)

// PassAtK is the unbiased estimator of pass@k from n scored samples of a
// task of which c passed: the probability that at least one of k samples
// drawn without replacement passed,
//
//	pass@k = 1 - C(n-c, k) / C(n, k)
//
// (Chen et al. 2021, "Evaluating Large Language Models Trained on Code",
// eq. 1). It is computed as 1 - prod_{i=n-c+1..n} (1 - k/i), the paper's
// numerically stable form (its Figure 3), never with factorials. The result is in [0, 1];
// it is NaN when the arguments do not define it: k < 1, k > n, c < 0 or
// c > n.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return math.NaN()
	}
	if n-c < k {
		return 1
	}
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// PassHatK is pass^k from n scored samples of a task of which c passed:
// the probability that all of k samples drawn without replacement passed,
//
//	pass^k = C(c, k) / C(n, k)
//
// (tau-bench, Yao et al. 2024, "tau-bench: A Benchmark for Tool-Agent-User
// Interaction in Real-World Domains"). It is computed as
// prod_{i=0..k-1} (c-i)/(n-i), never with factorials. The result is in
// [0, 1] and never above PassAtK(n, c, k); it is NaN when the arguments do
// not define it: k < 1, k > n, c < 0 or c > n.
func PassHatK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return math.NaN()
	}
	if c < k {
		return 0
	}
	p := 1.0
	for i := range k {
		p *= float64(c-i) / float64(n-i)
	}
	return p
}

// TaskStats are one task's pass metrics over its outcomes.
type TaskStats struct {
	TaskID string `json:"task_id"`
	// N counts the task's scored episodes (infrastructure failures
	// excluded), C those that passed (Score == 1), Infra those that ended
	// on an infrastructure failure.
	N     int `json:"n"`
	C     int `json:"c"`
	Infra int `json:"infra"`
	// PassAtK and PassHatK map k to PassAtK(N, C, k) and PassHatK(N, C,
	// k), for each requested k with 1 <= k <= N; a k outside that range
	// is absent (the estimator is undefined there, and a NaN would not
	// encode as JSON).
	PassAtK  map[int]float64 `json:"pass_at_k"`
	PassHatK map[int]float64 `json:"pass_hat_k"`
	// MeanScore is the mean Score of the scored episodes; nil when N is 0
	// (a task whose episodes all failed on infrastructure has no score,
	// not 0).
	MeanScore *float64 `json:"mean_score"`
}

// Summarize computes per-task pass metrics from outcomes, sorted by task
// id. Nil outcomes (skipped or interrupted jobs) are ignored; outcomes with
// no Score count in Infra, never in N. Outcomes are grouped by TaskID only:
// to compare views, harnesses or policies, summarize each configuration's
// outcomes separately.
func Summarize(outcomes []*Outcome, ks []int) []TaskStats {
	type acc struct {
		n, c, infra int
		sum         float64
	}
	by := map[string]*acc{}
	for _, o := range outcomes {
		if o == nil {
			continue
		}
		a := by[o.TaskID]
		if a == nil {
			a = &acc{}
			by[o.TaskID] = a
		}
		if o.Score == nil {
			a.infra++
			continue
		}
		a.n++
		a.sum += *o.Score
		if *o.Score == 1 {
			a.c++
		}
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	stats := make([]TaskStats, 0, len(ids))
	for _, id := range ids {
		a := by[id]
		s := TaskStats{
			TaskID:   id,
			N:        a.n,
			C:        a.c,
			Infra:    a.infra,
			PassAtK:  map[int]float64{},
			PassHatK: map[int]float64{},
		}
		for _, k := range ks {
			if k < 1 || k > a.n {
				continue
			}
			s.PassAtK[k] = PassAtK(a.n, a.c, k)
			s.PassHatK[k] = PassHatK(a.n, a.c, k)
		}
		if a.n > 0 {
			m := a.sum / float64(a.n)
			s.MeanScore = &m
		}
		stats = append(stats, s)
	}
	return stats
}
