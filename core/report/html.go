package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
)

// Chart ids: each chart of the HTML report is an <svg> element with one of
// these ids.
const (
	// ChartPassRate: pass rate per view x harness, one bar each, labelled
	// "66.7% (2/3)" (passed / scored).
	ChartPassRate = "chart-pass-rate"
	// ChartScoreHistogram: scored episodes per score bin
	// (Metrics.ScoreHistogram), ten columns labelled with their counts.
	ChartScoreHistogram = "chart-score-histogram"
	// ChartToolErrorRate: tool error rate per harness, labelled
	// "25.0% (1/4)" (errors / calls).
	ChartToolErrorRate = "chart-tool-error-rate"
	// ChartAttributions: attribution records per class, labelled with the
	// counts.
	ChartAttributions = "chart-attributions"
	// ChartRejectionAttempts: atomic turns per number of rejection-sampling
	// attempts (SFTStats.AttemptsHistogram), columns 1..max attempts; only
	// present when ReportData.SFT is set.
	ChartRejectionAttempts = "chart-rejection-attempts"
)

// ReportData is what WriteHTML renders.
type ReportData struct {
	// Title heads the page; Config names the experiment config.
	Title  string
	Config string
	// GeneratedAt is printed as given (the caller formats the time; the
	// report never reads the clock).
	GeneratedAt string
	// Metrics are Compute's result over Episodes, SFT and GRPO.
	Metrics Metrics
	// Episodes are listed one row each, in the order given.
	Episodes []Episode
	// SFT and GRPO are the stages' summaries, nil when a stage did not
	// run.
	SFT  *SFTStats
	GRPO *GRPOStats
}

//go:embed report.html.tmpl
var reportTemplate string

var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"f1":    func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"pct":   pct,
	"score": scoreText,
	"mean": func(f *float64) string {
		if f == nil {
			return "n/a"
		}
		return strconv.FormatFloat(*f, 'f', 3, 64)
	},
	"scores": func(ss []*float64) string {
		parts := make([]string, len(ss))
		for i, s := range ss {
			parts[i] = scoreText(s)
		}
		return strings.Join(parts, " ")
	},
	"attrs": func(as []attribute.Attribution) string {
		parts := make([]string, len(as))
		for i, a := range as {
			parts[i] = string(a.Class) + ": " + a.Checkpoint
		}
		return strings.Join(parts, "; ")
	},
	"kmap": func(m map[int]float64) string {
		ks := make([]int, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = fmt.Sprintf("%d: %.3f", k, m[k])
		}
		return strings.Join(parts, ", ")
	},
	"ks":     func(m Metrics) []int { return sortedKeys(m.PassHatK) },
	"taskks": func(m Metrics) []int { return sortedKeys(m.TaskPassHatK) },
	"at":     func(m map[int]float64, k int) string { return strconv.FormatFloat(m[k], 'f', 3, 64) },
	"join":   func(ss []string) string { return strings.Join(ss, "; ") },
	"mix": func(ms []MixSetting) string {
		parts := make([]string, len(ms))
		for i, m := range ms {
			parts[i] = fmt.Sprintf("%s × %s: %g", m.View, m.Harness, m.Weight)
		}
		return strings.Join(parts, ", ")
	},
	"basisText": basisText,
	"revised":   func(m map[attribute.Class]int) string { return classCounts(m, RevisableClasses) },
	"classes":   func(m map[attribute.Class]int) string { return classCounts(m, AttributionClasses) },
}).Parse(reportTemplate))

// WriteHTML writes the report as one self-contained HTML document: inline
// CSS, charts as inline SVG (ids Chart*), their numbers as text, tables of
// the metrics, per-task outcomes, episodes and the training stages. It
// references nothing outside the document (no script, stylesheet, font,
// image or link) and reads no clock; the same data gives the same bytes.
// Data strings (task ids, evidence) are HTML-escaped.
func WriteHTML(w io.Writer, r ReportData) error {
	v := view{ReportData: r, Classes: AttributionClasses, Evidence: attributionRows(r.Episodes)}
	v.EvidenceOpen = len(v.Evidence) <= 50
	m := r.Metrics
	// Pass rate per view x harness.
	var rows []hbarRow
	for _, g := range m.PassRateBy {
		frac := 0.0
		if g.PassRate != nil {
			frac = *g.PassRate
		}
		rows = append(rows, hbarRow{Label: g.View + " × " + g.Harness,
			Value: fmt.Sprintf("%s (%d/%d)", pct(g.PassRate), g.Passed, g.Scored), Frac: frac, Color: "#2f6fb5"})
	}
	v.PassRate = newHBar(ChartPassRate, "Pass rate per view × harness", rows)
	// Tool error rate per harness.
	rows = nil
	for _, h := range m.ToolErrorsBy {
		frac := 0.0
		if h.ToolErrorRate != nil {
			frac = *h.ToolErrorRate
		}
		rows = append(rows, hbarRow{Label: h.Harness,
			Value: fmt.Sprintf("%s (%d/%d)", pct(h.ToolErrorRate), h.ToolErrors, h.ToolCalls), Frac: frac, Color: "#c05621"})
	}
	v.ToolErrors = newHBar(ChartToolErrorRate, "Tool error rate per harness", rows)
	// Attributions per class: the four classes, then any other class seen.
	classes := slices.Clone(AttributionClasses)
	var extra []attribute.Class
	for c := range m.Attributions {
		if !slices.Contains(classes, c) {
			extra = append(extra, c)
		}
	}
	slices.Sort(extra)
	classes = append(classes, extra...)
	maxAttr := 0
	for _, c := range classes {
		maxAttr = max(maxAttr, m.Attributions[c])
	}
	rows = nil
	for _, c := range classes {
		n := m.Attributions[c]
		frac := 0.0
		if maxAttr > 0 {
			frac = float64(n) / float64(maxAttr)
		}
		rows = append(rows, hbarRow{Label: string(c), Value: strconv.Itoa(n), Frac: frac, Color: classColor(c)})
	}
	v.Attributions = newHBar(ChartAttributions, "Attribution records per class", rows)
	// Score histogram.
	var cols []colBar
	for i := range HistogramBins {
		n := 0
		if i < len(m.ScoreHistogram) {
			n = m.ScoreHistogram[i]
		}
		cols = append(cols, colBar{Label: fmt.Sprintf("%.1f–%.1f", float64(i)/HistogramBins, float64(i+1)/HistogramBins), N: n})
	}
	v.Histogram = newColumns(ChartScoreHistogram, "Scored episodes per score bin", cols, "#2c7a7b")
	// Rejection-sampling attempts.
	if r.SFT != nil {
		hi := 0
		for a := range r.SFT.AttemptsHistogram {
			hi = max(hi, a)
		}
		cols = nil
		for a := 1; a <= hi; a++ {
			cols = append(cols, colBar{Label: strconv.Itoa(a), N: r.SFT.AttemptsHistogram[a]})
		}
		v.Attempts = newColumns(ChartRejectionAttempts, "Atomic turns per number of attempts", cols, "#805ad5")
	}
	if len(m.Rounds) > 0 {
		v.RoundErrors, v.RoundPass = roundCurves(m.Rounds)
	}
	return tmpl.Execute(w, v)
}

type view struct {
	ReportData
	Classes []attribute.Class
	// Evidence lists every attribution (attributionRows); the table is
	// open when it is short.
	Evidence                           []AttributionRow
	EvidenceOpen                       bool
	PassRate, ToolErrors, Attributions hbarChart
	Histogram                          colChart
	Attempts                           colChart
	RoundErrors, RoundPass             curveChart
}

// Horizontal bar chart geometry (SVG user units = CSS px).
const (
	hbarWidth  = 760
	hbarLabelW = 230 // label column, right-aligned at hbarLabelW-8
	hbarMaxW   = 380 // a bar of fraction 1
	hbarRowH   = 28
	hbarBarH   = 18
	hbarPad    = 8
)

type hbarChart struct {
	ID, Title     string
	Width, Height int
	Rows          []hbarRow
}

type hbarRow struct {
	Label, Value, Color string
	Frac                float64
	// Geometry.
	BarX, BarY, BarW, TextX, TextY float64
}

func newHBar(id, title string, rows []hbarRow) hbarChart {
	c := hbarChart{ID: id, Title: title, Width: hbarWidth, Height: 2*hbarPad + hbarRowH*max(len(rows), 1)}
	for i, r := range rows {
		f := min(max(r.Frac, 0), 1)
		y := float64(hbarPad + i*hbarRowH)
		r.BarX, r.BarY, r.BarW = hbarLabelW, y+(hbarRowH-hbarBarH)/2, f*hbarMaxW
		r.TextX, r.TextY = hbarLabelW+r.BarW+6, y+hbarRowH/2+4
		c.Rows = append(c.Rows, r)
	}
	return c
}

// Column chart geometry.
const (
	colWidth   = 760
	colHeight  = 260
	colLeft    = 20
	colTop     = 24  // room for the count above the tallest column
	colBottom  = 220 // baseline
	colMaxH    = colBottom - colTop
	colLabelDY = 18
	colMaxSlot = 72 // widest column slot (bar and gap)
)

type colChart struct {
	ID, Title     string
	Width, Height int
	Baseline      float64
	Right         float64
	Cols          []colBar
}

type colBar struct {
	Label string
	N     int
	// Geometry.
	X, Y, W, H, CX, CountY, LabelY float64
	Color                          string
}

func newColumns(id, title string, cols []colBar, color string) colChart {
	c := colChart{ID: id, Title: title, Width: colWidth, Height: colHeight, Baseline: colBottom, Right: colWidth - colLeft}
	hi := 0
	for _, b := range cols {
		hi = max(hi, b.N)
	}
	slot := min(float64(colWidth-2*colLeft)/float64(max(len(cols), 1)), colMaxSlot)
	for i, b := range cols {
		h := 0.0
		if hi > 0 {
			h = float64(b.N) / float64(hi) * colMaxH
		}
		b.X, b.W = colLeft+float64(i)*slot+slot*0.1, slot*0.8
		b.H, b.Y = h, colBottom-h
		b.CX, b.CountY, b.LabelY = colLeft+float64(i)*slot+slot/2, colBottom-h-6, colBottom+colLabelDY
		b.Color = color
		c.Cols = append(c.Cols, b)
	}
	return c
}

func classColor(c attribute.Class) string {
	switch c {
	case attribute.ClassPolicy:
		return "#6b46c1"
	case attribute.ClassEnvironment:
		return "#2f855a"
	case attribute.ClassTask:
		return "#b7791f"
	case attribute.ClassVerifier:
		return "#c53030"
	}
	return "#718096"
}

// pct formats a fraction in [0, 1] as a percentage with one decimal
// ("66.7%"), "n/a" for nil.
func pct(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*f*100, 'f', 1, 64) + "%"
}

// scoreText formats a score with two decimals, "infra" for nil.
func scoreText(f *float64) string {
	if f == nil {
		return "infra"
	}
	return strconv.FormatFloat(*f, 'f', 2, 64)
}

// sortedKeys returns the k of a pass@k / pass^k map in increasing order.
func sortedKeys(m map[int]float64) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
