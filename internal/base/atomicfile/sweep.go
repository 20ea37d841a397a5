package atomicfile

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/tempdir"
)

// StaleAfter is the age past which Sweep removes a temporary file whatever
// its writer: a write takes seconds (the content is ready before the file is
// created), so a day-old one belongs to no write still going. It is the only
// rule for files whose writer cannot be checked: those of another machine or
// PID namespace (a shared directory), and those of older mongobench
// versions, whose names carry no writer.
const StaleAfter = 24 * time.Hour

// tempPrefix is the start of a temporary file's name for the file base:
// ".BASE.tmp-P<pid>-S<start>-H<host>-", to which os.CreateTemp adds random
// digits. <start> is the process's start time where the system tells it (so
// that a reused PID is not taken for the writer) and <host> a hash of the
// host name and PID namespace (so that a PID is only ever checked where it
// means something).
func tempPrefix(base string) string {
	self := tempdir.Self()

	return fmt.Sprintf(".%s.tmp-P%d-S%s-H%s-", base, self.PID, self.Start, hostTag(self.Namespace))
}

// hostTag is 8 hex digits naming this machine and PID namespace.
func hostTag(namespace string) string {
	host, _ := os.Hostname()
	h := fnv.New32a()
	_, _ = h.Write([]byte(host + "\x00" + namespace))

	return fmt.Sprintf("%08x", h.Sum32())
}

var (
	// tempName is the name of a temporary file of Write.
	tempName = regexp.MustCompile(`^\..+\.tmp-P([0-9]+)-S([0-9]*)-H([0-9a-f]{8})-[0-9]+$`)

	// oldTempName is that of mongobench versions whose names carried no
	// writer (os.CreateTemp's random digits alone).
	oldTempName = regexp.MustCompile(`^\..+\.tmp-[0-9]+$`)
)

// Leftover is a file Sweep removed, or could not remove.
type Leftover struct {
	// Path is the file's path.
	Path string

	// Size is its size in bytes.
	Size int64

	// Err is why it could not be removed (nil when it was).
	Err error
}

// Sweep removes from dir the temporary files that interrupted writes left
// behind (a process killed between creating and renaming one), and the lock
// files of reservations whose holder is gone. It returns the temporary
// files. A temporary file goes when its
// writer is known dead (same machine and PID namespace, and no process with
// its PID and start time runs) or when it is older than StaleAfter; a live
// writer's file is never touched. now is the time ages are measured from.
// A directory that does not exist holds nothing to sweep.
func Sweep(dir string, now time.Time) []Leftover {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}

	tag := hostTag(tempdir.Self().Namespace)

	var out []Leftover

	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}

		path := filepath.Join(dir, name)

		if strings.HasSuffix(name, lockSuffix) {
			removeStaleLock(path) // empty, not worth a word

			continue
		}

		info, err := e.Info()
		if err != nil || !leftoverTemp(name, info, tag, now) {
			continue
		}

		l := Leftover{Path: path, Size: info.Size()}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			l.Err = err
		}

		out = append(out, l)
	}

	return out
}

// leftoverTemp reports whether the file is a temporary file of Write that
// no live writer will rename.
func leftoverTemp(name string, info fs.FileInfo, tag string, now time.Time) bool {
	old := now.Sub(info.ModTime()) > StaleAfter

	if m := tempName.FindStringSubmatch(name); m != nil {
		if old {
			return true
		}

		if m[3] != tag {
			return false // another machine's or namespace's PID
		}

		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() {
			return false
		}

		return !tempdir.Owner{PID: pid, Start: m[2]}.Alive()
	}

	return old && oldTempName.MatchString(name)
}
