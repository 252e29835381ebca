// Package train turns scored episodes into training signal. It holds the pure
// parts of weft's training-data algorithms, with no I/O and no sessions:
//
//   - atomic-turn GRPO advantages (GroupAdvantages, ApplyMask,
//     CandidateAdvantages) and the trajectory-level GRPO baseline used in the
//     ablation (TrajectoryAdvantages);
//   - undesirable-pattern detectors over one atomic turn (Detector,
//     DefaultDetectors, Detect), whose hits mask positive credit;
//   - the FTRL per-turn rewards (FTRLReward and its variants);
//   - rejection-sampling bookkeeping: the acceptance rule for one atomic turn
//     (Accept) and tallies over many (SamplingStats).
//
// Landing later, on top of these: the prefix-preserving rejection-sampling
// driver for SFT and the GRPO driver over restored sessions, the
// task–verifier consistency filter, and dataset exporters.
package train
