// Package callparse reads the {"name": ..., "arguments": {...}} call
// objects of the text protocols (ReAct actions, Hermes <tool_call>
// blocks) tolerantly: a ```json fence around the object, text after it,
// arguments given as a JSON string holding an object, and "parameters"
// in place of "arguments" are all accepted. Encode writes one, as a
// harness renders the calls of a resumed conversation's history.
package callparse
