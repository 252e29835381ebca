package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// run executes the CLI in-process and returns the exit code and both streams.
func run(t *testing.T, build Build, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, Env{Stdout: &out, Stderr: &errOut, Build: build})
	return code, out.String(), errOut.String()
}

var stamped = Build{Version: "v0.3.1-4-gdeadbee", Commit: "deadbeefcafef00d0123456789abcdef01234567"}

func TestVersionText(t *testing.T) {
	code, stdout, stderr := run(t, stamped, "version")
	if code != ExitOK {
		t.Fatalf("exit code = %d, want %d; stderr: %s", code, ExitOK, stderr)
	}
	want := "weft v0.3.1-4-gdeadbee\n" +
		"commit:  deadbeefcafef00d0123456789abcdef01234567\n" +
		"go:      " + runtime.Version() + "\n" +
		"os/arch: " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout mismatch (-want +got):\n%s", diff)
	}
	if stderr != "" {
		t.Errorf("stderr = %q, want empty at the default log level", stderr)
	}
}

func TestVersionJSON(t *testing.T) {
	code, stdout, stderr := run(t, stamped, "version", "--json")
	if code != ExitOK {
		t.Fatalf("exit code = %d, want %d; stderr: %s", code, ExitOK, stderr)
	}
	got := decodeOneObject(t, stdout)
	want := map[string]any{
		"version":    "v0.3.1-4-gdeadbee",
		"commit":     "deadbeefcafef00d0123456789abcdef01234567",
		"go_version": runtime.Version(),
		"os":         runtime.GOOS,
		"arch":       runtime.GOARCH,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("version --json mismatch (-want +got):\n%s", diff)
	}
}

// The --json flag is global: it works before the subcommand too.
func TestJSONFlagBeforeCommand(t *testing.T) {
	code, stdout, _ := run(t, stamped, "--json", "version")
	if code != ExitOK {
		t.Fatalf("exit code = %d, want %d", code, ExitOK)
	}
	got := decodeOneObject(t, stdout)
	if got["commit"] != stamped.Commit {
		t.Errorf("commit = %v, want %q", got["commit"], stamped.Commit)
	}
}

// decodeOneObject asserts s is exactly one JSON object and returns it.
func decodeOneObject(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\nstdout: %q", err, s)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON value (next: %s, err: %v)", extra, err)
	}
	return obj
}

func TestResolveVersion(t *testing.T) {
	buildInfo := func(mainVersion string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Settings: settings}
			bi.Main.Version = mainVersion
			return bi, true
		}
	}
	noBuildInfo := func() (*debug.BuildInfo, bool) { return nil, false }
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}
	clean := debug.BuildSetting{Key: "vcs.modified", Value: "false"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}

	tests := []struct {
		name        string
		build       Build
		read        func() (*debug.BuildInfo, bool)
		wantVersion string
		wantCommit  string
		wantSource  string
	}{
		{"stamps win over build info", stamped, buildInfo("v9.9.9", rev, dirty),
			stamped.Version, stamped.Commit, "ldflags"},
		{"unstamped, no build info", Build{}, noBuildInfo,
			"dev", "unknown", "default"},
		{"main defaults, no build info", Build{Version: "dev", Commit: "unknown"}, noBuildInfo,
			"dev", "unknown", "default"},
		{"commit from vcs.revision", Build{Version: "dev", Commit: "unknown"}, buildInfo("(devel)", rev, clean),
			"dev", rev.Value, "buildinfo"},
		{"dirty tree", Build{}, buildInfo("(devel)", rev, dirty),
			"dev", rev.Value + "-dirty", "buildinfo"},
		{"go install module@version", Build{}, buildInfo("v0.2.0"),
			"v0.2.0", "unknown", "default"},
		{"stamped version kept, commit from build info", Build{Version: "v1.0.0"}, buildInfo("v0.2.0", rev),
			"v1.0.0", rev.Value, "buildinfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, source := resolveVersion(tt.build, tt.read)
			want := VersionInfo{
				Version:   tt.wantVersion,
				Commit:    tt.wantCommit,
				GoVersion: runtime.Version(),
				OS:        runtime.GOOS,
				Arch:      runtime.GOARCH,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("VersionInfo mismatch (-want +got):\n%s", diff)
			}
			if source != tt.wantSource {
				t.Errorf("source = %q, want %q", source, tt.wantSource)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"unknown command", []string{"nosuch"},
			`weft: unknown command "nosuch" for "weft" (see 'weft --help')` + "\n"},
		{"misspelled command", []string{"verison"},
			`weft: unknown command "verison" for "weft"; did you mean "version"? (see 'weft --help')` + "\n"},
		{"unknown flag", []string{"version", "--nosuch"},
			"weft: unknown flag: --nosuch\n"},
		{"invalid log level", []string{"--log-level", "verbose", "version"},
			`weft: invalid argument "verbose" for "--log-level" flag: must be one of debug|info|warn|error` + "\n"},
		{"log level is case-sensitive", []string{"version", "--log-level=DEBUG"},
			`weft: invalid argument "DEBUG" for "--log-level" flag: must be one of debug|info|warn|error` + "\n"},
		{"invalid log format", []string{"version", "--log-format", "xml"},
			`weft: invalid argument "xml" for "--log-format" flag: must be one of text|json` + "\n"},
		{"version takes no arguments", []string{"version", "extra"},
			`weft: "weft version" takes no arguments, got "extra"` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, stamped, tt.args...)
			if code != ExitUsage {
				t.Errorf("exit code = %d, want %d", code, ExitUsage)
			}
			if diff := cmp.Diff(tt.wantStderr, stderr); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want empty on a usage error", stdout)
			}
		})
	}
}

// failingWriter fails every write, like a closed pipe.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestRunExitCodes(t *testing.T) {
	// A command that fails (here: stdout cannot be written) exits 1 and
	// reports the cause on stderr.
	var errOut bytes.Buffer
	code := Run(context.Background(), []string{"version", "--json"}, Env{Stdout: failingWriter{}, Stderr: &errOut, Build: stamped})
	if code != ExitError {
		t.Errorf("failing command: exit code = %d, want %d", code, ExitError)
	}
	if diff := cmp.Diff("weft: broken pipe\n", errOut.String()); diff != "" {
		t.Errorf("stderr mismatch (-want +got):\n%s", diff)
	}
	// Nil streams are tolerated.
	if got := Run(context.Background(), []string{"nosuch"}, Env{}); got != ExitUsage {
		t.Errorf("usage error with nil streams: exit code = %d, want %d", got, ExitUsage)
	}
	if got := Run(context.Background(), nil, Env{}); got != ExitOK {
		t.Errorf("no arguments: exit code = %d, want %d", got, ExitOK)
	}
}

func TestLogsGoToStderr(t *testing.T) {
	code, stdout, stderr := run(t, stamped, "--log-level", "debug", "--log-format", "json", "version", "--json")
	if code != ExitOK {
		t.Fatalf("exit code = %d, want %d; stderr: %s", code, ExitOK, stderr)
	}
	// stdout still holds exactly the result object, no log lines.
	if got := decodeOneObject(t, stdout); got["version"] != stamped.Version {
		t.Errorf("stdout version = %v, want %q", got["version"], stamped.Version)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want 1 debug record:\n%s", len(lines), stderr)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("log line is not JSON: %v\n%s", err, lines[0])
	}
	delete(rec, "time")
	want := map[string]any{
		"level":   "DEBUG",
		"msg":     "resolved build info",
		"source":  "ldflags",
		"version": stamped.Version,
		"commit":  stamped.Commit,
	}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("log record mismatch (-want +got):\n%s", diff)
	}
}

func TestLogTextFormat(t *testing.T) {
	code, _, stderr := run(t, stamped, "version", "--log-level=debug")
	if code != ExitOK {
		t.Fatalf("exit code = %d, want %d", code, ExitOK)
	}
	for _, want := range []string{"level=DEBUG", `msg="resolved build info"`, "source=ldflags", "commit=" + stamped.Commit} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
}

func TestRootHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {}} {
		code, stdout, stderr := run(t, stamped, args...)
		if code != ExitOK {
			t.Fatalf("weft %v: exit code = %d, want %d; stderr: %s", args, code, ExitOK, stderr)
		}
		for _, want := range []string{
			"weft runs many stateful, verifiable tool environments and turns agent\nrollouts into SFT and RL data.",
			"With --json, every command\n  that prints results prints exactly one JSON object to stdout instead.",
			"weft version --json",
			"--log-level level",
			"--log-format format",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("weft %v: help lacks %q:\n%s", args, want, stdout)
			}
		}
		if !regexp.MustCompile(`(?m)^  version +Print the weft version`).MatchString(stdout) {
			t.Errorf("weft %v: help does not list the version command:\n%s", args, stdout)
		}
		if strings.Contains(stdout, "completion") {
			t.Errorf("weft %v: help lists the completion command, which is disabled", args)
		}
	}
}
