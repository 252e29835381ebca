package report

import (
	"fmt"
	"strconv"

	"github.com/weft-dev/weft/core/attribute"
)

// Chart ids of the self-evolution section (present when Metrics.Rounds is
// not empty): one point per round joined by a line, labelled "round N"
// with the value above the point.
const (
	// ChartRoundsToolErrorRate: the non-policy tool error rate per round.
	ChartRoundsToolErrorRate = "chart-rounds-tool-error-rate"
	// ChartRoundsPassRate: the pass rate per round.
	ChartRoundsPassRate = "chart-rounds-pass-rate"
)

// Round is one round of self-evolution: the rollouts on the system
// entering the round, then the revisions tried. core/synth/evolve fills it
// (evolve.json's "rounds") and metrics.json carries the same objects
// ("rounds"); the entry with revise false measures the system after the
// last round. Rates are fractions in [0, 1], null on an empty denominator
// (RoundRate); per-class maps hold the four attribution classes
// (attributions) or the three revisable ones.
type Round struct {
	Round     int  `json:"round"`
	Revise    bool `json:"revise"`
	Tasks     int  `json:"tasks"`
	Certified int  `json:"certified"`
	Episodes  int  `json:"episodes"`
	Passed    int  `json:"passed"`
	// PassRate is Passed / Episodes.
	PassRate *float64 `json:"pass_rate"`
	// ToolCalls and NonPolicyToolErrors: the policy's calls and the failed
	// ones equal to a reference call (not the policy's doing).
	ToolCalls           int      `json:"tool_calls"`
	NonPolicyToolErrors int      `json:"non_policy_tool_errors"`
	ToolErrorRate       *float64 `json:"non_policy_tool_error_rate"`
	// Attributions counts failed checkpoints per class.
	Attributions map[attribute.Class]int `json:"attributions"`
	// Findings are the non-policy findings (deduplicated by atomic task
	// and kind) the round routed to revision.
	Findings int `json:"findings"`
	// Applied and RolledBack count revisions per class (Discarded: those
	// that did not remove their symptom).
	Applied    map[attribute.Class]int `json:"applied"`
	RolledBack map[attribute.Class]int `json:"rolled_back"`
	Discarded  map[attribute.Class]int `json:"discarded"`
	// Regressed lists tasks that certified, or whose faithful episode
	// passed, on the round before and do not on this round's system.
	Regressed []string `json:"regressed"`
	// Unrevised counts findings no allowed class could revise.
	Unrevised int `json:"unrevised"`
}

// RoundRate is num/den as a Round's rates hold it: nil when den is 0.
func RoundRate(num, den int) *float64 { return ratio(num, den) }

// RateOr0 is *r, or 0 for a nil rate (for text that prints a number).
func RateOr0(r *float64) float64 {
	if r == nil {
		return 0
	}
	return *r
}

// RevisableClasses are the classes a revision can have, in report order.
var RevisableClasses = []attribute.Class{attribute.ClassEnvironment, attribute.ClassTask, attribute.ClassVerifier}

// Curve geometry.
const (
	curveWidth  = 760
	curveHeight = 240
	curveLeft   = 70
	curveRight  = 70
	curveTop    = 36
	curveBottom = 196
	curveMarkW  = 12
)

type curveChart struct {
	ID, Title     string
	Width, Height int
	Baseline      float64
	Right         float64
	Points        string // the polyline's points
	Color         string
	Marks         []curveMark
}

type curveMark struct {
	Label, Value             string
	X, Y, MX, MY, VY, LabelY float64
}

// newCurve places one point per value (nil: drawn at 0, labelled n/a),
// scaled so that the largest value reaches the top.
func newCurve(id, title, color string, labels []string, vals []*float64) curveChart {
	c := curveChart{ID: id, Title: title, Width: curveWidth, Height: curveHeight, Baseline: curveBottom, Right: curveWidth - 20, Color: color}
	hi := 0.0
	for _, v := range vals {
		if v != nil {
			hi = max(hi, *v)
		}
	}
	n := len(vals)
	for i, v := range vals {
		x := float64(curveLeft+curveWidth-curveLeft-curveRight) / 2
		if n > 1 {
			x = curveLeft + float64(i)*float64(curveWidth-curveLeft-curveRight)/float64(n-1)
		}
		f := 0.0
		if v != nil && hi > 0 {
			f = *v / hi
		}
		y := curveBottom - f*(curveBottom-curveTop)
		m := curveMark{Label: labels[i], Value: pct(v), X: x, Y: y, MX: x - curveMarkW/2, MY: y - curveMarkW/2, VY: y - curveMarkW, LabelY: curveBottom + 20}
		if v != nil && *v > 0 && *v < 0.001 {
			m.Value = strconv.FormatFloat(100**v, 'f', 3, 64) + "%"
		}
		c.Marks = append(c.Marks, m)
		if i > 0 {
			c.Points += " "
		}
		c.Points += fmt.Sprintf("%.1f,%.1f", x, y)
	}
	return c
}

func roundCurves(rs []Round) (errs, pass curveChart) {
	labels := make([]string, len(rs))
	ev, pv := make([]*float64, len(rs)), make([]*float64, len(rs))
	for i, r := range rs {
		labels[i] = "round " + strconv.Itoa(r.Round)
		if !r.Revise {
			labels[i] = "after " + strconv.Itoa(r.Round-1)
		}
		ev[i], pv[i] = r.ToolErrorRate, r.PassRate
	}
	return newCurve(ChartRoundsToolErrorRate, "Non-policy tool error rate per round", "#dd6b20", labels, ev),
		newCurve(ChartRoundsPassRate, "Pass rate per round", "#3182ce", labels, pv)
}

// classCounts formats a per-class map as "environment 3, task 1" over
// RevisableClasses (or the four attribution classes), "0" when empty.
func classCounts(m map[attribute.Class]int, classes []attribute.Class) string {
	s := ""
	for _, c := range classes {
		if m[c] == 0 {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", c, m[c])
	}
	if s == "" {
		return "0"
	}
	return s
}
