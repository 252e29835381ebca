package module

import (
	"context"
	"errors"
	"testing"
)

func TestAdmissionSlots(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{MaxConcurrentCalls: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	if got := rt.Config().MaxConcurrentCalls; got != 2 {
		t.Fatalf("MaxConcurrentCalls = %d", got)
	}
	l1, err := rt.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := rt.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Both slots taken: a caller whose context ends while waiting gets
	// ErrCanceled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := rt.admit(cctx); !errors.Is(err, ErrCanceled) {
		t.Fatalf("third admit: err = %v", err)
	}
	// A waiting caller gets the slot a finishing call frees.
	got := make(chan error, 1)
	go func() {
		l3, err := rt.admit(ctx)
		if err == nil {
			l3()
		}
		got <- err
	}()
	l1()
	if err := <-got; err != nil {
		t.Fatalf("waiting admit: %v", err)
	}
	l2()
	if n := len(rt.slots); n != 0 {
		t.Fatalf("%d slots still held", n)
	}
	def, err := NewRuntime(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close(ctx)
	if def.Config().MaxConcurrentCalls < 1 {
		t.Fatalf("default MaxConcurrentCalls = %d", def.Config().MaxConcurrentCalls)
	}
}
