package plugin_test

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// callbacksPerEpisode is N, the Model callbacks of one benchmark episode.
const callbacksPerEpisode = 10

func benchModel() plugin.Model {
	return plugin.ModelFunc(func(_ context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
		resp.Message = &plugin.Message{Role: plugin.RoleAssistant, Content: "ok"}
		resp.FinishReason = "stop"
		return nil
	})
}

func benchEpisodes(b *testing.B, h *plugin.HarnessClient, callbacks int) {
	host := plugin.HostSet{ModelService: benchModel()}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		var resp plugin.RunEpisodeResponse
		if err := h.RunEpisode(ctx, host, &plugin.RunEpisodeRequest{Seed: uint64(callbacks)}, &resp); err != nil {
			b.Fatal(err)
		}
		if resp.GetFailure() != nil || len(resp.GetTrajectory().GetMessages()) != callbacks {
			b.Fatalf("episode: %v", &resp)
		}
	}
}

// BenchmarkRunEpisodeInProcess: one episode of N Model callbacks, plugin
// served in process (go-plugin gRPC over a local socket).
func BenchmarkRunEpisodeInProcess(b *testing.B) {
	h := plugintest.Connect(b, &plugin.ServeConfig{Harness: callbackHarness{}}).Harness(b)
	benchEpisodes(b, h, callbacksPerEpisode)
	b.ReportMetric(callbacksPerEpisode, "callbacks/op")
}

// BenchmarkRunEpisodeSubprocess: the same episode in a plugin process.
func BenchmarkRunEpisodeSubprocess(b *testing.B) {
	h, err := startSelf(b, nil).Harness()
	if err != nil {
		b.Fatal(err)
	}
	benchEpisodes(b, h, callbacksPerEpisode)
	b.ReportMetric(callbacksPerEpisode, "callbacks/op")
}

// BenchmarkCallback: one host callback round trip (plugin -> host Model
// -> plugin); each op is one callback of a single long episode.
func BenchmarkCallback(b *testing.B) {
	run := func(b *testing.B, h *plugin.HarnessClient) {
		var resp plugin.RunEpisodeResponse
		b.ResetTimer()
		if err := h.RunEpisode(context.Background(), plugin.HostSet{ModelService: benchModel()}, &plugin.RunEpisodeRequest{Seed: uint64(b.N)}, &resp); err != nil {
			b.Fatal(err)
		}
		if len(resp.GetTrajectory().GetMessages()) != b.N {
			b.Fatalf("%d callbacks, want %d", len(resp.GetTrajectory().GetMessages()), b.N)
		}
	}
	b.Run("InProcess", func(b *testing.B) {
		run(b, plugintest.Connect(b, &plugin.ServeConfig{Harness: callbackHarness{}}).Harness(b))
	})
	b.Run("Subprocess", func(b *testing.B) {
		h, err := startSelf(b, nil).Harness()
		if err != nil {
			b.Fatal(err)
		}
		run(b, h)
	})
}

// BenchmarkDescribe: one plugin call with no host services (the plugin
// RPC's own overhead).
func BenchmarkDescribe(b *testing.B) {
	run := func(b *testing.B, h *plugin.HarnessClient) {
		ctx := context.Background()
		for b.Loop() {
			if err := h.Describe(ctx, &plugin.DescribeRequest{}, &plugin.DescribeResponse{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("InProcess", func(b *testing.B) {
		run(b, plugintest.Connect(b, &plugin.ServeConfig{Harness: callbackHarness{}}).Harness(b))
	})
	b.Run("Subprocess", func(b *testing.B) {
		h, err := startSelf(b, nil).Harness()
		if err != nil {
			b.Fatal(err)
		}
		run(b, h)
	})
}
