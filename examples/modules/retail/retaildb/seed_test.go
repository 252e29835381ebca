package retaildb_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
)

// seedPath is the committed seed: db.json converted by cmd/retail-seed to
// weft's generic seed format. Configs and tests read this file; weft
// itself never reads a tau2 db.json.
const seedPath = "../../../data/tau2-retail/db.state.json"

// TestCommittedSeed fails when the committed seed is not what the
// converter makes of db.json today (run `make retail-seed`), and checks
// that the seed imports to the state db.json loads to.
func TestCommittedSeed(t *testing.T) {
	ctx := context.Background()
	st := state.NewStore()
	defer st.Close()
	v, err := retaildb.Load(ctx, st, bytes.NewReader(readFile(t, dbPath)))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := v.Export(&want); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, seedPath)
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s is stale (%d bytes, the converter gives %d): run `make retail-seed`", seedPath, len(got), want.Len())
	}
	imported, err := st.Import(ctx, bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	if imported.Hash() != v.Hash() {
		t.Fatalf("imported seed hash %s, db.json loads to %s", imported.Hash(), v.Hash())
	}
	back, err := retaildb.Export(ctx, imported)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, readFile(t, dbPath)) {
		t.Fatal("the seed does not export back to db.json byte for byte")
	}
}
