package ftrl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/dataset"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/train"
)

// testOptions is a small run: 4 scenarios per domain (one of each type),
// G = 4, faults high enough that every reward branch occurs.
func testOptions(out string, seed uint64) Options {
	return Options{
		RetailSeed: retailSeed, AirlineSeed: airlineSeed, Scenarios: 4, Seed: seed, G: 4, Out: out,
		Faults:      Faults{Faults: scripted.Faults{ExtraCall: 0.1, HallucinatedTool: 0.1, MalformedCall: 0.1, EarlyStop: 0.05, WrongArgument: 0.1}, EmptyReply: 0.05, ParallelCalls: 0.5},
		GroupFaults: Faults{Faults: scripted.Faults{ExtraCall: 0.2, HallucinatedTool: 0.2, MalformedCall: 0.2, EarlyStop: 0.2, WrongArgument: 0.2}, EmptyReply: 0.1, ParallelCalls: 0.5},
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// The same seed gives byte-identical stage outputs, servers and datasets;
// another seed gives other scenarios. The run's outputs are then checked
// against each other and against FTRL's format.
func TestRunDeterministicAndConsistent(t *testing.T) {
	ctx := context.Background()
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	sum, err := Run(ctx, testOptions(a, 7))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, testOptions(b, 7)); err != nil {
		t.Fatal(err)
	}
	ta, tb := readTree(t, a), readTree(t, b)
	if len(ta) < 12 {
		t.Fatalf("only %d files", len(ta))
	}
	for name, x := range ta {
		if !bytes.Equal(x, tb[name]) {
			t.Errorf("%s differs between two runs with seed 7", name)
		}
	}
	if len(ta) != len(tb) {
		t.Errorf("%d files vs %d", len(ta), len(tb))
	}
	if _, err := Run(ctx, testOptions(c, 8)); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(ta[FileScenarios], readTree(t, c)[FileScenarios]) {
		t.Errorf("seeds 7 and 8 gave the same scenarios")
	}

	// Counts per stage and type, recomputed from the stage files.
	all := sum.Types["all"]
	scs := readLines[Scenario](t, filepath.Join(a, FileScenarios))
	ins := readLines[Integration](t, filepath.Join(a, FileIntegrated))
	vars := readLines[Variant](t, filepath.Join(a, FileScaled))
	deps := readLines[map[string]any](t, filepath.Join(a, FileDeployed))
	docs := readLines[map[string]any](t, filepath.Join(a, FileDocuments))
	nq, n, m := 0, 0, 0
	for _, s := range scs {
		nq += len(s.SubQuestions)
	}
	for _, in := range ins {
		n += in.Documents
		m += len(in.Tools)
	}
	if all.Scenarios != 8 || len(scs) != 8 || all.SubQuestions != nq || all.Documents != nq || len(docs) != nq || all.Integrated != m || m > n {
		t.Errorf("counts %+v; files: %d scenarios, %d sub-questions, %d documents, n=%d m=%d", all, len(scs), nq, len(docs), n, m)
	}
	for _, typ := range ScenarioTypes {
		if sum.Types[string(typ)].Scenarios != 2 {
			t.Errorf("%s: %d scenarios, want 2", typ, sum.Types[string(typ)].Scenarios)
		}
	}
	if all.Variants != len(vars) || all.Servers != len(deps) || all.ToolsPassed != all.DeployedTools || len(sum.ServersFailed) != 0 {
		t.Errorf("variants %d/%d servers %d/%d tools passed %d of %d failed %v", all.Variants, len(vars), all.Servers, len(deps), all.ToolsPassed, all.DeployedTools, sum.ServersFailed)
	}
	kinds := 0
	for _, k := range ScaleKinds {
		if sum.Scale[k] == nil || sum.Scale[k].Variants == 0 {
			t.Errorf("no %s variant", k)
			continue
		}
		kinds += sum.Scale[k].Variants
	}
	if kinds != len(vars) {
		t.Errorf("variants by kind sum to %d, want %d", kinds, len(vars))
	}
	// Every reward branch occurs.
	for _, br := range []train.FTRLBranch{train.BranchCalls, train.BranchEmpty, train.BranchLeak, train.BranchAnswer, train.BranchSolvedAlready, train.BranchOther} {
		if sum.Branches[br] == 0 {
			t.Errorf("branch %s never occurred: %v", br, sum.Branches)
		}
	}

	// The parquet read back equals samples.jsonl row for row, and every
	// JSON column decodes as FTRL's code expects.
	recs, err := dataset.ReadFTRLParquetFile(filepath.Join(a, FileParquet))
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines[ftrlJSONL](t, filepath.Join(a, FileSamples))
	if len(recs) != len(lines) || len(recs) != all.Samples {
		t.Fatalf("%d parquet rows, %d jsonl lines, %d samples", len(recs), len(lines), all.Samples)
	}
	for i, r := range recs {
		l := lines[i]
		got := ftrlJSONL{Messages: r.Messages, Tools: r.Tools, Codes: r.Codes, UnsolvedSet: r.UnsolvedSet, SolveRate: r.SolveRate, DataSource: r.DataSource, Split: r.Split, Answer: r.Answer}
		if diff := cmp.Diff(l, got); diff != "" {
			t.Fatalf("row %d (-jsonl +parquet):\n%s", i, diff)
		}
		if r.ExtraInfo.Index != int64(i) || r.Split != "train" || !strings.HasPrefix(r.DataSource, "weft-ftrl/") {
			t.Errorf("row %d: extra_info %+v split %q source %q", i, r.ExtraInfo, r.Split, r.DataSource)
		}
		var tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		}
		var codes map[string]string
		var uns train.UnsolvedSet
		if err := json.Unmarshal([]byte(r.Tools), &tools); err != nil || len(tools) == 0 {
			t.Fatalf("row %d tools: %v", i, err)
		}
		if err := json.Unmarshal([]byte(r.Codes), &codes); err != nil || len(codes) != len(tools) {
			t.Fatalf("row %d codes (%d for %d tools): %v", i, len(codes), len(tools), err)
		}
		for _, tl := range tools {
			if tl.Type != "function" || !strings.Contains(codes[tl.Function.Name], "def "+tl.Function.Name+"(") {
				t.Errorf("row %d: tool %s has no implementation", i, tl.Function.Name)
			}
		}
		if err := json.Unmarshal([]byte(r.UnsolvedSet), &uns); err != nil {
			t.Fatalf("row %d unsolved_set: %v", i, err)
		}
		if !strings.HasPrefix(r.UnsolvedSet, `{"`) || strings.Contains(r.UnsolvedSet, `":[`) {
			t.Errorf("row %d unsolved_set %q is not json.dumps text", i, r.UnsolvedSet)
		}
	}
	// Within each episode's samples the unsolved_set only shrinks and
	// solve_rate only grows.
	for i := 1; i < len(recs); i++ {
		p, q := recs[i-1], recs[i]
		if q.ExtraInfo.Variant != p.ExtraInfo.Variant || q.ExtraInfo.Step == 0 {
			continue
		}
		var pu, qu train.UnsolvedSet
		_ = json.Unmarshal([]byte(p.UnsolvedSet), &pu)
		_ = json.Unmarshal([]byte(q.UnsolvedSet), &qu)
		if q.ExtraInfo.Step != p.ExtraInfo.Step+1 || qu.Count() > pu.Count() || q.SolveRate < p.SolveRate || len(q.Messages) <= len(p.Messages) {
			t.Errorf("rows %d -> %d: step %d -> %d, unsolved %d -> %d, rate %v -> %v", i-1, i, p.ExtraInfo.Step, q.ExtraInfo.Step, pu.Count(), qu.Count(), p.SolveRate, q.SolveRate)
		}
	}

	// GRPO groups: G segments per prefix, advantages = GroupAdvantages of
	// the rewards, figures as in the summary.
	segs, err := dataset.ReadRLJSONL(mustOpen(t, filepath.Join(a, FileSegments)))
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 4*all.Samples || all.Groups != all.Samples {
		t.Fatalf("%d segments for %d samples (G=4), %d groups", len(segs), all.Samples, all.Groups)
	}
	// Recount per scenario type (a group's type: its prefix's row in the
	// parquet) and over all: groups with a non-zero advantage and the
	// reward histogram.
	typeOf := map[string]string{}
	for _, r := range recs {
		typeOf[r.ExtraInfo.SampleID] = r.ExtraInfo.ScenarioType
	}
	nonzeroOf := map[string]int{}
	histOf := map[string]map[string]int{}
	for g := 0; g < len(segs); g += 4 {
		typ, ok := typeOf[segs[g].GroupID]
		if !ok {
			t.Fatalf("group %s has no prefix in the parquet", segs[g].GroupID)
		}
		rs := make([]float64, 4)
		for i := range rs {
			rs[i] = segs[g+i].Reward
			for _, k := range []string{typ, "all"} {
				if histOf[k] == nil {
					histOf[k] = map[string]int{}
				}
				histOf[k][strconv.FormatFloat(rs[i], 'g', 4, 64)]++
			}
			if segs[g+i].GroupID != segs[g].GroupID {
				t.Fatalf("segment %d in group %s, want %s", g+i, segs[g+i].GroupID, segs[g].GroupID)
			}
		}
		adv := train.GroupAdvantages(rs, 0)
		nz := false
		for i, x := range adv {
			if segs[g+i].Advantage != x {
				t.Errorf("group %s candidate %d: advantage %v, want %v", segs[g].GroupID, i, segs[g+i].Advantage, x)
			}
			nz = nz || x != 0
		}
		if nz {
			nonzeroOf[typ]++
			nonzeroOf["all"]++
		}
	}
	nonzero := nonzeroOf["all"]
	if nonzero == 0 || nonzero != all.NonZero || sum.NonZeroShare != float64(nonzero)/float64(all.Groups) {
		t.Errorf("non-zero groups %d (share %v), recounted %d", all.NonZero, sum.NonZeroShare, nonzero)
	}
	for _, k := range append(scenarioTypeNames(), "all") {
		c := sum.Types[k]
		if c.NonZero != nonzeroOf[k] {
			t.Errorf("%s: %d groups with a non-zero advantage, recounted %d", k, c.NonZero, nonzeroOf[k])
		}
		if diff := cmp.Diff(histOf[k], c.Rewards); diff != "" || len(c.Rewards) < 2 {
			t.Errorf("%s: reward histogram (-recount +summary):\n%s", k, diff)
		}
	}
	// 4/3 and 1.5 (two or three answers in one turn) only in parallel types.
	for _, k := range []string{string(SingleHop), string(MultiHop)} {
		if histOf[k]["1.333"]+histOf[k]["1.5"] != 0 {
			t.Errorf("%s: a reward above 1 in a sequential type: %v", k, histOf[k])
		}
	}
	t.Logf("n -> m %d -> %d; %d servers, %d tools; %d samples; %d of %d groups non-zero; branches %v", n, m, all.Servers, all.DeployedTools, all.Samples, nonzero, all.Groups, sum.Branches)
}

func scenarioTypeNames() []string {
	var out []string
	for _, t := range ScenarioTypes {
		out = append(out, string(t))
	}
	return out
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Bad options and unreadable databases are refused before anything is
// written: an existing output directory keeps its files.
func TestRunBadInput(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	keep := filepath.Join(out, FileScenarios)
	if err := os.WriteFile(keep, []byte("earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := testOptions(out, 1)
	bad.Faults.EmptyReply = 1.5
	noDB := testOptions(out, 1)
	noDB.RetailSeed, noDB.AirlineSeed = "", ""
	missing := testOptions(out, 1)
	missing.RetailSeed = filepath.Join(t.TempDir(), "none.json")
	wrong := testOptions(out, 1)
	wrong.AirlineSeed = retailSeed
	for _, c := range []struct {
		name string
		o    Options
		msg  string
	}{
		{"fault rate", bad, "ftrl: fault rate empty_reply = 1.5, want a probability in [0, 1]"},
		{"no database", noDB, "ftrl: no database: set the retail or airline seed"},
		{"missing seed", missing, "ftrl: reading seed: open "},
		{"wrong seed", wrong, `airline seed has no "reservations" rows`},
		{"no output", Options{RetailSeed: retailSeed}, "ftrl: no output directory"},
	} {
		_, err := Run(ctx, c.o)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.msg)
		}
		if b, _ := os.ReadFile(keep); string(b) != "earlier run\n" {
			t.Fatalf("%s: the existing output was overwritten: %q", c.name, b)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("%d entries in the output directory, want the 1 kept", len(ents))
	}
}

// The endpoint variant: the model's natural question and descriptions
// replace the templates; an answer that drops an id is refused and
// changes nothing.
func TestEndpointWriter(t *testing.T) {
	r, _ := worlds(t)
	sc := chainScenario()
	docs := []Tool{Document(r, sc.SubQuestions[0]), Document(r, sc.SubQuestions[1]), Document(r, sc.SubQuestions[2])}
	good := `{"question": "Hi, I'm noah_brown_6181 - how much was the first thing in my last order?", "descriptions": {"get_user_latest_order": "Finds a user's most recent order.", "get_order_first_item": "Gives an order's first item.", "get_item_price": "Gives an item's price."}}`
	srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Text(good), modeltest.Text(`{"question": "How much was it?", "descriptions": {}}`)))
	c, err := model.NewClient(model.ClientConfig{BaseURL: srv.URL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	w := &EndpointWriter{Model: c, Strict: true}
	if err := w.Rewrite(context.Background(), sc, docs); err != nil {
		t.Fatal(err)
	}
	if sc.Question != "Hi, I'm noah_brown_6181 - how much was the first thing in my last order?" || docs[2].Description != "Gives an item's price." || docs[0].Description != "Finds a user's most recent order." {
		t.Errorf("rewrite: %q %+v", sc.Question, docs)
	}
	rf, _ := srv.Requests()[0].Body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != "ftrl_rewrite" || js["strict"] != true {
		t.Errorf("response_format %v", rf)
	}
	before, beforeDocs := *sc, append([]Tool(nil), docs...)
	err = w.Rewrite(context.Background(), sc, docs)
	if !errors.Is(err, ErrRewrite) || !strings.Contains(err.Error(), `the question lost the id "noah_brown_6181"`) {
		t.Errorf("bad answer: err = %v", err)
	}
	if !cmp.Equal(before, *sc) || !cmp.Equal(beforeDocs, docs) {
		t.Errorf("a refused rewrite changed the scenario")
	}
}
