//go:build unix

package plugin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// setProcessGroup makes cmd start in a process group of its own, so that
// killGroup reaches the children it leaves behind, and tells the plugin the
// host's pid (hostPIDEnv) so that it can exit when the host dies (see
// watchHost).
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// go-plugin appends the host's environment after cmd.Env (a nil
	// cmd.Env therefore still inherits it).
	cmd.Env = append(cmd.Env, hostPIDEnv+"="+strconv.Itoa(os.Getpid()))
}

// killGroup kills the process group of pid (a leader started with
// setProcessGroup); a group that is gone is not an error.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// hostPIDEnv carries the host's pid to the plugin process (decimal).
const hostPIDEnv = "WEFT_PLUGIN_HOST_PID"

// hostPollInterval is how often a serving plugin checks that its host is
// alive: a plugin outlives a killed host by at most about this long.
const hostPollInterval = 250 * time.Millisecond

// watchHost makes a serving plugin exit (status 3, after one line on
// stderr) once its host is gone, so that a host killed with SIGKILL leaves
// no plugin behind: go-plugin's server ignores SIGINT, the host's stdin is
// not the plugin's to watch, and nothing else would end it.
//
// The host is gone when the plugin's parent pid changes (the parent died
// and the plugin was re-parented to init or a subreaper) or when the pid in
// hostPIDEnv (set by Start) no longer runs (which also covers a host that
// died before the plugin got here, and a wrapper process between them). A
// plugin started without hostPIDEnv by a parent that is already pid 1 is
// never considered orphaned.
//
// Linux's parent-death signal (SysProcAttr.Pdeathsig) is not used: it fires
// when the OS thread that forked the plugin exits, which the Go runtime may
// do while the host lives on.
func watchHost() {
	ppid := os.Getppid()
	host, _ := strconv.Atoi(os.Getenv(hostPIDEnv))
	go func() {
		for !hostGone(ppid, host) {
			time.Sleep(hostPollInterval)
		}
		gone := host
		if gone <= 0 {
			gone = ppid
		}
		fmt.Fprintf(os.Stderr, "weft plugin: host process %d is gone; exiting\n", gone)
		os.Exit(3)
	}()
}

// hostGone reports whether the plugin's parent changed from ppid or the
// host pid (0: unknown) no longer runs.
func hostGone(ppid, host int) bool {
	if ppid > 1 && os.Getppid() != ppid {
		return true
	}
	if host <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(host, 0), syscall.ESRCH) || leaderGone(host)
}
