package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/synth/ftrl"
)

// weft run configs/ftrl.hcl runs offline: the summary on stdout (--json)
// is the run folder's summary.json; the human table has a row per type.
func TestRunFTRLConfig(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cfg := filepath.Join(root, "configs", "ftrl.hcl")
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCtx(t, context.Background(), "run", cfg, "--var", "scenarios=4", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Dir  string       `json:"dir"`
		FTRL ftrl.Summary `json:"ftrl"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	var want ftrl.Summary
	b, err := os.ReadFile(filepath.Join(out, ftrl.FileSummary))
	if err == nil {
		err = json.Unmarshal(b, &want)
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.FTRL); diff != "" || got.Dir != out {
		t.Errorf("stdout summary (-folder +stdout):\n%s dir %s", diff, got.Dir)
	}
	if all := want.Types["all"]; all.Scenarios != 8 || all.ToolsPassed != all.DeployedTools || want.G != 16 || want.Mode != "compatible" {
		t.Errorf("summary %+v", all)
	}
	for _, f := range []string{ftrl.FileScenarios, ftrl.FileDocuments, ftrl.FileIntegrated, ftrl.FileScaled, ftrl.FileDeployed, ftrl.FileParquet, "config.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The human summary of the same run (a second folder).
	h := filepath.Join(t.TempDir(), "h")
	code, stdout, stderr = runCtx(t, context.Background(), "run", cfg, "--var", "scenarios=4", "--out", h)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.HasPrefix(lines[0], "TYPE ") || !strings.HasPrefix(lines[1], "single_hop ") || !strings.HasPrefix(lines[5], "all ") ||
		!strings.Contains(stdout, "grpo (atomic_turn over FTRL prefixes, G = 16, reward solve-F1, compatible mode)") {
		t.Errorf("human summary:\n%s", stdout)
	}
	// The reward histogram per scenario type, as summary.json has it:
	// a column per reward, a row per type, groups and non-zero share.
	var hs ftrl.Summary
	if b, err := os.ReadFile(filepath.Join(h, ftrl.FileSummary)); err != nil || json.Unmarshal(b, &hs) != nil {
		t.Fatalf("summary of the human run: %v", err)
	}
	i := slices.Index(lines, "candidate solve-F1 per scenario type (reward histogram):")
	if i < 0 || i+6 >= len(lines) {
		t.Fatalf("no reward histogram in:\n%s", stdout)
	}
	head := strings.Fields(lines[i+1])
	if len(head) < 4 || head[0] != "TYPE" || head[len(head)-3] != "GROUPS" {
		t.Fatalf("histogram header %q", lines[i+1])
	}
	keys := head[1 : len(head)-3]
	for r, typ := range []string{"single_hop", "parallel_single_hop", "multi_hop", "parallel_multi_hop", "all"} {
		f := strings.Fields(lines[i+2+r])
		c := hs.Types[typ]
		want := []string{typ}
		for _, k := range keys {
			want = append(want, strconv.Itoa(c.Rewards[k]))
		}
		want = append(want, strconv.Itoa(c.Groups), strconv.FormatFloat(100*float64(c.NonZero)/float64(c.Groups), 'f', 1, 64)+"%")
		if !slices.Equal(f, want) {
			t.Errorf("histogram row %q, want %q", lines[i+2+r], strings.Join(want, " "))
		}
		total := 0
		for _, n := range c.Rewards {
			total += n
		}
		if total != 16*c.Groups || len(c.Rewards) != len(keys) && typ == "all" {
			t.Errorf("%s: %d rewards for %d groups of 16, keys %v", typ, total, c.Groups, keys)
		}
	}
}
