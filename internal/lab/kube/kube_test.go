package kube_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/mongobench/mongobench/internal/lab/kube"
)

const workloadText = `name: demo
database: demo
collections:
  - name: c
run:
  concurrency: 4
  duration: 10s
operations:
  - name: get
    op: findOne
    collection: c
    filter: {_id: 1}
`

func options() *kube.Options {
	return &kube.Options{
		Name:         "demo",
		Namespace:    "bench",
		Image:        "registry.example.com:5000/team/mongobench:1.2",
		Shards:       4,
		RunID:        "20261123-120000",
		WorkloadFile: "demo.yaml",
		WorkloadText: workloadText,
		Set:          []string{"threads=8"},
		URISecret:    "demo-uri",
		URIKey:       "uri",
		ResultsSize:  "2Gi",
		MergeTimeout: time.Hour,
	}
}

// decoded are the documents of WriteYAML's output, each decoded strictly
// into its API type: a field the type does not have fails the decode.
type decoded struct {
	secrets    []*corev1.Secret
	configMaps []*corev1.ConfigMap
	claims     []*corev1.PersistentVolumeClaim
	jobs       []*batchv1.Job
	kinds      []string
}

func render(t *testing.T, o *kube.Options) (string, *decoded) {
	t.Helper()

	m, err := kube.Build(o)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}

	var b bytes.Buffer
	if err := m.WriteYAML(&b); err != nil {
		t.Fatalf("WriteYAML: %v", err)
	}

	return b.String(), decodeAll(t, b.String())
}

func decodeAll(t *testing.T, out string) *decoded {
	t.Helper()

	d := &decoded{}

	for i, doc := range strings.Split(out, "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}

		d.kinds = append(d.kinds, tm.APIVersion+"/"+tm.Kind)

		switch tm.APIVersion + "/" + tm.Kind {
		case "v1/Secret":
			d.secrets = append(d.secrets, strict[corev1.Secret](t, doc))
		case "v1/ConfigMap":
			d.configMaps = append(d.configMaps, strict[corev1.ConfigMap](t, doc))
		case "v1/PersistentVolumeClaim":
			d.claims = append(d.claims, strict[corev1.PersistentVolumeClaim](t, doc))
		case "batch/v1/Job":
			d.jobs = append(d.jobs, strict[batchv1.Job](t, doc))
		default:
			t.Fatalf("document %d has unexpected apiVersion/kind %s/%s", i, tm.APIVersion, tm.Kind)
		}
	}

	return d
}

func strict[T any](t *testing.T, doc string) *T {
	t.Helper()

	v := new(T)
	if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
		t.Fatalf("strict decode into %T: %v\n%s", v, err, doc)
	}

	return v
}

func TestManifestsDecodeStrictlyInApplyOrder(t *testing.T) {
	_, d := render(t, options())

	want := []string{"v1/ConfigMap", "v1/PersistentVolumeClaim", "batch/v1/Job", "batch/v1/Job"}
	if !slices.Equal(d.kinds, want) {
		t.Fatalf("kinds = %v, want %v", d.kinds, want)
	}

	if len(d.secrets) != 0 {
		t.Error("a Secret was written although no --uri was given")
	}
}

func TestStrictDecodeRejectsUnknownField(t *testing.T) {
	// The check above is only worth something if the decoder refuses what
	// the API type does not have.
	doc := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completionMode: Indexed, parallelizm: 2}\n"

	var j batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(doc), &j); err == nil {
		t.Fatal("UnmarshalStrict accepted an unknown field")
	}
}

func TestShardsJob(t *testing.T) {
	o := options()
	_, d := render(t, o)
	job := jobNamed(t, d, "demo-shards")
	spec := job.Spec

	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode = %v, want Indexed", spec.CompletionMode)
	}

	if spec.Completions == nil || *spec.Completions != 4 || spec.Parallelism == nil || *spec.Parallelism != 4 {
		t.Errorf("completions = %v, parallelism = %v, want 4 and 4", spec.Completions, spec.Parallelism)
	}

	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex = %v, want 0 (a shard is never retried)", spec.BackoffLimitPerIndex)
	}

	if spec.BackoffLimit != nil {
		t.Errorf("backoffLimit = %d: a Job-wide limit would stop the other shards when one fails", *spec.BackoffLimit)
	}

	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %s, want Never", pod.RestartPolicy)
	}

	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}

	c := pod.Containers[0]

	if c.Image != o.Image {
		t.Errorf("image = %q, want %q", c.Image, o.Image)
	}

	wantArgs := []string{
		"run", "/workload/demo.yaml", "--start-at", "auto", "--quiet",
		"-o", "/results/20261123-120000/shard-$(JOB_COMPLETION_INDEX).json",
		"--set", "threads=8",
	}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args = %q, want %q", c.Args, wantArgs)
	}

	env := envByName(t, c)

	if v := env["MONGOBENCH_SHARDS"]; v.Value != "4" || v.ValueFrom != nil {
		t.Errorf("MONGOBENCH_SHARDS = %+v, want the value 4", v)
	}

	// $(JOB_COMPLETION_INDEX) in args is only expanded when the variable is
	// declared in the container's env.
	idx := env["JOB_COMPLETION_INDEX"]
	if idx.ValueFrom == nil || idx.ValueFrom.FieldRef == nil ||
		idx.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("JOB_COMPLETION_INDEX = %+v, want the completion index annotation", idx)
	}

	uri := env["MONGOBENCH_URI"]
	if uri.Value != "" || uri.ValueFrom == nil || uri.ValueFrom.SecretKeyRef == nil ||
		uri.ValueFrom.SecretKeyRef.Name != "demo-uri" || uri.ValueFrom.SecretKeyRef.Key != "uri" {
		t.Errorf("MONGOBENCH_URI = %+v, want a secretKeyRef to demo-uri/uri and no value", uri)
	}

	checkMounts(t, pod, map[string]string{"/workload": "workload", "/results": "results", "/tmp": "tmp"})

	vols := volumesByName(pod)
	if cm := vols["workload"].ConfigMap; cm == nil || cm.Name != "demo-workload" {
		t.Errorf("workload volume = %+v, want ConfigMap demo-workload", vols["workload"])
	}

	if pvc := vols["results"].PersistentVolumeClaim; pvc == nil || pvc.ClaimName != "demo-results" {
		t.Errorf("results volume = %+v, want claim demo-results", vols["results"])
	}

	if !c.VolumeMounts[mountIndex(c, "/workload")].ReadOnly {
		t.Error("the workload is mounted writable")
	}

	checkHardened(t, pod)
}

func TestMergeJobWaitsForEveryShard(t *testing.T) {
	o := options()
	_, d := render(t, o)
	job := jobNamed(t, d, "demo-merge")
	spec := job.Spec

	if spec.CompletionMode != nil && *spec.CompletionMode != batchv1.NonIndexedCompletion {
		t.Errorf("merge completionMode = %s, want NonIndexed", *spec.CompletionMode)
	}

	if spec.ActiveDeadlineSeconds == nil || *spec.ActiveDeadlineSeconds <= int64(o.MergeTimeout/time.Second) {
		t.Errorf("activeDeadlineSeconds = %v, want more than the wait's %s", spec.ActiveDeadlineSeconds, o.MergeTimeout)
	}

	pod := spec.Template.Spec
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("%d init containers and %d containers, want 1 and 1", len(pod.InitContainers), len(pod.Containers))
	}

	files := []string{
		"/results/20261123-120000/shard-0.json", "/results/20261123-120000/shard-1.json",
		"/results/20261123-120000/shard-2.json", "/results/20261123-120000/shard-3.json",
	}

	wantWait := append([]string{"kube", "wait", "--timeout", "1h0m0s"}, files...)
	if got := pod.InitContainers[0].Args; !slices.Equal(got, wantWait) {
		t.Errorf("wait args = %q, want %q", got, wantWait)
	}

	wantMerge := append(append([]string{"merge"}, files...), "-o", "/results/20261123-120000/merged.json")
	if got := pod.Containers[0].Args; !slices.Equal(got, wantMerge) {
		t.Errorf("merge args = %q, want %q", got, wantMerge)
	}

	for _, c := range append(pod.InitContainers, pod.Containers...) {
		for _, e := range c.Env {
			if e.Name == "MONGOBENCH_URI" {
				t.Errorf("container %s gets the connection string; merging needs none", c.Name)
			}
		}
	}

	checkMounts(t, pod, map[string]string{"/results": "results", "/tmp": "tmp"})
	checkHardened(t, pod)

	if pvc := volumesByName(pod)["results"].PersistentVolumeClaim; pvc == nil || pvc.ClaimName != "demo-results" {
		t.Error("the merge does not mount the shards' results claim")
	}
}

func TestLabelsAndNames(t *testing.T) {
	_, d := render(t, options())

	metas := []metav1.ObjectMeta{d.configMaps[0].ObjectMeta, d.claims[0].ObjectMeta, d.jobs[0].ObjectMeta, d.jobs[1].ObjectMeta}
	for _, m := range metas {
		if errs := validation.IsDNS1123Subdomain(m.Name); len(errs) > 0 {
			t.Errorf("name %q: %v", m.Name, errs)
		}

		if m.Namespace != "bench" {
			t.Errorf("%s: namespace %q, want bench", m.Name, m.Namespace)
		}

		for k, v := range m.Labels {
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				t.Errorf("%s: label key %q: %v", m.Name, k, errs)
			}

			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("%s: label %s=%q: %v", m.Name, k, v, errs)
			}
		}

		if m.Labels["app.kubernetes.io/instance"] != "demo" || m.Labels["mongobench.io/run"] != "20261123-120000" {
			t.Errorf("%s: labels %v lack the instance or the run", m.Name, m.Labels)
		}
	}

	// The pods carry the labels of their Job, so that one run's pods are
	// selected by its run label.
	for _, j := range d.jobs {
		for k, v := range j.Labels {
			if j.Spec.Template.Labels[k] != v {
				t.Errorf("job %s: pod template label %s=%q, want %q", j.Name, k, j.Spec.Template.Labels[k], v)
			}
		}

		// A Job whose name does not fit in a label cannot label its pods.
		if errs := validation.IsDNS1123Label(j.Name); len(errs) > 0 {
			t.Errorf("job name %q: %v", j.Name, errs)
		}
	}
}

func TestConfigMapHoldsTheWorkloadUnchanged(t *testing.T) {
	_, d := render(t, options())

	if got := d.configMaps[0].Data["demo.yaml"]; got != workloadText {
		t.Errorf("ConfigMap data = %q, want the workload text", got)
	}
}

func TestClaim(t *testing.T) {
	o := options()
	o.StorageClass = "nfs-client"
	_, d := render(t, o)

	c := d.claims[0]
	if !slices.Equal(c.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) {
		t.Errorf("access modes = %v, want ReadWriteMany", c.Spec.AccessModes)
	}

	if q := c.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("storage request = %s, want 2Gi", q.String())
	}

	if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "nfs-client" {
		t.Errorf("storage class = %v, want nfs-client", c.Spec.StorageClassName)
	}
}

func TestExistingClaimMakesNoClaim(t *testing.T) {
	o := options()
	o.ResultsClaim = "shared-results"
	_, d := render(t, o)

	if len(d.claims) != 0 {
		t.Fatalf("a claim was made although --results-claim names one")
	}

	for _, j := range d.jobs {
		if pvc := volumesByName(j.Spec.Template.Spec)["results"].PersistentVolumeClaim; pvc == nil || pvc.ClaimName != "shared-results" {
			t.Errorf("job %s mounts %+v, want claim shared-results", j.Name, pvc)
		}
	}
}

func TestSecretOnlyWhenAValueIsGiven(t *testing.T) {
	o := options()
	o.URIValue = "mongodb://mongo.db.svc:27017/?directConnection=true"
	out, d := render(t, o)

	if len(d.secrets) != 1 || d.kinds[0] != "v1/Secret" {
		t.Fatalf("kinds = %v, want a Secret first", d.kinds)
	}

	s := d.secrets[0]
	if s.Name != "demo-uri" || s.StringData["uri"] != o.URIValue || len(s.Data) != 0 {
		t.Errorf("secret = %+v, want demo-uri with stringData.uri", s)
	}

	// The value is in the Secret and nowhere else.
	if n := strings.Count(out, o.URIValue); n != 1 {
		t.Errorf("the connection string appears %d times in the output, want once", n)
	}
}

func TestSetValuesAreNotExpandedByKubernetes(t *testing.T) {
	o := options()
	o.Set = []string{"pattern=^a$(b)", "plain=1"}
	_, d := render(t, o)

	args := jobNamed(t, d, "demo-shards").Spec.Template.Spec.Containers[0].Args
	want := []string{"--set", "pattern=^a$$(b)", "--set", "plain=1"}

	if got := args[len(args)-4:]; !slices.Equal(got, want) {
		t.Errorf("args end with %q, want %q", got, want)
	}
}

func TestResources(t *testing.T) {
	o := options()
	_, d := render(t, o)

	if r := jobNamed(t, d, "demo-shards").Spec.Template.Spec.Containers[0].Resources; len(r.Requests)+len(r.Limits) != 0 {
		t.Errorf("resources %+v set without --cpu or --memory", r)
	}

	o.CPU, o.Memory = "1500m", "512Mi"
	_, d = render(t, o)

	r := jobNamed(t, d, "demo-shards").Spec.Template.Spec.Containers[0].Resources
	for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "1500m", corev1.ResourceMemory: "512Mi"} {
		req, lim := r.Requests[name], r.Limits[name]
		if req.String() != want || lim.String() != want {
			t.Errorf("%s: request %s, limit %s, want both %s", name, req.String(), lim.String(), want)
		}
	}
}

func TestOneShard(t *testing.T) {
	o := options()
	o.Shards = 1
	_, d := render(t, o)

	if j := jobNamed(t, d, "demo-shards"); *j.Spec.Completions != 1 || *j.Spec.Parallelism != 1 {
		t.Errorf("completions/parallelism = %d/%d, want 1/1", *j.Spec.Completions, *j.Spec.Parallelism)
	}
}

func TestBuildRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*kube.Options)
		want   string
	}{
		{"no shards", func(o *kube.Options) { o.Shards = 0 }, "--shards must be between 1 and 1000, not 0"},
		{"too many shards", func(o *kube.Options) { o.Shards = kube.MaxShards + 1 }, "--shards must be between 1 and 1000, not 1001"},
		{"upper-case name", func(o *kube.Options) { o.Name = "Demo" }, `--name "Demo" is not a valid name`},
		{"dotted name", func(o *kube.Options) { o.Name = "a.b" }, `--name "a.b" is not a valid name`},
		{"long name", func(o *kube.Options) { o.Name = strings.Repeat("a", kube.MaxNameLen+1) }, "at most 54 fit"},
		{"bad namespace", func(o *kube.Options) { o.Namespace = "my_ns" }, `--namespace "my_ns" is not a valid name`},
		{"empty image", func(o *kube.Options) { o.Image = "" }, "--image \"\": is empty"},
		{"upper-case image path", func(o *kube.Options) { o.Image = "example.com/Team/mb:1" }, `path component "Team"`},
		{"bad tag", func(o *kube.Options) { o.Image = "mongobench:v1!" }, `tag "v1!"`},
		{"bad digest", func(o *kube.Options) { o.Image = "mongobench@sha256:xyz" }, `digest "sha256:xyz"`},
		{"bad secret name", func(o *kube.Options) { o.URISecret = "My Secret" }, `--uri-secret "My Secret" is not a valid name`},
		{"bad secret key", func(o *kube.Options) { o.URIKey = "a/b" }, `--uri-secret-key "a/b"`},
		{"bad claim", func(o *kube.Options) { o.ResultsClaim = "-x" }, `--results-claim "-x" is not a valid name`},
		{"class with existing claim", func(o *kube.Options) { o.ResultsClaim = "x"; o.StorageClass = "y" }, "--storage-class applies to the claim mongobench makes"},
		{"bad size", func(o *kube.Options) { o.ResultsSize = "lots" }, `--results-size "lots" is not a positive Kubernetes quantity`},
		{"zero size", func(o *kube.Options) { o.ResultsSize = "0" }, `--results-size "0" is not a positive`},
		{"bad cpu", func(o *kube.Options) { o.CPU = "two" }, `--cpu "two" is not a positive Kubernetes quantity such as 2 or 500m`},
		{"zero memory", func(o *kube.Options) { o.Memory = "0Gi" }, `--memory "0Gi" is not a positive Kubernetes quantity such as 1Gi`},
		{"bad run id", func(o *kube.Options) { o.RunID = "../x" }, `--run-id "../x"`},
		{"short merge timeout", func(o *kube.Options) { o.MergeTimeout = time.Millisecond }, "--merge-timeout must be at least 1s"},
		{"huge workload", func(o *kube.Options) { o.WorkloadText = strings.Repeat("#", 1<<20) }, "a ConfigMap holds at most 1048576"},
		{"bad file name", func(o *kube.Options) { o.WorkloadFile = "a b.yaml" }, `workload file name "a b.yaml" cannot be a ConfigMap key`},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options()
			tt.change(o)

			_, err := kube.Build(o)
			if err == nil {
				t.Fatal("Build accepted the options")
			}

			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckImage(t *testing.T) {
	good := []string{
		"mongobench", "mongobench:latest", "mongobench/mongobench:1.2.3", "localhost/mb",
		"localhost:5000/mb:dev", "registry.example.com:5000/team/sub/mongobench:v1_2-3",
		"ghcr.io/org/mongobench@sha256:" + strings.Repeat("a", 64),
		"ghcr.io/org/mongobench:1@sha256:" + strings.Repeat("0", 64),
		"[::1]:5000/mb", "a__b/c-d--e/f.g",
	}
	for _, ref := range good {
		if err := kube.CheckImage(ref); err != nil {
			t.Errorf("CheckImage(%q) = %v, want nil", ref, err)
		}
	}

	bad := []string{
		"", "Mongobench", "mb:", ":tag", "mb:" + strings.Repeat("t", 129), "a/-b", "a//b", "a/b_",
		"mb@sha256:abc", "mb@", "exa_mple.com/x", "mb:tag:tag", "a b", "mb/",
	}
	for _, ref := range bad {
		if err := kube.CheckImage(ref); err == nil {
			t.Errorf("CheckImage(%q) = nil, want an error", ref)
		}
	}
}

func TestNoSecretReferenceOtherThanTheURI(t *testing.T) {
	out, d := render(t, options())

	refs := 0

	for _, j := range d.jobs {
		for _, c := range append(j.Spec.Template.Spec.InitContainers, j.Spec.Template.Spec.Containers...) {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					refs++
				}
			}
		}
	}

	if refs != 1 {
		t.Errorf("%d secret references, want 1 (the shards' MONGOBENCH_URI)", refs)
	}

	if regexp.MustCompile(`mongodb(\+srv)?://`).MatchString(out) {
		t.Error("a connection string is written into the manifests")
	}
}

func jobNamed(t *testing.T, d *decoded, name string) *batchv1.Job {
	t.Helper()

	for _, j := range d.jobs {
		if j.Name == name {
			return j
		}
	}

	t.Fatalf("no Job %s", name)

	return nil
}

func envByName(t *testing.T, c corev1.Container) map[string]corev1.EnvVar {
	t.Helper()

	env := map[string]corev1.EnvVar{}

	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("container %s declares %s twice", c.Name, e.Name)
		}

		env[e.Name] = e
	}

	return env
}

func volumesByName(pod corev1.PodSpec) map[string]corev1.Volume {
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}

	return vols
}

func mountIndex(c corev1.Container, path string) int {
	return slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path })
}

// checkMounts checks that every container mounts exactly the given paths,
// from volumes the pod declares, and that every volume is used.
func checkMounts(t *testing.T, pod corev1.PodSpec, want map[string]string) {
	t.Helper()

	vols := volumesByName(pod)
	used := map[string]bool{}

	for _, c := range append(pod.InitContainers, pod.Containers...) {
		got := map[string]string{}

		for _, m := range c.VolumeMounts {
			if _, ok := vols[m.Name]; !ok {
				t.Errorf("container %s mounts undeclared volume %s", c.Name, m.Name)
			}

			got[m.MountPath] = m.Name
			used[m.Name] = true
		}

		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("container %s mounts %v, want %v", c.Name, got, want)
		}
	}

	for name := range vols {
		if !used[name] {
			t.Errorf("volume %s is declared but not mounted", name)
		}
	}
}

func checkHardened(t *testing.T, pod corev1.PodSpec) {
	t.Helper()

	sc := pod.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 || sc.FSGroup == nil {
		t.Errorf("pod security context %+v: want a non-root user and an fsGroup", sc)
	}

	for _, c := range append(pod.InitContainers, pod.Containers...) {
		csc := c.SecurityContext
		if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
			csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
			csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("container %s security context %+v is not hardened", c.Name, csc)
		}

		if c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("container %s pull policy %s", c.Name, c.ImagePullPolicy)
		}
	}
}
