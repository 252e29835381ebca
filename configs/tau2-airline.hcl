# tau2-bench airline, offline: all 50 tasks replayed by the scripted policy
# with no faults (each episode replays the task's gold actions), on the
# airline domain in the synthesized-server format
# (examples/servers/tau2-airline: server.json, schema.sql, program.star,
# seed.json) served by MegaMCP on the shared interpreter module. Every task
# should score R = 1: the config is the airline domain's end-to-end check.
#
#   make build                      # bin/weft and the interpreter module
#   weft run configs/tau2-airline.hcl
#
# The interpreter module must be in the registry (weft module build
# ./modules/interp, which make build and make module-test run). Relative
# paths are relative to this file's directory.

variable "task_limit" {
  description = "Run only the first N tasks (0 = all 50)."
  default     = 0
}

module "airline" {
  path = "../examples/servers/tau2-airline"
}

tasks "tau2-airline" {
  tau2          = "../examples/data/tau2-airline/tasks.json"
  tau2_tools    = "../examples/data/tau2-airline/tools.json"
  system_prompt = "../examples/data/tau2-airline/policy.md"
  modules       = ["airline"]
  limit         = var.task_limit
}

policy "scripted" {
  scripted {
    seed = 1
  }
}

harness "native" {}

view "agentic" {}

mix {
  entry {
    view    = "agentic"
    harness = "native"
  }
}

verifier {
  builtin = "exec"
}

rollout {
  policy            = "scripted"
  episodes_per_task = 1
  concurrency       = 4
  episode_timeout   = "120s"
  turn_timeout      = "30s"
  max_turns         = 60
  max_tool_calls    = 60
  seed              = 1
}

pipeline {
  stages = ["import", "rollout", "verify", "report"]
}

output {
  dir = "../runs/tau2-airline"
}
