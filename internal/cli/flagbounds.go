package cli

import "time"

// flagAtLeast refuses (a usage error, exit 2) an integer flag below min;
// with noBound, -1 is allowed too and means no bound. The message has the
// shape of --max-sessions': "--max-mcp-sessions: -7; give at least 1, or
// -1 for no bound".
func flagAtLeast(name string, v, min int, noBound bool) error {
	if v >= min || (noBound && v == -1) {
		return nil
	}
	if noBound {
		return usageErrorf("%s: %d; give at least %d, or -1 for no bound", name, v, min)
	}
	return usageErrorf("%s: %d; give at least %d", name, v, min)
}

// flagPositive refuses (a usage error, exit 2) a duration flag that is not
// positive, in weft run's words: "--call-timeout must be positive, got -1s".
func flagPositive(name string, d time.Duration) error {
	if d > 0 {
		return nil
	}
	return usageErrorf("%s must be positive, got %s", name, d)
}

// flagNotNegative refuses (a usage error, exit 2) a negative integer or
// duration flag; zero says what 0 does: "--checkpoint-interval: -5s is
// negative (0 disables checkpoints)".
func flagNotNegative[T ~int | ~int64](name string, v T, zero string) error {
	if v >= 0 {
		return nil
	}
	return usageErrorf("%s: %v is negative (%s)", name, v, zero)
}
