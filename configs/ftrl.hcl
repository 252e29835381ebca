# FTRL end to end, offline (core/synth/ftrl, docs/ftrl.md): questions
# grounded in the real tau2 retail and airline databases, FTRL's five stages
# (scenario decomposition, one tool document per sub-question, function
# integration, complexity scaling, local deployment as weft.server/v1
# servers that each pass core/synth validation), one episode per deployed
# toolset by the scripted policy with faults (extra calls, hallucinated =
# wrong tools, early stops = early answers, malformed calls, wrong arguments,
# and empty replies), scored per step with FTRL's rewards in the compatible
# mode (FTRL's own parsing and matching, quirks included), the per-prefix
# samples, atomic-turn GRPO groups of G = 16 over every prefix, and FTRL's
# verl parquet, into runs/ftrl/.
#
#   weft run configs/ftrl.hcl                      # or: make ftrl
#   weft run configs/ftrl.hcl --var scenarios=4    # a smaller run
#
# No module registry, endpoint or plugin is needed. Relative paths are
# relative to this file's directory.

variable "scenarios" {
  description = "Scenarios per database (the four scenario types take turns)."
  default     = 32
}

variable "seed" {
  description = "Seed of the whole run: the same seed gives byte-identical outputs."
  default     = 1
}

policy "scripted" {
  scripted {
    seed = 1
    faults {
      extra_call        = 0.08
      hallucinated_tool = 0.06
      malformed_call    = 0.05
      early_stop        = 0.05
      wrong_argument    = 0.06
    }
  }
}

# The GRPO candidates: more faults, so groups carry a preference.
policy "candidates" {
  scripted {
    seed = 2
    faults {
      extra_call        = 0.2
      hallucinated_tool = 0.15
      malformed_call    = 0.15
      early_stop        = 0.15
      wrong_argument    = 0.15
    }
  }
}

rollout {
  policy = "scripted"
}

ftrl {
  retail_seed       = "../examples/servers/tau2-retail/seed.json"
  airline_seed      = "../examples/servers/tau2-airline/seed.json"
  scenarios         = var.scenarios
  seed              = var.seed
  mode              = "compatible"
  group_size        = 16
  group_policy      = "candidates"
  max_turns         = 20
  empty_reply       = 0.03
  group_empty_reply = 0.1
  parallel_calls    = 0.5
}

pipeline {
  stages = ["ftrl"]
}

output {
  dir = "../runs/ftrl"
}
