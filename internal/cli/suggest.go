package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/internal/suggest"
)

// didYouMean returns `; did you mean "X"?` for the candidate closest to s
// (suggest.Closest), or "" when none is close.
func didYouMean(s string, candidates []string) string {
	if best := suggest.Closest(s, candidates); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

// unknownSubcommand is the usage error for an argument given to a command
// group (weft module biuld): the subcommand it names does not exist.
func unknownSubcommand(cmd *cobra.Command, arg string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	return usageErrorf("unknown command %q for %q%s (see '%s --help')", arg, cmd.CommandPath(), didYouMean(arg, names), cmd.CommandPath())
}

// withToolSuggestion adds the closest tool name of m to an unknown-tool
// error.
func withToolSuggestion(err error, tool string, m module.Manifest) error {
	if !errors.Is(err, module.ErrUnknownTool) {
		return err
	}
	names := make([]string, len(m.Tools))
	for i, t := range m.Tools {
		names[i] = t.Name
	}
	if s := didYouMean(tool, names); s != "" {
		return fmt.Errorf("%w%s", err, s)
	}
	return err
}

// withModuleSuggestion adds the closest module name of the registry to a
// not-found error for a name[:tag] reference.
func withModuleSuggestion(err error, ref string, reg *module.Registry) error {
	if !errors.Is(err, module.ErrNotFound) || strings.HasPrefix(ref, "sha256:") {
		return err
	}
	refs, lerr := reg.List()
	if lerr != nil {
		return err
	}
	name, _, _ := strings.Cut(ref, ":")
	var names []string
	for _, r := range refs {
		names = append(names, r.Name)
	}
	if s := didYouMean(name, names); s != "" {
		return fmt.Errorf("%w%s", err, s)
	}
	return err
}
