package clock

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/hosts"
)

func TestNow(t *testing.T) {
	if got := Now(context.Background()); got != 0 {
		t.Fatalf("unbound clock reads %d, want the epoch (0)", got)
	}
	ctx := hosts.With(context.Background(), &hosts.Call{Now: 42})
	if got := Now(ctx); got != 42 {
		t.Fatalf("bound clock reads %d, want 42", got)
	}
}
