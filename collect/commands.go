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
	// Shell is the exact command line, as a customer would type it (with
	// the collector's default bounds, such as the capture's duration).
	Shell string
	// Script is what the collector script runs, when it differs from
	// Shell: the same command with its bounds taken from the script's
	// Options ({{.CaptureSeconds}}, {{.CaptureMB}}, {{.Filter}},
	// {{.ConntrackMax}}, {{.LogLines}}), a loop over files, or a
	// redaction (nm_redact). It writes to standard output, or to "$out"
	// (a file, or a directory when File ends with "/").
	Script string
	// File is where the output goes in a collected bundle, relative to
	// the node's (or the cluster's) directory; a name ending with "/" is
	// a directory of files. Two commands with the same File append to it
	// (ipvsadm's listing and its --stats, which netmortem merges).
	File string
	// Kinds are the kinds of evidence its output gives.
	Kinds []model.Kind
	// Scope says whether it runs on a node or against the cluster.
	Scope Scope
	// Tools are the programs it needs; the collector skips the command
	// with a note when one is missing.
	Tools []string
	// CoveredBy lists tools that make the command redundant: when all
	// of them are present the collector skips it with a note (plain
	// iptables-save when both iptables-legacy-save and
	// iptables-nft-save exist).
	CoveredBy []string
	// Paths are files or directories the command reads; when none of
	// them exists the collector skips it with a note (the bridge sysctls
	// exist only while br_netfilter is loaded).
	Paths []string
	// Doc says in a few words what the output shows.
	Doc string
	// Variant says the command gives another form of what an earlier
	// command of its kind gives (the legacy and nft iptables backends
	// saved apart, the nat table listed, IPVS counters, docker in place of
	// crictl, the bridge sysctls that sysctl -a lists too when
	// br_netfilter is loaded). The collector runs it; a report asking for
	// the kind names only the commands that are not variants (AskFor).
	Variant bool
	// Narrow says the command gives its kind for a few rules only (the
	// kernel's log holds kernel lines, not the components' logs the other
	// rules that read logs need): the collector runs it, but a report
	// asking for the kind does not name it (AskFor); the rules that read
	// it name it in their own Decide.
	Narrow bool
}

// logLines bounds each log the collector copies.
const logLines = "{{.LogLines}}"

// Commands are the collector's commands, in the order it runs them (the
// capture, started first, runs in the background while the others run).
var Commands = []Command{
	{Name: "capture", Shell: "timeout 60 tcpdump -i any -nn -s 256 -Z root -C 100 -W 1 -w capture.pcap",
		Script: `timeout {{.CaptureSeconds}} tcpdump -i any -nn -s 256 -Z root -C {{.CaptureMB}} -W 1 -w "$out"{{if .Filter}} {{sq .Filter}}{{end}}`,
		File:   "capture.pcap", Kinds: []model.Kind{model.KindCapture}, Scope: ScopeNode, Tools: []string{"tcpdump", "timeout"},
		Doc: "packets on every interface, headers only, for a bounded time and size: connection attempts and how they end, ICMP errors, ARP"},
	{Name: "iptables-save", Shell: "iptables-save -c", File: "iptables-save.txt",
		Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Tools: []string{"iptables-save"},
		CoveredBy: []string{"iptables-legacy-save", "iptables-nft-save"},
		Doc:       "the iptables rules with counters, of the backend iptables uses (skipped where iptables-legacy-save and iptables-nft-save give both)"},
	{Name: "iptables-legacy-save", Shell: "iptables-legacy-save -c", File: "iptables-legacy-save.txt",
		Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Variant: true, Tools: []string{"iptables-legacy-save"},
		Doc: "the rules of the legacy iptables backend, with counters"},
	{Name: "iptables-nft-save", Shell: "iptables-nft-save -c", File: "iptables-nft-save.txt",
		Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Variant: true, Tools: []string{"iptables-nft-save"},
		Doc: "the rules of the nf_tables iptables backend, with counters"},
	{Name: "iptables-nat", Shell: "iptables -t nat -nvxL --line-numbers", File: "iptables-nat.txt",
		Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Variant: true, Tools: []string{"iptables"},
		Doc: "the nat table as a listing with exact per-rule counters"},
	{Name: "nft-ruleset", Shell: "nft list ruleset", File: "nft-ruleset.txt",
		Kinds: []model.Kind{model.KindNetfilter}, Scope: ScopeNode, Tools: []string{"nft"},
		Doc: "every nftables table (kube-proxy's nftables mode, iptables-nft's tables, the host firewall)"},
	{Name: "ipvsadm", Shell: "ipvsadm -Ln", File: "ipvsadm.txt",
		Kinds: []model.Kind{model.KindIPVS}, Scope: ScopeNode, Tools: []string{"ipvsadm"}, Paths: []string{ipvsProc},
		Doc: "IPVS virtual services and their real servers (kube-proxy's IPVS mode); skipped, and noted so, when the ip_vs module is not loaded (ipvsadm would load it)"},
	{Name: "ipvsadm-stats", Shell: "ipvsadm -Ln --stats", File: "ipvsadm.txt",
		Kinds: []model.Kind{model.KindIPVS}, Scope: ScopeNode, Variant: true, Tools: []string{"ipvsadm"}, Paths: []string{ipvsProc},
		Doc: "IPVS connection and packet counters per virtual service and real server"},
	{Name: "ipvsadm-timeout", Shell: "ipvsadm -Ln --timeout", File: "ipvsadm-timeout.txt",
		Kinds: []model.Kind{model.KindIPVS}, Scope: ScopeNode, Variant: true, Tools: []string{"ipvsadm"}, Paths: []string{ipvsProc},
		Doc: "IPVS's connection timeouts (tcp, tcpfin, udp): an idle TCP connection outlives the tcp one only with keepalives shorter than it"},
	{Name: "conntrack-stats", Shell: "conntrack -S", File: "conntrack-stats.txt",
		Kinds: []model.Kind{model.KindConntrack}, Scope: ScopeNode, Tools: []string{"conntrack"},
		Doc: "conntrack counters per CPU (insert_failed, drop, early_drop, invalid)"},
	{Name: "conntrack-list", Shell: "conntrack -L -o extended 2>&1 | head -n 200000",
		Script: `conntrack -L -o extended 2>&1 | head -n {{.ConntrackMax}} | grep -v '^conntrack v[0-9.]* (conntrack-tools): 0 flow entries have been shown\.$'`, File: "conntrack.txt",
		Kinds: []model.Kind{model.KindConntrack}, Scope: ScopeNode, Tools: []string{"conntrack", "head", "grep"},
		Doc: "the connection tracking table, bounded: NAT translations, unreplied entries"},
	{Name: "ss-tanpi", Shell: "ss -tanpi", File: "ss-tanpi.txt",
		Kinds: []model.Kind{model.KindSockets}, Scope: ScopeNode, Tools: []string{"ss"},
		Doc: "every TCP socket with its process and TCP details (TIME-WAIT churn, source ports in use)"},
	{Name: "ss-lntup", Shell: "ss -lntup", File: "ss-lntup.txt",
		Kinds: []model.Kind{model.KindSockets}, Scope: ScopeNode, Tools: []string{"ss"},
		Doc: "listening TCP and UDP sockets with their processes"},
	{Name: "resolv-conf", Shell: "cat /etc/resolv.conf", File: "resolv.conf",
		Kinds: []model.Kind{model.KindResolvConf}, Scope: ScopeNode, Tools: []string{"cat"}, Paths: []string{"/etc/resolv.conf"},
		Doc: "the node's resolver configuration, which CoreDNS inherits with forward . /etc/resolv.conf: its upstreams (a loopback stub loops, a dead nameserver times out)"},
	{Name: "pod-resolv-conf", Shell: "cat /run/containerd/io.containerd.grpc.v1.cri/sandboxes/*/resolv.conf",
		Script: `for f in /run/containerd/io.containerd.grpc.v1.cri/sandboxes/*/resolv.conf /var/lib/docker/containers/*/resolv.conf; do
  if [ -f "$f" ] && grep -q '^search .*\.svc\.' "$f"; then
    cat "$f"
    break
  fi
done`,
		File: "pod-resolv.conf", Kinds: []model.Kind{model.KindResolvConf}, Scope: ScopeNode, Variant: true, Tools: []string{"grep", "cat"},
		Paths: []string{"/run/containerd/io.containerd.grpc.v1.cri/sandboxes", "/var/lib/docker/containers"},
		Doc:   "the resolver configuration the kubelet gives a Pod of the node (the first with the cluster's search domains): the cluster DNS address, search list and ndots"},
	{Name: "cni-conf", Shell: "cat /etc/cni/net.d/*.conflist /etc/cni/net.d/*.conf",
		Script: `for f in /etc/cni/net.d/*.conflist /etc/cni/net.d/*.conf; do
  if [ -f "$f" ]; then
    cat "$f"
  fi
done`,
		File: "cni-conf.txt", Kinds: []model.Kind{model.KindCNI}, Scope: ScopeNode, Variant: true, Tools: []string{"cat"},
		Paths: []string{"/etc/cni/net.d"},
		Doc:   "the node's CNI network configuration: the plugins the kubelet calls, their bridge, MTU and IPAM ranges (the Pod network on this node)"},
	{Name: "sysctl-net", Shell: `sysctl -a 2>/dev/null | grep '^net\.'`, File: "sysctl.txt",
		Kinds: []model.Kind{model.KindSysctl}, Scope: ScopeNode, Tools: []string{"sysctl", "grep"},
		Doc: "the network sysctls (ip_local_port_range, rp_filter, conntrack limits, the bridge's when br_netfilter is loaded)"},
	{Name: "sysctl-bridge", Shell: "tail -n +1 /proc/sys/net/bridge/*", File: "sysctl-bridge.txt",
		Kinds: []model.Kind{model.KindSysctl}, Scope: ScopeNode, Variant: true, Tools: []string{"tail"}, Paths: []string{"/proc/sys/net/bridge"},
		Doc: "the bridge netfilter sysctls (bridge-nf-call-iptables); skipped, and noted so, when br_netfilter is not loaded"},
	{Name: "ip-link", Shell: "ip -d link", File: "ip-link.txt",
		Kinds: []model.Kind{model.KindLinks}, Scope: ScopeNode, Tools: []string{"ip"},
		Doc: "interfaces with MTU, type (vxlan, geneve, veth, bridge) and bridge port hairpin settings"},
	{Name: "ip-addr", Shell: "ip addr", File: "ip-addr.txt",
		Kinds: []model.Kind{model.KindAddrs}, Scope: ScopeNode, Tools: []string{"ip"},
		Doc: "interface addresses, VIPs on kube-ipvs0 included"},
	{Name: "ip-route", Shell: "ip route show table all", File: "ip-route.txt",
		Kinds: []model.Kind{model.KindRoutes}, Scope: ScopeNode, Tools: []string{"ip"},
		Doc: "every IPv4 routing table, local and policy tables included"},
	{Name: "ip-rule", Shell: "ip rule", File: "ip-rule.txt",
		Kinds: []model.Kind{model.KindRoutes}, Scope: ScopeNode, Variant: true, Tools: []string{"ip"},
		Doc: "the policy routing rules: which table a packet's route (and the reverse path's) is looked up in"},
	{Name: "ip-neigh", Shell: "ip neigh", File: "ip-neigh.txt",
		Kinds: []model.Kind{model.KindNeighbors}, Scope: ScopeNode, Tools: []string{"ip"},
		Doc: "the ARP and neighbor table: which MAC owns each address"},
	{Name: "nstat", Shell: "nstat -azs", File: "nstat.txt",
		Kinds: []model.Kind{model.KindCounters}, Scope: ScopeNode, Tools: []string{"nstat"},
		Doc: "the kernel's SNMP counters (reverse-path filter drops, listen overflows), without updating nstat's history"},
	{Name: "kernel-log", Shell: "dmesg -T", Script: "dmesg -T | tail -n " + logLines, File: "dmesg.txt",
		Kinds: []model.Kind{model.KindLogs}, Scope: ScopeNode, Tools: []string{"dmesg", "tail"}, Narrow: true,
		Doc: "the kernel's log, its last lines: conntrack or neighbour tables full, SYN flooding on a listening port, dropped martians"},
	{Name: "kubelet-log", Shell: "journalctl -u kubelet --since -2h --no-pager",
		Script: "journalctl -u kubelet --since -2h --no-pager | tail -n " + logLines + ` | grep -v '^-- No entries --$'`, File: "kubelet.log",
		Kinds: []model.Kind{model.KindLogs}, Scope: ScopeNode, Tools: []string{"journalctl", "tail", "grep"},
		Doc: "the kubelet's log of the last two hours: probe failures, restarts"},
	{Name: "kube-proxy-log", Shell: "journalctl -u kube-proxy --since -2h --no-pager",
		Script: "journalctl -u kube-proxy --since -2h --no-pager | tail -n " + logLines + ` | grep -v '^-- No entries --$'`, File: "kube-proxy.log",
		Kinds: []model.Kind{model.KindLogs}, Scope: ScopeNode, Tools: []string{"journalctl", "tail", "grep"},
		Doc: "kube-proxy's log where it runs as a systemd unit (else it is a container log)"},
	{Name: "container-logs", Shell: "tail -n 20000 /var/log/pods/kube-system_kube-proxy-*/kube-proxy/*.log",
		Script: `want() {
  case $1 in
  kube-proxy-*|coredns-*|kube-apiserver-*|etcd-*|kube-vip*|metallb-*|speaker-*|calico-node-*|canal-*|cilium-*|ingress-nginx-*|kube-flannel-*) return 0 ;;
  esac
  return 1
}
if [ -d /var/log/pods ]; then
  for d in /var/log/pods/*/*/; do
    [ -d "$d" ] || continue
    c=${d%/}; pod=${c%/*}; c=${c##*/}; pod=${pod##*/}
    want "${pod#*_}" || continue
    mkdir -p "$out/pods/$pod/$c"
    for f in "$d"*.log; do
      [ -f "$f" ] && tail -n ` + logLines + ` "$f" > "$out/pods/$pod/$c/${f##*/}"
    done
  done
else
  for f in /var/log/containers/*.log; do
    [ -e "$f" ] || continue
    want "${f##*/}" || continue
    mkdir -p "$out/containers"
    tail -n ` + logLines + ` "$f" > "$out/containers/${f##*/}"
  done
fi`,
		File: "var/log/", Kinds: []model.Kind{model.KindLogs}, Scope: ScopeNode, Tools: []string{"tail"}, Paths: []string{"/var/log/pods", "/var/log/containers"},
		Doc: "the logs of the network's containers on the node, restarted ones' earlier logs included (kube-proxy, CoreDNS, apiserver, etcd, load-balancer and CNI agents): the last lines of each"},
	{Name: "static-pods", Shell: "cat /etc/kubernetes/manifests/*.yaml",
		Script: `for f in /etc/kubernetes/manifests/*.yaml /etc/kubernetes/manifests/*.yml /var/lib/rancher/k3s/agent/pod-manifests/*.yaml; do
  [ -f "$f" ] || continue
  nm_redact < "$f" > "$out/${f##*/}"
done`,
		File: "manifests/", Kinds: []model.Kind{model.KindComponents}, Scope: ScopeNode, Paths: []string{"/etc/kubernetes/manifests", "/var/lib/rancher/k3s/agent/pod-manifests"},
		Doc: "the static pod manifests: the flags of the apiserver, controller manager, scheduler and etcd (values that look like credentials redacted)"},
	{Name: "component-processes", Shell: "ps -eo args | grep -E '^[^ ]*(kubelet|kube-proxy|kube-apiserver|kube-controller-manager|kube-scheduler|etcd)( |$)'",
		Script: `ps -eo args | grep -E '^[^ ]*(kubelet|kube-proxy|kube-apiserver|kube-controller-manager|kube-scheduler|etcd)( |$)' | nm_redact`,
		File:   "processes.txt", Kinds: []model.Kind{model.KindComponents}, Scope: ScopeNode, Tools: []string{"ps", "grep"},
		Doc: "the command lines of the Kubernetes components running on the node (kubelet's and kube-proxy's flags; values that look like credentials redacted)"},
	{Name: "containers", Shell: "crictl ps -a", File: "containers.txt",
		Kinds: []model.Kind{model.KindContainers}, Scope: ScopeNode, Tools: []string{"crictl"},
		Doc: "the node's containers with their restart attempts"},
	{Name: "docker-ps", Shell: "docker ps -a", File: "containers.txt",
		Kinds: []model.Kind{model.KindContainers}, Scope: ScopeNode, Variant: true, Tools: []string{"docker"}, CoveredBy: []string{"crictl"},
		Doc: "the node's containers with their restart attempts, on Docker nodes without crictl"},
	{Name: "kubectl-objects", Shell: "kubectl get nodes,pods,services,endpoints,endpointslices,networkpolicies,daemonsets,ingresses,namespaces -A -o json",
		Script: "kubectl get nodes,pods,services,endpoints,endpointslices,networkpolicies,daemonsets,ingresses,namespaces -A -o json --request-timeout=60s | nm_redact",
		File:   "objects.json", Kinds: []model.Kind{model.KindKube}, Scope: ScopeCluster, Tools: []string{"kubectl"},
		Doc: "the cluster's Services, endpoints, Pods, Nodes and NetworkPolicies (values that look like credentials redacted; Secrets are never read)"},
	{Name: "kubectl-kube-system", Shell: "kubectl get configmaps,leases -n kube-system -o json",
		Script: "kubectl get configmaps,leases -n kube-system -o json --request-timeout=60s | nm_redact",
		File:   "kube-system.json", Kinds: []model.Kind{model.KindKube}, Scope: ScopeCluster, Tools: []string{"kubectl"},
		Doc: "kube-system's ConfigMaps (kube-proxy's mode and strictARP, kubeadm-config's Pod and Service networks) and leader-election Leases (values that look like credentials redacted)"},
	{Name: "kubectl-events", Shell: "kubectl get events -A -o json",
		Script: "kubectl get events -A -o json --request-timeout=60s | nm_redact",
		File:   "events.json", Kinds: []model.Kind{model.KindKube}, Scope: ScopeCluster, Tools: []string{"kubectl"},
		Doc: "recent events: probe failures, restarts, load-balancer changes"},
	{Name: "cilium-health", Shell: "kubectl -n kube-system exec CILIUM_POD -c cilium-agent -- cilium-health status --verbose",
		Script: `kubectl -n kube-system get pods -l k8s-app=cilium --request-timeout=60s \
  -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
while read -r pod node; do
  [ -n "$pod" ] || continue
  printf '=== %s ===\n' "$node"
  kubectl -n kube-system exec "$pod" -c cilium-agent --request-timeout=60s -- cilium-health status --verbose 2>&1 | nm_redact
done`,
		File: "cilium-health.txt", Kinds: []model.Kind{model.KindPodChecks}, Scope: ScopeCluster, Tools: []string{"kubectl"},
		Doc: "where Cilium runs, each agent's health checks of every node and its Pods, with each probe's error (none where Cilium does not run)"},
	{Name: "kubectl-version", Shell: "kubectl version -o json", Script: `v=$(kubectl version -o json --request-timeout=60s) && printf '%s\n' "$v"`,
		File: "version.json", Kinds: []model.Kind{model.KindKube}, Scope: ScopeCluster, Tools: []string{"kubectl"},
		Doc: "the apiserver's version, against the kubelets'"},
}

// ipvsProc exists while the ip_vs module is loaded. Any ipvsadm command
// loads the module when it is not (it runs modprobe ip_vs), so the
// collector runs ipvsadm only when this exists.
const ipvsProc = "/proc/net/ip_vs"

// Version is how the collector records the version of a tool.
type Version struct {
	// Tool names what is versioned: a program, or the kernel.
	Tool string
	// Shell prints its version on its first line.
	Shell string
	// Path, when not empty, must exist for the version to be asked
	// (ipvsadm -v loads the ip_vs module when it is not loaded).
	Path string
}

// Versions are the versions the collector records in its manifest.
var Versions = []Version{
	{Tool: "kernel", Shell: "uname -r"},
	{Tool: "iptables", Shell: "iptables -V"},
	{Tool: "nft", Shell: "nft -v"},
	{Tool: "ipvsadm", Shell: "ipvsadm -v", Path: ipvsProc},
	{Tool: "conntrack", Shell: "conntrack -V"},
	{Tool: "ss", Shell: "ss -V"},
	{Tool: "ip", Shell: "ip -V"},
	{Tool: "tcpdump", Shell: "tcpdump --version"},
	{Tool: "journalctl", Shell: "journalctl --version"},
	{Tool: "crictl", Shell: "crictl --version"},
	{Tool: "kubectl", Shell: "kubectl version --client"},
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

// AskFor returns the commands a report names when evidence of kind k
// is lacking: ForKind without the variants and the narrow commands.
func AskFor(k model.Kind) []Command {
	var out []Command
	for _, c := range ForKind(k) {
		if !c.Variant && !c.Narrow {
			out = append(out, c)
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
