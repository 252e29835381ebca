package rand

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
)

func TestFill(t *testing.T) {
	p := []byte{1, 2, 3}
	if err := Fill(context.Background(), p); err != nil || !bytes.Equal(p, []byte{0, 0, 0}) {
		t.Fatalf("unbound: %v %v", p, err)
	}
	var seed [32]byte
	a, b := make([]byte, 64), make([]byte, 64)
	Fill(WithSource(context.Background(), rand.NewChaCha8(seed)), a)
	Fill(WithSource(context.Background(), rand.NewChaCha8(seed)), b)
	if !bytes.Equal(a, b) || bytes.Equal(a, make([]byte, 64)) {
		t.Fatal("stream not deterministic")
	}
}
