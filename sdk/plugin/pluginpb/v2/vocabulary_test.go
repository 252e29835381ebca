package pluginv2_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/sdk/failure"
	pluginv2 "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// enumNames returns the lower-case names of a proto enum's values without
// prefix, skipping the zero value, in number order.
func enumNames(names map[int32]string, prefix string) []string {
	var out []string
	for i := int32(1); i < int32(len(names)); i++ {
		n, ok := names[i]
		if !ok {
			continue
		}
		out = append(out, strings.ToLower(strings.TrimPrefix(n, prefix)))
	}
	return out
}

// TestFailureKindEnumMatchesVocabulary: weft.plugin.v2.FailureKind and
// sdk/failure.Kinds list the same kinds in the same order, and the
// Component enum the same components.
func TestFailureKindEnumMatchesVocabulary(t *testing.T) {
	var kinds []string
	for _, i := range failure.Kinds() {
		kinds = append(kinds, string(i.Kind))
	}
	if d := cmp.Diff(kinds, enumNames(pluginv2.FailureKind_name, "FAILURE_KIND_")); d != "" {
		t.Errorf("FailureKind enum vs sdk/failure.Kinds (-vocabulary +proto):\n%s", d)
	}
	var comps []string
	for _, c := range failure.Components() {
		comps = append(comps, string(c))
	}
	if d := cmp.Diff(comps, enumNames(pluginv2.Component_name, "COMPONENT_")); d != "" {
		t.Errorf("Component enum vs sdk/failure.Components (-vocabulary +proto):\n%s", d)
	}
}
