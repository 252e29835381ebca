# tau2-bench retail, offline: all 114 tasks, the scripted policy with a
# realistic fault mix, both task views and all three built-in harnesses,
# then verification, attribution, SFT and GRPO data, exports and a report.
#
#   weft validate configs/tau2-retail.hcl
#   weft run configs/tau2-retail.hcl --var faults_scale=0.5
#
# Relative paths are relative to this file's directory.

variable "faults_scale" {
  description = "Multiplies every fault rate of the scripted policy (0 = a perfect policy)."
  default     = 1
}

variable "episodes_per_task" {
  description = "Episodes per task, split evenly over the 6 view x harness pairs."
  default     = 6
}

variable "task_limit" {
  description = "Run only the first N tasks (0 = all 114)."
  default     = 0
}

module "retail" {
  path        = "../examples/modules/retail"
  schema      = "../examples/modules/retail/retaildb/schema.sql"
  seed        = "../examples/data/tau2-retail/db.state.json"
}

tasks "tau2-retail" {
  tau2          = "../examples/data/tau2-retail/tasks.json"
  system_prompt = "../examples/data/tau2-retail/policy.md"
  modules       = ["retail"]
  limit         = var.task_limit
}

policy "scripted" {
  scripted {
    seed = 1
    faults {
      wrong_argument    = 0.08 * var.faults_scale
      skip_step         = 0.04 * var.faults_scale
      extra_call        = 0.05 * var.faults_scale
      hallucinated_tool = 0.03 * var.faults_scale
      malformed_call    = 0.03 * var.faults_scale
      early_stop        = 0.03 * var.faults_scale
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
  episodes_per_task = var.episodes_per_task
  concurrency       = 8
  episode_timeout   = "120s"
  turn_timeout      = "30s"
  retries           = 2
  backoff           = "1s"
  max_turns         = 60
  max_tool_calls    = 60
  seed              = 1
}

sft {
  policy    = "scripted"
  mode      = "prefix"
  retries   = 3
  threshold = 1
  view      = "simuser"
  harness   = "native"
}

grpo {
  policy     = "scripted"
  group_size = 8
  eps        = 1e-6
  level      = "atomic_turn"
  continue   = "first"
  mask       = true
  reward     = "binary"
  view       = "simuser"
  harness    = "native"
}

pipeline {
  stages = ["import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report"]
}

output {
  dir     = "../runs/tau2-retail"
  formats = ["trl_jsonl", "verl_sft_parquet", "rl_jsonl", "verl_rl_parquet", "openai_jsonl"]
}
