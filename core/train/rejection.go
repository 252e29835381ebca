package train

// Accept returns the index of the candidate that prefix-preserving rejection
// sampling keeps at one atomic turn: the first, in sampling order, that is
// not Masked and whose Reward >= threshold. It returns -1 when none
// qualifies (the turn is resampled or the prefix abandoned by the caller).
// Taking the first qualifying sample, not the best, keeps the kept turn an
// unbiased draw from the policy conditioned on passing (rejection sampling).
func Accept(cs []Candidate, threshold float64) int {
	for i, c := range cs {
		if !c.Masked && c.Reward >= threshold {
			return i
		}
	}
	return -1
}

// SamplingStats tallies rejection sampling over atomic turns. The zero value
// is ready to use.
type SamplingStats struct {
	Turns    int            `json:"turns"`    // atomic turns sampled
	Accepted int            `json:"accepted"` // turns where a candidate was kept
	Attempts int            `json:"attempts"` // candidates sampled, over all turns
	Masked   int            `json:"masked"`   // candidates a detector fired on
	Patterns map[string]int `json:"patterns"` // candidates on which each pattern was detected
}

// Add records one atomic turn: its candidates cs and the index accepted
// (from Accept; -1 for none). accepted outside -1..len(cs)-1 panics.
func (s *SamplingStats) Add(cs []Candidate, accepted int) {
	if accepted < -1 || accepted >= len(cs) {
		panic("train.SamplingStats.Add: accepted index out of range")
	}
	s.Turns++
	if accepted >= 0 {
		s.Accepted++
	}
	s.Attempts += len(cs)
	for _, c := range cs {
		if c.Masked {
			s.Masked++
		}
		for _, p := range c.Patterns {
			if s.Patterns == nil {
				s.Patterns = map[string]int{}
			}
			s.Patterns[p]++
		}
	}
}

// AcceptanceRate is Accepted/Turns, in [0, 1]; 0 when no turn was recorded.
func (s SamplingStats) AcceptanceRate() float64 {
	if s.Turns == 0 {
		return 0
	}
	return float64(s.Accepted) / float64(s.Turns)
}

// AttemptsPerAccept is Attempts/Accepted, the mean number of candidates
// sampled per kept turn (rejected turns' attempts included); 0 when nothing
// was accepted.
func (s SamplingStats) AttemptsPerAccept() float64 {
	if s.Accepted == 0 {
		return 0
	}
	return float64(s.Attempts) / float64(s.Accepted)
}
