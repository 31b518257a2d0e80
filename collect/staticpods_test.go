package collect_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

// TestStaticPods runs the static-pods command on a copy of a node's
// manifests: each is copied with its credential-like flags redacted, and
// netmortem reads the apiserver's flags from it.
func TestStaticPods(t *testing.T) {
	c, ok := collect.Lookup("static-pods")
	if !ok {
		t.Fatal("no static-pods command")
	}
	body, err := c.Body(collect.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	manifests := filepath.Join(tmp, "etc", "kubernetes", "manifests")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/incidents/ephemeral-nodeport/kube-apiserver.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-pw"
	b = []byte(strings.Replace(string(b), "    - --etcd-servers=", "    - --kubelet-password="+secret+"\n    - --etcd-servers=", 1))
	if err := os.WriteFile(filepath.Join(manifests, "kube-apiserver.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub(t, bin, "nm_redact", "exec awk "+shellQuote(redactProgram(t))+"\n")
	out := filepath.Join(tmp, "bundle", "node1", "manifests")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(body, "/etc/kubernetes/", filepath.Join(tmp, "etc", "kubernetes")+"/"))
	cmd.Env = append(os.Environ(), "out="+out, "PATH="+bin+":"+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("static-pods: %v\n%s", err, b)
	}
	got, err := os.ReadFile(filepath.Join(out, "kube-apiserver.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), secret) || !strings.Contains(string(got), "--kubelet-password=***HIDDEN***") {
		t.Errorf("the password flag is not redacted:\n%s", got)
	}
	snap, warns, err := parse.Open(context.Background(), filepath.Join(tmp, "bundle"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Outside a collected bundle the hidden value is a warning of its own.
	for _, w := range warns {
		if !strings.Contains(w.Error(), "hidden by redaction") {
			t.Errorf("warning: %v", w)
		}
	}
	found := false
	for _, comp := range snap.Components {
		if comp.Name != "kube-apiserver" {
			continue
		}
		for _, a := range comp.Args {
			if a.Name == "service-node-port-range" || a.Name == "advertise-address" {
				found = true
			}
			if a.Name == "kubelet-password" {
				t.Errorf("the hidden flag was read as %q", a.Value)
			}
		}
	}
	if !found {
		t.Errorf("kube-apiserver's flags not read from the copied manifest: %+v", snap.Components)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
