# Self-evolution on tau2 retail as shipped, offline (docs/evolve.md): the
# synthesized retail server (examples/servers/tau2-retail) and tau2's 114
# retail tasks converted on it with the gold replay, three rounds with the
# same scripted policy and faults as configs/evolve.hcl. The server is
# hand-written (no documentation to re-synthesize from), so environment
# findings are left as they are; task 64 (its reference fails at call 6,
# the exchange of a pending order) and the tasks whose action changes
# nothing are found by certification and attribution and dropped with their
# reason. Into runs/evolve-tau2-retail/.
#
#   weft run configs/evolve-tau2-retail.hcl        # (make evolve runs it too)

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
  rounds     = 3
  classes    = ["environment", "task", "verifier"]
  episodes   = 2
  server     = "../examples/servers/tau2-retail"
  tau2_tasks = "../examples/data/tau2-retail/tasks.json"
}

pipeline {
  stages = ["evolve"]
}

output {
  dir = "../runs/evolve-tau2-retail"
}
