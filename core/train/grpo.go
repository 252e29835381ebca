package train

import "math"

// DefaultEps is the stabiliser GroupAdvantages and TrajectoryAdvantages use
// when they are given eps <= 0 (or NaN).
const DefaultEps = 1e-6

// Candidate is one sampled continuation of an atomic turn: its scalar reward,
// whether an undesirable-pattern detector fired on it (Masked), and the names
// of the detectors that fired (Patterns, as returned by Detect).
type Candidate struct {
	Reward   float64
	Masked   bool
	Patterns []string
}

// GroupAdvantages returns the group-relative advantages of one group of G
// candidates sampled from the same state (GRPO, Shao et al. 2024,
// "DeepSeekMath", arXiv:2402.03300, outcome supervision):
//
//	A_i = (r_i - mean(r)) / (std(r) + eps),   i = 0..G-1
//
// where std is the population standard deviation (divide by G). The result
// has length G and is unitless. When every reward is equal (std == 0,
// including G == 1) every advantage is exactly 0: the group carries no
// preference. eps <= 0 or NaN means DefaultEps. An empty group gives an empty,
// non-nil slice. Non-finite rewards give NaN advantages.
func GroupAdvantages(rewards []float64, eps float64) []float64 {
	out := make([]float64, len(rewards))
	if len(rewards) == 0 || allEqual(rewards) {
		return out
	}
	if !(eps > 0) {
		eps = DefaultEps
	}
	n := float64(len(rewards))
	var sum float64
	for _, r := range rewards {
		sum += r
	}
	mean := sum / n
	var ss float64
	for _, r := range rewards {
		d := r - mean
		ss += d * d
	}
	std := math.Sqrt(ss / n)
	for i, r := range rewards {
		out[i] = (r - mean) / (std + eps)
	}
	return out
}

func allEqual(xs []float64) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// ApplyMask removes positive credit from masked candidates (WEFT atomic-turn
// GRPO): A_i := min(A_i, 0) where masked[i], so a candidate showing an
// undesirable pattern is never reinforced but can still be pushed down.
// masked must be nil/empty (nothing masked) or have len(adv) entries; any
// other length panics. The result is a new slice; adv is not modified.
func ApplyMask(adv []float64, masked []bool) []float64 {
	if len(masked) != 0 && len(masked) != len(adv) {
		panic("train.ApplyMask: len(masked) != len(adv)")
	}
	out := make([]float64, len(adv))
	copy(out, adv)
	for i, m := range masked {
		if m && out[i] > 0 {
			out[i] = 0
		}
	}
	return out
}

// CandidateAdvantages is GroupAdvantages over the candidates' rewards
// followed by ApplyMask with their Masked flags. Result length: len(cs).
func CandidateAdvantages(cs []Candidate, eps float64) []float64 {
	rewards := make([]float64, len(cs))
	masked := make([]bool, len(cs))
	for i, c := range cs {
		rewards[i] = c.Reward
		masked[i] = c.Masked
	}
	return ApplyMask(GroupAdvantages(rewards, eps), masked)
}

// TrajectoryAdvantages is trajectory-level GRPO, the ablation baseline: the
// group advantage of trajectory i (GroupAdvantages over trajRewards, same
// formula and eps rule) is broadcast to every one of its turns[i] turns, as
// in outcome-supervised GRPO (arXiv:2402.03300 §4.1.2), where every token of
// an output gets that output's normalised reward. Shape: out[i] has length
// turns[i]. len(turns) != len(trajRewards) or a negative turn count panics.
func TrajectoryAdvantages(trajRewards []float64, turns []int, eps float64) [][]float64 {
	if len(turns) != len(trajRewards) {
		panic("train.TrajectoryAdvantages: len(turns) != len(trajRewards)")
	}
	adv := GroupAdvantages(trajRewards, eps)
	out := make([][]float64, len(adv))
	for i, a := range adv {
		if turns[i] < 0 {
			panic("train.TrajectoryAdvantages: negative turn count")
		}
		row := make([]float64, turns[i])
		for j := range row {
			row[j] = a
		}
		out[i] = row
	}
	return out
}
