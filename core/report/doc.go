// Package report turns a run's episodes into its metrics (metrics.json) and
// a self-contained HTML report (report.html).
//
// # Episodes
//
// An Episode is one line of episodes.jsonl: a rollout job's identity, its
// score (nil for an infrastructure failure, never 0), its checkpoints,
// attributions, termination, turn and tool-call counts. EpisodeFromOutcome
// builds one from a rollout.Outcome; WriteEpisode and ReadEpisodes write and
// read the JSONL file.
//
// # Metrics
//
// Compute aggregates episodes, plus the optional rejection-sampling (SFT)
// and GRPO stage summaries, into Metrics: episode and infrastructure-failure
// counts, pass rate overall and per view x harness (over scored episodes
// only), mean score, a 10-bin score histogram, tool error rate overall and
// per harness, attribution counts per class, pass@k and pass^k averaged
// over tasks, and per-task outcomes. Every rate is a fraction in [0, 1]; a
// rate with an empty denominator is null, never 0. Compute is
// deterministic: every list is sorted and nothing depends on map order or
// the clock.
//
// # HTML report
//
// WriteHTML renders ReportData as one HTML document with inline CSS and
// charts drawn server-side as inline SVG (no script, font, image or link
// to fetch), each chart an <svg> with a stable id (ChartPassRate, ...) and
// its numbers printed as text labels. A test renders it in headless
// Chromium.
package report
