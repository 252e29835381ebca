// Package service is the rollout service (`weft rollout-service`,
// docs/rollout-service.md, design/034): an HTTP API a trainer calls every
// step. POST /v1/rollouts submits a batch (task ids x group size G, the
// trainer's current OpenAI-compatible inference server as the policy,
// sampling, GRPO continuation and masking, optional SFT prefixes) and
// receives, as NDJSON streamed while they finish, the GRPO groups of
// core/train with their segments (rl.segments.jsonl lines), rewards,
// advantages and verl RL rows, plus SFT records on request. Admission is
// bounded (429 with Retry-After past MaxPending tasks), DELETE
// /v1/rollouts/{id} or a client disconnect cancels a batch, and every
// refusal is a 4xx with a JSON error body that leaves nothing admitted.
//
// The work of one task runs through a Dispatcher: InProcess runs it on a
// built pipeline.Spec with core/train.GRPO (the same code as the grpo
// stage); a queue adapter (internal/queue) runs it on workers.
package service
