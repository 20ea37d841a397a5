//go:build !unix

package pglaunch

import (
	"errors"
	"os/exec"
)

// account is the system user the server's programs run as; it is never
// needed where PostgreSQL cannot be launched.
type account struct {
	name string
}

// chown is never reached; it reports the platform error.
func (a *account) chown(string) error {
	return platformCheck()
}

// platformCheck explains that this system is not supported: pglaunch
// relies on Unix process groups and signals to stop the server reliably.
func platformCheck() error {
	return errors.New("starting a private PostgreSQL is supported on Linux and other Unix-like systems only")
}

// isRoot reports false: there is no root to avoid here.
func isRoot() bool {
	return false
}

// lookupSystemUser is never reached; it reports the platform error.
func lookupSystemUser() (*account, error) {
	return nil, platformCheck()
}

// checkReachable is never reached; it reports the platform error.
func checkReachable(string, *account) error {
	return platformCheck()
}

// prepareCommand does nothing here.
func prepareCommand(*exec.Cmd, *account) {}

// prepareServer does nothing here.
func prepareServer(*exec.Cmd) {}

// stopSignals has one step here: killing the process.
var stopSignals = []struct{}{{}}

// signalStep is never reached; it reports the platform error.
func signalStep(int, int) (string, error) {
	return "kill", platformCheck()
}

// groupAlive reports false: there are no process groups to wait for.
func groupAlive(int) bool {
	return false
}

// killGroup does nothing here.
func killGroup(int) {}

// crashTree is never reached where PostgreSQL cannot be launched.
func crashTree(pid int) []int { return []int{pid} }

// treeGone is never reached where PostgreSQL cannot be launched.
func treeGone([]int) bool { return true }
