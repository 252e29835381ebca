package synth

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The figures tests run a representative slice of each measurement of
// docs/synthesis-figures.md and pin its numbers; `make synth-figures`
// (go run ./core/synth/cmd/synthfig) runs the full sets.

// TestOracleShareSlice: the first 10 airline train tasks and 40 airline
// and 40 BFCL random sequences, replayed against servers synthesized from
// the documentation with the reference state loaded. OutputRight is 0
// throughout: no successful reference call's output is reproduced from
// the documentation alone (docs/synthesis-figures.md says why); "Right"
// counts the calls where both sides gave a tool error.
func TestOracleShareSlice(t *testing.T) {
	ctx := context.Background()
	type want struct{ read, write OracleTally }
	check := func(name string, gs []OracleGroup, w want, label string) *OracleReport {
		t.Helper()
		rep, err := MeasureOracle(ctx, &Deterministic{}, name, gs)
		if err != nil {
			t.Fatal(err)
		}
		got := want{rep.Total.Read, rep.Total.Write}
		if d := cmp.Diff(w, got, cmp.AllowUnexported(want{})); d != "" || rep.LabelSource != label {
			t.Errorf("%s (labels %s) (-want +got):\n%s\n%s", name, rep.LabelSource, d, rep.Table())
		}
		return rep
	}
	air := func(file string, n int) []OracleGroup {
		gs, err := Tau2OracleGroups(filepath.Join(airlineDir, "tools.json"), filepath.Join(airlineDir, "db.json"), filepath.Join(airlineDir, "oracle", file), n)
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	rep := check("airline tasks-train[:10]", air("tasks-train.json", 10),
		want{OracleTally{Calls: 18, ErrorRight: 18, Successes: 18}, OracleTally{Calls: 5, ErrorRight: 5, Successes: 5}}, "reference")
	if d := cmp.Diff(map[string]int{"flight": 300, "user": 500, "reservation": 2000}, rep.Loaded); d != "" {
		t.Errorf("rows loaded (-want +got):\n%s", d)
	}
	check("airline fuzz-public[:40]", air("fuzz-public.json", 40),
		want{OracleTally{Calls: 92, ErrorRight: 88, Right: 31, Successes: 57}, OracleTally{Calls: 118, ErrorRight: 88, Right: 17, Successes: 71}}, "reference")
	gs, err := BFCLOracleGroups(filepath.Join(bfclDir, "func_docs"), filepath.Join(bfclDir, "oracle", "fuzz-public.json"), 40)
	if err != nil {
		t.Fatal(err)
	}
	rep = check("BFCL fuzz-public[:40]", gs,
		want{OracleTally{Calls: 128, ErrorRight: 103, Right: 22, Successes: 84}, OracleTally{Calls: 74, ErrorRight: 59, Right: 18, Successes: 46}}, "synthesized")
	if len(rep.ByClass) != 8 {
		t.Errorf("%d classes in the slice, want all 8", len(rep.ByClass))
	}
}

// TestSynthesizeToucanSlice: the 52-server slice synthesized, served and
// validated (the full 1,027: make synth-figures).
func TestSynthesizeToucanSlice(t *testing.T) {
	f, err := os.Open(filepath.Join(toucanDir, "servers-slice.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	docs, bad, err := LoadToucanFile(f, "servers-slice.jsonl")
	if err != nil || bad != 0 {
		t.Fatalf("%d refused: %v", bad, err)
	}
	rep := SynthesizeAll(context.Background(), &Deterministic{}, docs, bad, true)
	got := []int{rep.Synthesized, rep.Valid, rep.Compiled, rep.Seeded, rep.Served, rep.Tools, rep.Validated, rep.PassedAll}
	if d := cmp.Diff([]int{52, 52, 52, 52, 52, 366, 52, 46}, got); d != "" {
		t.Errorf("counts (-want +got):\n%s\n%s", d, rep)
	}
	// What the 6 failing servers hit (validation's closed codes).
	if d := cmp.Diff(map[Code]int{CodeParamsMismatch: 1, CodeUnexpectedError: 5, CodeErrorNotRaised: 1, CodeReadbackMismatch: 1}, rep.ServersByCode); d != "" {
		t.Errorf("servers by code (-want +got):\n%s", d)
	}
	t.Log(rep)
}

// BenchmarkSynthesizeToucan is the CPU per server of the scale figure:
// one op synthesizes one server of the slice (round robin) and takes it to
// the point of serving (spec.Validate, compile, seed load, NewNativeServer).
func BenchmarkSynthesizeToucan(b *testing.B) {
	f, err := os.Open(filepath.Join(toucanDir, "servers-slice.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	docs, _, _ := LoadToucanFile(f, "servers-slice.jsonl")
	f.Close()
	ctx := context.Background()
	d := &Deterministic{}
	rep := &ScaleReport{Failures: map[string]int{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		srv, err := d.Synthesize(ctx, &Request{Docs: docs[i%len(docs)]})
		if err != nil {
			b.Fatal(err)
		}
		if err := CheckServed(ctx, srv, rep, func(string, error) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSynthesizeOnly is the synthesis step alone (docs -> spec).
func BenchmarkSynthesizeOnly(b *testing.B) {
	f, err := os.Open(filepath.Join(toucanDir, "servers-slice.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	docs, _, _ := LoadToucanFile(f, "servers-slice.jsonl")
	f.Close()
	ctx := context.Background()
	d := &Deterministic{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Synthesize(ctx, &Request{Docs: docs[i%len(docs)]}); err != nil {
			b.Fatal(err)
		}
	}
}
