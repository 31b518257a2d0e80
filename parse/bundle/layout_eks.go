package bundle

import (
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/parse/internal/text"
)

var eksNameRE = lazyre.New(`^eks_(i-[0-9a-f]+|[^_]+)`)

func eksNode(ix *index, d, treeName string) string {
	if id := firstLine(ix.files[join(d, "system/instance-id.txt")]); id != "" {
		return id
	}
	if m := eksNameRE.FindStringSubmatch(rootName(d, treeName)); m != nil {
		return m[1]
	}
	return collectorDateRE.ReplaceAllString(rootName(d, treeName), "")
}

// eksCommands maps the EKS log collector's files to the commands that wrote
// them (eks-log-collector.sh).
var eksCommands = map[string]string{
	"networking/iptables-save.txt":   "iptables-save",
	"networking/iptables-nat.txt":    "iptables --wait 1 --numeric --verbose --list --table nat",
	"networking/iptables-filter.txt": "iptables --wait 1 --numeric --verbose --list --table filter",
	"networking/iptables-mangle.txt": "iptables --wait 1 --numeric --verbose --list --table mangle",
	"networking/iptables.txt":        "iptables --wait 1 --numeric --verbose --list",
	"networking/ipvsadm.txt":         "ipvsadm --list --numeric",
	"networking/conntrack.txt":       "conntrack -S; conntrack -L",
	"networking/iprule.txt":          "ip rule show",
	"networking/iproute.txt":         "ip route show table all",
	"networking/ifconfig.txt":        "ifconfig",
	"networking/resolv.conf":         "cat /etc/resolv.conf",
	"sysctls/sysctl_all.txt":         "sysctl --all",
	"system/netstat.txt":             "netstat -plant",
	"system/ps.txt":                  "ps fauxwww --headers",
	"system/instance-id.txt":         "cat /var/lib/cloud/data/instance-id",
	"kubelet/kubelet.log":            "journalctl --unit=kubelet",
	"kubelet/svc.log":                "kubectl get svc",
	"kubelet/kubeconfig.yaml":        "kubectl config view --output yaml",
	"var_log/kube-proxy.log":         "cat /var/log/kube-proxy.log",
}

// eksBanner matches the lines the EKS collector adds around command output:
// "=======" and "Total Number of Rules: N" after each iptables listing, and
// "*** Output of conntrack -S ***" headers.
var eksBanner = lazyre.New(`^(=+\s*|Total Number of Rules: \d+\s*|\*\*\* Output of .* \*\*\*\s*)$`)

func placeEKS(node, rel string) placement {
	pl := placement{node: node, command: eksCommands[rel]}
	if strings.HasPrefix(rel, "networking/") {
		pl.blank = eksBanner.MatchString
	}
	if strings.HasPrefix(rel, "ipamd/") {
		pl.command = "curl http://localhost:61679/v1/" + strings.TrimSuffix(path.Base(rel), ".json")
	}
	if pl.command != "" && text.Program(pl.command) == "kubectl" {
		pl.node = ""
	}
	return pl
}
