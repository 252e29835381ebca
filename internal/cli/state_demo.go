package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/state"
)

// demoResult is the --json output of `weft state demo`.
type demoResult struct {
	Data          string         `json:"data"`
	LoadMillis    float64        `json:"load_ms"`
	Hash          string         `json:"hash"`
	Tables        []tableCount   `json:"tables"`
	Order         string         `json:"order"`
	Branches      []demoBranch   `json:"branches"`
	Diff          *state.Changes `json:"diff"`
	ForkMicros    float64        `json:"fork_us"`
	SnapshotMicro float64        `json:"snapshot_us"`
	RestoreMicros float64        `json:"restore_us"`
	RoundTripOK   bool           `json:"round_trip_ok"`
}

type demoBranch struct {
	Branch  int    `json:"branch"`
	Action  string `json:"action"`
	Outcome string `json:"outcome"`
	Hash    string `json:"hash"`
}

func newStateDemoCmd(a *app) *cobra.Command {
	var dataPath string
	var g int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Load tau2-bench retail, branch G candidates from one point, verify, diff, restore",
		Long: `A tour of core/state on real data: loads the tau2-bench retail database
(as the retail module's seed, a weft.state/v1 file written by the domain's
converter, examples/modules/retail/retaildb/cmd/retail-seed), branches G
workspaces from one version as a GRPO group would, runs one "tool
call" (cancel a pending order) as a unit of work in each (some deliberately
failing, which must leave no trace), compares the branches by content hash,
shows the row-level diff a verifier gets, times fork/snapshot/restore, and
checks the lossless export round trip.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g < 2 {
				return usageErrorf("--group-size must be at least 2, got %d", g)
			}
			res, err := runStateDemo(cmd.Context(), a, dataPath, g)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printDemo(w, res) })
		},
	}
	cmd.Flags().StringVar(&dataPath, "data", "examples/data/tau2-retail/db.state.json",
		"the tau2-bench retail state as a weft.state/v1 file (tables orders and payments)")
	cmd.Flags().IntVarP(&g, "group-size", "G", 8, "number of branches forked from one version")
	return cmd
}

func runStateDemo(ctx context.Context, a *app, dataPath string, g int) (*demoResult, error) {
	f, err := os.Open(dataPath)
	if err != nil {
		return nil, fmt.Errorf("%w (run from the repository root, or pass --data)", err)
	}
	defer f.Close()
	s := state.NewStore()
	defer s.Close()
	start := time.Now()
	v0, err := s.Import(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dataPath, err)
	}
	res := &demoResult{Data: dataPath, LoadMillis: ms(time.Since(start)), Hash: v0.Hash().String(), Tables: counts(v0)}
	a.log().Info("loaded", "tables", len(res.Tables), "ms", res.LoadMillis)

	probe := s.Fork(v0)
	rows, err := probe.Query(ctx, "SELECT order_id FROM orders WHERE status = ? ORDER BY order_id LIMIT 1", "pending")
	if err != nil {
		return nil, err
	}
	if len(rows.Values) == 0 {
		return nil, errors.New("no pending order in the data")
	}
	order := rows.Values[0][0].(string)
	res.Order = order

	// Each branch is one candidate for the same turn. Even branches cancel
	// the order; odd ones try an invalid cancel that fails midway.
	var first *state.Version
	for i := 0; i < g; i++ {
		ws := s.Fork(v0)
		b := demoBranch{Branch: i}
		var callErr error
		if i%2 == 0 {
			b.Action = "cancel " + order + " (reason: no longer needed)"
			callErr = cancelOrder(ctx, ws, order, "no longer needed")
		} else {
			b.Action = "cancel " + order + " (reason: 'because', not a valid reason)"
			callErr = cancelOrder(ctx, ws, order, "because")
		}
		if callErr != nil {
			b.Outcome = "error: " + callErr.Error()
		} else {
			b.Outcome = "ok"
		}
		v, err := ws.Snapshot()
		if err != nil {
			return nil, err
		}
		b.Hash = v.Hash().String()
		if i == 0 {
			first = v
		}
		res.Branches = append(res.Branches, b)
	}
	res.Diff = state.Diff(v0, first)

	// Timings, averaged over many operations on the 1,000-order state.
	const n = 20000
	ws := s.Fork(v0)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		_ = s.Fork(v0)
	}
	res.ForkMicros = us(time.Since(t0)) / n
	t0 = time.Now()
	for i := 0; i < n; i++ {
		_, _ = ws.Snapshot()
	}
	res.SnapshotMicro = us(time.Since(t0)) / n
	t0 = time.Now()
	for i := 0; i < n; i++ {
		_ = ws.Restore(v0)
	}
	res.RestoreMicros = us(time.Since(t0)) / n

	var buf bytes.Buffer
	if err := first.Export(&buf); err != nil {
		return nil, err
	}
	back, err := s.Import(ctx, &buf)
	if err != nil {
		return nil, err
	}
	res.RoundTripOK = back.Hash() == first.Hash() && state.Diff(first, back).Empty()
	if !res.RoundTripOK {
		return nil, errors.New("export/import round trip changed the state")
	}
	return res, nil
}

var validCancelReasons = map[string]bool{"no longer needed": true, "ordered by mistake": true}

// cancelOrder is the demo's stand-in for a tool call: one unit of work that
// marks the order cancelled and refunds every payment, or fails and leaves
// no trace.
func cancelOrder(ctx context.Context, ws *state.Workspace, orderID, reason string) error {
	return ws.Do(func(u *state.Unit) error {
		r, err := u.Query(ctx, "SELECT status FROM orders WHERE order_id = ?", orderID)
		if err != nil {
			return err
		}
		if len(r.Values) == 0 || r.Values[0][0] != "pending" {
			return fmt.Errorf("order %s is not pending", orderID)
		}
		if _, err := u.Exec(ctx, "UPDATE orders SET status = 'cancelled', cancel_reason = ? WHERE order_id = ?", reason, orderID); err != nil {
			return err
		}
		pays, err := u.Query(ctx, "SELECT pos, amount, payment_method_id FROM payments WHERE order_id = ? ORDER BY pos", orderID)
		if err != nil {
			return err
		}
		next := len(pays.Values)
		for _, p := range pays.Values {
			if _, err := u.Exec(ctx, "INSERT INTO payments (order_id, pos, transaction_type, amount, payment_method_id) VALUES (?, ?, 'refund', ?, ?)",
				orderID, next, p[1], p[2]); err != nil {
				return err
			}
			next++
		}
		// The reason is checked last, so a failing call has already written:
		// the unit's rollback is what removes those writes.
		if !validCancelReasons[reason] {
			return fmt.Errorf("invalid cancel reason %q", reason)
		}
		return nil
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func printDemo(w io.Writer, r *demoResult) error {
	fmt.Fprintf(w, "Loaded %s in %.1f ms\n", r.Data, r.LoadMillis)
	if err := printCounts(w, r.Tables); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nversion hash %s\n", r.Hash)
	fmt.Fprintf(w, "\nGroup of %d branches forked from that version, one tool call each on order %s:\n", len(r.Branches), r.Order)
	for _, b := range r.Branches {
		fmt.Fprintf(w, "  branch %d  %-12.12s  %s  %s\n", b.Branch, b.Hash, b.Outcome, b.Action)
	}
	fmt.Fprintln(w, "  (equal hashes = equal states; failed calls left the original hash", r.Hash[:12]+")")
	fmt.Fprintln(w, "\nRow-level diff of branch 0 against the original (the verifier's evidence):")
	if err := printChanges(w, r.Diff); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfork %.2f us, snapshot %.2f us, restore %.2f us (mean of 20,000 each)\n", r.ForkMicros, r.SnapshotMicro, r.RestoreMicros)
	fmt.Fprintf(w, "export -> import round trip: hash and rows equal: %v\n", r.RoundTripOK)
	return nil
}
