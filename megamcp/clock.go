package megamcp

import (
	"fmt"
	"math"
	"time"
)

// The range of a session's virtual clock. The ledger and checkpoints
// record it, and the host hands it to tools, as int64 nanoseconds since
// 1970-01-01 UTC (Unix nanoseconds), which end at
// 2262-04-11T23:47:16.854775807Z; and a wasm tool reads it through WASI's
// clock_time_get, whose timestamp is an unsigned count of nanoseconds since
// 1970, so it has no time before 1970-01-01T00:00:00Z (one read there as a
// time after 2262). A clock outside [MinClock, MaxClock] would reach tools
// as a wrapped-around time; it is refused.
var (
	MinClock = time.Unix(0, 0).UTC()
	MaxClock = time.Unix(0, math.MaxInt64).UTC()
)

// checkClock refuses (ErrBadRequest, HTTP 400) a clock time outside
// [MinClock, MaxClock], naming the range.
func checkClock(t time.Time) error {
	if t.Before(MinClock) || t.After(MaxClock) {
		return fmt.Errorf("%w: clock %s is outside the virtual clock's range, %s to %s (tools read it as nanoseconds since 1970 in 63 bits)",
			ErrBadRequest, t.UTC().Format(time.RFC3339Nano), MinClock.Format(time.RFC3339Nano), MaxClock.Format(time.RFC3339Nano))
	}
	return nil
}
