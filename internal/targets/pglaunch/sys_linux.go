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
