// Package train turns scored episodes into training signal. It holds
// weft's training-data algorithms and the drivers that run them over
// episodes:
//
//   - atomic-turn GRPO advantages (GroupAdvantages, ApplyMask,
//     CandidateAdvantages) and the trajectory-level GRPO baseline used in the
//     ablation (TrajectoryAdvantages);
//   - undesirable-pattern detectors over one atomic turn (Detector,
//     DefaultDetectors, Detect), whose hits mask positive credit;
//   - the FTRL per-turn rewards (FTRLReward and its variants) and FTRL's
//     reward exactly as its Python code computes it (FTRLScore,
//     ParseFTRLResponse, FTRLAnswerVerify; FTRLCompatible reproduces every
//     reference case, FTRLDefault is weft's reading), its per-step
//     unsolved_set accounting (FTRLEpisode), the Python value semantics it
//     depends on (in sdk/pyvalue, shared with the BFCL
//     module: json.loads/dumps, repr, str.lower, str.strip) and the reference-case checker behind `weft ftrl score`
//     (DecodeFTRLCase, ScoreFTRLCases); docs/ftrl.md;
//   - rejection-sampling bookkeeping: the acceptance rule for one atomic turn
//     (Accept) and tallies over many (SamplingStats);
//   - the task–verifier consistency filter (Filter);
//   - the dataset records (SFTRecord, OpenAIRecord, RLSegment,
//     VerlRLRecord); their JSONL and parquet writers are in core/dataset, so
//     this package imports no file-format library;
//   - the drivers, over the Env/Episode interface (snapshot, restore, fork,
//     one verified atomic turn at a time): RejectionSample, prefix-preserving
//     or end-to-end rejection sampling for SFT (SampleResult.SFT,
//     SummarizeSampling), and GRPO, atomic-turn or trajectory-level group
//     sampling for RL (GRPOResult.Segments, GRPOResult.VerlRecords,
//     SummarizeGRPO). plugins/host.TrainEnv implements Env over MegaMCP
//     sessions.
package train
