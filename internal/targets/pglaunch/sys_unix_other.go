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

// crashTree kills the postmaster's process group. Without /proc the
// children, each in a group of its own, are not found: they exit when they
// notice the postmaster is gone, which Kill waits for through
// postmaster.pid's shared memory check at Restart.
func crashTree(pid int) []int {
	killGroup(pid)

	return []int{pid}
}

// treeGone reports whether the postmaster's group is gone.
func treeGone(pids []int) bool {
	return !groupAlive(pids[0])
}
