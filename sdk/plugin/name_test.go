package plugin_test

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
)

// StartConfig.Name, when set, names the plugin in Start's errors instead
// of the binary's base name.
func TestStartName(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"builtin:react", "weft plugin builtin:react: exited: "},
		{"", "weft plugin true: exited: "},
	} {
		_, err := plugin.Start(context.Background(), plugin.StartConfig{Cmd: exec.Command("/bin/true"), Name: c.name,
			Logger: slog.New(slog.DiscardHandler), StartTimeout: 10 * time.Second})
		var pe *plugin.PluginError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Name %q: error %v, want a *PluginError starting %q", c.name, err, c.want)
		}
	}
}
