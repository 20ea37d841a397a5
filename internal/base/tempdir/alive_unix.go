//go:build unix

package tempdir

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat reads a process's state and start time from /proc (Linux), with
// ok false where there is no /proc or no such process.
func procStat(pid int) (state, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", false
	}

	// The command name, field 2, is in parentheses and may hold spaces
	// and parentheses itself: the fields after it follow the last ')'.
	s := string(b)

	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", "", false
	}

	// Fields from 3 on: state is field 3, starttime field 22.
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return "", "", false
	}

	return fields[0], fields[19], true
}

// pidNamespace names this process's PID namespace, e.g. "pid:[4026531836]",
// or "" where there is no /proc.
func pidNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}

	return ns
}

// startTime returns a process's start time, or "" where unknown.
func startTime(pid int) string {
	_, start, _ := procStat(pid)
	return start
}

// alive reports whether o still runs. With /proc, a zombie (killed, not yet
// reaped) counts as gone and a different start time means the PID was
// reused. Without it, signal 0 tells whether the PID exists.
func alive(o Owner) bool {
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		state, start, ok := procStat(o.PID)

		switch {
		case !ok || state == "Z" || state == "X":
			return false
		case o.Start != "" && start != "" && start != o.Start:
			return false
		default:
			return true
		}
	}

	err := syscall.Kill(o.PID, 0)

	// EPERM: the process exists but belongs to another user.
	return err == nil || errors.Is(err, syscall.EPERM)
}
