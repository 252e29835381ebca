// Package rollout schedules episodes: jobs (a task under a view x a
// harness x a policy, as sample i of k) run by an Executor under a hard
// concurrency cap, with retries of infrastructure failures, a per-attempt
// deadline and resume, and the pass metrics computed from their outcomes.
//
// # Jobs and outcomes
//
// A Job names one episode; Job.Key ("task/view/harness/policy/sample") is
// its stable identity, carried by its Outcome and given to Options.Skip so
// that a run resumes from the outcomes already written. The Executor that
// actually runs an episode (a MegaMCP session, a harness plugin, a policy)
// lives outside core, in plugins/host; this package sees only its
// interface and the Outcome it returns.
//
// # Infrastructure failures
//
// An episode that fails because of the infrastructure (a plugin crash, an
// endpoint down, a module trap not of the task's doing, the episode
// deadline) is not a policy outcome. The executor reports it as an
// *InfraError; Run retries the retryable ones up to Options.Retries times,
// with Options.Backoff between attempts, and an episode that never
// succeeds ends with Score nil (never 0), Infra set to the last failure and
// InfraErrors listing every failed attempt's. Errors that are not
// *InfraError, and unusable outcomes, are infra of kind "internal" and are
// not retried; an attempt past Options.EpisodeTimeout is infra of kind
// "deadline" and is retried.
//
// # Scheduling
//
// Run keeps at most Options.Concurrency episodes in flight, returns the
// outcomes in job order (nil for skipped jobs and for jobs that did not
// finish before ctx ended) and reports progress after each finished job,
// never concurrently. Outcomes depend only on the jobs and the executor's
// answers, not on the order jobs ran in: each job carries its own Seed.
//
// # Metrics
//
// PassAtK is the unbiased pass@k estimator of Chen et al. (2021) and
// PassHatK the pass^k of tau-bench (Yao et al., 2024), both computed as
// products; they are NaN when k is outside 1..n. Summarize groups outcomes
// by task, counts scored episodes (N), passes (C) and infrastructure
// failures apart, and reports pass@k, pass^k (for the ks with 1 <= k <= N)
// and the mean score.
package rollout
