//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

// procAttr starts the adapter in a process group of its own, so that the
// terminal's Ctrl-C reaches mongobench only, which then stops the adapter
// in order (stop, its last results, exit) instead of losing them.
func procAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(attr)

	return attr
}

// killProcess kills the adapter's process group: an adapter may have
// started helpers of its own.
func killProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}

	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
