package megamcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestTornTailKeepsCompleteRecords: a ledger whose last frame is torn (its
// last 37 bytes gone, as a full disk or a power loss leaves it) after a
// clean stop, whose final checkpoint covers that frame, keeps its session:
// the complete records before the torn one are replayed, the stale
// checkpoint is removed, an error log line says what was lost, and the
// session goes on at the next index and survives the next restart. Before,
// the whole session (14 good calls) was set aside. Damage followed by
// complete frames is still set aside whole, its ledger untouched.
func TestTornTailKeepsCompleteRecords(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	f := &recoveryFixture{dir: t.TempDir(), reg: reg}
	s1 := newServer(t, f.dir, reg)
	a, _ := s1.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	b, _ := s1.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	var want14 sessionDigest
	for i := range 15 {
		if i == 14 {
			want14 = digestOf(t, s1, a.ID)
		}
		call(t, s1, a.ID, 0, "add_note", fmt.Sprintf(`{"text":"note %d"}`, i))
		call(t, s1, b.ID, 0, "add_note", fmt.Sprintf(`{"text":"note %d"}`, i))
	}
	if err := s1.Close(); err != nil { // the final checkpoint covers all 15
		t.Fatal(err)
	}
	if want14.Records != 14 || want14.Calls != 14 {
		t.Fatalf("reference after 14 calls: %+v", want14)
	}
	walA := filepath.Join(f.dir, "sessions", a.ID, "ledger.wal")
	st, err := os.Stat(walA)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(walA, st.Size()-37); err != nil {
		t.Fatal(err)
	}
	// b: a flipped byte in its second frame, complete frames after it.
	walB := filepath.Join(f.dir, "sessions", b.ID, "ledger.wal")
	dataB, _ := os.ReadFile(walB)
	h := len(walMagic)
	first := int(dataB[h]) | int(dataB[h+1])<<8 | int(dataB[h+2])<<16 | int(dataB[h+3])<<24
	dataB[h+8+first+8+10] ^= 0x20
	if err := os.WriteFile(walB, dataB, 0o644); err != nil {
		t.Fatal(err)
	}

	s2, _, lb, err := f.open(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := digestOf(t, s2, a.ID)
	if d := cmp.Diff(want14, got); d != "" {
		t.Fatalf("torn tail: session recovered differently from its first 14 calls (-want +got):\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "sessions", a.ID, "checkpoint.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale checkpoint kept: %v", err)
	}
	if st2, _ := os.Stat(walA); st2.Size() >= st.Size()-37 {
		t.Fatalf("ledger not cut: %d bytes, torn at %d", st2.Size(), st.Size()-37)
	}
	logs := lb.String()
	if !strings.Contains(logs, `level=ERROR msg="ledger: torn tail covered by the checkpoint: the torn records were acknowledged and are lost; replaying the complete records" session=`+a.ID+" checkpoint_covers=15 records_kept=14 records_lost=1") {
		t.Fatalf("no log line for the lost record:\n%s", logs)
	}
	if !strings.Contains(logs, "torn tail cut") {
		t.Fatalf("no log line for the cut:\n%s", logs)
	}
	// b: damage before the end is set aside whole, untouched.
	if _, err := s2.Session(b.ID); !errors.Is(err, ErrNoSuchSession) {
		t.Fatalf("mid-ledger damage: session loaded (%v)", err)
	}
	kept, err := os.ReadFile(filepath.Join(f.dir, "sessions", b.ID+".failed", "ledger.wal"))
	if err != nil || !bytes.Equal(kept, dataB) {
		t.Fatalf("set-aside ledger: %d bytes of %d, %v", len(kept), len(dataB), err)
	}
	if !strings.Contains(logs, "with data after it") {
		t.Fatalf("no damage log line:\n%s", logs)
	}

	// The session goes on at index 14, and the next restart has it all.
	r := call(t, s2, a.ID, 0, "add_note", `{"text":"after"}`)
	if r.Index != 14 {
		t.Fatalf("next call at index %d, want 14", r.Index)
	}
	want15 := digestOf(t, s2, a.ID)
	Abandon(s2)
	s3, _, _, err := f.open(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want15, digestOf(t, s3, a.ID)); d != "" {
		t.Fatalf("after the next restart (-want +got):\n%s", d)
	}
}
