//go:build !unix

package plugin

import "os/exec"

// setProcessGroup does nothing here: process groups are a unix feature.
func setProcessGroup(*exec.Cmd) {}

// killGroup does nothing here.
func killGroup(int) {}

// watchHost does nothing here: a plugin off unix does not watch its host.
func watchHost() {}
