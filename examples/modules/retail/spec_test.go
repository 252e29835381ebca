package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/sdk/spec"
	"github.com/weft-dev/weft/sdk/tool"
)

// TestSynthesizedServerInterface: the retail domain re-expressed as a
// synthesized server (examples/servers/tau2-retail) declares this module's
// interface: the same tools, descriptions, input schemas and read-only
// hints, so recorded trajectories replay against either.
func TestSynthesizedServerInterface(t *testing.T) {
	s, err := spec.Load("../../servers/tau2-retail")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	type toolShape struct {
		Name        string
		Description string
		InputSchema any
		ReadOnly    bool
	}
	shapes := func(m []byte) []toolShape {
		var man struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
				Annotations *struct {
					ReadOnlyHint bool `json:"readOnlyHint"`
				} `json:"annotations"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(m, &man); err != nil {
			t.Fatal(err)
		}
		var out []toolShape
		for _, x := range man.Tools {
			var schema any
			if err := json.Unmarshal(x.InputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			out = append(out, toolShape{x.Name, x.Description, schema, x.Annotations != nil && x.Annotations.ReadOnlyHint})
		}
		return out
	}
	specMan, err := json.Marshal(s.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	want, got := shapes(tool.ManifestJSON()), shapes(specMan)
	if len(want) != 16 {
		t.Fatalf("the module has %d tools", len(want))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the synthesized server's tools differ from the module's (-module +server):\n%s", d)
	}
}
