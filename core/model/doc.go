// Package model will hold the policy and judge clients: an OpenAI-compatible
// HTTP client (vLLM, SGLang, Ollama, llama.cpp server) and clearly named
// scripted stand-ins that keep every pipeline runnable offline. It lands with
// the rollout work; nothing is implemented here yet.
package model
