// Package harnesstest holds the fakes and golden-transcript helpers the
// built-in harnesses' tests share: a scripted Model, an Env with two tools
// (get_order, cancel_order), a User that opens and then is done, and the
// txtar transcript of an episode (Transcript, Golden), the episode protocol
// checks (Conformance) and the resume checks (Resume: a resumed run's
// prompts equal the original run's).
package harnesstest
