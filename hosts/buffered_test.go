package hosts

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// bufferedGuest is a hand-assembled module importing ns.req (i32 x4 ->
// i32) and ns.take (i32 x2 -> i32), exporting one page of memory "mem"
// and r and t, which pass their parameters on to the two imports.
var bufferedGuest = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x0f, 0x02, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f,
	0x02, 0x14, 0x02, 0x02, 'n', 's', 0x03, 'r', 'e', 'q', 0x00, 0x00, 0x02, 'n', 's', 0x04, 't', 'a', 'k', 'e', 0x00, 0x01,
	0x03, 0x03, 0x02, 0x00, 0x01,
	0x05, 0x03, 0x01, 0x00, 0x01,
	0x07, 0x0f, 0x03, 0x03, 'm', 'e', 'm', 0x02, 0x00, 0x01, 'r', 0x00, 0x02, 0x01, 't', 0x00, 0x03,
	0x0a, 0x17, 0x02,
	0x0c, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0x20, 0x03, 0x10, 0x00, 0x0b,
	0x08, 0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x01, 0x0b,
}

// AddBuffered: the answer lands in the output buffer when it fits, else
// waits for take; a region outside memory or an oversized request traps
// with the function's name, and a copied request does not alias the
// output.
func TestAddBuffered(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	var seen string
	serve := func(ctx context.Context, req, out []byte) uint32 {
		if len(out) > 0 {
			out[0] = '!' // an aliasing request would now start with '!'
		}
		seen = string(req)
		return From(ctx).Deliver([]byte("answer:"+string(req)), out)
	}
	if _, err := AddBuffered(r.NewHostModuleBuilder("ns"), Buffered{
		Namespace: "ns", Name: "req", MaxRequest: 64, CopyRequest: true, Serve: serve,
	}).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := r.Instantiate(ctx, bufferedGuest)
	if err != nil {
		t.Fatal(err)
	}
	mem := g.Memory()
	env := &Call{}
	cctx := With(ctx, env)
	call := func(fn string, args ...uint64) (uint64, error) {
		res, err := g.ExportedFunction(fn).Call(cctx, args...)
		if err != nil {
			return 0, err
		}
		return res[0], nil
	}
	mem.Write(100, []byte("abc"))
	// Fits: the answer is in the output buffer.
	n, err := call("r", 100, 3, 200, 32)
	if err != nil || n != 10 {
		t.Fatalf("req: %d, %v", n, err)
	}
	if b, _ := mem.Read(200, 10); string(b) != "answer:abc" {
		t.Fatalf("output %q", b)
	}
	// The output buffer is the request's own bytes: the copy keeps them.
	if n, err = call("r", 100, 3, 100, 32); err != nil || n != 10 || seen != "abc" {
		t.Fatalf("aliased: %d, %v, request seen %q", n, err, seen)
	}
	// Too small: nothing written, the answer is pending for take.
	mem.Write(100, []byte("xyz"))
	mem.Write(300, []byte("----"))
	if n, err = call("r", 100, 3, 300, 4); err != nil || n != 10 {
		t.Fatalf("small: %d, %v", n, err)
	}
	if b, _ := mem.Read(300, 4); string(b) != "!---" {
		t.Fatalf("small buffer written: %q", b)
	}
	if n, err = call("t", 400, 16); err != nil || n != 10 {
		t.Fatalf("take: %d, %v", n, err)
	}
	if b, _ := mem.Read(400, 10); string(b) != "answer:xyz" {
		t.Fatalf("taken %q", b)
	}
	if n, err = call("t", 400, 16); err != nil || n != 0 {
		t.Fatalf("second take: %d, %v", n, err)
	}
	for _, c := range []struct {
		fn   string
		args []uint64
		want string
	}{
		{"r", []uint64{65530, 10, 0, 4}, "ns.req: buffer [65530, +10) out of guest memory"},
		{"r", []uint64{0, 4, 65535, 2}, "ns.req: buffer [65535, +2) out of guest memory"},
		{"r", []uint64{0, 65, 0, 4}, "ns.req: request of 65 bytes exceeds 64"},
		{"t", []uint64{65536, 1}, "ns.take: buffer [65536, +1) out of guest memory"},
	} {
		if _, err := call(c.fn, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%v: %v, want %q", c.fn, c.args, err, c.want)
		}
	}
}
