package megamcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestLedgerDamage: damage in the middle of a ledger is not mistaken for a
// torn tail (the log is left untouched and the session set aside); a
// damaged checkpoint only costs a full replay; oversized arguments are
// refused and recorded without their bytes.
func TestLedgerDamage(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	dir := t.TempDir()
	s1 := newServer(t, dir, reg)
	a, _ := s1.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	b, _ := s1.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	for _, id := range []string{a.ID, b.ID} {
		for i := 0; i < 4; i++ {
			call(t, s1, id, 0, "add_note", `{"text":"note"}`)
		}
	}
	big := `{"text":"` + strings.Repeat("x", MaxArgumentsBytes) + `"}`
	if r := call(t, s1, b.ID, 0, "add_note", big); !r.Result.IsError || !strings.Contains(text(r), "over the") {
		t.Fatalf("oversized arguments: %s", text(r))
	}
	recs, _ := s1.Ledger(ctx, b.ID, 4, 1)
	if len(recs) != 1 || string(recs[0].Arguments) != `{"weft/omitted_bytes":4194315}` || recs[0].Error.Kind != "invalid_arguments" {
		t.Fatalf("oversized record: %+v", recs)
	}
	if err := s1.checkpointAll(false); err != nil {
		t.Fatal(err)
	}
	wantB := mustInfo(t, s1, b.ID)
	s1.Close()

	// a: flip a byte inside its second record.
	walA := filepath.Join(dir, "sessions", a.ID, "ledger.wal")
	data, _ := os.ReadFile(walA)
	h := len(walMagic) // frames follow the magic
	var first uint32 = uint32(data[h]) | uint32(data[h+1])<<8 | uint32(data[h+2])<<16 | uint32(data[h+3])<<24
	data[h+8+int(first)+8+10] ^= 0x20
	if err := os.WriteFile(walA, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// b: a truncated checkpoint.
	ckB := filepath.Join(dir, "sessions", b.ID, "checkpoint.json")
	ck, _ := os.ReadFile(ckB)
	os.WriteFile(ckB, ck[:len(ck)/2], 0o644)

	s2 := newServer(t, dir, reg)
	defer s2.Close()
	if _, err := s2.Session(a.ID); !errors.Is(err, ErrNoSuchSession) {
		t.Fatalf("session with a damaged ledger was loaded: %v", err)
	}
	kept, err := os.ReadFile(filepath.Join(dir, "sessions", a.ID+".failed", "ledger.wal"))
	if err != nil || len(kept) != len(data) {
		t.Fatalf("set-aside ledger: %d bytes of %d, %v", len(kept), len(data), err)
	}
	got := mustInfo(t, s2, b.ID)
	if got.Hash != wantB.Hash || got.Ledger != wantB.Ledger {
		t.Fatalf("b after a damaged checkpoint: %+v, want %+v", got, wantB)
	}
	_, _, err = readFrames(strings.NewReader(string(data[h:])))
	if !errors.Is(err, ErrCorruptLedger) {
		t.Fatalf("readFrames on mid-file damage: %v", err)
	}
}
