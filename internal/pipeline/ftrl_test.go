package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/synth/ftrl"
	"github.com/weft-dev/weft/core/train"
)

// FTRLOptions maps configs/ftrl.hcl to core/synth/ftrl's options: the
// rollout policy's faults for episodes, group_policy's for candidates.
func TestFTRLOptions(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cfg, diags := config.Load(filepath.Join(root, "configs", "ftrl.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	o, err := FTRLOptions(cfg, "/out")
	if err != nil {
		t.Fatal(err)
	}
	want := ftrl.Options{
		RetailSeed: filepath.Join(root, "examples/servers/tau2-retail/seed.json"), AirlineSeed: filepath.Join(root, "examples/servers/tau2-airline/seed.json"),
		Scenarios: 32, Seed: 1, G: 16, MaxTurns: 20, Mode: train.FTRLCompatible, Out: "/out",
		Faults:      ftrl.Faults{Faults: scripted.Faults{ExtraCall: 0.08, HallucinatedTool: 0.06, MalformedCall: 0.05, EarlyStop: 0.05, WrongArgument: 0.06}, EmptyReply: 0.03, ParallelCalls: 0.5},
		GroupFaults: ftrl.Faults{Faults: scripted.Faults{ExtraCall: 0.2, HallucinatedTool: 0.15, MalformedCall: 0.15, EarlyStop: 0.15, WrongArgument: 0.15}, EmptyReply: 0.1, ParallelCalls: 0.5},
	}
	if o != want {
		t.Errorf("options\n got %+v\nwant %+v", o, want)
	}
	bad := *cfg
	bad.FTRL = nil
	if _, err := FTRLOptions(&bad, "/out"); err == nil || !strings.Contains(err.Error(), "has no ftrl block") {
		t.Errorf("no block: %v", err)
	}
	f := *cfg.FTRL
	f.GroupPolicy = "nobody"
	bad.FTRL = &f
	if _, err := FTRLOptions(&bad, "/out"); err == nil || err.Error() != `pipeline: ftrl: no policy "nobody"` {
		t.Errorf("undeclared policy: %v", err)
	}
}
