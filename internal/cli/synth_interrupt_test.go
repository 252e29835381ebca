package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ctrl-C (ctx canceled) during weft synth compose and certify: an
// "interrupted" line, exit status 130 as weft run, and no file written.
func TestSynthInterrupted(t *testing.T) {
	for _, args := range [][]string{
		{"synth", "compose", "--server", retailServer, "--server", airlineGroupServer, "--tasks", "5", "--turns", "4"},
		{"synth", "certify", tau2Slice(t, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"), "--server", retailServer},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.weft.json")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		var so, se bytes.Buffer
		code := Run(ctx, append(args, "--out", out), Env{Stdout: &so, Stderr: &se, Build: stamped})
		cancel()
		if code != 130 || !strings.Contains(se.String(), "weft "+strings.Join(args[:2], " ")+": interrupted; nothing was written") {
			t.Errorf("%s: exit %d, stderr %q; want 130 and interrupted", args[1], code, se.String())
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s written (stat %v)", args[1], out, err)
		}
	}
}
