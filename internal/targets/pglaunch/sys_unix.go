//go:build unix

package pglaunch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// platformCheck returns nil: Unix-like systems are supported.
func platformCheck() error {
	return nil
}

// isRoot reports whether the process has root's privileges, which
// PostgreSQL refuses to run with.
func isRoot() bool {
	return os.Geteuid() == 0
}

// account is the system user the server's programs run as.
type account struct {
	name   string
	uid    uint32
	gid    uint32
	groups []uint32
}

// credential returns the process credential that runs a program as a.
func (a *account) credential() *syscall.Credential {
	return &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: a.groups}
}

// chown gives path to a.
func (a *account) chown(path string) error {
	return os.Chown(path, int(a.uid), int(a.gid))
}

// lookupSystemUser returns the postgres system user.
func lookupSystemUser() (*account, error) {
	u, err := user.Lookup(systemUser)
	if err != nil {
		var unknown user.UnknownUserError
		if errors.As(err, &unknown) {
			return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no %q system user to run it as; "+
				"`apt-get install postgresql` creates it", systemUser)
		}

		return nil, fmt.Errorf("look up the %q system user: %w", systemUser, err)
	}

	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q has a non-numeric uid %q", systemUser, u.Uid)
	}

	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q has a non-numeric gid %q", systemUser, u.Gid)
	}

	a := &account{name: u.Username, uid: uint32(uid), gid: uint32(gid), groups: []uint32{uint32(gid)}}

	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil && !slices.Contains(a.groups, uint32(g)) {
				a.groups = append(a.groups, uint32(g))
			}
		}
	}

	return a, nil
}

// checkReachable returns an error unless a can search (enter) every
// directory above path, which it needs to reach its data directory there.
// ACLs are not considered, only the permission bits.
func checkReachable(path string, a *account) error {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}

		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}

		perm := fi.Mode().Perm()

		var searchable bool

		switch {
		case st.Uid == a.uid:
			searchable = perm&0o100 != 0
		case slices.Contains(a.groups, st.Gid):
			searchable = perm&0o010 != 0
		default:
			searchable = perm&0o001 != 0
		}

		if !searchable {
			return fmt.Errorf("the %q user that runs PostgreSQL cannot enter %s (mode %v); "+
				"choose a temporary directory it can reach, such as /tmp", a.name, dir, perm)
		}

		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}

// prepareCommand makes cmd run as a (when not nil) in a process group of its
// own, all of which is killed when cmd's context is done.
func prepareCommand(cmd *exec.Cmd, a *account) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	if a != nil {
		cmd.SysProcAttr.Credential = a.credential()
	}

	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// stopSignals are what Stop sends, in order, until the postmaster exits:
// SIGINT asks for a fast shutdown (as pg_ctl stop -m fast does), SIGQUIT for
// an immediate one, and SIGKILL goes to the whole process group.
var stopSignals = []struct {
	name  string
	sig   syscall.Signal
	group bool
}{
	{"SIGINT", syscall.SIGINT, false},
	{"SIGQUIT", syscall.SIGQUIT, false},
	{"SIGKILL", syscall.SIGKILL, true},
}

// signalStep sends the step-th stop signal to the postmaster pid; a process
// already gone is not an error.
func signalStep(pid, step int) (string, error) {
	st := stopSignals[step]

	target := pid
	if st.group {
		target = -pid
	}

	if err := syscall.Kill(target, st.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return st.name, err
	}

	return st.name, nil
}

// groupAlive reports whether any process other than a zombie is left in
// process group pgid. Zombies are left out because they no longer run and
// their reaping is up to their new parent (init, which in a container may
// be slow at it).
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}

	return !onlyZombies(pgid)
}

// killGroup sends SIGKILL to every process of group pgid.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
