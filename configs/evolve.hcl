# Self-evolution on the planted-defect benchmark, offline (core/synth/evolve,
# docs/evolve.md): five servers synthesized from tau2 airline's tools.json
# with the deterministic synthesizer (each with its own seed rows), their
# atomic tasks generated and certified, and 33 defects planted across the
# three component classes: wrong preconditions and missing effects in tools,
# stale entity bindings in tasks, checks contradicted by the reference's
# effect and checks that only match a keyword. Three rounds of: rollouts of
# the scripted policy with faults (2 per task plus a faithful one),
# verification, attribution, a revision of each non-policy finding (at most
# 14 per round), re-certification; then one more rollout pass measures the
# evolved system. Into runs/evolve/: evolve.json (rounds, revisions, the
# benchmark's score per round), metrics.json with "rounds", report.html with
# the per-round curves, revisions.jsonl, every task version, the evolved
# tasks and servers.
#
#   weft run configs/evolve.hcl                    # or: make evolve
#   weft run configs/evolve.hcl --var budget=0     # no cap: one round fixes what it finds
#
# No module registry, endpoint or plugin is needed. Relative paths are
# relative to this file's directory.

variable "budget" {
  description = "Revisions tried per round at most (0 = no cap)."
  default     = 14
}

policy "scripted" {
  scripted {
    seed = 1
    faults {
      wrong_argument    = 0.08
      skip_step         = 0.05
      extra_call        = 0.05
      hallucinated_tool = 0.04
      malformed_call    = 0.04
      early_stop        = 0.04
    }
  }
}

rollout {
  policy = "scripted"
}

evolve {
  rounds            = 3
  budget            = var.budget
  classes           = ["environment", "task", "verifier"]
  synthesizer       = "deterministic"
  episodes          = 2
  benchmark_docs    = "../examples/data/tau2-airline/tools.json"
  benchmark_servers = 5
  seed              = 0
}

pipeline {
  stages = ["evolve"]
}

output {
  dir = "../runs/evolve"
}
