// Package ftrl builds FTRL's training environments and data inside weft
// (Ye et al. 2025, "Feedback-Driven Tool-Use Improvements in Large Language
// Models via Automated Build Environments", arXiv:2508.08791; code
// bytedance/FTRL). Five stages, each with its own inspectable output:
//
//	(a) Decompose  scenarios of the four types (single-hop, parallel
//	               single-hop, multi-hop, parallel multi-hop): sub-questions
//	               and their dependency edges          -> 1-scenarios.jsonl
//	(b) Document   one tool document per sub-question  -> 2-documents.jsonl
//	(c) Integrate  overlapping documents merged, n -> m <= n
//	                                                   -> 3-integrated.jsonl
//	(d) Scale      function generalization, parameter expansion, type
//	               generalization, toolset expansion   -> 4-scaled.jsonl
//	(e) Deploy     every toolset a weft.server/v1 server (a Starlark program
//	               over the grounded rows: deterministic, sandboxed), each
//	               passing core/synth.Validate          -> 5-deployed.jsonl
//
// The offline generator grounds every question in the real tau2 retail and
// airline databases (the seed.json of examples/servers/tau2-*): chains such
// as user -> latest order -> first item -> price, or reservation -> first
// flight -> status, with templated text, all drawn from one seed. The
// endpoint variant (EndpointWriter) rewrites questions and tool
// descriptions with an OpenAI-compatible model (core/model) under a JSON
// schema response format.
//
// Episodes follow FTRL's accounting (Code/data_sample/data_sample.py): a
// Sample holds messages, tools, codes, unsolved_set, answer and
// solve_rate; a rollout of the scripted policy (core/model/scripted, with
// faults) calls the deployed servers, every step's tool outputs are
// matched against unsolved_set, and one Sample is saved per intermediate
// prefix. Exports: FTRL's verl parquet (core/dataset.WriteFTRLParquet) and
// atomic-turn GRPO groups over the prefixes. Guide: docs/ftrl.md;
// decision record docs/design/028-ftrl.md.
package ftrl
