package pglaunch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// prepareServer makes the kernel stop the postmaster (SIGQUIT, immediate
// shutdown) when this process dies without calling Stop, so that a crashed
// or killed mongobench does not leave a server running.
func prepareServer(cmd *exec.Cmd) {
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
}

// onlyZombies reports whether every process of group pgid listed in /proc
// is a zombie (or none is listed).
func onlyZombies(pgid int) bool {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return false
	}

	want := strconv.Itoa(pgid)

	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}

		// "pid (comm) state ppid pgrp ...", where comm may hold spaces
		// and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}

		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return false
		}
	}

	return true
}

// procStat is what crashTree needs of a process: its parent and state.
type procStat struct {
	ppid  int
	state string
}

// readStat reads /proc/PID/stat; ok is false when the process is gone.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}

	// "pid (comm) state ppid ...", where comm may hold spaces and
	// parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procStat{}, false
	}

	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return procStat{}, false
	}

	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, false
	}

	return procStat{ppid: ppid, state: f[0]}, true
}

// descendants returns the processes below pid in the process tree.
func descendants(pid int) []int {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil
	}

	children := map[int][]int{}

	for _, path := range stats {
		p, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err != nil {
			continue
		}

		if st, ok := readStat(p); ok {
			children[st.ppid] = append(children[st.ppid], p)
		}
	}

	var out []int

	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]

		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}

	return out
}

// crashTree kills the postmaster pid and every process below it at once,
// as a crash stops them: PostgreSQL makes each child the leader of a
// process group of its own (so that the postmaster can signal it), so a
// signal to the postmaster's group does not reach them, and a child that
// outlives the postmaster may still write (the WAL writer flushing its
// buffers) before it notices. Every process is first stopped (SIGSTOP, the
// postmaster first so that it forks no more), then all get SIGKILL. It
// returns the processes killed, for treeGone.
func crashTree(pid int) []int {
	_ = syscall.Kill(pid, syscall.SIGSTOP)

	all := []int{pid}
	seen := map[int]bool{pid: true}

	// A child forked just before the postmaster stopped shows up in a
	// second look.
	for range 3 {
		fresh := 0

		for _, c := range descendants(pid) {
			if !seen[c] {
				seen[c] = true
				all = append(all, c)
				fresh++

				_ = syscall.Kill(c, syscall.SIGSTOP)
			}
		}

		if fresh == 0 {
			break
		}
	}

	for _, p := range all {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}

	killGroup(pid)

	return all
}

// treeGone reports whether every process of pids has exited (a zombie
// has: it no longer runs or holds the server's shared memory).
func treeGone(pids []int) bool {
	for _, p := range pids {
		if st, ok := readStat(p); ok && st.state != "Z" && st.state != "X" {
			return false
		}
	}

	return true
}
