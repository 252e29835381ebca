// Package synth will synthesize environments and tasks: tool-environment
// synthesis, task certification, task composition and state grounding. It
// lands with the synthesis work; nothing is implemented here yet.
package synth
