package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weft-dev/weft/core/dataset"
	"github.com/weft-dev/weft/core/train"
)

// Dataset formats of the export stage and the files they write under
// DIR/datasets/ (docs/datasets.md documents every field).
const (
	FormatTRL          = "trl_jsonl"        // sft.trl.jsonl
	FormatVerlSFT      = "verl_sft_parquet" // sft.verl.parquet
	FormatOpenAI       = "openai_jsonl"     // sft.openai.jsonl
	FormatRLJSONL      = "rl_jsonl"         // rl.segments.jsonl
	FormatVerlRL       = "verl_rl_parquet"  // rl.verl.parquet
	datasetTRL         = "sft.trl.jsonl"
	datasetVerlSFT     = "sft.verl.parquet"
	datasetOpenAI      = "sft.openai.jsonl"
	datasetRLSegments  = "rl.segments.jsonl"
	datasetVerlRL      = "rl.verl.parquet"
	verlDataSourceBase = "weft/"
)

// Formats lists every export format.
var Formats = []string{FormatTRL, FormatVerlSFT, FormatOpenAI, FormatRLJSONL, FormatVerlRL}

func (r *runner) wants(format string) bool {
	if len(r.spec.Formats) == 0 {
		return true
	}
	for _, f := range r.spec.Formats {
		if f == format {
			return true
		}
	}
	return false
}

// sftRecords are the kept SFT trajectories of the configured mode, in task
// order: whole accepted trajectories and, in prefix mode, the verified
// prefixes of the others (SampleResult.SFT decides).
func (r *runner) sftRecords() []train.SFTRecord {
	var out []train.SFTRecord
	for _, res := range r.samples {
		if rec, ok := res.SFT(); ok {
			out = append(out, rec)
		}
	}
	return out
}

func (r *runner) rlSegments() []train.RLSegment {
	var out []train.RLSegment
	for _, g := range r.groups {
		out = append(out, g.Segments()...)
	}
	return out
}

func (r *runner) export() error {
	dir := filepath.Join(r.opts.Dir, DirDatasets)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	total := 0
	for _, f := range Formats {
		if r.wants(f) {
			total++
		}
	}
	r.event(Event{Stage: StageExport, Total: total})
	sft := r.sftRecords()
	segs := r.rlSegments()
	write := func(name string, fn func(*bytes.Buffer) error) error {
		var b bytes.Buffer
		if err := fn(&b); err != nil {
			return fmt.Errorf("export %s: %w", name, err)
		}
		return writeFileAtomic(filepath.Join(dir, name), b.Bytes())
	}
	done := 0
	step := func(f string) {
		if r.wants(f) {
			done++
			r.event(Event{Stage: StageExport, Done: done, Total: total})
		}
	}
	if r.wants(FormatTRL) {
		if err := write(datasetTRL, func(b *bytes.Buffer) error { return dataset.WriteSFTJSONL(b, sft) }); err != nil {
			return err
		}
	}
	step(FormatTRL)
	if r.wants(FormatVerlSFT) {
		if err := write(datasetVerlSFT, func(b *bytes.Buffer) error { return dataset.WriteSFTParquet(b, sft) }); err != nil {
			return err
		}
	}
	step(FormatVerlSFT)
	if r.wants(FormatOpenAI) {
		recs := make([]train.OpenAIRecord, len(sft))
		for i, s := range sft {
			recs[i] = train.NewOpenAIRecord(s.Messages, s.Tools)
		}
		if err := write(datasetOpenAI, func(b *bytes.Buffer) error { return dataset.WriteOpenAIJSONL(b, recs) }); err != nil {
			return err
		}
	}
	step(FormatOpenAI)
	if r.wants(FormatRLJSONL) {
		if err := write(datasetRLSegments, func(b *bytes.Buffer) error { return dataset.WriteRLJSONL(b, segs) }); err != nil {
			return err
		}
	}
	step(FormatRLJSONL)
	if r.wants(FormatVerlRL) {
		var recs []train.VerlRLRecord
		for _, g := range r.groups {
			recs = append(recs, g.VerlRecords(train.VerlOptions{DataSource: verlDataSourceBase + r.spec.Name, StartIndex: int64(len(recs))})...)
		}
		if err := write(datasetVerlRL, func(b *bytes.Buffer) error { return dataset.WriteVerlRLParquet(b, recs) }); err != nil {
			return err
		}
	}
	step(FormatVerlRL)
	r.event(Event{Stage: StageExport, End: true})
	return nil
}
