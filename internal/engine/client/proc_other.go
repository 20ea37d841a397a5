//go:build unix && !linux

package client

import "syscall"

// setDeathSignal does nothing where the system has no parent-death
// signal: the adapter ends when its standard input closes with mongobench.
func setDeathSignal(*syscall.SysProcAttr) {}
