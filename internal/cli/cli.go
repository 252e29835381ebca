package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// Exit codes returned by Run.
const (
	ExitOK    = 0 // success
	ExitError = 1 // the command failed
	ExitUsage = 2 // the command line was wrong: unknown command, bad flag or argument
)

// Build carries the build stamps of the binary, set by cmd/weft from
// -ldflags -X. Empty fields mean "not stamped".
type Build struct {
	Version string
	Commit  string
}

// Env is everything Run needs from the process.
type Env struct {
	Stdout io.Writer // results: text, or one JSON object with --json
	Stderr io.Writer // logs and error messages
	Build  Build
}

// UsageError reports a wrong command line. Run maps it to ExitUsage.
type UsageError struct {
	Err error
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Run executes the weft command line args (without the program name) and
// returns the process exit code. Errors are printed to env.Stderr as
// "weft: <message>".
func Run(ctx context.Context, args []string, env Env) int {
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	root := newRootCmd(env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != errSilentFailure {
		fmt.Fprintf(env.Stderr, "weft: %v\n", err)
	}
	var usage *UsageError
	if errors.As(err, &usage) {
		return ExitUsage
	}
	return ExitError
}

// app holds the global flags and the process streams shared by all commands.
type app struct {
	env       Env
	json      bool
	logLevel  levelFlag
	logFormat formatFlag

	loggerOnce sync.Once
	logger     *slog.Logger
}

// log returns the logger configured by --log-level and --log-format. It
// writes to stderr only. Flags are parsed before any command runs, so the
// first call sees their final values.
func (a *app) log() *slog.Logger {
	a.loggerOnce.Do(func() {
		opts := &slog.HandlerOptions{Level: slog.Level(a.logLevel)}
		var h slog.Handler
		if a.logFormat == "json" {
			h = slog.NewJSONHandler(a.env.Stderr, opts)
		} else {
			h = slog.NewTextHandler(a.env.Stderr, opts)
		}
		a.logger = slog.New(h)
	})
	return a.logger
}

// print writes a command's result to stdout: v as one JSON object with
// --json, otherwise the output of text.
func (a *app) print(v any, text func(w io.Writer) error) error {
	if a.json {
		enc := json.NewEncoder(a.env.Stdout)
		return enc.Encode(v)
	}
	return text(a.env.Stdout)
}

const rootLong = `weft runs many stateful, verifiable tool environments and turns agent
rollouts into SFT and RL data.

Output conventions:
  Results go to stdout as human-readable text. With --json, every command
  that prints results prints exactly one JSON object to stdout instead.
  Logs go to stderr only (see --log-level and --log-format), never stdout,
  so stdout stays safe to pipe.

Exit status:
  0 on success, 1 when a command fails, 2 on a usage error (unknown command,
  bad flag or argument). Errors are printed to stderr as "weft: <message>".`

const rootExample = `  # Show the version, commit, Go version and platform
  weft version

  # The same as one JSON object on stdout
  weft version --json

  # Debug logs on stderr, as JSON lines
  weft version --log-level debug --log-format json`

func newRootCmd(env Env) *cobra.Command {
	a := &app{env: env, logLevel: levelFlag(slog.LevelInfo), logFormat: "text"}
	var showVersion bool
	root := &cobra.Command{
		Use:                        "weft",
		Short:                      "Stateful, verifiable tool environments and agent post-training data",
		Long:                       rootLong,
		Example:                    rootExample,
		SilenceErrors:              true, // Run prints errors itself
		SilenceUsage:               true, // an error is not a reason to dump the help
		SuggestionsMinimumDistance: 2,
		CompletionOptions: cobra.CompletionOptions{
			DisableDefaultCmd: true,
		},
		// Positional arguments that are not a subcommand are a usage error.
		// Validating them here (rather than in cobra's built-in check) lets
		// Run tell usage errors apart by type.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", s[0])
			}
			return usageErrorf("%s (see 'weft --help')", msg)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				return printVersion(a)
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version, as 'weft version' does (with --json, one JSON object)")
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &UsageError{Err: err}
	})

	pf := root.PersistentFlags()
	pf.BoolVar(&a.json, "json", false, "print results as one JSON object on stdout")
	pf.Var(&a.logLevel, "log-level", "minimum level of the logs written to stderr: debug|info|warn|error")
	pf.Var(&a.logFormat, "log-format", "format of the logs written to stderr: text|json")

	root.AddCommand(newVersionCmd(a), newStateCmd(a), newModuleCmd(a), newServeCmd(a), newMCPCmd(a), newPluginCmd(a), newValidateCmd(a), newConfigCmd(a), newRunCmd(a), newRolloutServiceCmd(a), newSynthCmd(a), newFTRLCmd(a), newWorkerCmd(a))
	return root
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.HasSubCommands() {
		return unknownSubcommand(cmd, args[0])
	}
	if len(args) > 0 {
		return usageErrorf("%q takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// levelFlag is the --log-level value.
type levelFlag slog.Level

var levelNames = []struct {
	name  string
	level slog.Level
}{
	{"debug", slog.LevelDebug},
	{"info", slog.LevelInfo},
	{"warn", slog.LevelWarn},
	{"error", slog.LevelError},
}

func (l *levelFlag) String() string {
	for _, n := range levelNames {
		if n.level == slog.Level(*l) {
			return n.name
		}
	}
	return slog.Level(*l).String()
}

func (l *levelFlag) Set(s string) error {
	for _, n := range levelNames {
		if n.name == s {
			*l = levelFlag(n.level)
			return nil
		}
	}
	return errors.New("must be one of debug|info|warn|error")
}

func (l *levelFlag) Type() string { return "level" }

// formatFlag is the --log-format value.
type formatFlag string

func (f *formatFlag) String() string { return string(*f) }

func (f *formatFlag) Set(s string) error {
	switch s {
	case "text", "json":
		*f = formatFlag(s)
		return nil
	}
	return errors.New("must be one of text|json")
}

func (f *formatFlag) Type() string { return "format" }
