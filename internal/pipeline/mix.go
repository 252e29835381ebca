package pipeline

import (
	"fmt"
	"math"
)

// Pair is one view x harness combination of a mix, with its weight (> 0).
type Pair struct {
	View    string
	Harness string
	Weight  float64
}

// Assign returns, for n episode slots, the index into pairs of the pair
// each slot runs, by smooth weighted round-robin (the nginx upstream
// balancer): every pair gets floor or ceil of n*w/sum(w) slots and the
// pairs are interleaved, so any prefix of the slots follows the weights as
// closely as whole slots allow. Deterministic. Pairs with weight <= 0 get
// no slot; an error when no pair has a positive, finite weight.
func Assign(pairs []Pair, n int) ([]int, error) {
	total := 0.0
	for _, p := range pairs {
		if p.Weight > 0 && !math.IsInf(p.Weight, 0) {
			total += p.Weight
		}
	}
	if total <= 0 {
		return nil, fmt.Errorf("pipeline: mix: no pair has a positive weight")
	}
	cur := make([]float64, len(pairs))
	out := make([]int, n)
	for s := range out {
		best := -1
		for i, p := range pairs {
			if !(p.Weight > 0) || math.IsInf(p.Weight, 0) {
				continue
			}
			cur[i] += p.Weight
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out[s] = best
	}
	return out, nil
}
