package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mongobench/mongobench/internal/base/redact"
	"github.com/mongobench/mongobench/internal/lab/kube"
)

// kubeFlags are the options of `mongobench kube`.
type kubeFlags struct {
	shards       int
	image        string
	name         string
	namespace    string
	uri          string
	uriSecret    string
	uriKey       string
	resultsClaim string
	resultsSize  string
	storageClass string
	cpu          string
	memory       string
	set          []string
	mergeTimeout time.Duration
	runID        string
}

func newKubeCommand(st *State) *cobra.Command {
	var f kubeFlags

	c := &cobra.Command{
		Use:   "kube WORKLOAD.yaml --shards N",
		Short: "Print Kubernetes manifests that run a workload as N shards and merge their results",
		Long: `kube validates the workload and prints, for kubectl apply -f -, the objects that
run it on Kubernetes as N shards started at the same instant:

  - a ConfigMap NAME-workload holding the workload file, unchanged;
  - a PersistentVolumeClaim NAME-results (ReadWriteMany), unless --results-claim
    names an existing claim the pods can all mount;
  - an Indexed Job NAME-shards of N pods (completions = parallelism = N); pod I
    runs "mongobench run" as shard I of N (MONGOBENCH_SHARDS=N and the
    JOB_COMPLETION_INDEX Kubernetes sets), waits for the others through the
    database (--start-at auto) and writes /results/RUN/shard-I.json;
  - a Job NAME-merge that waits for the N results files (mongobench kube wait)
    and merges them into /results/RUN/merged.json.

The pods read the connection string from a Secret (MONGOBENCH_URI from
--uri-secret, key --uri-secret-key), never from the manifest. Create it
yourself when the string holds a password:

  kubectl create secret generic NAME-uri --from-literal=uri='mongodb://user:pass@host/'

--uri writes the Secret into the manifest instead, and is refused when the
string holds a password or another secret, since the manifest is plain text.

The image is mongobench's own (see the Dockerfile); build and push it where
the cluster can pull it from. docs/kubernetes.md tells how to run and read a
sharded run.`,
		Example: `  mongobench kube workloads/ycsb/b.yaml --shards 4 --image registry.example.com/mongobench:dev > b.yaml
  kubectl create secret generic ycsb-b-uri --from-literal=uri='mongodb://bench:…@mongo:27017/'
  kubectl apply -f b.yaml
  kubectl wait --for=condition=complete job/ycsb-b-merge --timeout=2h`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runKube(st, cmd.Flags().Changed, args[0], &f)
		},
	}

	fl := c.Flags()
	fl.IntVar(&f.shards, "shards", 0, "number of shards, one pod each (required)")
	fl.StringVar(&f.image, "image", kube.DefaultImage, "mongobench container image")
	fl.StringVar(&f.name, "name", "", "prefix of the objects' names (default: the workload's name)")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "namespace written into the objects (default: kubectl's current one)")
	fl.StringVar(&f.uri, "uri", "", "connection string to put into the Secret (refused if it holds a password; default: the Secret exists)")
	fl.StringVar(&f.uriSecret, "uri-secret", "", "Secret the pods read the connection string from (default NAME-uri)")
	fl.StringVar(&f.uriKey, "uri-secret-key", kube.DefaultURIKey, "key of the connection string in that Secret")
	fl.StringVar(&f.resultsClaim, "results-claim", "", "existing PersistentVolumeClaim for the results files (default: make NAME-results)")
	fl.StringVar(&f.resultsSize, "results-size", kube.DefaultResultsSize, "size of the results claim mongobench makes")
	fl.StringVar(&f.storageClass, "storage-class", "", "storage class of that claim; it must offer ReadWriteMany (default: the cluster's default class)")
	fl.StringVar(&f.cpu, "cpu", "", "CPU each shard requests and is limited to, e.g. 2 or 500m (default: none set)")
	fl.StringVar(&f.memory, "memory", "", "memory each shard requests and is limited to, e.g. 1Gi (default: none set)")
	fl.StringArrayVar(&f.set, "set", nil, "set a workload parameter for every shard, repeatable: name=value (checked here)")
	fl.DurationVar(&f.mergeTimeout, "merge-timeout", kube.DefaultMergeTimeout, "how long the merge waits for every shard's results file")
	fl.StringVar(&f.runID, "run-id", "", "directory of this run on the results volume (default: the time now, UTC)")

	c.AddCommand(newKubeWaitCommand(st))

	return c
}

// runKube checks the flags and the workload and prints the manifests.
func runKube(st *State, changed func(string) bool, path string, f *kubeFlags) error {
	if !changed("shards") {
		return badInput("--shards is required: the number of pods to run the workload on")
	}

	ctx, stop := interruptContext(st)
	defer stop()

	compiled, errs := readWorkload(ctx, path, nil, f.set...)
	if len(errs) > 0 {
		if ctx.Err() != nil {
			return failed("interrupted while reading %s", path)
		}

		for _, err := range errs {
			fmt.Fprintln(st.Stderr, redact.Text(err.Error()))
		}

		return &exitError{code: ExitBadInput, msg: fmt.Sprintf("%s has problems; no manifests written", path)}
	}

	// The file as read and validated, unchanged: --set values reach the
	// shards as arguments, not baked into the ConfigMap.
	text := compiled.Spec.Source()

	// The shards measure one deployment, the one in the Secret; targets
	// would make each pod run a matrix of its own servers.
	if n := compiled.Spec.Node("targets"); n != nil {
		return badInput("%s:%d: targets: a sharded run measures the deployment whose connection string is in the Secret; remove targets (or run the matrix with mongobench run)", path, n.Line)
	}

	// The ConfigMap is readable by anyone who may read the namespace:
	// a workload that holds a secret (a password in a target's URI) does
	// not go there.
	if line := firstSecretLine(string(text)); line > 0 {
		return badInput("%s:%d: holds a password or another secret; a ConfigMap is no place for it (reference an environment variable as ${NAME}, or pass the connection string through the Secret)", path, line)
	}

	o := kube.Options{
		Name:         f.name,
		Namespace:    f.namespace,
		Image:        f.image,
		Shards:       f.shards,
		RunID:        f.runID,
		WorkloadFile: filepath.Base(path),
		WorkloadText: string(text),
		Set:          f.set,
		URISecret:    f.uriSecret,
		URIKey:       f.uriKey,
		ResultsClaim: f.resultsClaim,
		ResultsSize:  f.resultsSize,
		StorageClass: f.storageClass,
		CPU:          f.cpu,
		Memory:       f.memory,
		MergeTimeout: f.mergeTimeout,
	}

	o.SetDefaults(compiled.Spec.Name, st.Now())

	if changed("uri") {
		if err := checkManifestURI(f.uri); err != nil {
			return err
		}

		o.URIValue = f.uri
	}

	m, err := kube.Build(&o)
	if err != nil {
		return badInput("%s", err)
	}

	if err := m.WriteYAML(st.Stdout); err != nil {
		return failed("writing the manifests: %v", err)
	}

	if o.URIValue == "" {
		fmt.Fprintf(st.Stderr, "The pods read the connection string from Secret %s, key %s; create it before applying:\n  kubectl create secret generic %s --from-literal=%s='mongodb://…'\n",
			o.URISecret, o.URIKey, o.URISecret, o.URIKey)
	}

	fmt.Fprintf(st.Stderr, "Results: %s on claim %s once Job %s-merge completes.\n",
		kube.MergedResultsPath(o.RunID), o.ClaimName(), o.Name)

	return nil
}

// checkManifestURI refuses a connection string that cannot be written into
// a manifest: one with a password or a secret option (what redact would
// mask), one whose user information is ambiguous, and one with ${NAME}
// references, which the pods could not expand.
func checkManifestURI(uri string) error {
	switch {
	case strings.TrimSpace(uri) == "":
		return badInput("--uri is empty: give a connection string, or leave --uri out and create the Secret yourself")
	case redact.Ambiguous(uri) || redact.URI(uri) != uri:
		return badInput("--uri %s holds a password or another secret, which a manifest would show in plain text: leave --uri out and create the Secret with kubectl create secret generic", redact.URI(uri))
	case strings.Contains(uri, "${"):
		return badInput("--uri %s refers to environment variables the pods do not have: put the whole connection string in the Secret yourself", redact.URI(uri))
	}

	return nil
}

// firstSecretLine returns the 1-based line of the first value that redact
// would mask in the workload text, or 0 when there is none.
func firstSecretLine(text string) int {
	masked := redact.YAML(text)
	if masked == text {
		return 0
	}

	a, b := strings.Split(text, "\n"), strings.Split(masked, "\n")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i + 1
		}
	}

	return 1
}

// kubeWaitPoll is how often `kube wait` looks for the files: the merge
// waits for a whole run, so a few seconds of delay cost nothing.
const kubeWaitPoll = 2 * time.Second

func newKubeWaitCommand(st *State) *cobra.Command {
	var timeout time.Duration

	c := &cobra.Command{
		Use:   "wait FILE...",
		Short: "Wait until every file exists (the merge Job waits for the shards' results with it)",
		Long: `wait returns once every file given exists as a regular file, and fails (exit
code 1) when --timeout passes first, naming the files still missing. Results
files are written under a temporary name and renamed, so a file that exists is
complete. The merge Job of 'mongobench kube' runs it as its init container.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, files []string) error {
			if timeout <= 0 {
				return badInput("--timeout must be positive, not %s", timeout)
			}

			ctx, stop := interruptContext(st)
			defer stop()

			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()

			return waitForFiles(ctx, st, files, timeout)
		},
	}

	c.Flags().DurationVar(&timeout, "timeout", time.Hour, "how long to wait")

	return c
}

// waitForFiles polls until every file exists, printing a line each time
// more of them have appeared.
func waitForFiles(ctx context.Context, st *State, files []string, timeout time.Duration) error {
	tick := time.NewTicker(kubeWaitPoll)
	defer tick.Stop()

	seen := -1

	for {
		missing, err := missingFiles(files)
		if err != nil {
			return failed("%v", err)
		}

		if present := len(files) - len(missing); present != seen {
			seen = present
			fmt.Fprintf(st.Stderr, "%d of %d files present\n", present, len(files))
		}

		if len(missing) == 0 {
			return nil
		}

		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return failed("after %s, %d of %d files are missing: %s", timeout, len(missing), len(files), strings.Join(missing, ", "))
			}

			return failed("interrupted while waiting for %s", strings.Join(missing, ", "))
		case <-tick.C:
		}
	}
}

// missingFiles returns the files that do not exist yet. A path that exists
// but is not a regular file, or cannot be examined, is an error: waiting
// would not change it.
func missingFiles(files []string) ([]string, error) {
	var missing []string

	for _, f := range files {
		info, err := os.Stat(f)

		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, f)
		case err != nil:
			return nil, err
		case !info.Mode().IsRegular():
			return nil, fmt.Errorf("%s exists but is not a regular file", f)
		}
	}

	return missing, nil
}
