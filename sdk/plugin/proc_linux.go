//go:build linux

package plugin

import (
	"bytes"
	"os"
	"strconv"
)

// leaderGone reports whether process pid has exited (a zombie not yet
// reaped counts as exited).
func leaderGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name, which may hold
	// spaces and parentheses itself.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
