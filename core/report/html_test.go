package report

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/attribute"
)

func fixtureReport() ReportData {
	eps := fixtureEpisodes()
	sft, grpo := fixtureSFT(), fixtureGRPO()
	m := Compute(eps, sft, grpo, 2)
	m.Settings = &Settings{Config: "retail.hcl", Stages: []string{"import", "rollout"}, Tasks: 2, EpisodesPerTask: 4, Seed: 7,
		Policy:   PolicySettings{Name: "scripted", Kind: "scripted", FaultSeed: 1, Faults: map[string]float64{"wrong_argument": 0.08}},
		Mix:      []MixSetting{{View: "agentic", Harness: "react", Weight: 1}, {View: "simuser", Harness: "native", Weight: 2}},
		Verifier: "exec", Basis: "tau2", Attributor: "rules",
		FailedGoldActions: []TaskFailedActions{{Task: "64", Actions: []string{"#6 exchange_delivered_order_items: Non-delivered order cannot be exchanged"}, DroppedAtomic: 1}}}
	m.Rounds = fixtureRounds()
	return ReportData{Title: "retail smoke", Config: "configs/retail.hcl", GeneratedAt: "2026-01-02 03:04:05 UTC",
		Metrics: m, Episodes: eps, SFT: sft, GRPO: grpo}
}

// wantChartTexts are the text labels of each chart of fixtureReport, in
// document order: bar charts give label then value per bar, column charts
// count then label per column.
var wantChartTexts = map[string][]string{
	ChartPassRate: {"agentic × react", "50.0% (2/4)", "simuser × native", "66.7% (2/3)"},
	ChartScoreHistogram: {"1", "0.0–0.1", "0", "0.1–0.2", "1", "0.2–0.3", "0", "0.3–0.4", "0", "0.4–0.5",
		"1", "0.5–0.6", "0", "0.6–0.7", "0", "0.7–0.8", "0", "0.8–0.9", "4", "0.9–1.0"},
	ChartToolErrorRate:       {"native", "12.5% (1/8)", "react", "25.0% (4/16)"},
	ChartAttributions:        {"policy", "2", "environment", "1", "task", "0", "verifier", "1"},
	ChartRejectionAttempts:   {"4", "1", "1", "2", "1", "3"},
	ChartRoundsToolErrorRate: {"round 1", "20.0%", "round 2", "12.5%", "round 3", "3.0%", "after 3", "0.0%"},
	ChartRoundsPassRate:      {"round 1", "80.0%", "round 2", "75.0%", "round 3", "85.0%", "after 3", "90.0%"},
}

// fixtureRounds are three self-evolution rounds and the measurement after
// them.
func fixtureRounds() []Round {
	f := func(x float64) *float64 { return &x }
	zero := map[attribute.Class]int{}
	return []Round{
		{Round: 1, Revise: true, Tasks: 10, Certified: 6, Episodes: 20, Passed: 16, PassRate: f(0.8), ToolCalls: 100, NonPolicyToolErrors: 20, ToolErrorRate: f(0.2),
			Attributions: map[attribute.Class]int{attribute.ClassPolicy: 3, attribute.ClassTask: 2}, Findings: 5,
			Applied: map[attribute.Class]int{attribute.ClassEnvironment: 2, attribute.ClassTask: 1}, RolledBack: map[attribute.Class]int{attribute.ClassEnvironment: 1}, Discarded: zero, Regressed: []string{}},
		{Round: 2, Revise: true, Tasks: 10, Certified: 8, Episodes: 20, Passed: 15, PassRate: f(0.75), ToolCalls: 80, NonPolicyToolErrors: 10, ToolErrorRate: f(0.125),
			Attributions: map[attribute.Class]int{attribute.ClassPolicy: 5}, Findings: 2, Applied: map[attribute.Class]int{attribute.ClassVerifier: 2}, RolledBack: zero, Discarded: zero, Regressed: []string{}},
		{Round: 3, Revise: true, Tasks: 9, Certified: 9, Episodes: 20, Passed: 17, PassRate: f(0.85), ToolCalls: 100, NonPolicyToolErrors: 3, ToolErrorRate: f(0.03),
			Attributions: map[attribute.Class]int{attribute.ClassPolicy: 3}, Findings: 1, Applied: map[attribute.Class]int{attribute.ClassTask: 1}, RolledBack: zero, Discarded: zero, Regressed: []string{}},
		{Round: 4, Tasks: 9, Certified: 9, Episodes: 20, Passed: 18, PassRate: f(0.9), ToolCalls: 90, NonPolicyToolErrors: 0, ToolErrorRate: f(0),
			Attributions: map[attribute.Class]int{attribute.ClassPolicy: 2}, Applied: zero, RolledBack: zero, Discarded: zero, Regressed: []string{}},
	}
}

var textRE = regexp.MustCompile(`(?s)<text\b[^>]*>(.*?)</text>`)

// chartTexts returns the <svg id=id> element of doc (HTML as written or as
// serialized by a browser) and the unescaped contents of its <text>
// elements; ok is false when there is no such svg.
func chartTexts(doc, id string) (svg string, texts []string, ok bool) {
	i := strings.Index(doc, `<svg id="`+id+`"`)
	if i < 0 {
		return "", nil, false
	}
	j := strings.Index(doc[i:], "</svg>")
	if j < 0 {
		return "", nil, false
	}
	svg = doc[i : i+j+len("</svg>")]
	for _, m := range textRE.FindAllStringSubmatch(svg, -1) {
		texts = append(texts, html.UnescapeString(m[1]))
	}
	return svg, texts, true
}

// checkReportDOM checks every chart of fixtureReport and the key table
// numbers in doc.
func checkReportDOM(t *testing.T, doc string) {
	t.Helper()
	for id, want := range wantChartTexts {
		svg, got, ok := chartTexts(doc, id)
		if !ok {
			t.Errorf("no <svg id=%q>", id)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("chart %s labels (-want +got):\n%s", id, d)
		}
		// One bar or column per value, as rects.
		if n, want := strings.Count(svg, "<rect"), len(want)/2; n != want {
			t.Errorf("chart %s has %d rects, want %d", id, n, want)
		}
	}
	for _, s := range []string{
		"<title>retail smoke</title>", "configs/retail.hcl", "2026-01-02 03:04:05 UTC",
		"<td class=\"num\">57.1%</td>",         // overall pass rate 4/7
		"<td class=\"num\">0.679</td>",         // mean score 4.75/7
		"<td class=\"num\">20.8% (5/24)</td>",  // tool error rate
		"<td class=\"num\">0.444 / 0.444</td>", // pass@1 / pass^1
		"<td class=\"num\">1.000 / 0.333</td>", // pass@2 / pass^2
		"<td>1.00 1.00 0.50</td>",              // t1 agentic react scores by sample
		"<td>infra 0.00</td>",                  // t2: an infra failure, then 0
		"<td class=\"num\">4 (10.0%)</td>",     // GRPO masked segments
		"plugin_crash: harness exited",         // the infra episode
		"<td>policy: a1; environment: a2</td>", // t2's attributions
		"<tr><th>SFT records (prefixes included)</th><td class=\"num\">3</td></tr>",
		"<td class=\"num\">6</td>", // GRPO non-zero groups
		// Self-evolution: round 1's row, the final measurement's.
		"<td>1</td><td class=\"num\">10 (6)</td><td class=\"num\">20</td><td class=\"num\">80.0% (16/20)</td><td class=\"num\">20.0% (20/100)</td><td>policy 3, task 2</td><td class=\"num\">5</td><td>environment 2, task 1</td><td>environment 1</td><td>0</td><td></td>",
		"<td>4 (after the last round)</td>",
		// Why did it fail: the policy in plain words, the settings, the
		// infra reasons, no task blamed, the detectors, the evidence.
		"scripted fault injector, not a model: it follows each task", // (quotes escape differently in a browser)
		"plants faults (per-step fault rates wrong_argument 0.08; seed 1)",
		`<tr><th>Mix (view × harness: weight)</th><td>agentic × react: 1, simuser × native: 2</td></tr>`,
		`basis <strong id="verifier-basis">tau2</strong> — the overall checkpoint holds the checks of each tau2 task`,
		"judge: none (rubric items not scored)",
		"<tr><td>64</td><td>#6 exchange_delivered_order_items: Non-delivered order cannot be exchanged</td><td class=\"num\">1</td></tr>",
		`<tr><td>plugin_crash</td><td class="num">1</td><td>t2/agentic/react/p/0</td><td>harness exited</td></tr>`,
		"None: no failed checkpoint was attributed to a task.",
		`<tr><td>forbidden_tool</td><td class="num">1</td></tr>`,
		`<tr><td>repeated_call</td><td class="num">3</td></tr>`,
		"<summary>4 attributions (environment, task and verifier first, then policy)</summary>",
		`<tr><td>t1/simuser/native/p/1</td><td>a1</td><td>verifier</td><td>verifier</td><td>ledger call #1</td></tr>`,
	} {
		if !strings.Contains(doc, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	perTask := tableOf(doc, "table-per-task")
	if n := strings.Count(perTask, "<tr><td>t1</td>") + strings.Count(perTask, "<tr><td>t2</td>"); n != 3 {
		t.Errorf("per-task table has %d rows, want 3", n)
	}
	// pass@k and pass^k per task over all its episodes (t1: 4 of 6 passed).
	want := "<tr><td>t1</td><td class=\"num\">6</td><td class=\"num\">4/6</td><td>1: 0.667, 2: 0.933</td><td>1: 0.667, 2: 0.400</td></tr>" +
		"\n<tr><td>t2</td><td class=\"num\">2</td><td class=\"num\">0/1</td><td>1: 0.000</td><td>1: 0.000</td></tr>"
	if got := tableOf(doc, "table-task-passk"); !strings.Contains(got, want) {
		t.Errorf("task pass^k table:\n%s\nlacks\n%s", got, want)
	}
	for _, s := range []string{
		"per task over all its episodes (mean over 2 tasks)</th><td class=\"num\">0.333 / 0.333</td>",
		"per task over all its episodes (mean over 1 tasks)</th><td class=\"num\">0.933 / 0.400</td>",
		"<td>1: 0.333, 2: 1.000</td><td>1: 0.333, 2: 0.333</td>", // agentic x react pass@k, pass^k
	} {
		if !strings.Contains(doc, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

// tableOf returns the HTML of the table with the given id ("" if none).
func tableOf(doc, id string) string {
	i := strings.Index(doc, `<table id="`+id+`">`)
	if i < 0 {
		return ""
	}
	j := strings.Index(doc[i:], "</table>")
	if j < 0 {
		return doc[i:]
	}
	return doc[i : i+j]
}

func TestWriteHTMLCharts(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	checkReportDOM(t, buf.String())
	// Deterministic: the same data gives the same bytes.
	var again bytes.Buffer
	if err := WriteHTML(&again, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two renderings of the same data differ")
	}
}

// TestWriteHTMLSelfContained: nothing to fetch. No URL, no external
// reference of any kind, no script.
func TestWriteHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	doc := strings.ToLower(buf.String())
	for _, s := range []string{"http://", "https://", "//", "<script", "<link", "<img", "<iframe", "@import", "url(", "src=", "href="} {
		if strings.Contains(doc, s) {
			t.Errorf("report contains %q", s)
		}
	}
}

func TestWriteHTMLEscapesAndEmpty(t *testing.T) {
	e := ep(`<b>"t&1"</b>`, "agentic", "react", 0, f(0), 1, 1, attribute.Class("<i>odd</i>"))
	r := ReportData{Title: "<script>alert(1)</script>", Metrics: Compute([]Episode{e}, nil, nil, 1), Episodes: []Episode{e}}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, bad := range []string{"<script>", "<b>", "<i>odd"} {
		if strings.Contains(doc, bad) {
			t.Errorf("unescaped %q in report", bad)
		}
	}
	// An unknown class gets its own bar after the four classes.
	if _, got, _ := chartTexts(doc, ChartAttributions); !cmp.Equal(got, []string{"policy", "0", "environment", "0", "task", "0", "verifier", "0", "<i>odd</i>", "1"}) {
		t.Errorf("attribution labels = %q", got)
	}
	// No SFT stage: no attempts chart, a note instead; no GRPO table.
	if _, _, ok := chartTexts(doc, ChartRejectionAttempts); ok {
		t.Error("attempts chart rendered without an SFT stage")
	}
	for _, s := range []string{"No rejection-sampling stage in this run.", "No GRPO stage in this run."} {
		if !strings.Contains(doc, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	// A report of nothing still renders its charts, with "no data".
	buf.Reset()
	if err := WriteHTML(&buf, ReportData{Title: "empty", Metrics: Compute(nil, nil, nil, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, got, ok := chartTexts(buf.String(), ChartPassRate); !ok || !cmp.Equal(got, []string{"no data"}) {
		t.Errorf("empty pass-rate chart labels = %q (ok %v)", got, ok)
	}
}

// TestRoundRates: a Round's rates are nil on an empty denominator (null in
// evolve.json and metrics.json alike) and RateOr0 prints them as 0.
func TestRoundRates(t *testing.T) {
	if r := RoundRate(1, 4); r == nil || *r != 0.25 {
		t.Errorf("RoundRate(1, 4) = %v", r)
	}
	if r := RoundRate(3, 0); r != nil {
		t.Errorf("RoundRate(3, 0) = %v, want nil", *r)
	}
	if RateOr0(nil) != 0 || RateOr0(RoundRate(1, 2)) != 0.5 {
		t.Errorf("RateOr0: %v %v", RateOr0(nil), RateOr0(RoundRate(1, 2)))
	}
	b, err := json.Marshal(Round{Round: 2, Unrevised: 3, PassRate: RoundRate(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"round":2`, `"pass_rate":null`, `"tool_calls":0`, `"non_policy_tool_errors":0`, `"unrevised":3`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}
