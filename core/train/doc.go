// Package train will turn episodes into training data: SFT by
// prefix-preserving rejection sampling, RL by atomic-turn GRPO from restored
// state, task-verifier consistency filters, rewards and dataset exporters. It
// lands with the training-data work; nothing is implemented here yet.
package train
