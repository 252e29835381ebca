package pipeline

import (
	"reflect"
	"testing"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/plugins/builtin"
)

// These checks live here rather than in core/config so that config's test
// binary stays small (its fuzz target needs a fast binary).

// The names the schema accepts are the engine's.
func TestNamesMatchEngine(t *testing.T) {
	if !reflect.DeepEqual(config.BuiltinHarnesses, builtin.Names()) {
		t.Errorf("BuiltinHarnesses = %v, builtin.Names() = %v", config.BuiltinHarnesses, builtin.Names())
	}
	if !reflect.DeepEqual(config.Views, []string{task.ViewAgentic, task.ViewSimUser}) {
		t.Errorf("Views = %v", config.Views)
	}
	// The config's faults block decodes into scripted.Faults itself (no
	// mirror to keep in step); rates in [0, 1] are valid for the policy.
	var p config.Scripted
	p.Faults = scripted.Faults{WrongArgument: 0.08, EarlyStop: 1}
	if err := p.Faults.Validate(); err != nil {
		t.Error(err)
	}
}

// The config's names for stages, export formats and rewards are the
// pipeline's.
func TestConfigNamesMatchPipeline(t *testing.T) {
	if !reflect.DeepEqual(config.AllStages, Stages) {
		t.Errorf("config.AllStages = %v, pipeline.Stages = %v", config.AllStages, Stages)
	}
	formats := map[string]bool{}
	for _, f := range Formats {
		formats[f] = true
	}
	for _, f := range config.ExportFormats {
		if !formats[f] {
			t.Errorf("config export format %q is not a pipeline format %v", f, Formats)
		}
	}
	if len(config.ExportFormats) != len(Formats) {
		t.Errorf("config.ExportFormats = %v, pipeline.Formats = %v", config.ExportFormats, Formats)
	}
	rewards := map[string]bool{}
	for _, r := range RewardNames() {
		rewards[r] = true
	}
	for _, r := range config.GRPORewards {
		if !rewards[r] {
			t.Errorf("config reward %q is not a pipeline reward %v", r, RewardNames())
		}
	}
}
