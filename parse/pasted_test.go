package parse_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/parse"
)

// Outputs of real commands (iproute2 6.x, conntrack-tools 1.4.7, iptables
// 1.8.9 and nft on Linux 6.x, in a network namespace; a Pod's resolv.conf),
// pasted as tickets
// carry them: under the command with no prompt, under a prompt, and with
// the prompt left at the end. Each is read by its command's format without
// a warning, as the output alone is.
func TestOpenPastedCommands(t *testing.T) {
	outputs := []struct{ cmd, out, format string }{
		{"ip route", "default via 10.77.1.254 dev nmc-ux-v0 \n10.77.1.0/24 dev nmc-ux-v0 proto kernel scope link src 10.77.1.1 \n", "ip-route"},
		{"conntrack -S", "cpu=0   \tfound=0 invalid=0 insert=0 insert_failed=0 drop=0 early_drop=0 error=0 search_restart=0 clash_resolve=0 chaintoolong=0 \n" +
			"cpu=1   \tfound=0 invalid=0 insert=0 insert_failed=0 drop=0 early_drop=0 error=0 search_restart=0 clash_resolve=0 chaintoolong=0 \n", "conntrack-stats"},
		{"sysctl net.ipv4.ip_forward net.ipv4.ip_local_port_range", "net.ipv4.ip_forward = 0\nnet.ipv4.ip_local_port_range = 32768\t60999\n", "sysctl"},
		{"ss -tan", "State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\nLISTEN 0      128          0.0.0.0:2024      0.0.0.0:*          \n", "ss"},
		{"iptables -t nat -S", "-P PREROUTING ACCEPT\n-P INPUT ACCEPT\n-P OUTPUT ACCEPT\n-P POSTROUTING ACCEPT\n" +
			"-A PREROUTING -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.77.0.2:8080\n", "iptables-S"},
		// kubectl's TLS failure (easzlab/kubeasz#922) is its error line;
		// a failed dial is a client's outcome.
		{"kubectl get nodes", "Unable to connect to the server: x509: certificate has expired or is not yet valid\n", "client-errors"},
		{"kubectl get nodes", "Unable to connect to the server: dial tcp 10.0.0.10:6443: i/o timeout\n", "client-transcript"},
		// A Pod's resolv.conf as kubelet writes it (ClusterFirst).
		{"cat /etc/resolv.conf", "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n", "resolv-conf"},
		{"nft list ruleset", "table ip nat {\n\tchain PREROUTING {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n" +
			"\t\ttcp dport 80 counter packets 0 bytes 0 dnat to 10.77.0.2:8080\n\t}\n}\n", "nft"},
	}
	pastes := []struct{ name, head, tail string }{
		{"bare", "", ""},
		{"dollar", "$ sudo ", "$ \n"},
		{"root", "[root@node1 ~]# ", "[root@node1 ~]# \n"},
	}
	dir := t.TempDir()
	for _, o := range outputs {
		for _, p := range pastes {
			path := filepath.Join(dir, o.format+"-"+p.name+".txt")
			if err := os.WriteFile(path, []byte(p.head+o.cmd+"\n"+o.out+p.tail), 0o644); err != nil {
				t.Fatal(err)
			}
			snap, warns, err := parse.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(warns) > 0 {
				t.Errorf("%s %q: warning %v", o.format, p.head+o.cmd, warns[0])
			}
			if len(snap.Inputs) != 1 || snap.Inputs[0].Format != o.format || snap.Inputs[0].Records == 0 {
				t.Errorf("%s %q: read as %+v", o.format, p.head+o.cmd, snap.Inputs)
			}
		}
	}
}
