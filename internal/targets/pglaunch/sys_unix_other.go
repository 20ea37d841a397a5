//go:build unix && !linux

package pglaunch

import "os/exec"

// prepareServer does nothing: only Linux can stop a child when its parent
// dies, so elsewhere a killed mongobench leaves its server running.
func prepareServer(*exec.Cmd) {}

// onlyZombies cannot tell zombies apart without /proc, so it says no.
func onlyZombies(int) bool {
	return false
}
