package log

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/hosts"
)

func TestWriteAndProgress(t *testing.T) {
	// Unbound: dropped, no panic.
	Write(context.Background(), Info, "lost")
	Progress(context.Background(), 1, 2, "lost")

	var got []string
	ctx := hosts.With(context.Background(), &hosts.Call{
		Log:      func(level int, msg string) { got = append(got, string(rune('0'+level))+" "+msg) },
		Progress: func(p, total float64, msg string) { got = append(got, "p "+msg) },
	})
	Write(ctx, 7, "clamped up")
	Write(ctx, -1, "clamped down")
	Write(ctx, Warn, "warn")
	Progress(ctx, 1, 2, "half")
	Progress(ctx, math.NaN(), 2, "nan dropped")
	want := []string{"3 clamped up", "0 clamped down", "2 warn", "p half"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("records (-want +got):\n%s", d)
	}
	// Bound without sinks: dropped.
	Write(hosts.With(context.Background(), &hosts.Call{}), Info, "lost")
}
