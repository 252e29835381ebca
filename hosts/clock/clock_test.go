package clock

import (
	"context"
	"testing"
)

func TestNow(t *testing.T) {
	if Now(context.Background()) != 0 {
		t.Fatal("unbound clock must read the epoch")
	}
	ctx := WithClock(context.Background(), Func(func() int64 { return 42 }))
	if Now(ctx) != 42 || FromContext(ctx) == nil {
		t.Fatal("bound clock")
	}
}
