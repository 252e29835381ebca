package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/task"
)

const airlineTools = "../../../examples/data/tau2-airline/tools.json"

func airlineDocs(t testing.TB) synth.Docs {
	t.Helper()
	b, err := os.ReadFile(airlineTools)
	if err != nil {
		t.Fatal(err)
	}
	d, err := synth.ParseTau2Tools(b, "airline", airlineTools)
	if err != nil {
		t.Fatal(err)
	}
	return *d
}

// BenchFaults are the scripted policy's faults of the benchmark.
var benchFaults = scripted.Faults{WrongArgument: 0.08, SkipStep: 0.05, ExtraCall: 0.05, HallucinatedTool: 0.04, MalformedCall: 0.04, EarlyStop: 0.04}

// The representative slice of the planted-defect benchmark: two airline
// servers synthesized from tau2's tools.json, 14 defects (6 environment, 4
// task, 4 verifier) mixed with the scripted policy's faults, 3 rounds with a
// budget of 5 revisions each. Every applied revision targets a planted
// defect, nothing regresses, the non-policy tool error rate falls every
// round, every defect is fixed by round 3, and policy failures are counted
// and never revised.
func TestEvolveBenchSlice(t *testing.T) {
	ctx := context.Background()
	b, err := Plant(ctx, airlineDocs(t), BenchOptions{Servers: 2})
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]int{}
	for _, d := range b.Defects {
		byKind[d.Kind]++
	}
	want := map[string]int{DefectWrongPrecondition: 4, DefectMissingEffect: 2, DefectStaleBinding: 4, DefectContradictedCheck: 2, DefectKeywordCheck: 2}
	for k, n := range want {
		if byKind[k] != n {
			t.Errorf("planted %d %s, want %d (all: %v)", byKind[k], k, n, byKind)
		}
	}
	res, err := Run(ctx, b.System, Options{Rounds: 3, Budget: 5, Faults: benchFaults, PolicySeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 4 || res.Rounds[3].Revise {
		t.Fatalf("%d rounds, last revise %v; want 3 revising rounds and the final measurement", len(res.Rounds), res.Rounds[len(res.Rounds)-1].Revise)
	}
	sc := b.Score(res)
	for i, rd := range res.Rounds {
		tried := 0
		for _, v := range res.Revisions {
			if v.Round == rd.Round {
				tried++
			}
		}
		if tried > 5 {
			t.Errorf("round %d tried %d revisions over a budget of 5", rd.Round, tried)
		}
		if i > 0 && !(report.RateOr0(rd.ToolErrorRate) < report.RateOr0(res.Rounds[i-1].ToolErrorRate)) {
			t.Errorf("round %d: non-policy tool error rate %.4f did not fall from %.4f", rd.Round, report.RateOr0(rd.ToolErrorRate), report.RateOr0(res.Rounds[i-1].ToolErrorRate))
		}
		if rd.PassRate == nil || rd.ToolErrorRate == nil || *rd.PassRate != float64(rd.Passed)/float64(rd.Episodes) ||
			*rd.ToolErrorRate != float64(rd.NonPolicyToolErrors)/float64(rd.ToolCalls) {
			t.Errorf("round %d: rates %v, %v for %d/%d passed, %d/%d calls failed", rd.Round, rd.PassRate, rd.ToolErrorRate, rd.Passed, rd.Episodes, rd.NonPolicyToolErrors, rd.ToolCalls)
		}
		if len(rd.Regressed) != 0 {
			t.Errorf("round %d: regressed %v", rd.Round, rd.Regressed)
		}
		if rd.Attributions[attribute.ClassPolicy] == 0 {
			t.Errorf("round %d: no policy failure: the scripted faults are not mixed in", rd.Round)
		}
	}
	if report.RateOr0(res.Rounds[0].ToolErrorRate) < 0.05 || report.RateOr0(res.Rounds[3].ToolErrorRate) != 0 {
		t.Errorf("non-policy tool error rate %.4f before, %.4f after: want the planted tools to show and then be gone", report.RateOr0(res.Rounds[0].ToolErrorRate), report.RateOr0(res.Rounds[3].ToolErrorRate))
	}
	for _, rs := range sc.Rounds {
		if rs.Precision == nil || *rs.Precision != 1 {
			t.Errorf("round %d: precision %v (%d of %d applied on target)", rs.Round, rs.Precision, rs.OnTarget, rs.Applied)
		}
	}
	last := sc.Rounds[2]
	if last.FixedShare != 1 || last.Fixed[attribute.ClassEnvironment] != 6 || last.Fixed[attribute.ClassTask] != 4 || last.Fixed[attribute.ClassVerifier] != 4 {
		t.Errorf("after round 3: fixed %v (share %.2f)", last.Fixed, last.FixedShare)
	}
	if sc.Rounds[0].FixedShare >= 1 {
		t.Errorf("round 1 fixed everything under a budget of 5: the rounds show nothing")
	}
	for _, v := range res.Revisions {
		if v.Class == attribute.ClassPolicy || v.Status != StatusApplied {
			t.Errorf("revision %+v: want only applied non-policy revisions on this benchmark", v)
		}
		if v.Class == attribute.ClassEnvironment && (v.From == v.To || !strings.HasPrefix(v.To, "sha256:")) {
			t.Errorf("environment revision %s: digest %s -> %s", v.Component, v.From, v.To)
		}
	}
	// Nothing edited in place: the planted system still holds its
	// defects, and every revised task is a new version.
	if b.Score(&Result{Snapshots: []*System{b.System}}).Rounds[0].FixedShare != 0 {
		t.Error("the input system was changed")
	}
	for _, nt := range res.History {
		if nt.Version < 1 || nt.Meta["revision"] == nil {
			t.Errorf("task %s version %d without revision evidence", nt.ID, nt.Version)
		}
	}
}

// A clean system under heavy policy faults: failures are the policy's, and
// nothing is revised.
func TestPolicyFailuresNotRevised(t *testing.T) {
	ctx := context.Background()
	b, err := Plant(ctx, airlineDocs(t), BenchOptions{Servers: 1, Env: -1, Task: -1, Verifier: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Defects) != 0 {
		t.Fatalf("planted %d defects", len(b.Defects))
	}
	f := scripted.Faults{WrongArgument: 0.3, SkipStep: 0.2, EarlyStop: 0.1}
	res, err := Run(ctx, b.System, Options{Rounds: 1, Faults: f, PolicySeed: 3, Episodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	rd := res.Rounds[0]
	if rd.Attributions[attribute.ClassPolicy] < 5 || report.RateOr0(rd.PassRate) > 0.8 || len(res.Revisions) != 0 || rd.NonPolicyToolErrors != 0 {
		t.Errorf("policy %d, pass rate %.2f, revisions %d, non-policy errors %d", rd.Attributions[attribute.ClassPolicy], report.RateOr0(rd.PassRate), len(res.Revisions), rd.NonPolicyToolErrors)
	}
}

// A revision that removes the symptom but makes things worse is rolled
// back and recorded: the scripted synthesizer answers a baggage tool that
// no longer refuses reservation_4 but writes nothing, so the two baggage
// tasks that certified stop certifying.
func TestRollbackWorse(t *testing.T) {
	ctx := context.Background()
	b, err := Plant(ctx, airlineDocs(t), BenchOptions{Servers: 1, Env: -1, Task: -1, Verifier: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := b.System.Servers[0]
	const tool = "update_reservation_baggages"
	s, e, ok := funcSpan(srv.Spec.Program, tool)
	if !ok {
		t.Fatal("no baggage function")
	}
	fn := srv.Spec.Program[s:e]
	i := strings.Index(fn, "    return ")
	// Refuse only the reservation one of the tasks is bound to.
	var target string
	for _, tk := range b.System.Tasks {
		if strings.HasSuffix(tk.ID, tool+".1") {
			target = tk.Atomic[0].Bindings["reservation_id"]
		}
	}
	planted := fn[:i] + "    if _a.get(\"reservation_id\") == \"" + target + "\":\n        _err(\"conflict\", \"not allowed\")\n" + fn[i:]
	bad := *srv.Spec
	bad.Program = srv.Spec.Program[:s] + planted + srv.Spec.Program[e:]
	// The scripted answer: no refusal, and no write either.
	answer := *srv.Spec
	answer.Program = srv.Spec.Program[:s] + strings.Replace(fn, "return _update(", "return _noeffect_update(", 1) + srv.Spec.Program[e:] + noEffectHelpers
	sj, err := json.Marshal(&answer)
	if err != nil {
		t.Fatal(err)
	}
	script, err := json.Marshal(synth.Script{Format: synth.ScriptFormat, Answers: []synth.ScriptAnswer{{Docs: srv.Docs.Name, Round: 1, Server: sj, Fault: "drops the write"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	syn, err := synth.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := &System{Servers: []*Server{{Spec: &bad, Docs: srv.Docs}}, Tasks: b.System.Tasks}
	res, err := Run(ctx, sys, Options{Rounds: 1, Synthesizer: syn, Classes: []attribute.Class{attribute.ClassEnvironment}, PolicySeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Revisions) != 1 {
		t.Fatalf("revisions %+v", res.Revisions)
	}
	v := res.Revisions[0]
	if v.Status != StatusRolledBack || v.Component != "server:"+bad.Name+"/tool:"+tool || v.To == v.From || !strings.Contains(v.Detail, "makes things worse") {
		t.Errorf("revision %+v", v)
	}
	if res.System.Servers[0].Spec.Program != bad.Program || res.Rounds[0].RolledBack[attribute.ClassEnvironment] != 1 || len(res.Rounds[1].Regressed) != 0 {
		t.Errorf("the rolled-back server was kept: rolled back %v, regressed %v", res.Rounds[0].RolledBack, res.Rounds[1].Regressed)
	}
	// The task class was not allowed: the finding stays, unrevised.
	if res.Rounds[0].Unrevised == 0 || res.Rounds[1].Certified != res.Rounds[0].Certified {
		t.Errorf("unrevised %d, certified %d -> %d", res.Rounds[0].Unrevised, res.Rounds[0].Certified, res.Rounds[1].Certified)
	}
}

// Bad options are typed errors and the system is left as it was.
func TestOptionsErrors(t *testing.T) {
	ctx := context.Background()
	ts := []*task.Task{{ID: "x", Modules: []string{"nope"}, Brief: "b"}}
	for name, c := range map[string]struct {
		sys  *System
		opts Options
	}{
		"policy class":   {&System{Servers: []*Server{{Spec: nil}}}, Options{Classes: []attribute.Class{attribute.ClassPolicy}}},
		"no servers":     {&System{}, Options{}},
		"unknown module": {&System{Servers: []*Server{mustSpec(t)}, Tasks: ts}, Options{}},
		"negative":       {&System{}, Options{Budget: -1}},
	} {
		if _, err := Run(ctx, c.sys, c.opts); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: err %v, want ErrOptions", name, err)
		}
	}
	if ts[0].Version != 0 || len(ts) != 1 {
		t.Error("the tasks changed")
	}
}

func mustSpec(t *testing.T) *Server {
	t.Helper()
	s, err := (&synth.Deterministic{}).Synthesize(context.Background(), &synth.Request{Docs: airlineDocs(t)})
	if err != nil {
		t.Fatal(err)
	}
	return &Server{Spec: s}
}
