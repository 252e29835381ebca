// Command fx is the test fixture module of core/module: one tool per
// behaviour the runtime must contain.
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/weft-dev/weft/sdk/tool"
)

func init() {
	tool.Module(tool.Info{Name: "fx", Version: "0.1.0", Owns: []string{"items"}, Reads: []string{"ro"}})
	tool.Register("put", "Inserts an item and returns the item count.", put)
	tool.Register("get", "Reads an item.", get, tool.ReadOnly())
	tool.Register("put_then_fail", "Inserts, then returns a tool error.", putThenFail)
	tool.Register("put_then_panic", "Inserts, then panics.", putThenPanic)
	tool.Register("put_then_loop", "Inserts, then loops forever.", putThenLoop)
	tool.Register("put_then_nil", "Inserts, then dereferences nil.", putThenNil)
	tool.Register("put_then_crash", "Inserts, then panics on another goroutine (unrecoverable).", putThenCrash)
	tool.Register("put_then_oom", "Inserts, then allocates without bound.", putThenOOM)
	tool.Register("put_then_hoard", "Inserts, then allocates blocks of n MiB without bound, with goroutines parked (a long fatal-error traceback).", putThenHoard)
	tool.Register("peek", "Queries an undeclared table.", peek)
	tool.Register("write_ro", "Writes a read-only table.", writeRO)
	tool.Register("entropy", "Returns time and randomness.", entropy, tool.ReadOnly())
	tool.Register("say", "Logs.", say, tool.ReadOnly())
}

func main() {}

type item struct {
	ID string `json:"id"`
	N  int64  `json:"n"`
}

type count struct {
	Count int64 `json:"count"`
}

func insert(ctx context.Context, in item) error {
	_, err := tool.DB().ExecContext(ctx, "INSERT INTO items (id, n) VALUES (?, ?)", in.ID, in.N)
	return err
}

func put(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	var c count
	err := tool.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM items").Scan(&c.Count)
	return c, err
}

type key struct {
	ID string `json:"id"`
}

func get(ctx context.Context, in key) (item, error) {
	var it item
	err := tool.DB().QueryRowContext(ctx, "SELECT id, n FROM items WHERE id = ?", in.ID).Scan(&it.ID, &it.N)
	if err != nil {
		return item{}, tool.Errorf("no item %s: %v", in.ID, err)
	}
	return it, nil
}

func putThenFail(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	return count{}, tool.Errorf("refusing item %s", in.ID)
}

func putThenPanic(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	panic("fixture panic")
}

var spin uint64

func putThenLoop(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	for {
		spin++
	}
}

var nilItem *item

func putThenNil(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	return count{Count: nilItem.N}, nil
}

func putThenCrash(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		panic("fixture crash on a goroutine")
	}()
	<-done
	return count{}, nil
}

var hoard [][]byte

func putThenOOM(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	for {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = byte(i)
		}
		hoard = append(hoard, b)
	}
}

// putThenHoard allocates n MiB at a time: the refused memory.grow is far
// below the cap, and the parked goroutines make the Go runtime's fatal
// error traceback long.
func putThenHoard(ctx context.Context, in item) (count, error) {
	if err := insert(ctx, in); err != nil {
		return count{}, err
	}
	park := make(chan struct{})
	for i := 0; i < 64; i++ {
		go func() { <-park }()
	}
	for {
		b := make([]byte, int(in.N)<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = byte(i)
		}
		hoard = append(hoard, b)
	}
}

type report struct {
	Err string `json:"err"`
}

func peek(ctx context.Context, _ struct{}) (report, error) {
	var n int64
	err := tool.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM secrets").Scan(&n)
	if err == nil {
		return report{Err: fmt.Sprintf("read %d secrets", n)}, nil
	}
	return report{Err: err.Error()}, nil
}

func writeRO(ctx context.Context, _ struct{}) (report, error) {
	_, err := tool.DB().ExecContext(ctx, "UPDATE ro SET v = 'x'")
	if err == nil {
		return report{}, nil
	}
	return report{Err: err.Error()}, nil
}

type entropyOut struct {
	Now    string `json:"now"`
	Crypto uint64 `json:"crypto"`
	Math   uint64 `json:"math"`
}

func entropy(ctx context.Context, _ struct{}) (entropyOut, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return entropyOut{}, err
	}
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return entropyOut{}, err
	}
	return entropyOut{
		Now:    time.Now().UTC().Format(time.RFC3339Nano),
		Crypto: binary.LittleEndian.Uint64(b[:]),
		Math:   mrand.New(mrand.NewChaCha8(seed)).Uint64(),
	}, nil
}

type msg struct {
	Text string `json:"text"`
}

func say(ctx context.Context, in msg) (string, error) {
	tool.Log(2, "say: "+in.Text)
	tool.Progress(1, 2, "half")
	fmt.Println("stdout: " + in.Text)
	return in.Text, nil
}
