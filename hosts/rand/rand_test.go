package rand

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/weft-dev/weft/hosts"
)

func TestFill(t *testing.T) {
	p := []byte{1, 2, 3}
	if err := Fill(context.Background(), p); err != nil || !bytes.Equal(p, []byte{0, 0, 0}) {
		t.Fatalf("unbound: %v %v", p, err)
	}
	p = []byte{1, 2, 3}
	if err := Fill(hosts.With(context.Background(), &hosts.Call{}), p); err != nil || !bytes.Equal(p, []byte{0, 0, 0}) {
		t.Fatalf("bound without a stream: %v %v", p, err)
	}
	var seed [32]byte
	a, b := make([]byte, 64), make([]byte, 64)
	Fill(hosts.With(context.Background(), &hosts.Call{Rand: rand.NewChaCha8(seed)}), a)
	Fill(hosts.With(context.Background(), &hosts.Call{Rand: rand.NewChaCha8(seed)}), b)
	if !bytes.Equal(a, b) || bytes.Equal(a, make([]byte, 64)) {
		t.Fatal("stream not deterministic")
	}
}
