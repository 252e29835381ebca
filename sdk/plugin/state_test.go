package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// stateVerifier calls Hash and Diff on the host's State service and reports
// what it got as checkpoint evidence.
type stateVerifier struct{}

func (stateVerifier) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name = "state-verifier"
	return nil
}

func (stateVerifier) Verify(ctx context.Context, host plugin.Host, req *plugin.VerifyRequest, resp *plugin.VerifyResponse) error {
	var h plugin.HashResponse
	if err := host.State().Hash(ctx, &plugin.HashRequest{Version: "final"}, &h); err != nil {
		resp.Failure = plugin.FailureFromError(err)
		return nil
	}
	var d plugin.DiffResponse
	if err := host.State().Diff(ctx, &plugin.DiffRequest{From: "initial", To: "final"}, &d); err != nil {
		resp.Failure = plugin.FailureFromError(err)
		return nil
	}
	var diff string
	for _, td := range d.GetChanges().GetTables() {
		diff += fmt.Sprintf("%s%v;", td.GetTable(), td.GetColumns())
	}
	resp.Checkpoints = []*plugin.Checkpoint{{Name: "hash", Checks: []*plugin.CheckResult{{Evidence: h.GetHash()}}}, {Name: "diff", Checks: []*plugin.CheckResult{{Evidence: diff}}}}
	return nil
}

func TestStateHashAndDiffRoundTrip(t *testing.T) {
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: stateVerifier{}})
	ctx := context.Background()
	var gotHash *plugin.HashRequest
	var gotDiff *plugin.DiffRequest
	state := plugin.StateFuncs{
		OnHash: func(_ context.Context, req *plugin.HashRequest, resp *plugin.HashResponse) error {
			gotHash = req
			resp.Hash = "ab12"
			return nil
		},
		OnDiff: func(_ context.Context, req *plugin.DiffRequest, resp *plugin.DiffResponse) error {
			gotDiff = req
			resp.Changes = &plugin.Changes{Tables: []*plugin.TableDiff{{Table: "t", Columns: []string{"n"}}}}
			return nil
		},
	}
	var vr plugin.VerifyResponse
	if err := conn.Verifier(t).Verify(ctx, plugin.HostSet{StateService: state}, &plugin.VerifyRequest{EpisodeId: "ep_s"}, &vr); err != nil {
		t.Fatal(err)
	}
	want := &plugin.VerifyResponse{Checkpoints: []*plugin.Checkpoint{{Name: "hash", Checks: []*plugin.CheckResult{{Evidence: "ab12"}}}, {Name: "diff", Checks: []*plugin.CheckResult{{Evidence: "t[n];"}}}}}
	if d := cmp.Diff(want, &vr, protocmp.Transform()); d != "" {
		t.Errorf("Verify (-want +got):\n%s", d)
	}
	if d := cmp.Diff(&plugin.HashRequest{EpisodeId: "ep_s", Version: "final"}, gotHash, protocmp.Transform()); d != "" {
		t.Errorf("Hash request (-want +got):\n%s", d)
	}
	if d := cmp.Diff(&plugin.DiffRequest{EpisodeId: "ep_s", From: "initial", To: "final"}, gotDiff, protocmp.Transform()); d != "" {
		t.Errorf("Diff request (-want +got):\n%s", d)
	}
}

// A host error of Hash (an unknown version) reaches the plugin as a
// *HostError with its kind, and StateFunc offers no Hash.
func TestStateHashErrors(t *testing.T) {
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: stateVerifier{}})
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		state plugin.State
		want  *plugin.Failure
	}{
		{"no_such_version", plugin.StateFuncs{OnHash: func(context.Context, *plugin.HashRequest, *plugin.HashResponse) error {
			return &plugin.HostError{Kind: "no_such_version", Message: "no version final"}
		}}, plugin.NewFailure("state", "no_such_version", "no version final")},
		{"state_func", plugin.StateFunc(func(context.Context, *plugin.QueryRequest, *plugin.QueryResponse) error { return nil }),
			plugin.NewFailure("state", "unavailable", "the host offers no state service for this call")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vr plugin.VerifyResponse
			if err := conn.Verifier(t).Verify(ctx, plugin.HostSet{StateService: tc.state}, &plugin.VerifyRequest{EpisodeId: "ep_" + tc.name}, &vr); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, vr.GetFailure(), protocmp.Transform()); d != "" {
				t.Errorf("failure (-want +got):\n%s", d)
			}
		})
	}
	var he *plugin.HostError
	err := plugin.HostSet{}.State().Diff(ctx, &plugin.DiffRequest{}, &plugin.DiffResponse{})
	if !errors.As(err, &he) || he.Kind != "unavailable" {
		t.Errorf("HostSet{}.State().Diff = %v, want HostError unavailable", err)
	}
}
