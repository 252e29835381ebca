package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/weft-dev/weft/internal/cli"
)

// Build stamps, set with -ldflags -X by `make build`.
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Build:  cli.Build{Version: version, Commit: commit},
	})
	stop()
	os.Exit(code)
}
