package client

import "syscall"

// setDeathSignal has Linux kill the adapter when mongobench dies, however
// it dies (even SIGKILL), so that no adapter outlives its run.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
