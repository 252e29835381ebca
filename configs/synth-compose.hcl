# Composed cross-server tasks, offline: the tasks of
# examples/data/compose-tau2 (weft synth compose over tau2 retail and
# airline: certified atomic tasks in DAGs, each task grounded in its own
# initial_state) run through weft run by the scripted policy, both views,
# three harnesses. With faults_scale = 0 the policy replays each task's
# composite reference (every episode should score R = 1); with
# faults_scale = 1 it plants faults (wrong arguments, skipped steps, extra
# calls, ...) that must fail the checkpoints of the atomic tasks they hit,
# and the SFT and GRPO stages get groups with real advantage.
#
#   make build                                  # bin/weft and the interpreter module
#   weft run configs/synth-compose.hcl          # gold replay
#   weft run configs/synth-compose.hcl --var faults_scale=1 --out runs/synth-compose-faults
#   make compose                                # both, with their checks
#
# The two servers own tables of the same name (users, payment_methods):
# the lifecycle group keeps them apart under table namespaces
# (docs/design/026-composition.md). Relative paths are relative to this
# file's directory.

variable "task_limit" {
  description = "Run only the first N tasks (0 = all)."
  default     = 0
}

variable "faults_scale" {
  description = "Multiplies every fault rate of the scripted policy (0 = the composite reference exactly)."
  default     = 0
}

module "tau2-retail" {
  path = "../examples/servers/tau2-retail"
}

module "airline" {
  path = "../examples/servers/tau2-airline"
}

tasks "compose-tau2" {
  weft    = ["../examples/data/compose-tau2/tasks.weft.json"]
  modules = ["tau2-retail", "airline"]
  limit   = var.task_limit
}

policy "scripted" {
  scripted {
    seed = 1
    faults {
      wrong_argument    = 0.04 * var.faults_scale
      skip_step         = 0.03 * var.faults_scale
      extra_call        = 0.03 * var.faults_scale
      hallucinated_tool = 0.01 * var.faults_scale
      malformed_call    = 0.01 * var.faults_scale
    }
  }
}

harness "react" {}
harness "hermes" {}
harness "native" {}

view "agentic" {}
view "simuser" {}

mix {
  entry {
    view    = "agentic"
    harness = "react"
  }
  entry {
    view    = "agentic"
    harness = "hermes"
  }
  entry {
    view    = "agentic"
    harness = "native"
  }
  entry {
    view    = "simuser"
    harness = "react"
  }
  entry {
    view    = "simuser"
    harness = "hermes"
  }
  entry {
    view    = "simuser"
    harness = "native"
  }
}

verifier {
  builtin = "exec"
}

attributor {
  builtin = "rules"
}

rollout {
  policy            = "scripted"
  episodes_per_task = 6
  concurrency       = 4
  episode_timeout   = "300s"
  turn_timeout      = "60s"
  max_turns         = 200
  max_tool_calls    = 200
  seed              = 1
}

sft {
  policy    = "scripted"
  mode      = "end_to_end"
  retries   = 3
  threshold = 1
  view      = "agentic"
  harness   = "native"
}

grpo {
  policy     = "scripted"
  group_size = 4
  level      = "trajectory"
  reward     = "score"
  view       = "agentic"
  harness    = "native"
}

pipeline {
  stages = ["import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report"]
}

output {
  dir     = "../runs/synth-compose"
  formats = ["trl_jsonl", "rl_jsonl"]
}
