package dataset

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/weft-dev/weft/core/model"
)

// FTRLRecord is one row of FTRL's verl RL parquet: the record FTRL's
// Code/data_sample/data_sample.py writes per prefix, which
// Code/data_process/tool.py turns into parquet column for column, and which
// FTRL's trainer reads (data.prompt_key=messages; ToolRewardManager reads
// codes, unsolved_set, solve_rate, split, answer and data_source; verl's
// RLHFDataset reads extra_info.index when present). Tools, Codes and
// UnsolvedSet are JSON text, as FTRL keeps them (its code json.loads
// them). weft's one deliberate difference: each Codes value is the tool's
// implementation in the synthesized-server form (a Starlark function over
// the server's tables, run by weft's interpreter), not Python for exec.
// ExtraInfo carries verl's index and weft's provenance.
type FTRLRecord struct {
	Messages    []model.Message
	Tools       string // JSON array of OpenAI function schemas
	Codes       string // JSON object: tool name -> implementation
	UnsolvedSet string // JSON object: tool name -> answers still expected
	SolveRate   float64
	DataSource  string
	Split       string
	Answer      string
	ExtraInfo   FTRLExtraInfo
}

// FTRLExtraInfo is the extra_info column of an FTRL row: Index (verl's row
// index), then weft's SampleID, Scenario (its id), ScenarioType, Variant
// (the scaled toolset) and Step (tool-call turns in the prefix).
type FTRLExtraInfo struct {
	Index        int64
	SampleID     string
	Scenario     string
	ScenarioType string
	Variant      string
	Step         int64
}

type pqFTRLExtra struct {
	Index        int64  `parquet:"index"`
	SampleID     string `parquet:"sample_id"`
	Scenario     string `parquet:"scenario"`
	ScenarioType string `parquet:"scenario_type"`
	Variant      string `parquet:"variant"`
	Step         int64  `parquet:"step"`
}

type pqFTRLRow struct {
	Messages    []pqMessage `parquet:"messages,list"`
	Tools       string      `parquet:"tools"`
	Codes       string      `parquet:"codes"`
	UnsolvedSet string      `parquet:"unsolved_set"`
	SolveRate   float64     `parquet:"solve_rate"`
	DataSource  string      `parquet:"data_source"`
	Split       string      `parquet:"split"`
	Answer      string      `parquet:"answer"`
	ExtraInfo   pqFTRLExtra `parquet:"extra_info"`
}

// FTRLColumns are the top-level columns of an FTRL parquet file, in order.
var FTRLColumns = []string{"messages", "tools", "codes", "unsolved_set", "solve_rate", "data_source", "split", "answer", "extra_info"}

// WriteFTRLParquet writes recs to w as FTRL's verl parquet, one row per
// record, in order. Columns (FTRLColumns): "messages" a LIST of the message
// STRUCT of WriteSFTParquet; "tools", "codes", "unsolved_set" STRING (JSON
// text); "solve_rate" DOUBLE; "data_source", "split", "answer" STRING;
// "extra_info" STRUCT {index INT64, sample_id, scenario, scenario_type,
// variant STRING, step INT64}.
func WriteFTRLParquet(w io.Writer, recs []FTRLRecord) error {
	rows := make([]pqFTRLRow, len(recs))
	for i, r := range recs {
		e := r.ExtraInfo
		rows[i] = pqFTRLRow{
			Messages: toPQMessages(r.Messages), Tools: r.Tools, Codes: r.Codes, UnsolvedSet: r.UnsolvedSet,
			SolveRate: r.SolveRate, DataSource: r.DataSource, Split: r.Split, Answer: r.Answer,
			ExtraInfo: pqFTRLExtra(e),
		}
	}
	return parquet.Write(w, rows)
}

// WriteFTRLParquetFile is WriteFTRLParquet to a file at path (created or
// truncated).
func WriteFTRLParquetFile(path string, recs []FTRLRecord) error {
	return writeFile(path, func(w io.Writer) error { return WriteFTRLParquet(w, recs) })
}

// ReadFTRLParquet reads a file written by WriteFTRLParquet from r, whose
// size in bytes is size.
func ReadFTRLParquet(r io.ReaderAt, size int64) ([]FTRLRecord, error) {
	rows, err := parquet.Read[pqFTRLRow](r, size)
	if err != nil {
		return nil, fmt.Errorf("dataset: reading FTRL parquet: %w", err)
	}
	out := make([]FTRLRecord, len(rows))
	for i, row := range rows {
		e := row.ExtraInfo
		out[i] = FTRLRecord{
			Messages: fromPQMessages(row.Messages), Tools: row.Tools, Codes: row.Codes, UnsolvedSet: row.UnsolvedSet,
			SolveRate: row.SolveRate, DataSource: row.DataSource, Split: row.Split, Answer: row.Answer,
			ExtraInfo: FTRLExtraInfo(e),
		}
	}
	return out, nil
}

// ReadFTRLParquetFile is ReadFTRLParquet of the file at path.
func ReadFTRLParquetFile(path string) ([]FTRLRecord, error) {
	return readFile(path, ReadFTRLParquet)
}
