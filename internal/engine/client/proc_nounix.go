//go:build !unix

package client

import (
	"os/exec"
	"syscall"
)

// procAttr has nothing to add where there are no process groups.
func procAttr() *syscall.SysProcAttr { return nil }

// killProcess kills the adapter.
func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
