# tau2-bench retail against a model served by an OpenAI-compatible endpoint
# (vLLM, SGLang, Ollama, llama.cpp server): rollouts by the model, SFT data
# by rejection sampling from the same model as teacher, GRPO groups of 8,
# the consistency filter with the model as rubric judge.
#
#   vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice --tool-call-parser hermes
#   weft validate configs/tau2-retail-vllm.hcl
#   weft run configs/tau2-retail-vllm.hcl --var base_url=http://gpu-box:8000/v1
#
# Relative paths are relative to this file's directory.

variable "base_url" {
  description = "The endpoint's API root, including /v1."
  default     = "http://127.0.0.1:8000/v1"
}

variable "model" {
  description = "The served model name."
  default     = "Qwen/Qwen3-8B"
}

variable "task_limit" {
  description = "Run only the first N tasks (0 = all 114)."
  default     = 0
}

variable "episodes_per_task" {
  description = "Rollout episodes per task, spread over the view x harness pairs by weight."
  default     = 8
}

variable "group_size" {
  description = "GRPO group size G (>= 2)."
  default     = 8
}

variable "max_retries" {
  description = "Client retries of a retryable endpoint failure (-1 = none)."
  default     = 4
}

variable "retries" {
  description = "Extra attempts of a rollout episode after a retryable infrastructure failure."
  default     = 2
}

variable "stages" {
  description = "The pipeline stages to run, in order."
  default     = ["import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report"]
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

policy "model" {
  endpoint {
    base_url        = var.base_url
    model           = var.model
    api_key_env     = "OPENAI_API_KEY"
    timeout         = "120s"
    max_retries     = var.max_retries
    max_concurrency = 16
    extra_body = {
      chat_template_kwargs = { enable_thinking = false }
    }
  }
  sampling {
    temperature = 0.7
    top_p       = 0.95
    max_tokens  = 2048
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
    harness = "native"
    weight  = 2
  }
  entry {
    view    = "agentic"
    harness = "hermes"
  }
  entry {
    view    = "agentic"
    harness = "react"
  }
  entry {
    view    = "simuser"
    harness = "native"
    weight  = 2
  }
  entry {
    view    = "simuser"
    harness = "hermes"
  }
  entry {
    view    = "simuser"
    harness = "react"
  }
}

verifier {
  builtin = "exec"
  judge   = "model"
}

attributor {
  builtin = "rules"
}

rollout {
  policy            = "model"
  episodes_per_task = var.episodes_per_task
  concurrency       = 16
  episode_timeout   = "10m"
  turn_timeout      = "2m"
  retries           = var.retries
  backoff           = "5s"
  max_turns         = 40
  max_tool_calls    = 60
  seed              = 1
}

sft {
  policy    = "model"
  mode      = "prefix"
  retries   = 4
  threshold = 1
  view      = "simuser"
  harness   = "native"
}

grpo {
  policy     = "model"
  group_size = var.group_size
  eps        = 1e-6
  level      = "atomic_turn"
  continue   = "first"
  mask       = true
  reward     = "binary"
  view       = "simuser"
  harness    = "native"

  consistency_filter {
    min_correlation = 0.5
    min_agreement   = 0.8
    rubric_pass     = 0.5
    min_rollouts    = 4
  }
}

pipeline {
  stages = var.stages
}

output {
  dir     = "../runs/tau2-retail-vllm"
  formats = ["trl_jsonl", "verl_sft_parquet", "rl_jsonl", "verl_rl_parquet", "openai_jsonl"]
}
