package builtin

import (
	"github.com/weft-dev/weft/plugins/harness/hermes"
	"github.com/weft-dev/weft/plugins/harness/native"
	"github.com/weft-dev/weft/plugins/harness/react"
	"github.com/weft-dev/weft/sdk/plugin"
)

var harnesses = map[string]func() plugin.Harness{
	"hermes": hermes.New,
	"native": native.New,
	"react":  react.New,
}

// Harness returns a new instance of the built-in harness called name, and
// false when there is none.
func Harness(name string) (plugin.Harness, bool) {
	f, ok := harnesses[name]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Names returns the built-in harness names, sorted.
func Names() []string { return []string{"hermes", "native", "react"} }
