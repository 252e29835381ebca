# BFCL v4 multi-turn (base), offline: the 100 public tasks
# (examples/data/bfcl-multiturn/tasks.weft.json, converted from BFCL's
# ground truth by task.FromBFCL) replayed by the scripted policy with no
# faults, on the BFCL module (examples/modules/bfcl: the 8 API classes),
# in both views and all three harnesses. Each task carries its own
# starting state (initial_state: its initial_config in bfcl_class), which
# the run imports as the episode's initial version. Every episode should
# score R = 1: the config is the BFCL domain's end-to-end check.
#
#   make build
#   weft run configs/bfcl-multiturn.hcl
#
# Relative paths are relative to this file's directory.

variable "task_limit" {
  description = "Run only the first N tasks (0 = all 100)."
  default     = 0
}

variable "faults_scale" {
  description = "Multiplies every fault rate of the scripted policy (0 = the ground truth exactly)."
  default     = 0
}

module "bfcl" {
  path = "../examples/modules/bfcl"
}

tasks "bfcl-multiturn" {
  weft    = ["../examples/data/bfcl-multiturn/tasks.weft.json"]
  modules = ["bfcl"]
  limit   = var.task_limit
}

policy "scripted" {
  scripted {
    seed = 1
    faults {
      wrong_argument = 0.1 * var.faults_scale
      skip_step      = 0.1 * var.faults_scale
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

rollout {
  policy            = "scripted"
  episodes_per_task = 6
  concurrency       = 4
  episode_timeout   = "120s"
  turn_timeout      = "30s"
  max_turns         = 80
  max_tool_calls    = 80
  seed              = 1
}

pipeline {
  stages = ["import", "rollout", "verify", "report"]
}

output {
  dir = "../runs/bfcl-multiturn"
}
