// Package kubernetes holds the tests of the Indexed Job's manifests and of
// the images' Dockerfiles: the manifests are decoded with the Kubernetes
// API types, unknown fields refused, and checked against each other, the
// Dockerfiles and .goreleaser.yaml.
package kubernetes

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// decodeStrict decodes YAML into v as the API server reads its JSON,
// refusing fields v's type does not have.
func decodeStrict(b []byte, v any) error {
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// decodeFile is decodeStrict of the file name.
func decodeFile(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func loadJob(t *testing.T) (*batchv1.Job, *corev1.Container) {
	t.Helper()
	var job batchv1.Job
	decodeFile(t, "job.yaml", &job)
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("job.yaml: %d containers, want 1", len(cs))
	}
	return &job, &cs[0]
}

func loadSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	decodeFile(t, "secret.example.yaml", &s)
	if s.APIVersion != "v1" || s.Kind != "Secret" {
		t.Fatalf("secret.example.yaml: %s %s, want v1 Secret", s.APIVersion, s.Kind)
	}
	return &s
}

func TestDecodeStrictRefusesUnknownFields(t *testing.T) {
	var job batchv1.Job
	err := decodeStrict([]byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionsMode: Indexed\n"), &job)
	if err == nil || !strings.Contains(err.Error(), "completionsMode") {
		t.Errorf("a misspelled field: %v, want an error naming it", err)
	}
	if err := decodeStrict([]byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionMode: Indexed\n"), &job); err != nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("a good Job: %v", err)
	}
}

func TestJobIsIndexed(t *testing.T) {
	job, c := loadJob(t)
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("%s %s, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || *s.Completions != 4 || s.Parallelism == nil || *s.Parallelism != *s.Completions {
		t.Errorf("completions %s, parallelism %s: want 4 and 4", ptrString(s.Completions), ptrString(s.Parallelism))
	}
	if got := envValue(c, "JOB_COMPLETIONS"); s.Completions == nil || got != strconv.Itoa(int(*s.Completions)) {
		t.Errorf("JOB_COMPLETIONS %q, want spec.completions (%s): --shard auto takes N from it", got, ptrString(s.Completions))
	}
	if envValue(c, "JOB_COMPLETION_INDEX") != "" {
		t.Errorf("JOB_COMPLETION_INDEX is set in the manifest: Kubernetes sets it in each pod")
	}
	if i := slices.Index(c.Args, "--shard"); i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != "auto" {
		t.Errorf("args %q: want --shard auto", c.Args)
	}
	if !slices.Contains(c.Args, "--resume") {
		t.Errorf("args %q: want --resume, so that a retried index skips the bundles its shard has done", c.Args)
	}
	if len(c.Args) == 0 || c.Args[0] != "batch" || len(c.Command) != 0 {
		t.Errorf("command %q args %q: want the image's entrypoint run with batch", c.Command, c.Args)
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never (a podFailurePolicy needs it)", job.Spec.Template.Spec.RestartPolicy)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1 {
		t.Errorf("backoffLimitPerIndex %v, want at least 1: a failed index is retried", s.BackoffLimitPerIndex)
	}
	if s.PodFailurePolicy == nil {
		t.Fatalf("no podFailurePolicy")
	}
	var usageFails bool
	for _, r := range s.PodFailurePolicy.Rules {
		if e := r.OnExitCodes; e != nil {
			if e.ContainerName == nil || *e.ContainerName != c.Name {
				t.Errorf("podFailurePolicy rule for container %v, want %q", e.ContainerName, c.Name)
			}
			if r.Action == batchv1.PodFailurePolicyActionFailIndex && e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(e.Values, 2) {
				usageFails = true
			}
			if slices.Contains(e.Values, 3) && r.Action != batchv1.PodFailurePolicyActionCount {
				t.Errorf("exit 3 (a bundle or the database failed) is %s, want it retried", r.Action)
			}
		}
	}
	if !usageFails {
		t.Errorf("exit 2 (a usage error, which a retry repeats) does not fail its index at once")
	}
}

func TestJobSecurity(t *testing.T) {
	job, c := loadJob(t)
	pod := job.Spec.Template.Spec.SecurityContext
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot {
		t.Errorf("pod securityContext.runAsNonRoot is not true")
	}
	if pod == nil || pod.RunAsUser == nil || *pod.RunAsUser == 0 {
		t.Errorf("pod securityContext.runAsUser is unset or 0")
	} else if uid := finalUser(t, "Dockerfile"); strconv.FormatInt(*pod.RunAsUser, 10) != uid {
		t.Errorf("runAsUser %d, the image's USER %s", *pod.RunAsUser, uid)
	}
	if pod == nil || pod.SeccompProfile == nil || pod.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod seccompProfile is not RuntimeDefault")
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatalf("container %s has no securityContext", c.Name)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("allowPrivilegeEscalation is not false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("privileged")
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	}
	if job.Spec.Template.Spec.AutomountServiceAccountToken == nil || *job.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Errorf("the pod mounts a service account token it has no use for")
	}

	// TMPDIR is a writable emptyDir, the root file system being read-only.
	tmp := envValue(c, "TMPDIR")
	var mounted bool
	for _, m := range c.VolumeMounts {
		if m.MountPath != tmp || m.ReadOnly {
			continue
		}
		for _, v := range job.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
				mounted = true
			}
		}
	}
	if tmp == "" || !mounted {
		t.Errorf("TMPDIR %q is not a writable emptyDir with a sizeLimit", tmp)
	}
}

// TestJobResources checks the resources against the flags that bound
// netmortem's own use of them.
func TestJobResources(t *testing.T) {
	job, c := loadJob(t)
	r := c.Resources
	mem, ok := r.Limits[corev1.ResourceMemory]
	if !ok {
		t.Fatalf("no memory limit")
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		req, ok := r.Requests[name]
		if !ok {
			t.Errorf("no %s request", name)
		}
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			t.Errorf("%s request %s over its limit %s", name, req.String(), lim.String())
		}
	}
	limit := argInt(t, c, "--memory-limit")
	if limit <= 0 || limit >= mem.Value() {
		t.Errorf("--memory-limit %d, want it set below the container's memory limit %s (%d)", limit, mem.String(), mem.Value())
	}
	if limit > mem.Value()*85/100 {
		t.Errorf("--memory-limit %d leaves less than 15%% of %s for what the Go runtime does not count", limit, mem.String())
	}
	// -j bundles at once, each under 1 GB (docs/bundles.md), in the limit.
	jobs := argInt(t, c, "-j")
	cpu := r.Requests[corev1.ResourceCPU]
	if jobs < 1 || jobs > cpu.Value() || jobs*(1<<30) > mem.Value() {
		t.Errorf("-j %d with %s CPUs and %s of memory: want at most one bundle per CPU and 1 GiB per bundle", jobs, cpu.String(), mem.String())
	}
	// Nested archives spilled to TMPDIR, -j bundles at once of at most --max-bundle-bytes
	// each, fit the emptyDir.
	var size *resource.Quantity
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.EmptyDir != nil {
			size = v.EmptyDir.SizeLimit
		}
	}
	if max := argInt(t, c, "--max-bundle-bytes"); size == nil || max <= 0 || jobs*max > size.Value() {
		t.Errorf("-j %d bundles of --max-bundle-bytes %d do not fit the emptyDir's sizeLimit %v", jobs, max, size)
	}
	if eph, ok := r.Limits[corev1.ResourceEphemeralStorage]; !ok || size == nil || size.Cmp(eph) > 0 {
		t.Errorf("the emptyDir's sizeLimit %v is over the ephemeral-storage limit", size)
	}
}

// TestJobSecretRefs checks that the Secret the Job reads has, in
// secret.example.yaml, every key the Job asks for, and no other.
func TestJobSecretRefs(t *testing.T) {
	job, c := loadJob(t)
	secret := loadSecret(t)
	keys := map[string]bool{}
	for k := range secret.StringData {
		keys[k] = false
	}
	for k := range secret.Data {
		keys[k] = false
	}
	if len(job.Spec.Template.Spec.Containers[0].EnvFrom) > 0 {
		t.Errorf("envFrom: the environment is named variable by variable")
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref.Name != secret.Name {
			t.Errorf("%s: secret %q, secret.example.yaml's is %q", e.Name, ref.Name, secret.Name)
		}
		if _, ok := keys[ref.Key]; !ok {
			t.Errorf("%s: key %q is not in secret.example.yaml", e.Name, ref.Key)
		}
		keys[ref.Key] = true
	}
	for k, used := range keys {
		if !used {
			t.Errorf("secret.example.yaml's key %q is read by no variable of the Job", k)
		}
	}
	for _, name := range []string{"DB_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if e := envVar(c, name); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s does not come from the Secret", name)
		}
	}
}

// TestJobArgsExpand checks that every $(VAR) in the args is a variable
// of the container, which the kubelet replaces (an unknown one is passed
// on as it is written).
func TestJobArgsExpand(t *testing.T) {
	_, c := loadJob(t)
	ref := regexp.MustCompile(`\$\(([^)]*)\)`)
	var refs int
	for _, a := range c.Args {
		for _, m := range ref.FindAllStringSubmatch(a, -1) {
			refs++
			if envVar(c, m[1]) == nil {
				t.Errorf("arg %q: $(%s) is not a variable of the container", a, m[1])
			}
		}
	}
	if refs == 0 {
		t.Errorf("args %q: want the database's URL as $(DB_URL), from the Secret", c.Args)
	}
}

// TestJobImage checks that the Job runs the image goreleaser publishes.
func TestJobImage(t *testing.T) {
	_, c := loadJob(t)
	var gr struct {
		DockersV2 []struct {
			Dockerfile string   `yaml:"dockerfile"`
			Images     []string `yaml:"images"`
		} `yaml:"dockers_v2"`
	}
	b, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &gr); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(gr.DockersV2) != 1 || len(gr.DockersV2[0].Images) != 1 || gr.DockersV2[0].Dockerfile != "Dockerfile" {
		t.Fatalf(".goreleaser.yaml: dockers_v2 %+v, want one image built from the root Dockerfile", gr.DockersV2)
	}
	repo, _, _ := strings.Cut(c.Image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if want := gr.DockersV2[0].Images[0]; repo != want {
		t.Errorf("image %q, goreleaser publishes %q", c.Image, want)
	}
}

func envVar(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func envValue(c *corev1.Container, name string) string {
	if e := envVar(c, name); e != nil {
		return e.Value
	}
	return ""
}

// argInt is the whole number after flag in c's args.
func argInt(t *testing.T, c *corev1.Container, flag string) int64 {
	t.Helper()
	i := slices.Index(c.Args, flag)
	if i < 0 || i+1 >= len(c.Args) {
		t.Fatalf("args %q: no %s", c.Args, flag)
	}
	n, err := strconv.ParseInt(c.Args[i+1], 10, 64)
	if err != nil {
		t.Fatalf("%s %q: %v", flag, c.Args[i+1], err)
	}
	return n
}

// ptrString formats *p, or "unset".
func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}
