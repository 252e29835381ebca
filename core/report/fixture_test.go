package report

import "github.com/weft-dev/weft/core/attribute"

func f(x float64) *float64 { return &x }

func ep(task, view, harness string, sample int, score *float64, calls, errs int, classes ...attribute.Class) Episode {
	e := Episode{Key: task + "/" + view + "/" + harness + "/p/" + string(rune('0'+sample)),
		Task: task, View: view, Harness: harness, Policy: "p", Sample: sample, Score: score,
		Pass: score != nil && *score == 1, Attempts: 1, Termination: "done", Turns: calls + 1,
		ToolCalls: calls, ToolErrors: errs, DurationMs: int64(100 * (sample + 1))}
	for i, c := range classes {
		e.Attributions = append(e.Attributions, attribute.Attribution{
			Checkpoint: "a" + string(rune('1'+i)), Class: c, Evidence: "ledger call #1", Revise: string(c)})
	}
	return e
}

// fixtureEpisodes is a hand-built run, deliberately out of order:
//
//	agentic x react:  t1 scores 1, 1, 0.5; t2 infra, 0   -> 2/4 passed
//	simuser x native: t1 scores 1, 0.25, 1              -> 2/3 passed
//
// tool calls: react 16 (4 errors), native 8 (1 error); attributions:
// policy 2, environment 1, verifier 1.
func fixtureEpisodes() []Episode {
	infra := ep("t2", "agentic", "react", 0, nil, 2, 2)
	infra.Infra = &rolloutInfra
	infra.Termination = ""
	return []Episode{
		ep("t1", "simuser", "native", 1, f(0.25), 4, 1, attribute.ClassVerifier),
		ep("t2", "agentic", "react", 1, f(0), 2, 0, attribute.ClassPolicy, attribute.ClassEnvironment),
		ep("t1", "agentic", "react", 2, f(0.5), 5, 1, attribute.ClassPolicy),
		ep("t1", "agentic", "react", 0, f(1), 4, 0),
		infra,
		ep("t1", "simuser", "native", 0, f(1), 4, 0),
		ep("t1", "agentic", "react", 1, f(1), 3, 1),
		ep("t1", "simuser", "native", 2, f(1), 0, 0),
	}
}

func fixtureSFT() *SFTStats {
	return &SFTStats{Mode: "prefix", Tasks: 3, Accepted: 2, Records: 3, KeptTurns: 5, Attempts: 9, TurnsResampled: 2,
		AttemptsHistogram: map[int]int{1: 4, 2: 1, 3: 1}}
}

func fixtureGRPO() *GRPOStats {
	return &GRPOStats{Level: "turn", Groups: 10, NonZeroGroups: 6, Segments: 40, MaskedSegments: 4,
		Detectors: map[string]int{"repeated_call": 3, "forbidden_tool": 1}}
}
