package wire

import (
	"fmt"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/sdk/failure"
	pb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// Failure converts a component and kind to the protocol's Failure (enum
// values named after the vocabulary; an unknown kind is UNSPECIFIED with
// the kind kept in the message).
func Failure(c failure.Component, k failure.Kind, msg string) *pb.Failure {
	f := &pb.Failure{Message: msg}
	f.Component = pb.Component(pb.Component_value["COMPONENT_"+strings.ToUpper(string(c))])
	if v, ok := pb.FailureKind_value["FAILURE_KIND_"+strings.ToUpper(string(k))]; ok {
		f.Kind = pb.FailureKind(v)
	} else if k != "" {
		f.Message = string(k) + ": " + msg
	}
	return f
}

// FromFailure converts back ("" for unspecified values).
func FromFailure(f *pb.Failure) (failure.Component, failure.Kind, string) {
	var c failure.Component
	var k failure.Kind
	if f.GetComponent() != pb.Component_COMPONENT_UNSPECIFIED {
		c = failure.Component(strings.ToLower(strings.TrimPrefix(f.GetComponent().String(), "COMPONENT_")))
	}
	if f.GetKind() != pb.FailureKind_FAILURE_KIND_UNSPECIFIED {
		k = failure.Kind(strings.ToLower(strings.TrimPrefix(f.GetKind().String(), "FAILURE_KIND_")))
	}
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
		Module: r.Module, Tool: r.Tool, Arguments: string(r.Arguments), RowsChanged: int64(r.RowsChanged),
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
		sc, err := JSON(r.Result.StructuredContent)
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
		mr := &module.Result{IsError: res.GetIsError(), Content: []module.Content{}}
		for _, c := range res.GetContent() {
			mc := module.Content{Type: c.GetType(), Text: c.GetText(), Data: c.GetData(), MimeType: c.GetMimeType(), URI: c.GetUri(), Name: c.GetName()}
			if rc := c.GetResource(); rc != nil {
				mc.Resource = &module.ResourceContents{URI: rc.GetUri(), MimeType: rc.GetMimeType(), Text: rc.GetText(), Blob: rc.GetBlob()}
			}
			mr.Content = append(mr.Content, mc)
		}
		sc, err := ToJSON(res.GetStructuredContent())
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
