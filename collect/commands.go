// Package collect knows the commands that give netmortem its evidence: the
// exact command line for each kind of evidence, the file it is saved to in
// a collected bundle, and the tools it needs. The collector script
// (`netmortem collect-script`) runs them, and reports name them when a rule
// was skipped for lack of evidence or a cause is undecided (next_evidence),
// so that what a report asks for is what the collector gathers.
package collect

import "github.com/netmortem/netmortem/model"

// Scope says where a command runs.
type Scope string

// Scopes.
const (
	ScopeNode    Scope = "node"    // on each node, as root
	ScopeCluster Scope = "cluster" // once, with kubectl and cluster access
)

// Command is one command the collector runs.
type Command struct {
	// Name identifies the command in reports and the manifest:
	// "iptables-save", "ss-tanpi".
	Name string
	// Shell is the exact command line, as a customer would type it.
	Shell string
	// File is where the output goes in a collected bundle, relative to
	// the node's (or the cluster's) directory.
	File string
	// Kinds are the kinds of evidence its output gives.
	Kinds []model.Kind
	// Scope says whether it runs on a node or against the cluster.
	Scope Scope
	// Tools are the programs it needs; the collector skips the command
	// with a note when one is missing.
	Tools []string
}

// Commands are the collector's commands, in the order it runs them.
var Commands = []Command{
	{Name: "iptables-save", Shell: "iptables-save -c", File: "iptables-save.txt", Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Tools: []string{"iptables-save"}},
	{Name: "iptables-nat", Shell: "iptables -t nat -nvL --line-numbers", File: "iptables-nat.txt", Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Tools: []string{"iptables"}},
	{Name: "nft-ruleset", Shell: "nft list ruleset", File: "nft-ruleset.txt", Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Tools: []string{"nft"}},
	{Name: "ipvsadm", Shell: "ipvsadm -Ln", File: "ipvsadm.txt", Kinds: []model.Kind{model.KindIPVS}, Scope: ScopeNode, Tools: []string{"ipvsadm"}},
	{Name: "ipvsadm-stats", Shell: "ipvsadm -Ln --stats", File: "ipvsadm-stats.txt", Kinds: []model.Kind{model.KindIPVS}, Scope: ScopeNode, Tools: []string{"ipvsadm"}},
	{Name: "conntrack-stats", Shell: "conntrack -S", File: "conntrack-stats.txt", Kinds: []model.Kind{model.KindConntrack}, Scope: ScopeNode, Tools: []string{"conntrack"}},
	{Name: "conntrack-list", Shell: "conntrack -L -o extended", File: "conntrack.txt", Kinds: []model.Kind{model.KindConntrack}, Scope: ScopeNode, Tools: []string{"conntrack"}},
	{Name: "ss-tanpi", Shell: "ss -tanpi", File: "ss-tanpi.txt", Kinds: []model.Kind{model.KindSockets}, Scope: ScopeNode, Tools: []string{"ss"}},
	{Name: "ss-lntup", Shell: "ss -lntup", File: "ss-lntup.txt", Kinds: []model.Kind{model.KindSockets}, Scope: ScopeNode, Tools: []string{"ss"}},
	{Name: "sysctl-net", Shell: "sysctl -a --pattern '^net\\.'", File: "sysctl.txt", Kinds: []model.Kind{model.KindSysctl}, Scope: ScopeNode, Tools: []string{"sysctl"}},
	{Name: "ip-link", Shell: "ip -d link", File: "ip-link.txt", Kinds: []model.Kind{model.KindLinks}, Scope: ScopeNode, Tools: []string{"ip"}},
	{Name: "ip-addr", Shell: "ip addr", File: "ip-addr.txt", Kinds: []model.Kind{model.KindAddrs}, Scope: ScopeNode, Tools: []string{"ip"}},
	{Name: "ip-route", Shell: "ip route show table all", File: "ip-route.txt", Kinds: []model.Kind{model.KindRoutes}, Scope: ScopeNode, Tools: []string{"ip"}},
	{Name: "ip-neigh", Shell: "ip neigh", File: "ip-neigh.txt", Kinds: []model.Kind{model.KindNeighbors}, Scope: ScopeNode, Tools: []string{"ip"}},
	{Name: "nstat", Shell: "nstat -az", File: "nstat.txt", Kinds: []model.Kind{model.KindCounters}, Scope: ScopeNode, Tools: []string{"nstat"}},
	{Name: "kubelet-log", Shell: "journalctl -u kubelet --since -2h --no-pager", File: "kubelet.log", Kinds: []model.Kind{model.KindLogs}, Scope: ScopeNode, Tools: []string{"journalctl"}},
	{Name: "static-pods", Shell: "cat /etc/kubernetes/manifests/*.yaml", File: "manifests/", Kinds: []model.Kind{model.KindComponents}, Scope: ScopeNode},
	{Name: "containers", Shell: "crictl ps -a", File: "crictl-ps.txt", Kinds: []model.Kind{model.KindContainers}, Scope: ScopeNode, Tools: []string{"crictl"}},
	{Name: "capture", Shell: "timeout 60 tcpdump -i any -nn -s 256 -C 100 -W 1 -w capture.pcap", File: "capture.pcap", Kinds: []model.Kind{model.KindCapture}, Scope: ScopeNode, Tools: []string{"tcpdump", "timeout"}},
	{Name: "kubectl-objects", Shell: "kubectl get nodes,pods,services,endpointslices,networkpolicies -A -o json", File: "cluster.json", Kinds: []model.Kind{model.KindKube}, Scope: ScopeCluster, Tools: []string{"kubectl"}},
}

// ForKind returns the commands that give evidence of kind k, in the
// collector's order.
func ForKind(k model.Kind) []Command {
	var out []Command
	for _, c := range Commands {
		for _, ck := range c.Kinds {
			if ck == k {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// Lookup returns the command named name.
func Lookup(name string) (Command, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}
