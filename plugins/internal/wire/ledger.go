package wire

import (
	"fmt"
	"github.com/weft-dev/weft/sdk/plugin"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/failure"
	pb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// Failure converts a component and kind (plugin.NewFailure).
func Failure(c failure.Component, k failure.Kind, msg string) *pb.Failure {
	return plugin.NewFailure(c, k, msg)
}

// FromFailure converts back (plugin.FailureParts and the message).
func FromFailure(f *pb.Failure) (failure.Component, failure.Kind, string) {
	c, k := plugin.FailureParts(f)
	return c, k, f.GetMessage()
}

var recordKinds = map[string]pb.LedgerRecordKind{
	megamcp.KindCall:    pb.LedgerRecordKind_LEDGER_RECORD_KIND_CALL,
	megamcp.KindRestore: pb.LedgerRecordKind_LEDGER_RECORD_KIND_RESTORE,
	megamcp.KindClock:   pb.LedgerRecordKind_LEDGER_RECORD_KIND_CLOCK,
}

// LedgerCall converts a ledger record. Errors: an unknown record kind,
// structured content that is not JSON.
func LedgerCall(r megamcp.Record) (*pb.LedgerCall, error) {
	k, ok := recordKinds[r.Kind]
	if !ok {
		return nil, fmt.Errorf("wire: ledger record %d: unknown kind %q", r.Index, r.Kind)
	}
	out := &pb.LedgerCall{Index: r.Index, Session: r.Session, Generation: r.Generation, Kind: k, Seq: r.Seq,
		Module: r.Module, Tool: r.ExposedTool(), Arguments: string(r.Arguments), RowsChanged: int64(r.RowsChanged),
		DurationMs: r.DurationMs, ClockNs: r.Clock, Version: r.Version}
	if !r.Time.IsZero() {
		out.TimeUnixNs = r.Time.UnixNano()
	}
	if r.Error != nil {
		comp := failure.MegaMCP
		if failure.Kind(r.Error.Kind).InModule() || r.Error.Kind == string(failure.InvalidArguments) || r.Error.Kind == string(failure.UnknownTool) {
			comp = failure.Module
		}
		out.Error = Failure(comp, failure.Kind(r.Error.Kind), r.Error.Message)
	}
	if r.Result != nil {
		res := &pb.ToolCallResult{IsError: r.Result.IsError}
		for _, c := range r.Result.Content {
			pc := &pb.Content{Type: c.Type, Text: c.Text, Data: c.Data, MimeType: c.MimeType, Uri: c.URI, Name: c.Name}
			if c.Resource != nil {
				pc.Resource = &pb.ResourceContents{Uri: c.Resource.URI, MimeType: c.Resource.MimeType, Text: c.Resource.Text, Blob: c.Resource.Blob}
			}
			res.Content = append(res.Content, pc)
		}
		sc, err := plugin.JSONValue(r.Result.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("wire: ledger record %d: structured content: %w", r.Index, err)
		}
		res.StructuredContent = sc
		out.Result = res
	}
	return out, nil
}

// FromLedgerCall converts back.
func FromLedgerCall(p *pb.LedgerCall) (megamcp.Record, error) {
	r := megamcp.Record{Index: p.GetIndex(), Session: p.GetSession(), Generation: p.GetGeneration(), Seq: p.GetSeq(),
		Module: p.GetModule(), Tool: p.GetTool(), RowsChanged: int(p.GetRowsChanged()), DurationMs: p.GetDurationMs(),
		Clock: p.GetClockNs(), Version: p.GetVersion()}
	for k, v := range recordKinds {
		if v == p.GetKind() {
			r.Kind = k
		}
	}
	if r.Kind == "" {
		return r, fmt.Errorf("wire: ledger record %d: unknown kind %v", p.GetIndex(), p.GetKind())
	}
	if p.GetArguments() != "" {
		r.Arguments = []byte(p.GetArguments())
	}
	if p.GetTimeUnixNs() != 0 {
		r.Time = time.Unix(0, p.GetTimeUnixNs()).UTC()
	}
	if p.GetError() != nil {
		_, k, msg := FromFailure(p.GetError())
		r.Error = &megamcp.ErrorInfo{Kind: string(k), Message: msg}
	}
	if res := p.GetResult(); res != nil {
		mr := &module.Result{CallResult: abi.CallResult{IsError: res.GetIsError(), Content: []abi.Content{}}}
		for _, c := range res.GetContent() {
			mc := abi.Content{Type: c.GetType(), Text: c.GetText(), Data: c.GetData(), MimeType: c.GetMimeType(), URI: c.GetUri(), Name: c.GetName()}
			if rc := c.GetResource(); rc != nil {
				mc.Resource = &abi.ResourceContents{URI: rc.GetUri(), MimeType: rc.GetMimeType(), Text: rc.GetText(), Blob: rc.GetBlob()}
			}
			mr.Content = append(mr.Content, mc)
		}
		sc, err := plugin.ValueJSON(res.GetStructuredContent())
		if err != nil {
			return r, err
		}
		mr.StructuredContent = sc
		r.Result = mr
	}
	return r, nil
}

// Checkpoint converts a verifier checkpoint. Errors: an unknown check
// kind.
func Checkpoint(c verify.Checkpoint) (*pb.Checkpoint, error) {
	out := &pb.Checkpoint{Name: c.Name, Score: c.Score}
	for _, r := range c.Checks {
		k, err := CheckKind(r.Kind)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", c.Name, err)
		}
		out.Checks = append(out.Checks, &pb.CheckResult{Kind: k, Passed: r.Passed, Evidence: r.Evidence, Missing: r.Missing})
	}
	return out, nil
}

// FromCheckpoint converts back.
func FromCheckpoint(p *pb.Checkpoint) verify.Checkpoint {
	out := verify.Checkpoint{Name: p.GetName(), Score: p.GetScore(), Checks: []verify.CheckResult{}}
	for _, r := range p.GetChecks() {
		out.Checks = append(out.Checks, verify.CheckResult{Kind: FromCheckKind(r.GetKind()), Passed: r.GetPassed(), Evidence: r.GetEvidence(), Missing: r.GetMissing()})
	}
	return out
}

// VerifyLedgerCall converts the verifier's view of a ledger call (kind
// call; Output as one text content item; ErrorKind as the error's kind).
func VerifyLedgerCall(c verify.LedgerCall) *pb.LedgerCall {
	out := &pb.LedgerCall{Index: c.Index, Kind: pb.LedgerRecordKind_LEDGER_RECORD_KIND_CALL, Tool: c.Tool,
		Arguments: string(c.Arguments), RowsChanged: int64(c.RowsChanged)}
	if c.ErrorKind != "" {
		comp := failure.MegaMCP
		if c.ErrorKind.InModule() || c.ErrorKind == failure.InvalidArguments || c.ErrorKind == failure.UnknownTool {
			comp = failure.Module
		}
		out.Error = Failure(comp, c.ErrorKind, "")
	}
	out.Result = &pb.ToolCallResult{IsError: c.IsError}
	if c.Output != "" {
		out.Result.Content = []*pb.Content{{Type: "text", Text: c.Output}}
	}
	return out
}

// FromVerifyLedgerCall converts back: Output is the text content joined by
// newlines.
func FromVerifyLedgerCall(p *pb.LedgerCall) verify.LedgerCall {
	out := verify.LedgerCall{Index: p.GetIndex(), Tool: p.GetTool(), RowsChanged: int(p.GetRowsChanged())}
	if p.GetArguments() != "" {
		out.Arguments = []byte(p.GetArguments())
	}
	if e := p.GetError(); e != nil {
		_, out.ErrorKind, _ = FromFailure(e)
	}
	out.IsError = p.GetResult().GetIsError()
	var texts []string
	for _, c := range p.GetResult().GetContent() {
		if c.GetType() == "text" {
			texts = append(texts, c.GetText())
		}
	}
	out.Output = strings.Join(texts, "\n")
	return out
}

// ReferenceCall converts one call of the reference replay.
func ReferenceCall(c attribute.ReferenceCall) *pb.ReferenceReplayCall {
	out := &pb.ReferenceReplayCall{Atomic: c.Atomic, Index: int32(c.Index), Tool: c.Tool, IsError: c.IsError, Output: c.Output, RowsChanged: int64(c.RowsChanged)}
	if c.ErrorKind != "" {
		out.Error = Failure(failure.Module, c.ErrorKind, "")
	}
	return out
}

// FromReferenceCall converts back.
func FromReferenceCall(p *pb.ReferenceReplayCall) attribute.ReferenceCall {
	out := attribute.ReferenceCall{Atomic: p.GetAtomic(), Index: int(p.GetIndex()), Tool: p.GetTool(), IsError: p.GetIsError(), Output: p.GetOutput(), RowsChanged: int(p.GetRowsChanged())}
	if p.GetError() != nil {
		_, out.ErrorKind, _ = FromFailure(p.GetError())
	}
	return out
}
