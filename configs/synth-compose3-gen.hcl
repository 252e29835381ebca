# Generates examples/data/compose-tau2-toucan: composed tasks over three
# servers, tau2 retail, tau2 airline and a synthesized Toucan server
# (examples/servers/toucan-todoist): every task has atomic tasks of all
# three (one per server first). Shared people link retail and airline; the
# Toucan server shares no entity with them, so its atomic tasks are
# parallel branches.
#
#   weft run configs/synth-compose3-gen.hcl

compose {
  servers         = ["../examples/servers/tau2-retail", "../examples/servers/tau2-airline", "../examples/servers/toucan-todoist"]
  seed            = 1
  tasks           = 20
  turns           = 20
  gen_seeds       = 2
  distractors     = 2
  shared_entities = 8
  out             = "../examples/data/compose-tau2-toucan/tasks.weft.json"
}

pipeline {
  stages = ["compose"]
}
