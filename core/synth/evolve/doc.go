// Package evolve is weft's self-evolution loop (decision record 032,
// docs/evolve.md): rounds of rollouts of the scripted policy on a system of
// synthesized servers and atomic tasks, verification (core/verify),
// failure attribution (core/attribute), targeted revision of every
// non-policy finding, re-certification (core/synth/tasks.Certify), then
// fresh rollouts on the revised system.
//
// A revision never edits a component in place: an environment revision is a
// new server whose faulty tool's function was re-synthesized through a
// core/synth Synthesizer from the failing call, its error and its state
// diff (a new program digest); a task revision is a new task version
// (task.Task.Version + 1) with its entities rebound, or the task dropped
// with its reason; a verifier revision is a new task version whose
// contradicted or weak check was regenerated from the reference's observed
// effect and re-certified. A revision that does not remove the symptom is
// discarded; one that makes things worse (a task certified before no longer
// certifies, a passing episode replayed on the revised system fails) is
// rolled back; both are recorded. Policy failures are counted and never
// revised.
//
// Bench plants defects of the three classes in deterministic servers and
// their generated tasks and scores what Run did against them.
package evolve
