package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubeWorkload is a small valid workload with a parameter, for the kube
// command's tests.
const kubeWorkload = `name: Kube_Demo
database: kube_demo
params:
  threads: 2
collections:
  - name: c
run:
  concurrency: ${threads}
  duration: 10s
operations:
  - name: get
    op: findOne
    collection: c
    filter: {_id: 1}
`

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()

	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	return path
}

func TestKubePrintsManifests(t *testing.T) {
	path := writeTemp(t, "demo.yaml", kubeWorkload)

	code, stdout, stderr := runMain(t, "kube", path, "--shards", "3", "--image", "example.com/mb:1",
		"--run-id", "r1", "--set", "threads=4")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}

	// The workload's name, made a Kubernetes name, prefixes every object.
	for _, want := range []string{
		"name: kube-demo-workload", "name: kube-demo-results", "name: kube-demo-shards", "name: kube-demo-merge",
		"/workload/demo.yaml", "/results/r1/shard-$(JOB_COMPLETION_INDEX).json", "- threads=4",
		"name: kube-demo-uri", "image: example.com/mb:1",
		// The workload as written: --set is an argument, not an edit.
		"concurrency: ${threads}",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the manifests lack %q", want)
		}
	}

	if n := strings.Count(stdout, "\n---\n"); n != 3 {
		t.Errorf("%d document separators, want 3 (ConfigMap, claim, two Jobs)", n)
	}

	// How to make the Secret goes to stderr, so that stdout can be piped to
	// kubectl as is.
	if !strings.Contains(stderr, "kubectl create secret generic kube-demo-uri --from-literal=uri=") {
		t.Errorf("stderr does not say how to create the Secret:\n%s", stderr)
	}

	if !strings.Contains(stderr, "/results/r1/merged.json on claim kube-demo-results") {
		t.Errorf("stderr does not say where the results go:\n%s", stderr)
	}
}

func TestKubeRunIDDefaultsToNow(t *testing.T) {
	path := writeTemp(t, "demo.yaml", kubeWorkload)

	r := newCLIRun("kube", path, "--shards", "1")
	r.st.Now = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600)) }

	if code := r.wait(t, r.start(), mainTimeout); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, r.stderr.String())
	}

	if !strings.Contains(r.stdout.String(), "/results/20260304-040607/shard-0.json") {
		t.Errorf("the run directory is not the UTC time now:\n%s", r.stdout.String())
	}
}

func TestKubeURIWithoutSecretBecomesASecret(t *testing.T) {
	path := writeTemp(t, "demo.yaml", kubeWorkload)
	uri := "mongodb://mongo.db.svc:27017/?directConnection=true"

	code, stdout, stderr := runMain(t, "kube", path, "--shards", "2", "--uri", uri, "--uri-secret", "conn", "--name", "x")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}

	if !strings.HasPrefix(stdout, "apiVersion: v1\nkind: Secret\n") || !strings.Contains(stdout, "uri: "+uri) {
		t.Errorf("the output does not start with the Secret holding the URI:\n%s", stdout)
	}

	if strings.Contains(stderr, "kubectl create secret") {
		t.Error("stderr asks to create a Secret the manifests already hold")
	}
}

func TestKubeRejects(t *testing.T) {
	good := writeTemp(t, "demo.yaml", kubeWorkload)
	broken := writeTemp(t, "broken.yaml", strings.Replace(kubeWorkload, "op: findOne", "op: findOnce", 1))
	secret := writeTemp(t, "secret.yaml", strings.Replace(kubeWorkload, "collections:",
		"targets:\n  - kind: uri\n    uri: mongodb://bench:hunter2secret@db:27017/\ncollections:", 1))

	targets := writeTemp(t, "targets.yaml", strings.Replace(kubeWorkload, "collections:",
		"targets:\n  - kind: embedded\ncollections:", 1))
	commented := writeTemp(t, "commented.yaml", "# try mongodb://bench:hunter2secret@db:27017/\n"+kubeWorkload)

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no shards", []string{good}, "--shards is required"},
		{"zero shards", []string{good, "--shards", "0"}, "--shards must be between 1 and 1000, not 0"},
		{"bad image", []string{good, "--shards", "2", "--image", "Mongo Bench"}, `--image "Mongo Bench"`},
		{"bad name", []string{good, "--shards", "2", "--name", "my_run"}, `--name "my_run" is not a valid name`},
		{"bad namespace", []string{good, "--shards", "2", "-n", "Bench"}, `--namespace "Bench"`},
		{"bad cpu", []string{good, "--shards", "2", "--cpu", "lots"}, `--cpu "lots" is not a positive Kubernetes quantity`},
		{"bad set", []string{good, "--shards", "2", "--set", "nope=1"}, "nope"},
		{"broken workload", []string{broken, "--shards", "2"}, "broken.yaml has problems; no manifests written"},
		{"secret in workload", []string{secret, "--shards", "2"}, "secret.yaml:6: targets: a sharded run measures the deployment"},
		{"targets", []string{targets, "--shards", "2"}, "targets.yaml:6: targets: a sharded run measures the deployment"},
		{"secret in a comment", []string{commented, "--shards", "2"}, "commented.yaml:1: holds a password or another secret"},
		{"password in uri", []string{good, "--shards", "2", "--uri", "mongodb://bench:hunter2secret@db:27017/"}, "holds a password or another secret"},
		{"secret option in uri", []string{good, "--shards", "2", "--uri", "mongodb://db/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:hunter2secret"}, "holds a password or another secret"},
		{"env ref in uri", []string{good, "--shards", "2", "--uri", "mongodb://bench:${PW}@db/"}, "refers to environment variables"},
		{"empty uri", []string{good, "--shards", "2", "--uri", ""}, "--uri is empty"},
		{"missing file", []string{filepath.Join(t.TempDir(), "none.yaml"), "--shards", "2"}, "none.yaml"},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, append([]string{"kube"}, tt.args...)...)
			if code != ExitBadInput {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitBadInput, stderr)
			}

			if stdout != "" {
				t.Errorf("manifests written despite the error:\n%s", stdout)
			}

			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.want)
			}

			if strings.Contains(stderr, "hunter2secret") {
				t.Errorf("the secret is printed:\n%s", stderr)
			}

			if strings.Contains(stderr, "goroutine ") {
				t.Errorf("a stack trace is printed:\n%s", stderr)
			}
		})
	}
}

func TestKubeWaitReturnsWhenEveryFileExists(t *testing.T) {
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "run", "shard-0.json"), filepath.Join(dir, "run", "shard-1.json")}

	if err := os.MkdirAll(filepath.Dir(files[0]), 0o755); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(files[0], []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := newCLIRun(append([]string{"kube", "wait", "--timeout", "2m"}, files...)...)
	done := r.start()

	waitFor(t, time.Minute, "the first count", func() bool { return strings.Contains(r.stderr.String(), "1 of 2 files present") })

	select {
	case code := <-done:
		t.Fatalf("wait returned %d with a file missing", code)
	default:
	}

	if err := os.WriteFile(files[1], []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}

	if code := r.wait(t, done, mainTimeout); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, r.stderr.String())
	}

	if !strings.Contains(r.stderr.String(), "2 of 2 files present") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}
}

func TestKubeWaitTimesOut(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "shard-1.json")

	code, _, stderr := runMain(t, "kube", "wait", "--timeout", "1s", missing)
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFailed, stderr)
	}

	if !strings.Contains(stderr, "after 1s, 1 of 1 files are missing: "+missing) {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestKubeWaitRefusesADirectory(t *testing.T) {
	code, _, stderr := runMain(t, "kube", "wait", t.TempDir())
	if code != ExitFailed || !strings.Contains(stderr, "exists but is not a regular file") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}
