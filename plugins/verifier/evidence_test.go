package verifier_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/plugins/verifier"
	"github.com/weft-dev/weft/sdk/plugin"
)

// RemoteEvidence over EvidenceState gives what the in-process evidence
// gives, with numbers as json.Number.
func TestRemoteOverEvidenceState(t *testing.T) {
	ctx := context.Background()
	s := state.NewStore()
	t.Cleanup(func() { _ = s.Close() })
	a, err := s.Load(ctx, `CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(8))`, state.TableRows{Table: "t", Columns: []string{"id", "v"}, Rows: [][]any{{1, "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	ws := s.Fork(a)
	if _, err := ws.Exec(ctx, `UPDATE t SET v = 'y' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	b, _ := ws.Snapshot()
	local := verify.NewStateEvidence(map[string]*state.Version{verify.Initial: a, verify.Final: b})
	remote := verifier.RemoteEvidence(verifier.EvidenceState(local))

	h, err := remote.Hash(ctx, verify.Final)
	if err != nil || h != b.Hash().String() {
		t.Errorf("Hash = %q, %v; want %s", h, err, b.Hash())
	}
	d, err := remote.Diff(ctx, verify.Initial, verify.Final)
	if err != nil {
		t.Fatal(err)
	}
	want := &state.Changes{Tables: []state.TableDiff{{Table: "t", Columns: []string{"id", "v"}, PrimaryKey: []string{"id"},
		Changed: []state.RowChange{{Key: []any{int64(1)}, Columns: []state.ColumnChange{{Column: "v", Old: "x", New: "y"}}}}}}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
	cols, rows, err := remote.Query(ctx, verify.Final, `SELECT id, v FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"id", "v"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]any{{int64(1), "y"}}, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	_, err = remote.Hash(ctx, verify.Reference)
	var he *plugin.HostError
	if !errors.Is(err, verify.ErrNoVersion) || !errors.As(err, &he) || he.Kind != verifier.NoVersion {
		t.Errorf("Hash(reference) = %v; want ErrNoVersion and HostError %s", err, verifier.NoVersion)
	}
	if _, err := verifier.RemoteEvidence(plugin.StateFuncs{}).Hash(ctx, verify.Final); errors.Is(err, verify.ErrNoVersion) || !errors.As(err, &he) || he.Kind != "unavailable" {
		t.Errorf("unavailable Hash = %v", err)
	}
}
