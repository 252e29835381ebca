package native

import (
	"fmt"
	"path"

	"github.com/weft-dev/weft/sdk/plugin"
)

// checkGlobs reports the first malformed pattern of field.
func checkGlobs(field string, globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("%s: bad pattern %q: %v", field, g, err)
		}
	}
	return nil
}

// matchAny reports whether name matches one of globs (checked valid).
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// globsPermit applies the allow and deny globs of the settings and of
// the profile to name.
func (c *config) globsPermit(name string) bool {
	for _, f := range []struct{ allow, deny []string }{{c.s.Allow, c.s.Deny}, {c.profile.Allow, c.profile.Deny}} {
		if len(f.allow) > 0 && !matchAny(f.allow, name) {
			return false
		}
		if matchAny(f.deny, name) {
			return false
		}
	}
	return true
}

// permits reports whether t is offered to the model.
func (c *config) permits(t *plugin.Tool) bool {
	if c.profile.ReadOnly && !t.GetReadOnly() {
		return false
	}
	return c.globsPermit(t.GetName())
}
