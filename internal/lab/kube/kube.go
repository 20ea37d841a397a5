// Package kube builds the Kubernetes objects that run one workload as a
// sharded benchmark: a ConfigMap with the workload file, an Indexed Job whose
// pods each run one shard, a volume the shards write their results files to,
// and a second Job that waits for every shard's file and merges them.
//
// The objects are the typed structs of the Kubernetes API (k8s.io/api), so a
// field that does not exist cannot be written, and they are printed as YAML
// documents for `kubectl apply -f -`. Nothing here talks to a cluster.
//
// The connection string never appears in the objects as a value: the pods
// read it from a Secret (MONGOBENCH_URI from a secretKeyRef). Only a
// connection string that holds no secret may be turned into a Secret
// manifest here; the caller checks that (see package redact).
package kube

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Paths inside the containers. The workload is mounted read-only from the
// ConfigMap; the results volume is shared by every shard and the merge.
const (
	workloadDir = "/workload"
	resultsDir  = "/results"
	tmpDir      = "/tmp"
)

// Environment variables the pods read. MONGOBENCH_URI and MONGOBENCH_SHARDS
// are mongobench's own; JOB_COMPLETION_INDEX is the one Kubernetes sets in
// an Indexed Job, declared here explicitly (from the same annotation the Job
// controller uses) so that the shard's results path can refer to it.
const (
	envURI             = "MONGOBENCH_URI"
	envShards          = "MONGOBENCH_SHARDS"
	envCompletionIndex = "JOB_COMPLETION_INDEX"
	completionIndexRef = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
)

// nonRootID is the user and group the containers run as: the "nonroot" user
// of the distroless base image the Dockerfile uses. fsGroup makes volumes
// that support ownership management writable by it.
const nonRootID int64 = 65532

// MaxShards bounds --shards: the merge Job names every shard's results file
// in its arguments, and a pod spec must stay far below the API server's
// object size limit.
const MaxShards = 1000

// MaxNameLen keeps the longest derived name (NAME-workload) within the 63
// characters of a label value, since Job names become the job-name label
// of their pods.
const MaxNameLen = 63 - len("-workload")

// maxConfigMapBytes is the API server's limit on a ConfigMap's data.
const maxConfigMapBytes = 1 << 20

// Options describe one sharded run.
type Options struct {
	// Name prefixes every object's name and is the app.kubernetes.io/instance
	// label: a DNS-1123 label of at most 54 characters.
	Name string

	// Namespace, when set, is written into every object; otherwise kubectl's
	// current namespace applies.
	Namespace string

	// Image is the mongobench container image reference.
	Image string

	// Shards is the number of pods that run the workload at once.
	Shards int

	// RunID names the directory of this run on the results volume, so that
	// the merge waits for this run's files and not those an earlier run
	// left there.
	RunID string

	// WorkloadFile is the ConfigMap key (and file name in the pods) of the
	// workload; WorkloadText is the file's content, unchanged.
	WorkloadFile string
	WorkloadText string

	// Set are `--set name=value` parameters passed on to every shard.
	Set []string

	// URISecret and URIKey name the Secret and key the connection string is
	// read from.
	URISecret string
	URIKey    string

	// URIValue, when not empty, makes a Secret manifest holding it. The
	// caller must have checked that it holds no password or other secret.
	URIValue string

	// ResultsClaim, when set, is an existing PersistentVolumeClaim the
	// results are written to. Otherwise a ReadWriteMany claim of
	// ResultsSize (of StorageClass, when set) is made, named NAME-results.
	ResultsClaim string
	ResultsSize  string
	StorageClass string

	// CPU and Memory, when set, are the shard container's requests and
	// limits alike (Kubernetes quantities such as 2 or 500m, 1Gi), so that
	// a shard gets what it asked for and no more whatever else runs on its
	// node; with both set the pods are in the Guaranteed QoS class.
	CPU    string
	Memory string

	// MergeTimeout bounds how long the merge Job waits for the shards'
	// results files; the Job's activeDeadlineSeconds adds a margin to it.
	MergeTimeout time.Duration
}

// Manifests are the objects of one sharded run, in the order they must be
// applied. Secret and Claim are nil when the user provides them.
type Manifests struct {
	Secret    *corev1.Secret
	ConfigMap *corev1.ConfigMap
	Claim     *corev1.PersistentVolumeClaim
	Shards    *batchv1.Job
	Merge     *batchv1.Job
}

// Objects returns the objects that are set, in apply order.
func (m *Manifests) Objects() []any {
	var objs []any

	if m.Secret != nil {
		objs = append(objs, m.Secret)
	}

	objs = append(objs, m.ConfigMap)

	if m.Claim != nil {
		objs = append(objs, m.Claim)
	}

	return append(objs, m.Shards, m.Merge)
}

// ShardResultsPath is where shard i of a run writes its results file.
func ShardResultsPath(runID string, i int) string { return shardFile(runID, strconv.Itoa(i)) }

func shardFile(runID, index string) string {
	return path.Join(resultsDir, runID, "shard-"+index+".json")
}

// MergedResultsPath is where the merge Job writes the merged results file.
func MergedResultsPath(runID string) string {
	return path.Join(resultsDir, runID, "merged.json")
}

// Build checks o and returns the objects of the run. Every problem is one
// line naming the option.
func Build(o *Options) (*Manifests, error) {
	if err := o.check(); err != nil {
		return nil, err
	}

	resources, err := o.shardResources()
	if err != nil {
		return nil, err
	}

	m := &Manifests{
		ConfigMap: o.configMap(),
		Shards:    o.shardsJob(resources),
		Merge:     o.mergeJob(),
	}

	if o.URIValue != "" {
		m.Secret = o.secret()
	}

	if o.ResultsClaim == "" {
		claim, err := o.claim()
		if err != nil {
			return nil, err
		}

		m.Claim = claim
	}

	return m, nil
}

// Names of the objects, derived from Options.Name.
func (o *Options) configMapName() string { return o.Name + "-workload" }

func (o *Options) shardsJobName() string { return o.Name + "-shards" }

func (o *Options) mergeJobName() string { return o.Name + "-merge" }

// ClaimName is the claim the results are written to: the existing one
// named by ResultsClaim, or the one Build makes.
func (o *Options) ClaimName() string {
	if o.ResultsClaim != "" {
		return o.ResultsClaim
	}

	return o.Name + "-results"
}

// labels are the recommended app.kubernetes.io labels plus the run id, so
// that `kubectl get pods -l mongobench.io/run=ID` lists one run's pods.
func (o *Options) labels(component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "mongobench",
		"app.kubernetes.io/instance":  o.Name,
		"app.kubernetes.io/component": component,
		"mongobench.io/run":           o.RunID,
	}
}

func (o *Options) meta(name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: o.labels(component)}
}

func (o *Options) secret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: o.meta(o.URISecret, "connection"),
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{o.URIKey: o.URIValue},
	}
}

func (o *Options) configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: o.meta(o.configMapName(), "workload"),
		Data:       map[string]string{o.WorkloadFile: o.WorkloadText},
	}
}

func (o *Options) claim() (*corev1.PersistentVolumeClaim, error) {
	size, err := resource.ParseQuantity(o.ResultsSize)
	if err != nil || size.Sign() <= 0 {
		return nil, fmt.Errorf("--results-size %q is not a positive Kubernetes quantity such as 1Gi", o.ResultsSize)
	}

	c := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: o.meta(o.ClaimName(), "results"),
		Spec: corev1.PersistentVolumeClaimSpec{
			// Every shard pod, on any node, writes to it at once.
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}

	if o.StorageClass != "" {
		c.Spec.StorageClassName = &o.StorageClass
	}

	return c, nil
}

// shardsJob is the Indexed Job: pod i runs shard i of N. A shard is not
// retried (backoffLimitPerIndex 0): one started again would join a run
// whose common start instant has passed, and its figures would not describe
// the same interval as the others'. The limit is per index, not the Job's
// backoffLimit, so that one shard failing (exit code 99 for a failed
// threshold, say) does not make the Job controller stop the shards still
// running; the Job is marked failed once they have all finished.
func (o *Options) shardsJob(resources corev1.ResourceRequirements) *batchv1.Job {
	n := int32(o.Shards) // o.check bounds Shards to MaxShards.
	indexed := batchv1.IndexedCompletion

	args := []string{
		"run", path.Join(workloadDir, o.WorkloadFile),
		"--start-at", "auto",
		"--quiet",
		// Kubernetes expands $(VAR) in args from the container's env.
		"-o", shardFile(o.RunID, "$("+envCompletionIndex+")"),
	}

	for _, s := range o.Set {
		args = append(args, "--set", escapeExpansion(s))
	}

	c := o.container("mongobench", args)
	c.Env = append(c.Env,
		corev1.EnvVar{Name: envShards, Value: strconv.Itoa(o.Shards)},
		corev1.EnvVar{Name: envCompletionIndex, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: completionIndexRef},
		}},
		corev1.EnvVar{Name: envURI, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: o.URISecret},
				Key:                  o.URIKey,
			},
		}},
	)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "workload", MountPath: workloadDir, ReadOnly: true})
	c.Resources = resources

	pod := o.podSpec(c)
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "workload", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.configMapName()}},
	}})

	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: o.meta(o.shardsJobName(), "shard"),
		Spec: batchv1.JobSpec{
			CompletionMode:       &indexed,
			Completions:          &n,
			Parallelism:          &n,
			BackoffLimitPerIndex: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: o.labels("shard")},
				Spec:       pod,
			},
		},
	}
}

// shardResources are the shard container's requests and limits, equal,
// from CPU and Memory.
func (o *Options) shardResources() (corev1.ResourceRequirements, error) {
	var r corev1.ResourceRequirements

	for _, q := range []struct {
		flag, value, example string
		name                 corev1.ResourceName
	}{
		{"cpu", o.CPU, "2 or 500m", corev1.ResourceCPU},
		{"memory", o.Memory, "1Gi", corev1.ResourceMemory},
	} {
		if q.value == "" {
			continue
		}

		v, err := resource.ParseQuantity(q.value)
		if err != nil || v.Sign() <= 0 {
			return r, errOption(q.flag, "%q is not a positive Kubernetes quantity such as %s", q.value, q.example)
		}

		if r.Requests == nil {
			r.Requests, r.Limits = corev1.ResourceList{}, corev1.ResourceList{}
		}

		r.Requests[q.name], r.Limits[q.name] = v, v
	}

	return r, nil
}

// mergeJob waits for every shard's results file and merges them. It starts
// with the shards and spends the run waiting (an init container running
// `mongobench kube wait`), so that one `kubectl apply` runs everything;
// the wait is bounded by MergeTimeout, and the Job by
// activeDeadlineSeconds, so that a shard that never writes its file fails
// the merge instead of leaving it waiting.
func (o *Options) mergeJob() *batchv1.Job {
	files := make([]string, o.Shards)
	for i := range files {
		files[i] = ShardResultsPath(o.RunID, i)
	}

	wait := o.container("wait", append([]string{"kube", "wait", "--timeout", o.MergeTimeout.String()}, files...))
	merge := o.container("merge", append(append([]string{"merge"}, files...), "-o", MergedResultsPath(o.RunID)))

	pod := o.podSpec(merge)
	pod.InitContainers = []corev1.Container{wait}

	// A margin over the wait for pulling the image and merging.
	deadline := int64(o.MergeTimeout/time.Second) + 600

	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: o.meta(o.mergeJobName(), "merge"),
		Spec: batchv1.JobSpec{
			Completions:           ptr(int32(1)),
			Parallelism:           ptr(int32(1)),
			BackoffLimit:          ptr(int32(0)),
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: o.labels("merge")},
				Spec:       pod,
			},
		},
	}
}

// container is a mongobench container with the results and scratch
// volumes mounted, hardened: no privilege escalation, no capabilities, a
// read-only root file system.
func (o *Options) container(name string, args []string) corev1.Container {
	return corev1.Container{
		Name:  name,
		Image: o.Image,
		// The image's entry point is mongobench itself.
		Args: args,
		// A locally built or pre-loaded image (kind load, a node cache)
		// is used as is, even when tagged latest.
		ImagePullPolicy: corev1.PullIfNotPresent,
		// The owner key (see target.OwnerKeyPath) goes to the writable
		// scratch volume: the configuration directory is on the read-only
		// root. Each pod makes its own; shard 0 alone claims the database.
		Env: []corev1.EnvVar{
			{Name: "TMPDIR", Value: tmpDir},
			{Name: "MONGOBENCH_OWNER_KEY_FILE", Value: tmpDir + "/mongobench-owner.key"},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "results", MountPath: resultsDir},
			{Name: "tmp", MountPath: tmpDir},
		},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr(false),
			ReadOnlyRootFilesystem:   ptr(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

func (o *Options) podSpec(c corev1.Container) corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr(true),
			RunAsUser:      ptr(nonRootID),
			RunAsGroup:     ptr(nonRootID),
			FSGroup:        ptr(nonRootID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{c},
		Volumes: []corev1.Volume{
			{Name: "results", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.ClaimName()},
			}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// escapeExpansion keeps a user's argument as written: Kubernetes replaces
// $(NAME) in args with the container's variable NAME, and leaves $$(NAME)
// as the literal $(NAME).
func escapeExpansion(arg string) string { return strings.ReplaceAll(arg, "$(", "$$(") }

// errOption is the error of a bad option: one line naming the flag.
func errOption(flag, format string, args ...any) error {
	return errors.New("--" + flag + " " + strings.TrimSpace(fmt.Sprintf(format, args...)))
}
