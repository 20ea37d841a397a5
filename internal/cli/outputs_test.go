package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

// The test binary's child modes (see TestMain): each makes the binary a
// process of its own, for what one process cannot do to itself.
const (
	// fsizeChildEnv runs mongobench (the arguments) with the file size
	// limit (RLIMIT_FSIZE) set to the variable's value in bytes: writes
	// past it fail with EFBIG, as on a full disk.
	fsizeChildEnv = "MONGOBENCH_CLI_TEST_FSIZE"

	// hangWriteChildEnv starts an atomic write of the file it names,
	// writes some data, says "writing" on standard output and never
	// finishes: killed, it leaves the temporary file a killed mongobench
	// leaves.
	hangWriteChildEnv = "MONGOBENCH_CLI_TEST_HANG_WRITE"
)

// runOutputChild runs the test binary's child modes of these tests; ok is
// false when the binary is no such child.
func runOutputChild() (code int, ok bool) {
	if v := os.Getenv(fsizeChildEnv); v != "" {
		limit, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 3, true
		}

		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
			return 3, true
		}

		rl.Cur = limit
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
			return 3, true
		}

		return Main(NewOSState()), true
	}

	if path := os.Getenv(hangWriteChildEnv); path != "" {
		_ = atomicfile.Write(path, func(w io.Writer) error {
			if _, err := w.Write(bytes.Repeat([]byte("x"), 1<<20)); err != nil {
				return err
			}

			os.Stdout.WriteString("writing\n")
			select {} // until killed
		})

		return 3, true
	}

	return 0, false
}

// child starts the test binary in a child mode with args.
func child(t *testing.T, env string, args ...string) *exec.Cmd {
	t.Helper()

	cmd := exec.Command(os.Args[0], args...) //nolint:gosec // the test binary itself
	cmd.Env = append(os.Environ(), env, "CI=1")

	return cmd
}

// TestRunSameOutRefused runs two runs with the same --out: the second is
// refused at once (exit code 2, one line naming the file), and the first
// writes its results and run log intact. Before, both ran, their run logs
// interleaved, and both were lost.
func TestRunSameOutRefused(t *testing.T) {
	t.Parallel()

	out := filepath.Join(t.TempDir(), "r.json")
	args := []string{"run", "testdata/small.yaml", "-o", out, "--no-explain", "--server-stats-interval", "0"}

	first := newCLIRun(args...)
	done := first.start()

	waitFor(t, time.Minute, "the first run to reserve its files", func() bool {
		return strings.Contains(first.stderr.String(), "Run log: ")
	})

	code, _, stderr := runMain(t, args...)
	lines := errorLines(stderr)

	if code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], "--out "+out+" is being written by another mongobench") {
		t.Errorf("second run: exit code %d, want %d and one line naming %s:\n%s", code, ExitBadInput, out, stderr)
	}

	if strings.Contains(stderr, "Server:") || strings.Contains(stderr, "Run log: ") {
		t.Errorf("the second run started although refused:\n%s", stderr)
	}

	if code := first.wait(t, done, mainTimeout); code != ExitOK {
		t.Fatalf("first run: exit code %d\n%s", code, first.stderr)
	}

	res := readResults(t, out)
	if res.Status != result.StatusCompleted {
		t.Errorf("first run's results: status %s", res.Status)
	}

	built, err := runlog.Build(context.Background(), runlog.PathFor(out))
	if err != nil || built.Status != result.StatusCompleted {
		t.Errorf("first run's run log: %v (status %v)", err, built)
	}

	assertNoLockFiles(t, filepath.Dir(out))
}

// assertNoLockFiles checks that the reservations of finished commands are
// gone from dir.
func assertNoLockFiles(t *testing.T, dir string) {
	t.Helper()

	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("lock file %s left behind", e.Name())
		}
	}
}

// TestRunDefaultNamesUnique starts two runs without --out at the same
// instant (one clock for both): they get two results files, the second with
// -2, each whole with its own run log. Before, default names had a second's
// resolution and both runs wrote the same files.
func TestRunDefaultNamesUnique(t *testing.T) {
	t.Parallel()

	// An instant no other test uses: the files go to results/ here.
	at := time.Date(2001, 2, 3, 4, 5, 6, 789_000_000, time.UTC)
	base := filepath.Join("results", "small-20010203T040506.789Z")
	want := map[string]bool{base + ".json": true, base + "-2.json": true}

	t.Cleanup(func() {
		for p := range want {
			_ = os.Remove(p)
			_ = os.Remove(runlog.PathFor(p))
		}

		_ = os.Remove("results") // only if empty: other tests may write there
	})

	runs := []*cliRun{
		newCLIRun("run", "testdata/small.yaml", "--no-explain", "--server-stats-interval", "0"),
		newCLIRun("run", "testdata/small.yaml", "--no-explain", "--server-stats-interval", "0"),
	}

	dones := make([]<-chan int, len(runs))
	for i, r := range runs {
		r.st.Now = func() time.Time { return at }
		dones[i] = r.start()
	}

	got := map[string]bool{}

	for i, r := range runs {
		if code := r.wait(t, dones[i], mainTimeout); code != ExitOK {
			t.Fatalf("run %d: exit code %d\n%s", i, code, r.stderr)
		}

		_, name, ok := strings.Cut(r.stderr.String(), "Results written to ")
		name, _, _ = strings.Cut(name, "\n")

		if !ok || !want[name] || got[name] {
			t.Fatalf("run %d wrote %q; want one of %v, each once\n%s", i, name, want, r.stderr)
		}

		got[name] = true

		if res := readResults(t, name); res.Status != result.StatusCompleted {
			t.Errorf("%s: status %s", name, res.Status)
		}

		if _, err := runlog.Build(context.Background(), runlog.PathFor(name)); err != nil {
			t.Errorf("the run log of %s: %v", name, err)
		}
	}
}

// devNull returns a character device that writing to harms nothing: a
// copy of /dev/null's node in a temporary directory where the test may
// make one (as root), else /dev/null itself (whose directory only root
// can write, so that a regression cannot replace it).
func devNull(t *testing.T) string {
	t.Helper()

	path := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		return path
	}

	return "/dev/null"
}

// TestOutputNotRegularRefused gives run and report an output that is a
// device, a named pipe, a symbolic link or a directory: each is refused
// with exit code 2 and one line saying what it is, before any server
// starts, and is left as it was. Before, the atomic write's rename replaced
// it with a regular file.
func TestOutputNotRegularRefused(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	target := filepath.Join(dir, "target.json")
	link := filepath.Join(dir, "link.json")
	device := devNull(t)

	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}

	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		path, what string
		kind       os.FileMode
	}{
		{device, "is a device", os.ModeDevice},
		{fifo, "is a named pipe", os.ModeNamedPipe},
		{link, "is a symbolic link (to " + target + ")", os.ModeSymlink},
		{dir, "is a directory", os.ModeDir},
	} {
		for _, args := range [][]string{
			{"run", "testdata/small.yaml", "-o", tc.path},
			{"report", reportQuickstart, "-o", tc.path},
		} {
			code, _, stderr := runMain(t, args...)
			lines := errorLines(stderr)

			if code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], "--out "+tc.path+" "+tc.what) {
				t.Errorf("%s -o %s: exit code %d, want %d and one line saying it %s:\n%s", args[0], tc.path, code, ExitBadInput, tc.what, stderr)
			}

			if strings.Contains(stderr, "Server:") {
				t.Errorf("%s -o %s: a server was started:\n%s", args[0], tc.path, stderr)
			}

			if fi, err := os.Lstat(tc.path); err != nil || fi.Mode()&tc.kind == 0 {
				t.Errorf("%s -o %s: it is no longer what it was: %v %v", args[0], tc.path, fi, err)
			}
		}
	}

	if data, _ := os.ReadFile(target); string(data) != "keep me" {
		t.Errorf("the link's target holds %q", data)
	}
}

// copyFile copies src to a new file in dir and returns its path.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()

	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}

	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}

	return dst
}

// TestOutputIsInputRefused names an input as the output of every command
// that writes one: each is refused with exit code 2 and one line, and the
// input is left as it was. Before, report, finish and merge destroyed
// their input and exited 0.
func TestOutputIsInputRefused(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	res := copyFile(t, reportQuickstart, dir)
	workloadFile := copyFile(t, "testdata/small.yaml", dir)

	// A run log of a real run, for finish, and its results file.
	out := filepath.Join(dir, "r.json")
	if code, _, stderr := runMain(t, "run", workloadFile, "-o", out, "--no-explain", "--server-stats-interval", "0"); code != ExitOK {
		t.Fatalf("run: exit code %d\n%s", code, stderr)
	}

	log := runlog.PathFor(out)
	other := filepath.Join(dir, "other.json")

	if err := os.Link(res, other); err != nil { // the same file by another name
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args  []string
		flag  string
		input string
	}{
		{[]string{"report", res, "-o", res}, "--out", res},
		{[]string{"report", res, "-o", other}, "--out", res},
		{[]string{"finish", log, "-o", log}, "--out", log},
		{[]string{"merge", out, res, "-o", out}, "--out", out},
		{[]string{"compare", out, res, "--markdown", res}, "--markdown", res},
		{[]string{"run", workloadFile, "-o", workloadFile}, "--out", workloadFile},
	} {
		before, err := os.ReadFile(tc.input)
		if err != nil {
			t.Fatal(err)
		}

		code, _, stderr := runMain(t, tc.args...)
		lines := errorLines(stderr)

		if code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], tc.flag+" ") ||
			!strings.Contains(lines[0], "is also an input ("+tc.input+")") {
			t.Errorf("%v: exit code %d, want %d and one line saying the output is an input:\n%s", tc.args, code, ExitBadInput, stderr)
		}

		if after, _ := os.ReadFile(tc.input); !bytes.Equal(before, after) {
			t.Errorf("%v: the input changed", tc.args)
		}
	}
}

// TestRunRefusesUnfinishedRunLog reruns onto the run log of a run killed
// before it wrote its results, after it measured: refused (exit code 2,
// naming the finish command), the log kept. Before, the new run truncated
// it.
func TestRunRefusesUnfinishedRunLog(t *testing.T) {
	t.Parallel()

	out := filepath.Join(t.TempDir(), "r.json")
	log := runlog.PathFor(out)
	content := `{"type":"header"}
{"type":"phase","phase":0,"name":"load:errors","model":"load"}
{"type":"interval","phase":0,"index":0}
{"type":"phase","phase":1,"name":"run","model":"closed"}
{"type":"interval","phase":1,"index":0}
`

	if err := os.WriteFile(log, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runMain(t, "run", "testdata/small.yaml", "-o", out)
	lines := errorLines(stderr)

	if code != ExitBadInput || len(lines) != 1 || !strings.Contains(lines[0], "mongobench finish "+log) {
		t.Errorf("exit code %d, want %d and one line naming `mongobench finish %s`:\n%s", code, ExitBadInput, log, stderr)
	}

	if data, _ := os.ReadFile(log); string(data) != content {
		t.Errorf("the run log changed: %q", data)
	}
}

// TestLoggedMeasurements checks which run logs a rerun keeps: those with an
// interval of a measured phase, not those of a run that only set up.
func TestLoggedMeasurements(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()

	for i, tc := range []struct {
		content string
		want    bool
	}{
		{`{"type":"header"}` + "\n", false},
		{`{"type":"header"}` + "\n" + `{"type":"phase","phase":0,"model":"load"}` + "\n" + `{"type":"interval","phase":0}` + "\n", false},
		{`{"type":"header"}` + "\n" + `{"type":"phase","phase":0,"model":"closed"}` + "\n" + `{"type":"interval","phase":0}`, true},
	} {
		path := filepath.Join(dir, strconv.Itoa(i)+".runlog.jsonl")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}

		if got := loggedMeasurements(path); got != tc.want {
			t.Errorf("log %d: %v, want %v", i, got, tc.want)
		}
	}

	if !loggedMeasurements(filepath.Join(dir, "missing")) {
		t.Errorf("a log that cannot be read counts as empty; it must be kept")
	}
}

// TestRunFullDiskKeepsRunLog runs mongobench in a process whose file size
// limit lets the run log through but not the results file (writes past it
// fail with EFBIG, as on a full disk): the table is printed all the same,
// the run exits 1 naming the run log it kept and the finish command, leaves
// no partial file, and finish then builds the results. Before, the results
// were written first, so the failed write printed no table at all.
func TestRunFullDiskKeepsRunLog(t *testing.T) {
	t.Parallel()

	e := startServer(t)
	args := []string{"run", "testdata/small.yaml", "--uri", e.URI(), "--no-explain", "--server-stats-interval", "0"}

	// The limit lies between the sizes of the run log and of the results
	// file of the same run without a limit (their geometric mean): the
	// results file, with every interval's percentiles, is a few times the
	// run log, whose histograms are compact.
	calib := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := runMain(t, append(args, "-o", calib)...); code != ExitOK {
		t.Fatalf("run without a limit: exit code %d\n%s", code, stderr)
	}

	logSize, resSize := fileSize(t, runlog.PathFor(calib)), fileSize(t, calib)
	if resSize < 2*logSize {
		t.Fatalf("the results file (%d bytes) is not twice the run log (%d): no limit tells them apart", resSize, logSize)
	}

	limit := int64(math.Sqrt(float64(logSize) * float64(resSize)))

	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	log := runlog.PathFor(out)

	cmd := child(t, fsizeChildEnv+"="+strconv.FormatInt(limit, 10), append(args, "-o", out)...)

	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	err := cmd.Run()

	var ee *exec.ExitError
	if !asExitError(err, &ee) || ee.ExitCode() != ExitFailed {
		t.Fatalf("run: %v, want exit code %d\nstdout:\n%s\nstderr:\n%s", err, ExitFailed, &stdout, &stderr)
	}

	for _, want := range []string{"report_error", "ops/s"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the table is not on standard output (no %q):\n%s", want, &stdout)
		}
	}

	lines := errorLines(stderr.String())
	if len(lines) != 1 || !strings.Contains(lines[0], "file too large") {
		t.Errorf("want one Error: line saying the file was too large:\n%s", &stderr)
	}

	if want := "Kept: the run log " + log + " holds the whole run; `mongobench finish " + log + "` writes the results file from it"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, &stderr)
	}

	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != filepath.Base(log) {
		t.Errorf("the directory holds %v, want the run log alone", entries)
	}

	if code, _, stderr := runMain(t, "finish", log); code != ExitOK {
		t.Fatalf("finish: exit code %d\n%s", code, stderr)
	}

	if res := readResults(t, out); res.Status != result.StatusCompleted {
		t.Errorf("the results finish built: status %s", res.Status)
	}
}

// fileSize returns the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	return fi.Size()
}

// asExitError is errors.As for *exec.ExitError.
func asExitError(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError) //nolint:errorlint // Run returns it unwrapped
	*ee = e

	return ok
}

// hangingWriter starts a child writing path atomically, and returns once
// its temporary file exists.
func hangingWriter(t *testing.T, path string) *exec.Cmd {
	t.Helper()

	cmd := child(t, hangWriteChildEnv+"="+path)

	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}

	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "writing\n" {
		t.Fatalf("the writer said %q", line)
	}

	return cmd
}

// temps lists dir's temporary files of path's atomic writes.
func temps(t *testing.T, path string) []string {
	t.Helper()

	matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	if err != nil {
		t.Fatal(err)
	}

	return matches
}

// TestLeftoverTempSwept kills a writer in the middle of its atomic write
// and then writes into the same directory: the killed writer's temporary
// file is removed and said so, a live writer's is not. Before, such files
// (as large as a results file) stayed forever.
func TestLeftoverTempSwept(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	killedPath := filepath.Join(dir, "killed.json")
	livePath := filepath.Join(dir, "live.json")

	killed := hangingWriter(t, killedPath)
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}

	_ = killed.Wait()

	hangingWriter(t, livePath)

	leftover := temps(t, killedPath)
	if len(leftover) != 1 {
		t.Fatalf("the killed writer left %v, want one temporary file", leftover)
	}

	code, _, stderr := runMain(t, "report", reportQuickstart, "-o", filepath.Join(dir, "r.html"))
	if code != ExitOK {
		t.Fatalf("report: exit code %d\n%s", code, stderr)
	}

	if left := temps(t, killedPath); len(left) != 0 {
		t.Errorf("the killed writer's temporary file stayed: %v", left)
	}

	if want := "Removed 1 temporary file left by interrupted writes (1 MiB): " + leftover[0]; !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}

	if live := temps(t, livePath); len(live) != 1 {
		t.Errorf("the live writer's temporary file was touched: %v", live)
	}
}

// TestUsageMessages checks the one-line messages of common mistakes: run
// without a workload, a misspelt flag, a workload file that is not there,
// a negative interval, and report -o where no file can be made (exit code
// 2, as run gives for the same mistake, not 1).
func TestUsageMessages(t *testing.T) {
	t.Parallel()

	missing := filepath.Join(t.TempDir(), "missing.yaml")

	for _, tc := range []struct {
		args []string
		want string // the Error: line, exactly
	}{
		{[]string{"run"}, "Error: run needs a workload file: mongobench run WORKLOAD.yaml"},
		{[]string{"run", "testdata/small.yaml", "--durration", "5s"}, "Error: unknown flag --durration; did you mean --duration?"},
		{[]string{"run", missing}, "Error: " + missing + ": no such file"},
		{[]string{"run", "testdata/small.yaml", "--server-stats-interval", "-5s"}, "Error: --server-stats-interval must be >= 0 (0 disables the sampling)"},
		{[]string{"report", reportQuickstart, "-o", "/proc/mongobench-report.html"}, "Error: --out /proc/mongobench-report.html: cannot write in /proc: "},
	} {
		code, _, stderr := runMain(t, tc.args...)
		lines := errorLines(stderr)

		if code != ExitBadInput || len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) ||
			(!strings.HasSuffix(tc.want, ": ") && lines[0] != tc.want) {
			t.Errorf("%v: exit code %d, want %d and the line %q:\n%s", tc.args, code, ExitBadInput, tc.want, stderr)
		}
	}
}
