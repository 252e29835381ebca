//go:build unix

package plugin

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd start in a process group of its own, so that
// killGroup reaches the children it leaves behind.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup kills the process group of pid (a leader started with
// setProcessGroup); a group that is gone is not an error.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
