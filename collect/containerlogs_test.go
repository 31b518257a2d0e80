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

// TestContainerLogs runs the container-logs command on a copy of a node's
// /var/log: the network components' logs are copied, earlier ones of a
// restarted container too, others are not, and netmortem reads each with
// its namespace, pod and container.
func TestContainerLogs(t *testing.T) {
	c, ok := collect.Lookup("container-logs")
	if !ok {
		t.Fatal("no container-logs command")
	}
	o := collect.DefaultOptions()
	o.LogLines = 2
	body, err := c.Body(o)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	line := func(n int) string {
		return "2026-11-25T00:00:0" + string(rune('0'+n)) + ".000000000Z stderr F I1125 00:00:0" + string(rune('0'+n)) +
			".000000       1 proxier.go:1" + string(rune('0'+n)) + "] \"Syncing iptables rules\"\n"
	}
	logs := map[string]string{
		"var/log/pods/kube-system_kube-proxy-x7k2p_0d3c1f1e-1b2a-4c55-9a0e-1f2e3d4c5b6a/kube-proxy/0.log": line(1) + line(2) + line(3),
		"var/log/pods/kube-system_kube-proxy-x7k2p_0d3c1f1e-1b2a-4c55-9a0e-1f2e3d4c5b6a/kube-proxy/1.log": line(4),
		"var/log/pods/default_web-5d8f7_9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d/web/0.log":                   line(5),
	}
	testutil.WriteTree(t, filepath.Join(tmp, "node"), logs)
	out := filepath.Join(tmp, "bundle", "node1", "var", "log")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(body, "/var/log/", filepath.Join(tmp, "node", "var", "log")+"/"))
	cmd.Env = append(os.Environ(), "out="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("container-logs: %v\n%s", err, b)
	}
	var got []string
	err = filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(out, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pods/kube-system_kube-proxy-x7k2p_0d3c1f1e-1b2a-4c55-9a0e-1f2e3d4c5b6a/kube-proxy/0.log",
		"pods/kube-system_kube-proxy-x7k2p_0d3c1f1e-1b2a-4c55-9a0e-1f2e3d4c5b6a/kube-proxy/1.log",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("copied %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(out, want[0])); string(b) != line(2)+line(3) {
		t.Errorf("0.log: %q, want its last %d lines", b, o.LogLines)
	}
	snap, warns, err := parse.Open(context.Background(), filepath.Join(tmp, "bundle"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		t.Errorf("warning: %v", w)
	}
	if len(snap.Logs) != 3 {
		t.Fatalf("%d log events, want 3", len(snap.Logs))
	}
	for _, ev := range snap.Logs {
		if ev.Namespace != "kube-system" || ev.Pod != "kube-proxy-x7k2p" || ev.Source != "kube-proxy" || ev.Node != "node1" {
			t.Errorf("event %+v: want kube-system/kube-proxy-x7k2p, container kube-proxy, node node1", ev)
		}
	}
}
