package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Defaults for build stamps that were not set.
const (
	defaultVersion = "dev"
	defaultCommit  = "unknown"
)

// VersionInfo is what `weft version` reports; with --json it is printed as
// one JSON object with these field names.
type VersionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the weft version, commit, Go version and platform",
		Long: `Print the weft version, commit, Go version and platform.

The version and commit are stamped at build time (make build). A binary built
without stamps reports the commit recorded by the Go toolchain when there is
one, and "dev" / "unknown" otherwise.`,
		Example: `  weft version
  weft version --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return printVersion(a) },
	}
}

// printVersion prints what `weft version` (and `weft --version`) reports.
func printVersion(a *app) error {
	info, source := resolveVersion(a.env.Build, debug.ReadBuildInfo)
	a.log().Debug("resolved build info", "source", source, "version", info.Version, "commit", info.Commit)
	return a.print(info, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "weft %s\ncommit:  %s\ngo:      %s\nos/arch: %s/%s\n",
			info.Version, info.Commit, info.GoVersion, info.OS, info.Arch)
		return err
	})
}

// resolveVersion combines the -ldflags stamps with the build information
// recorded by the Go toolchain. Stamps win; when the commit is not stamped it
// falls back to the vcs.revision build setting (with "-dirty" when the tree
// was modified), and when the version is not stamped to the main module
// version (set by `go install module@version`). source says where the commit
// came from: "ldflags", "buildinfo" or "default".
func resolveVersion(b Build, readBuildInfo func() (*debug.BuildInfo, bool)) (VersionInfo, string) {
	info := VersionInfo{
		Version:   b.Version,
		Commit:    b.Commit,
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
	}
	source := "ldflags"
	unsetVersion := info.Version == "" || info.Version == defaultVersion
	unsetCommit := info.Commit == "" || info.Commit == defaultCommit
	if unsetCommit {
		source = "default"
	}
	if unsetVersion || unsetCommit {
		if bi, ok := readBuildInfo(); ok && bi != nil {
			if unsetVersion && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				info.Version = bi.Main.Version
			}
			if unsetCommit {
				var rev, modified string
				for _, s := range bi.Settings {
					switch s.Key {
					case "vcs.revision":
						rev = s.Value
					case "vcs.modified":
						modified = s.Value
					}
				}
				if rev != "" {
					info.Commit = rev
					if modified == "true" {
						info.Commit += "-dirty"
					}
					source = "buildinfo"
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = defaultVersion
	}
	if info.Commit == "" {
		info.Commit = defaultCommit
	}
	return info, source
}
