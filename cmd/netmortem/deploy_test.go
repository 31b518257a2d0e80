package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// The Indexed Job's manifest and the example of the Secret it reads
// (deploy/kubernetes/manifest_test.go checks them as Kubernetes objects).
const (
	deployJob    = "../../deploy/kubernetes/job.yaml"
	deploySecret = "../../deploy/kubernetes/secret.example.yaml"
)

// readManifest decodes the YAML file name into v through its JSON, as
// the API server reads it.
func readManifest(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(j, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// kubeExpand replaces $(VAR) in s by env[VAR], as the kubelet does in a
// container's args: $$ is a $, and a reference to a variable the
// container does not have is left as written, which is reported.
func kubeExpand(s string, env map[string]string) (string, []string) {
	var unknown []string
	ref := regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)
	out := ref.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		name := m[2 : len(m)-1]
		v, ok := env[name]
		if !ok {
			unknown = append(unknown, name)
			return m
		}
		return v
	})
	return out, unknown
}

func TestKubeExpand(t *testing.T) {
	env := map[string]string{"A": "x", "DB_URL": "postgres://h/db"}
	for in, want := range map[string]string{
		"$(A)": "x", "--db=$(DB_URL)": "--db=postgres://h/db", "$$(A)": "$(A)", "$(B)": "$(B)", "a$(A)b$(A)": "axbx", "$A": "$A",
	} {
		if got, _ := kubeExpand(in, env); got != want {
			t.Errorf("kubeExpand(%q) = %q, want %q", in, got, want)
		}
	}
	if _, unknown := kubeExpand("$(B)", env); len(unknown) != 1 || unknown[0] != "B" {
		t.Errorf("$(B) unknown %q, want [B]", unknown)
	}
}

// TestDeployJobArgs parses the Indexed Job's args with the batch
// command's own flags, the $(VAR) references expanded from the
// container's variables (the Secret's from secret.example.yaml), and
// checks that each index of the Job gets its own shard.
func TestDeployJobArgs(t *testing.T) {
	var job batchv1.Job
	readManifest(t, deployJob, &job)
	var secret corev1.Secret
	readManifest(t, deploySecret, &secret)
	if len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want one container", deployJob)
	}
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			if v, ok := secret.StringData[e.ValueFrom.SecretKeyRef.Key]; ok {
				env[e.Name] = v
			}
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		var unknown []string
		args[i], unknown = kubeExpand(a, env)
		if len(unknown) > 0 {
			t.Errorf("arg %q: %q are not variables of the container", a, unknown)
		}
	}
	if env["DB_URL"] == "" || !strings.Contains(strings.Join(args, " "), env["DB_URL"]) {
		t.Errorf("args %q do not carry DB_URL %q", args, env["DB_URL"])
	}

	cmd, rest, err := newRoot(&cli{stdout: io.Discard, stderr: io.Discard}).Find(args)
	if err != nil || cmd.Name() != "batch" {
		t.Fatalf("args %q: command %q, %v; want batch", args, cmd.Name(), err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("args %q: %v", args, err)
	}
	fs := cmd.Flags()
	if ops := fs.Args(); len(ops) != 1 || !strings.HasPrefix(ops[0], "s3://") {
		t.Errorf("operands %q, want one s3:// URL", ops)
	}
	if resume, err := fs.GetBool("resume"); err != nil || !resume {
		t.Errorf("--resume %v, %v", resume, err)
	}
	for _, name := range []string{"memory-limit", "max-bundle-bytes"} {
		if v, err := fs.GetInt64(name); err != nil || v <= 0 {
			t.Errorf("--%s %d, %v", name, v, err)
		}
	}
	shard, _ := fs.GetString("shard")
	if *job.Spec.Completions < 2 {
		t.Fatalf("completions %d", *job.Spec.Completions)
	}
	for k := range int(*job.Spec.Completions) {
		pod := map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(k), "JOB_COMPLETIONS": env["JOB_COMPLETIONS"]}
		if shard != "auto" {
			t.Fatalf("--shard %q, want auto", shard)
		}
		gotK, gotN, err := shardAuto(func(name string) string { return pod[name] })
		if err != nil || gotK != k || gotN != int(*job.Spec.Completions) {
			t.Errorf("index %d of %d: shard %d/%d, %v", k, *job.Spec.Completions, gotK, gotN, err)
		}
	}
}
