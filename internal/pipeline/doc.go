// Package pipeline runs a weft experiment: the stages an HCL config's
// pipeline block lists (import, rollout, verify, attribute, sft, grpo,
// export, report) over one MegaMCP server, the harness plugins and the
// configured policies, writing the run folder (see docs/run.md).
//
// A run is resumable: episodes.jsonl, sft.jsonl and grpo.jsonl are appended
// as work finishes, and a rerun over the same folder skips what they
// already hold; the export and report stages always rebuild their files
// from them. Seeds come from the config, so a run interrupted and resumed
// ends with the same metrics as one that was not.
package pipeline
