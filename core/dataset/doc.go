// Package dataset writes and reads the training-data files weft exports:
// the records core/train's drivers produce (train.SFTRecord,
// train.OpenAIRecord, train.RLSegment, train.VerlRLRecord) as
//
//   - TRL conversational JSONL (WriteSFTJSONL / ReadSFTJSONL),
//   - verl multi-turn SFT parquet (WriteSFTParquet, WriteSFTParquetFile /
//     ReadSFTParquet, ReadSFTParquetFile),
//   - OpenAI chat fine-tuning JSONL (WriteOpenAIJSONL / ReadOpenAIJSONL),
//   - per-segment RL JSONL (WriteRLJSONL / ReadRLJSONL),
//   - verl RL parquet (WriteVerlRLParquet, WriteVerlRLParquetFile /
//     ReadVerlRLParquet, ReadVerlRLParquetFile).
//
// Every file format is described column by column in docs/datasets.md. The
// package is separate from core/train so that the training algorithms and
// drivers stay pure (no file-format dependency such as parquet-go); the
// readers exist for tests and for checking an exported file. Errors name
// the record (writers) or line/row (readers) at fault and wrap the encoder's
// or decoder's error.
package dataset
