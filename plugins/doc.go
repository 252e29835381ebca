// Package plugins will hold the versioned gRPC plugin protocol and the
// built-in plugins: the ReAct, Hermes-style and native function-calling
// harnesses, and the default verifier and attributor. It lands with the
// plugins/harnesses work; nothing is implemented here yet.
package plugins
