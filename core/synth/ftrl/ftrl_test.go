package ftrl

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/train"
)

const (
	retailSeed  = "../../../examples/servers/tau2-retail/seed.json"
	airlineSeed = "../../../examples/servers/tau2-airline/seed.json"
)

var (
	worldsOnce        sync.Once
	retailW, airlineW *World
	worldsErr         error
)

func worlds(t *testing.T) (*World, *World) {
	t.Helper()
	worldsOnce.Do(func() {
		if retailW, worldsErr = RetailWorld(retailSeed); worldsErr != nil {
			return
		}
		airlineW, worldsErr = AirlineWorld(airlineSeed)
	})
	if worldsErr != nil {
		t.Fatal(worldsErr)
	}
	return retailW, airlineW
}

// The worlds hold the databases' values (checked against the seed files
// read independently: tau2 retail's first user and airline's first user
// by pos, followed by hand).
func TestWorldsGroundedInDatabases(t *testing.T) {
	r, a := worlds(t)
	for _, c := range []struct {
		w    *World
		kind string
		key  []string
		want map[string][]string
	}{
		{r, "user", []string{"noah_brown_6181"}, map[string][]string{"name": {"Noah Brown"}, "latest_order": {"#W7678072"}, "zip": {"80279"}, "city": {"Denver"}, "email": {"noah.brown7922@example.com"}}},
		{r, "order", []string{"#W7678072"}, map[string][]string{"status": {"delivered"}, "first_item": {"2323972008"}, "item_count": {"3"}, "ship_city": {"Denver"}}},
		{r, "item", []string{"2323972008"}, map[string][]string{"price": {"146.98"}, "product": {"1075968781"}, "available": {"true"}}},
		{r, "product", []string{"1075968781"}, map[string][]string{"product_name": {"Electric Kettle"}, "variant_count": {"16"}}},
		{a, "user", []string{"mia_li_3668"}, map[string][]string{"name": {"Mia Li"}, "membership": {"gold"}, "first_reservation": {"NO6JO3"}}},
		{a, "flight_date", []string{"HAT083", "2024-05-16"}, map[string][]string{"flight_status": {"available"}, "flight": {"HAT083"}}},
	} {
		e := c.w.Lookup(c.kind, c.key)
		if e == nil {
			t.Fatalf("%s %s %v: not in the world", c.w.Domain, c.kind, c.key)
		}
		for attr, want := range c.want {
			if !slices.Equal(e.Values[attr], want) {
				t.Errorf("%s %s %v .%s = %q, want %q", c.w.Domain, c.kind, c.key, attr, e.Values[attr], want)
			}
		}
	}
	res := a.Lookup("reservation", []string{"NO6JO3"})
	if res == nil || !slices.Equal(res.Values["first_flight"], []string{"HAT083", "2024-05-16"}) || res.Values["cabin"][0] != "business" || res.Values["origin"][0] != "JFK" {
		t.Errorf("reservation NO6JO3 = %+v", res)
	}
	// Every link resolves (prune dropped dangling ones).
	for _, w := range []*World{r, a} {
		for _, k := range w.Kinds {
			if len(w.Entities[k.Name]) == 0 {
				t.Errorf("%s: no %s entities", w.Domain, k.Name)
			}
			for _, e := range w.Entities[k.Name] {
				for _, at := range k.Attrs {
					if at.Link != "" && w.Lookup(at.Link, e.Values[at.Name]) == nil {
						t.Fatalf("%s %s %v: %s -> %v dangles", w.Domain, k.Name, e.Key, at.Name, e.Values[at.Name])
					}
				}
			}
		}
	}
}

func TestWorldBadSeed(t *testing.T) {
	if _, err := RetailWorld("testdata/missing.json"); err == nil || !strings.Contains(err.Error(), "reading seed") {
		t.Errorf("missing file: err = %v", err)
	}
	if _, err := RetailWorld(airlineSeed); err == nil || !strings.Contains(err.Error(), `retail seed has no "orders" rows`) {
		t.Errorf("airline seed as retail: err = %v", err)
	}
}

// Stage (a): the four types, dependency edges, and answers that follow the
// chain through the database.
func TestDecomposeStructure(t *testing.T) {
	r, a := worlds(t)
	for _, w := range []*World{r, a} {
		scs, err := Decompose(w, 16, "t", rand.New(rand.NewPCG(3, 4)))
		if err != nil {
			t.Fatal(err)
		}
		for i, sc := range scs {
			if sc.Type != ScenarioTypes[i%4] {
				t.Fatalf("%s type %s, want %s", sc.ID, sc.Type, ScenarioTypes[i%4])
			}
			branches := map[int][]SubQuestion{}
			for _, q := range sc.SubQuestions {
				branches[q.Branch] = append(branches[q.Branch], q)
				// The answer is the database's value.
				e := w.Lookup(q.Kind, q.Key)
				if e == nil || strings.Join(e.Values[q.Attr], ", ") != q.Answer {
					t.Fatalf("%s %s: answer %q not the value of %s %v .%s", sc.ID, q.ID, q.Answer, q.Kind, q.Key, q.Attr)
				}
			}
			var last []string
			for b := 0; b < len(branches); b++ {
				br := branches[b]
				for j, q := range br {
					switch {
					case j == 0 && q.DependsOn != "":
						t.Errorf("%s %s: first of a branch depends on %s", sc.ID, q.ID, q.DependsOn)
					case j > 0:
						prev := br[j-1]
						if q.DependsOn != prev.ID || KeyString(q.Key) != prev.Answer {
							t.Errorf("%s %s: depends on %q key %v, want %s's answer %q", sc.ID, q.ID, q.DependsOn, q.Key, prev.ID, prev.Answer)
						}
					}
				}
				last = append(last, br[len(br)-1].Answer)
			}
			if sc.Answer != strings.Join(last, ", ") {
				t.Errorf("%s answer %q, want %q", sc.ID, sc.Answer, strings.Join(last, ", "))
			}
			nb, nq := len(branches), len(sc.SubQuestions)
			ok := map[ScenarioType]bool{
				SingleHop:         nb == 1 && nq == 1,
				ParallelSingleHop: nb >= 2 && nb <= 3 && nq == nb,
				MultiHop:          nb == 1 && nq >= 2,
				ParallelMultiHop:  nb == 2 && nq >= 4,
			}[sc.Type]
			if !ok {
				t.Errorf("%s %s: %d branches, %d sub-questions", sc.ID, sc.Type, nb, nq)
			}
		}
	}
	if _, err := Decompose(&World{Domain: "x", Kinds: []*Kind{{Name: "k"}}}, 1, "x", rand.New(rand.NewPCG(1, 1))); err == nil || err.Error() != "ftrl: x world has no k entities" {
		t.Errorf("empty world: err = %v", err)
	}
}

func TestQuestionText(t *testing.T) {
	r, _ := worlds(t)
	br := []SubQuestion{
		{Kind: "user", Attr: "latest_order", Key: []string{"noah_brown_6181"}},
		{Kind: "order", Attr: "first_item", Key: []string{"#W7678072"}},
		{Kind: "item", Attr: "price", Key: []string{"2323972008"}},
	}
	if got, want := nested(r, br), "What is the price of the first item of the latest order of user noah_brown_6181?"; got != want {
		t.Errorf("nested = %q, want %q", got, want)
	}
}

// Stage (b) and (c): one document per sub-question; documents of one kind
// merge into get_<kind>_details in the kind's attribute order.
func TestDocumentAndIntegrate(t *testing.T) {
	r, _ := worlds(t)
	qs := []SubQuestion{
		{ID: "q0", Kind: "order", Attr: "item_count", Key: []string{"#W1"}},
		{ID: "q1", Kind: "user", Attr: "zip", Key: []string{"u"}},
		{ID: "q2", Kind: "order", Attr: "status", Key: []string{"#W2"}},
		{ID: "q3", Kind: "user", Attr: "zip", Key: []string{"v"}},
	}
	var docs []Tool
	for _, q := range qs {
		docs = append(docs, Document(r, q))
	}
	if docs[0].Name != "get_order_item_count" || docs[1].Name != "get_user_zip" || docs[0].Description != "Get the number of items of a order by its order_id." {
		t.Errorf("documents: %+v", docs[:2])
	}
	in := Integrate(r, "s", docs)
	want := Integration{Scenario: "s", Documents: 4, Tools: []Tool{
		{Name: "get_order_details", Description: "Get the status and number of items of a order by its order_id.", Kind: "order", Attrs: []string{"status", "item_count"}, Keys: []string{"order_id"}, From: []string{"q0", "q2"}},
		{Name: "get_user_zip", Description: "Get the zip code of a user by its user_id.", Kind: "user", Attrs: []string{"zip"}, Keys: []string{"user_id"}, From: []string{"q1", "q3"}},
	}, ToolOf: map[string]string{"q0": "get_order_details", "q1": "get_user_zip", "q2": "get_order_details", "q3": "get_user_zip"}}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("Integrate (-want +got):\n%s", diff)
	}
	fn := in.Tools[0].Function()
	b, _ := json.Marshal(fn)
	if got := string(b); got != `{"function":{"description":"Get the status and number of items of a order by its order_id.","name":"get_order_details","parameters":{"properties":{"order_id":{"description":"The order id, such as '#W0000000' (with the leading #).","type":"string"}},"required":["order_id"],"type":"object"}},"type":"function"}` {
		t.Errorf("Function = %s", got)
	}
}

// Descriptions the endpoint variant rewrote survive stage (c): a merged
// tool carries its documents' distinct descriptions in the kind's
// attribute order; templated documents keep the merged template.
func TestIntegrateKeepsRewrittenDescriptions(t *testing.T) {
	r, _ := worlds(t)
	qs := []SubQuestion{
		{ID: "q0", Kind: "order", Attr: "item_count", Key: []string{"#W1"}},
		{ID: "q1", Kind: "user", Attr: "zip", Key: []string{"u"}},
		{ID: "q2", Kind: "order", Attr: "status", Key: []string{"#W2"}},
		{ID: "q3", Kind: "order", Attr: "status", Key: []string{"#W3"}},
	}
	var docs []Tool
	for _, q := range qs {
		docs = append(docs, Document(r, q))
	}
	for i, d := range []string{"Counts the items in an order.", "Gives a user's zip code.", "Tells where an order stands.", "Tells where an order stands."} {
		docs[i].Description = d
	}
	in := Integrate(r, "s", docs)
	if len(in.Tools) != 2 || in.Tools[0].Name != "get_order_details" || in.Tools[0].Description != "Tells where an order stands. Counts the items in an order." ||
		in.Tools[1].Description != "Gives a user's zip code." {
		t.Errorf("merged tools %+v", in.Tools)
	}
	fn, _ := json.Marshal(in.Tools[0].Function())
	if !strings.Contains(string(fn), `"description":"Tells where an order stands. Counts the items in an order."`) {
		t.Errorf("the merged tool's function schema lost the rewrite: %s", fn)
	}
}

// rewriter is a Writer that marks every document's description.
type rewriter struct{}

func (rewriter) Rewrite(_ context.Context, sc *Scenario, docs []Tool) error {
	for i := range docs {
		docs[i].Description = "Rewritten: " + docs[i].Name + "."
	}
	return nil
}

// Through Run, a rewrite reaches every non-generalized tool of every
// variant, merged tools included, and the tools the samples show.
func TestRunKeepsRewrittenDescriptions(t *testing.T) {
	o := testOptions(t.TempDir(), 3)
	o.Writer, o.G, o.NoServerDirs = rewriter{}, 2, true
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	merged := 0
	for _, v := range readLines[Variant](t, filepath.Join(o.Out, FileScaled)) {
		for _, tl := range v.Tools {
			if tl.Distractor || tl.Selector {
				continue
			}
			if strings.HasSuffix(tl.Name, "_details") {
				merged++
			}
			if !strings.HasPrefix(tl.Description, "Rewritten: get_") {
				t.Errorf("%s: tool %s lost its rewritten description: %q", v.ID, tl.Name, tl.Description)
			}
		}
	}
	if merged == 0 {
		t.Fatal("no merged tool in the run")
	}
	b, err := os.ReadFile(filepath.Join(o.Out, FileSamples))
	if err != nil || !strings.Contains(string(b), `Rewritten: get_`) {
		t.Errorf("samples.jsonl shows no rewritten description (err %v)", err)
	}
}

// Stage (d): each kind's transformation, and ToolOf following renames.
func TestScaleKinds(t *testing.T) {
	r, _ := worlds(t)
	sc := &Scenario{ID: "s", SubQuestions: []SubQuestion{
		{ID: "q0", Kind: "item", Attr: "price", Key: []string{"2323972008"}, Answer: "146.98"},
		{ID: "q1", Kind: "user", Attr: "zip", Key: []string{"noah_brown_6181"}, Answer: "80279"},
	}}
	docs := []Tool{Document(r, sc.SubQuestions[0]), Document(r, sc.SubQuestions[1])}
	in := Integrate(r, "s", docs)
	vs := Scale(r, sc, in, rand.New(rand.NewPCG(1, 2)))
	got := map[ScaleKind]Variant{}
	var kinds []ScaleKind
	for _, v := range vs {
		got[v.Scale] = v
		kinds = append(kinds, v.Scale)
	}
	if !slices.Equal(kinds, ScaleKinds) {
		t.Fatalf("kinds %v, want %v", kinds, ScaleKinds)
	}
	fg := got[FunctionGeneralization]
	if fg.Changes != 2 || fg.Tools[0].Name != "lookup_item" || !fg.Tools[0].Selector || !slices.Equal(fg.Tools[0].Attrs, []string{"price", "product", "available"}) || fg.ToolOf["q0"] != "lookup_item" || fg.ToolOf["q1"] != "lookup_user" {
		t.Errorf("function generalization: %+v", fg)
	}
	if pe := got[ParameterExpansion]; pe.Changes != 2 || !slices.Equal(pe.Tools[1].Optional, []string{OptionalIncludeKind}) {
		t.Errorf("parameter expansion: %+v", pe)
	}
	if tg := got[TypeGeneralization]; tg.Changes != 1 || !slices.Equal(tg.Tools[0].Widened, []string{"item_id"}) || tg.Tools[1].Widened != nil {
		t.Errorf("type generalization: %+v", tg)
	}
	te := got[ToolsetExpansion]
	if te.Changes != maxDistractors || len(te.Tools) != 2+maxDistractors {
		t.Fatalf("toolset expansion: %+v", te)
	}
	for _, d := range te.Tools[2:] {
		if !d.Distractor || d.Name == "get_item_price" || d.Name == "get_user_zip" || len(d.From) != 0 {
			t.Errorf("distractor %+v", d)
		}
	}
	if base := got[Base]; base.Changes != 0 || !cmp.Equal(base.Tools, in.Tools) {
		t.Errorf("base changed: %+v", base)
	}
	// Scaling never edits the integration it starts from.
	if in.Tools[0].Name != "get_item_price" || in.Tools[0].Optional != nil {
		t.Errorf("integration mutated: %+v", in.Tools[0])
	}
}

// Stage (e): every tool of every variant of a small run passes all five
// validation stages, and a deployed tool answers with the database's value
// in the text FTRL would see.
func TestDeployValidates(t *testing.T) {
	r, a := worlds(t)
	ctx := context.Background()
	tools := 0
	for _, w := range []*World{r, a} {
		scs, err := Decompose(w, 4, "v", rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range scs {
			sc := &scs[i]
			var docs []Tool
			for _, q := range sc.SubQuestions {
				docs = append(docs, Document(w, q))
			}
			for _, v := range Scale(w, sc, Integrate(w, sc.ID, docs), rand.New(rand.NewPCG(1, uint64(i)))) {
				d, err := Deploy(ctx, w, sc, &v, rand.New(rand.NewPCG(2, uint64(i))))
				if err != nil {
					t.Fatal(err)
				}
				if !d.Report.Passed {
					t.Fatalf("%s: findings %+v", d.Server.Name, d.Report.Findings)
				}
				for _, st := range d.Report.Stages {
					if st.Status != synth.StatusPassed {
						t.Errorf("%s: stage %s %s", d.Server.Name, st.Stage, st.Status)
					}
				}
				if len(d.Codes) != len(v.Tools) {
					t.Errorf("%s: %d codes for %d tools", d.Server.Name, len(d.Codes), len(v.Tools))
				}
				tools += len(d.Server.Tools)
			}
		}
	}
	if tools < 40 {
		t.Errorf("only %d tools deployed", tools)
	}
}

func deployOne(t *testing.T, w *World, sc *Scenario, kind ScaleKind) *Deployment {
	t.Helper()
	var docs []Tool
	for _, q := range sc.SubQuestions {
		docs = append(docs, Document(w, q))
	}
	for _, v := range Scale(w, sc, Integrate(w, sc.ID, docs), rand.New(rand.NewPCG(1, 1))) {
		if v.Scale == kind {
			d, err := Deploy(context.Background(), w, sc, &v, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if !d.Report.Passed {
				t.Fatalf("%+v", d.Report.Findings)
			}
			return d
		}
	}
	t.Fatalf("no %s variant", kind)
	return nil
}

func chainScenario() *Scenario {
	return &Scenario{ID: "c", Type: MultiHop, Question: "What is the price of the first item of the latest order of user noah_brown_6181?", Answer: "146.98",
		SubQuestions: []SubQuestion{
			{ID: "c-q0", Kind: "user", Attr: "latest_order", Key: []string{"noah_brown_6181"}, Answer: "#W7678072"},
			{ID: "c-q1", Kind: "order", Attr: "first_item", Key: []string{"#W7678072"}, Answer: "2323972008", DependsOn: "c-q0"},
			{ID: "c-q2", Kind: "item", Attr: "price", Key: []string{"2323972008"}, Answer: "146.98", DependsOn: "c-q1"},
		}}
}

// The runner gives FTRL's get_feedback texts: json.dumps of a result, and
// "an error occured when call NAME: MSG" for what FTRL's exec would raise.
func TestRunnerFeedback(t *testing.T) {
	r, _ := worlds(t)
	sc := chainScenario()
	ctx := context.Background()
	for _, c := range []struct {
		kind     ScaleKind
		response string
		want     []string
	}{
		{Base, `<tool_call>{"name": "get_item_price", "arguments": {"item_id": "2323972008"}}</tool_call>`, []string{`{"price": "146.98"}`}},
		{Base, `<tool_call>{"name": "get_item_price", "arguments": {"item_id": "0"}}</tool_call>`, []string{"an error occured when call get_item_price: No item with item_id 0."}},
		{Base, `<tool_call>{"name": "get_item_prices", "arguments": {}}</tool_call>`, []string{"an error occured when call get_item_prices: 'get_item_prices'"}},
		{Base, `<tool_call>{"name": "get_item_price", "arguments": "[1]"}</tool_call>`, []string{"an error occured when call get_item_price: get_item_price() argument after ** must be a mapping"}},
		{FunctionGeneralization, `<tool_call>{"name": "lookup_order", "arguments": {"order_id": "#W7678072", "field": "first_item"}}</tool_call>`, []string{`{"field": "first_item", "item_id": "2323972008"}`}},
		{ParameterExpansion, `<tool_call>{"name": "get_user_latest_order", "arguments": {"user_id": "noah_brown_6181", "include_kind": true}}</tool_call>`, []string{`{"order_id": "#W7678072", "kind": "user"}`}},
		{TypeGeneralization, `<tool_call>{"name": "get_item_price", "arguments": {"item_id": 2323972008}}</tool_call>`, []string{`{"price": "146.98"}`}},
	} {
		d := deployOne(t, r, sc, c.kind)
		env, err := NewEnv(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		parsed := train.ParseFTRLResponse(c.response, train.FTRLCompatible)
		got, err := env.Runner()(ctx, parsed.Calls)
		env.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %s:\n got %q\nwant %q", c.kind, c.response, got, c.want)
		}
	}
}

// A rollout of the fault-free scripted policy solves every sub-question
// in order, saves one sample per prefix with the updated unsolved_set,
// and ends with the correct answer (reward 1/(1+0)).
func TestRolloutFaultFree(t *testing.T) {
	r, _ := worlds(t)
	sc := chainScenario()
	d := deployOne(t, r, sc, Base)
	env, err := NewEnv(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	s0 := InitialSample(sc, d, "weft-ftrl/retail")
	wantU := train.UnsolvedSet{{Tool: "get_user_latest_order", Answers: []string{"#W7678072"}}, {Tool: "get_order_first_item", Answers: []string{"2323972008"}}, {Tool: "get_item_price", Answers: []string{"146.98"}}}
	if !s0.Unsolved.Equal(wantU) {
		t.Fatalf("initial unsolved %v", s0.Unsolved)
	}
	ep, samples, err := Rollout(context.Background(), env, sc, s0, Faults{}, 1, 20, train.FTRLCompatible)
	if err != nil {
		t.Fatal(err)
	}
	var branches []train.FTRLBranch
	var f1 []float64
	for _, s := range ep.Steps {
		branches = append(branches, s.Branch)
		f1 = append(f1, s.Scores.F1)
	}
	if !slices.Equal(branches, []train.FTRLBranch{train.BranchCalls, train.BranchCalls, train.BranchCalls, train.BranchAnswer}) || !slices.Equal(f1, []float64{1, 1, 1, 1}) || !ep.Correct {
		t.Errorf("steps %v rewards %v correct %v", branches, f1, ep.Correct)
	}
	if len(samples) != 4 {
		t.Fatalf("%d samples, want 4 (steps 0..3)", len(samples))
	}
	// Python's 1 - remaining / total in float64 (1 - 2/3 = 0.33333333333333337).
	rates := []float64{0, 0.33333333333333337, 0.6666666666666667, 1}
	for i, s := range samples {
		if s.Step != i || s.SolveRate != rates[i] || s.Unsolved.Count() != 3-i || len(s.Messages) != 1+2*i {
			t.Errorf("sample %d: step %d rate %v unsolved %v messages %d", i, s.Step, s.SolveRate, s.Unsolved, len(s.Messages))
		}
	}
	last := samples[3].Messages
	if last[5].Role != "assistant" || last[5].ToolCalls[0].Function.Name != "get_item_price" || last[5].ToolCalls[0].Function.Arguments != `{"item_id": "2323972008"}` || last[6].Content != `{"price": "146.98"}` || last[6].ToolCallID != last[5].ToolCalls[0].ID {
		t.Errorf("last turn messages %+v", last[5:])
	}
}

// A parallel scenario's ready sub-questions are called in one turn: two
// calls that solve two answers score 2q/(p+1) = 4/3; then the dependent
// sub-question is the only one ready.
func TestNextTurnParallel(t *testing.T) {
	r, _ := worlds(t)
	sc := &Scenario{ID: "p", Type: ParallelMultiHop, Answer: "delivered, 80279",
		SubQuestions: []SubQuestion{
			{ID: "p-q0", Kind: "user", Attr: "latest_order", Key: []string{"noah_brown_6181"}, Answer: "#W7678072"},
			{ID: "p-q1", Kind: "order", Attr: "status", Key: []string{"#W7678072"}, Answer: "delivered", DependsOn: "p-q0"},
			{ID: "p-q2", Kind: "user", Attr: "zip", Key: []string{"noah_brown_6181"}, Answer: "80279", Branch: 1},
		}}
	d := deployOne(t, r, sc, Base)
	env, err := NewEnv(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	s0 := InitialSample(sc, d, "x")
	f := Faults{ParallelCalls: 1}
	resp, what, err := NextTurn(context.Background(), sc, d.Variant, s0.Messages, s0.Unsolved, toolDefs(&s0), f, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "<tool_call>\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"noah_brown_6181\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"noah_brown_6181\"}}\n</tool_call>"
	if resp != want || what != ParallelTurn {
		t.Fatalf("turn %q (%s), want %q", resp, what, want)
	}
	ans := sc.Answer
	res, err := train.FTRLScore(context.Background(), train.FTRLStep{Response: resp, Unsolved: s0.Unsolved, Answer: &ans, Run: env.Runner()}, train.FTRLCompatible)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scores.F1 != 4.0/3 || len(res.Solved) != 2 || res.Unsolved.Count() != 1 {
		t.Errorf("scores %+v solved %v unsolved %v", res.Scores, res.Solved, res.Unsolved)
	}
	if _, ready := Script(sc, d.Variant, res.Unsolved); len(ready) != 1 || ready[0].Tool != "get_order_status" {
		t.Errorf("ready after the parallel turn: %+v", ready)
	}
}
