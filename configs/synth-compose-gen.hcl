# Generates examples/data/compose-tau2 (the tasks configs/synth-compose.hcl
# runs): certified atomic tasks of tau2 retail and airline, composed into
# 100 cross-server DAGs of about 20 atomic turns, each grounded in three
# rounds into its own initial state and re-certified
# (docs/certification.md, "Composition"; docs/design/026-composition.md).
#
#   weft run configs/synth-compose-gen.hcl            # or: weft synth compose --config configs/synth-compose-gen.hcl
#   weft run configs/synth-compose-gen.hcl --var tasks=10 --var out=/tmp/c.weft.json
#
# Progress goes to stderr, the report (weft.synth-compose/v1) to stdout with
# --json. The same seed gives byte-identical files. Relative paths are
# relative to this file's directory.

variable "tasks" {
  description = "Composed tasks to make."
  default     = 100
}

variable "out" {
  description = "The task file written."
  default     = "../examples/data/compose-tau2/tasks.weft.json"
}

compose {
  servers     = ["../examples/servers/tau2-retail", "../examples/servers/tau2-airline"]
  seed        = 1
  tasks       = var.tasks
  turns       = 20
  gen_seeds   = 4
  distractors = 2
  shared_entities = 8
  out         = var.out
}

pipeline {
  stages = ["compose"]
}
