package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
)

// Seed 002's outputs pasted as one terminal session, as a ticket often
// carries them: split at its prompts, the session gives the same three
// findings as the seed's separate files, on the node its prompts name.
func TestSeedAsSession(t *testing.T) {
	seed := filepath.Join("..", "fixtures", "seeds", "002-synack-reset")
	var b strings.Builder
	for _, part := range []struct{ file, cmd string }{
		{"sysctl.txt", "sysctl net.ipv4.ip_local_port_range"},
		{"kube-apiserver-flags.txt", "grep service-node-port-range /etc/kubernetes/manifests/kube-apiserver.yaml"},
		{"ipvsadm.txt", ""}, {"ss-timewait.txt", ""}, {"svc.txt", ""}, {"tcpdump-lo.txt", ""},
		{"kubelet.log", "journalctl -u kubelet | grep Probe"},
		{"probe-failure.tshark.txt", "tshark -r probe.pcap -V"},
	} {
		text, err := os.ReadFile(filepath.Join(seed, part.file))
		if err != nil {
			t.Fatal(err)
		}
		out := string(text)
		cmd := part.cmd
		if cmd == "" { // the seed's own "# command" first line
			first, rest, _ := strings.Cut(out, "\n")
			cmd, out = strings.TrimPrefix(first, "# "), rest
		}
		b.WriteString("root@node1:~# " + cmd + "\n" + out)
		if !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "session.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	check(t, bundle{
		dir: dir,
		want: []want{{
			rule: "ephemeral-nodeport-overlap", severity: analyzer.Error,
			facts: map[string]string{"node": "node1"},
		}, {
			rule: "synack-reset", severity: analyzer.Error,
			facts: map[string]string{"client": "10.23.77.129"},
		}, {
			rule: "timewait-churn", severity: analyzer.Warning,
		}},
	})
}
