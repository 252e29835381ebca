package builtin

import (
	"context"
	"slices"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
)

func TestHarness(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"hermes", "native", "react"}) || len(got) != len(harnesses) {
		t.Fatalf("Names() = %v", got)
	}
	formats := map[string]plugin.OutputFormat{"hermes": plugin.FormatHermes, "native": plugin.FormatNative, "react": plugin.FormatReAct}
	for _, name := range Names() {
		h, ok := Harness(name)
		if !ok {
			t.Fatalf("Harness(%q) not found", name)
		}
		var d plugin.DescribeResponse
		if err := h.Describe(context.Background(), &plugin.DescribeRequest{}, &d); err != nil {
			t.Fatal(err)
		}
		if d.Name != name || d.Version != "1.0.0" || d.Format != formats[name] || d.SettingsSchema == nil {
			t.Errorf("%s: describe %v", name, &d)
		}
	}
	if h, ok := Harness("smolagents"); ok || h != nil {
		t.Errorf("unknown harness found: %v", h)
	}
}
