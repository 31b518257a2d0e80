package bundle

import "strings"

func rancherHost(ix *index, d, treeName string) string {
	if h := firstLine(ix.files[join(d, "systeminfo/hostname")]); h != "" {
		return h
	}
	return collectorDateRE.ReplaceAllString(rootName(d, treeName), "")
}

// rancherCommands maps the Rancher v2.x logs collector's file names to the
// commands that wrote them (rancher2_logs_collector.sh).
var rancherCommands = map[string]string{
	"networking/iptablessave":         "iptables-save",
	"networking/ip6tablessave":        "ip6tables-save",
	"networking/iptablesmangle":       "iptables --wait 1 --numeric --verbose --list --table mangle",
	"networking/iptablesnat":          "iptables --wait 1 --numeric --verbose --list --table nat",
	"networking/iptables":             "iptables --wait 1 --numeric --verbose --list",
	"networking/ip6tablesmangle":      "ip6tables --wait 1 --numeric --verbose --list --table mangle",
	"networking/ip6tablesnat":         "ip6tables --wait 1 --numeric --verbose --list --table nat",
	"networking/ip6tables":            "ip6tables --wait 1 --numeric --verbose --list",
	"networking/nft_ruleset":          "nft list ruleset",
	"networking/netstat":              "netstat --programs --all --numeric --tcp --udp",
	"networking/netstatistics":        "netstat --statistics",
	"networking/ipvsadm":              "ipvsadm -ln",
	"networking/procnetxfrmstat":      "cat /proc/net/xfrm_stat",
	"networking/ipaddrshow":           "ip addr show",
	"networking/iproute":              "ip route show table all",
	"networking/ipneighbour":          "ip neighbour",
	"networking/iprule":               "ip rule show",
	"networking/iplinkshow":           "ip -s link show",
	"networking/ipv6neighbour":        "ip -6 neighbour",
	"networking/ipv6rule":             "ip -6 rule show",
	"networking/ipv6route":            "ip -6 route show",
	"networking/ipv6addrshow":         "ip -6 addr show",
	"networking/ifconfiga":            "ifconfig -a",
	"networking/ssanp":                "ss -anp",
	"networking/ssitan":               "ss -itan",
	"networking/ssuapn":               "ss -uapn",
	"networking/sswapn":               "ss -wapn",
	"networking/ssxapn":               "ss -xapn",
	"networking/ss4apn":               "ss -4apn",
	"networking/ss6apn":               "ss -6apn",
	"networking/sstunlp6":             "ss -tunlp6",
	"networking/sstunlp4":             "ss -tunlp4",
	"systeminfo/sysctla":              "sysctl -a",
	"systeminfo/ps":                   "ps auxfww",
	"systeminfo/hostname":             "hostname",
	"systeminfo/kubectl-version.json": "kubectl version -o json",
}

// rancherKubectl maps files under <distro>/kubectl/ to their commands.
var rancherKubectl = map[string]string{
	"nodes":      "kubectl get nodes -o wide",
	"nodes.json": "kubectl get nodes -o json",
	"pods":       "kubectl get pods -o wide --all-namespaces",
	"services":   "kubectl get services -o wide --all-namespaces",
	"endpoints":  "kubectl get endpoints -o wide --all-namespaces",
	"version":    "kubectl version",
}

func placeRancher(host, rel string) placement {
	pl := placement{node: host}
	if c, ok := rancherCommands[rel]; ok {
		pl.command = c
		return pl
	}
	parts := strings.Split(rel, "/")
	if len(parts) >= 3 && parts[1] == "kubectl" {
		file := parts[len(parts)-1]
		if c, ok := rancherKubectl[file]; ok {
			pl.command = c
		} else if res, ok := strings.CutSuffix(file, ".json"); ok {
			pl.command = "kubectl get " + res + " --all-namespaces -o json"
		} else {
			pl.command = "kubectl get " + file + " --all-namespaces"
		}
		pl.node = ""
	}
	if len(parts) == 3 && parts[1] == "podlogs" {
		pl.command = "kubectl logs " + parts[2]
		pl.node = "" // the pod may run on any node
	}
	if parts[0] == "journald" && len(parts) == 2 {
		pl.command = "journalctl -u " + parts[1]
	}
	return pl
}
