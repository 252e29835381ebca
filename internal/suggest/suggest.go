// Package suggest finds the known name closest to a misspelt one, for the
// "did you mean" of error messages (CLI subcommands, tools, modules, keys
// of a cases file).
package suggest

import "strings"

// Closest returns the candidate nearest to s: the smallest case-insensitive
// Levenshtein distance, at most 2, or else a candidate that s (at least 3
// bytes) is part of; "" when none is close. Ties go to the earlier candidate.
func Closest(s string, candidates []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(ls, lc)
		if d >= bestD && len(ls) >= 3 && strings.Contains(lc, ls) {
			d = bestD - 1
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
