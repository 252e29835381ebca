// Package config decodes weft's HCL experiment configs (hashicorp/hcl/v2)
// into a [Config] of plain Go values that `weft run` consumes: absolute
// paths, time.Duration values and every default filled in.
//
// [Load] reads a file; [Parse] decodes source bytes. Both return
// hcl.Diagnostics: every problem in a config (a syntax error, an unknown
// block or attribute, a value of the wrong type, a missing file, a mix entry
// naming an undeclared harness, a GRPO group smaller than 2, ...) is an
// error diagnostic whose Subject is the source range (file:line:col) of the
// construct at fault, with a summary and a detail a person understands.
// [FormatDiagnostic] renders one as "file:line:col: error: summary; detail".
//
// The schema is one table in schema.go; [Docs] renders it as the Markdown
// reference in docs/config.md (`weft config docs`), so the reference and
// the decoder cannot drift apart.
package config
