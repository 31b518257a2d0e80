package model

// Kind is a kind of evidence a rule can need. It names what the data is, not
// which file format carried it: NAT state is KindNetfilter whether it came
// from iptables-save or from an iptables -L listing.
type Kind string

// The kinds of evidence.
const (
	KindCapture    Kind = "capture"    // packets: connection attempts, ICMP, ARP
	KindSysctl     Kind = "sysctl"     // kernel parameters
	KindIPVS       Kind = "ipvs"       // IPVS virtual services
	KindNetfilter  Kind = "netfilter"  // iptables / nftables rules
	KindSockets    Kind = "sockets"    // ss / netstat socket tables
	KindKube       Kind = "kube"       // Kubernetes objects
	KindComponents Kind = "components" // component command lines (static pod manifests, ps)
	KindLogs       Kind = "logs"       // log lines
	KindNeighbors  Kind = "neighbors"  // ARP / ND tables
	KindAddrs      Kind = "addrs"      // interface addresses
	KindLinks      Kind = "links"      // interfaces: MTU, type, bridge port settings
	KindRoutes     Kind = "routes"     // routing tables
	KindConntrack  Kind = "conntrack"  // conntrack entries
	KindContainers Kind = "containers" // container listings (docker ps, crictl ps)
	KindSettings   Kind = "settings"   // deployment settings (kubespray group_vars)
	KindProbes     Kind = "probes"     // connect loops run by hand (nc)
	KindSession    Kind = "session"    // a pasted terminal session: each command's output is an input of its own
	KindPodChecks  Kind = "podchecks"  // pod-to-pod connectivity checks (goldpinger)
	KindCounters   Kind = "counters"   // kernel counters (nstat)
	KindClient     Kind = "client"     // client-side transcripts (curl, nc, dig, telnet, application errors)
	KindCNI        Kind = "cni"        // CNI network configurations (/etc/cni/net.d), read as Settings of tool cni
)

// Input describes one file that was read (or skipped) into a Snapshot.
type Input struct {
	// Path is the file's path as given, with the member path for files
	// inside archives.
	Path string `json:"path" yaml:"path"`
	// Format is the name of the format the content was read as, such as
	// "pcap", "sysctl", "ipvsadm" or "kubectl-json" (see `netmortem
	// formats`); empty when the file was skipped.
	Format string `json:"format" yaml:"format"`
	// Kind is the kind of evidence the format carries; empty when the
	// file was skipped.
	Kind Kind `json:"kind,omitempty" yaml:"kind,omitempty"`
	// Node is the node the file belongs to, when the bundle layout or the
	// content says so.
	Node string `json:"node,omitempty" yaml:"node,omitempty"`
	// Layout is the bundle layout the file was found in ("troubleshoot",
	// "sosreport", "rancher", "eks", ...), empty for loose files.
	Layout string `json:"layout,omitempty" yaml:"layout,omitempty"`
	// Command is the command that produced the file, when the layout
	// says so (a sosreport file name, a troubleshoot run-host info file).
	Command string `json:"command,omitempty" yaml:"command,omitempty"`
	// Records counts what was read: lines, packets, objects.
	Records int `json:"records" yaml:"records"`
	// Warnings counts the problems found in this input.
	Warnings int `json:"warnings,omitempty" yaml:"warnings,omitempty"`
	// Skipped says why the file was not read, when it was not.
	Skipped string `json:"skipped,omitempty" yaml:"skipped,omitempty"`
	// Details holds per-format counts worth showing, such as the object
	// kinds of a Kubernetes List ("Service": 12).
	Details map[string]int `json:"details,omitempty" yaml:"details,omitempty"`
}

// SkippedDocumentation is the Skipped of a Markdown file in a bundle (a
// README, a ticket's EXPECTED.md): documentation, not evidence. inspect
// lists it; analyze's note of skipped files leaves it out.
const SkippedDocumentation = "documentation (Markdown), not evidence"

// Snapshot is everything known about a cluster from one bundle of evidence.
// Each record carries its node (empty when unknown) and its Pos.
type Snapshot struct {
	Inputs []Input `json:"inputs"`

	Sysctls   []Sysctl      `json:"sysctls,omitempty"`
	IPVS      []IPVSService `json:"ipvs,omitempty"`
	IPVSConns []IPVSConn    `json:"ipvs_conns,omitempty"`
	// IPVSTimeouts are IPVS's connection timeouts, per node.
	IPVSTimeouts []IPVSTimeouts `json:"ipvs_timeouts,omitempty"`
	Netfilter    []*Ruleset     `json:"netfilter,omitempty"`
	Sockets      []Socket       `json:"sockets,omitempty"`
	SockCounts   []SocketCount  `json:"socket_counts,omitempty"`
	Components   []Component    `json:"components,omitempty"`
	Containers   []Container    `json:"containers,omitempty"`
	Kube         Kube           `json:"kube"`
	Logs         []LogEvent     `json:"logs,omitempty"`
	Neighbors    []Neighbor     `json:"neighbors,omitempty"`
	Addrs        []IfAddr       `json:"addrs,omitempty"`
	Links        []Link         `json:"links,omitempty"`
	Routes       []Route        `json:"routes,omitempty"`
	// RouteRules are the policy routing rules (ip rule), per node.
	RouteRules []RouteRule      `json:"route_rules,omitempty"`
	Conntrack  []ConntrackEntry `json:"conntrack,omitempty"`
	// ConntrackEvents are the events of `conntrack -E` streams, in the
	// order printed.
	ConntrackEvents []ConntrackEntry `json:"conntrack_events,omitempty"`
	// ConntrackStats are the conntrack counters per node and CPU.
	ConntrackStats []ConntrackStats `json:"conntrack_stats,omitempty"`
	Settings       []Setting        `json:"settings,omitempty"`
	Probes         []ProbeRun       `json:"probes,omitempty"`
	PodChecks      []PodCheck       `json:"pod_checks,omitempty"`
	// Counters are the kernel's SNMP and netstat counters (nstat), per
	// node, in the order printed.
	Counters []Counter `json:"counters,omitempty"`
	// NeighborCounts are neighbor tables' sizes as counts of their
	// listings (arp -an | wc -l).
	NeighborCounts []NeighborCount `json:"neighbor_counts,omitempty"`
	// KernelModules are listings of loaded kernel modules (lsmod).
	KernelModules []KernelModules `json:"kernel_modules,omitempty"`
	// BGPPeers are the BGP sessions of nodes (calicoctl node status).
	BGPPeers []BGPPeer `json:"bgp_peers,omitempty"`
	// CiliumHealth are Cilium's health checks of the nodes (cilium status,
	// cilium-health status), per reporting node.
	CiliumHealth []CiliumNodeHealth `json:"cilium_health,omitempty"`
	// ConnectTimes are the connect times of load tests (ab).
	ConnectTimes []ConnectTimes `json:"connect_times,omitempty"`
	// ResolvConfs are resolver configurations (/etc/resolv.conf).
	ResolvConfs []ResolvConf `json:"resolv_confs,omitempty"`
	// Client are client-side transcripts' attempts (curl, nc, dig ...):
	// which destination failed how, in the order printed.
	Client []ClientResult `json:"client,omitempty"`

	// ServerVersions are the versions the apiserver reported.
	ServerVersions []ServerVersion `json:"server_versions,omitempty"`
	// DNSChecks are DNS checks run from pods of the cluster.
	DNSChecks []DNSCheck `json:"dns_checks,omitempty"`

	Captures []CaptureInfo `json:"captures,omitempty"`
	Attempts []Attempt     `json:"attempts,omitempty"`
	// EndpointStats count the attempts not kept one by one, per server
	// endpoint and outcome (captures read in summary mode): the attempts
	// to an endpoint are those in Attempts plus these.
	EndpointStats []EndpointStats `json:"endpoint_stats,omitempty"`
	ICMP          []ICMPEvent     `json:"icmp,omitempty"`
	ARP           []ARPEvent      `json:"arp,omitempty"`
	// BadChecksums are the packets a capture's decoder printed with a
	// wrong transport checksum (tcpdump -v's "bad udp cksum").
	BadChecksums []ChecksumError `json:"bad_checksums,omitempty"`

	// Collections are what netmortem's collector recorded, node by node,
	// of the commands it ran and skipped (its manifests).
	Collections []Collection `json:"collections,omitempty"`

	// Cuts are the inputs that end before their real end (see Cut): set
	// from the readers' warnings by whoever read the snapshot
	// (operand.Open), read by the facts that would otherwise take what
	// the cut lost for absent.
	Cuts []Cut `json:"cuts,omitempty"`
}

// Has reports whether any input of kind k was read (even if it held no
// records, which is itself evidence: an empty IPVS table is a fact).
func (s *Snapshot) Has(k Kind) bool {
	for _, in := range s.Inputs {
		if in.Kind == k && in.Skipped == "" {
			return true
		}
	}
	return false
}

// Merge appends everything in o to s.
func (s *Snapshot) Merge(o *Snapshot) {
	if o == nil {
		return
	}
	s.Inputs = append(s.Inputs, o.Inputs...)
	s.Sysctls = append(s.Sysctls, o.Sysctls...)
	s.IPVS = append(s.IPVS, o.IPVS...)
	s.IPVSConns = append(s.IPVSConns, o.IPVSConns...)
	s.IPVSTimeouts = append(s.IPVSTimeouts, o.IPVSTimeouts...)
	s.ConnectTimes = append(s.ConnectTimes, o.ConnectTimes...)
	s.KernelModules = append(s.KernelModules, o.KernelModules...)
	s.BGPPeers = append(s.BGPPeers, o.BGPPeers...)
	s.CiliumHealth = append(s.CiliumHealth, o.CiliumHealth...)
	s.Netfilter = append(s.Netfilter, o.Netfilter...)
	s.Sockets = append(s.Sockets, o.Sockets...)
	s.SockCounts = append(s.SockCounts, o.SockCounts...)
	s.Components = append(s.Components, o.Components...)
	s.Containers = append(s.Containers, o.Containers...)
	s.Kube.Merge(&o.Kube)
	s.Logs = append(s.Logs, o.Logs...)
	s.Neighbors = append(s.Neighbors, o.Neighbors...)
	s.Addrs = append(s.Addrs, o.Addrs...)
	s.Links = append(s.Links, o.Links...)
	s.Routes = append(s.Routes, o.Routes...)
	s.RouteRules = append(s.RouteRules, o.RouteRules...)
	s.Conntrack = append(s.Conntrack, o.Conntrack...)
	s.ConntrackEvents = append(s.ConntrackEvents, o.ConntrackEvents...)
	s.ConntrackStats = append(s.ConntrackStats, o.ConntrackStats...)
	s.ServerVersions = append(s.ServerVersions, o.ServerVersions...)
	s.DNSChecks = append(s.DNSChecks, o.DNSChecks...)
	s.Settings = append(s.Settings, o.Settings...)
	s.Probes = append(s.Probes, o.Probes...)
	s.PodChecks = append(s.PodChecks, o.PodChecks...)
	s.Counters = append(s.Counters, o.Counters...)
	s.NeighborCounts = append(s.NeighborCounts, o.NeighborCounts...)
	s.ResolvConfs = append(s.ResolvConfs, o.ResolvConfs...)
	s.Client = append(s.Client, o.Client...)
	s.Captures = append(s.Captures, o.Captures...)
	s.Attempts = append(s.Attempts, o.Attempts...)
	s.EndpointStats = append(s.EndpointStats, o.EndpointStats...)
	s.ICMP = append(s.ICMP, o.ICMP...)
	s.ARP = append(s.ARP, o.ARP...)
	s.BadChecksums = append(s.BadChecksums, o.BadChecksums...)
	s.Collections = append(s.Collections, o.Collections...)
	s.Cuts = append(s.Cuts, o.Cuts...)
}

// Nodes returns the distinct non-empty node names that records carry, in the
// order inputs first name them.
func (s *Snapshot) Nodes() []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range s.Inputs {
		if in.Node != "" && !seen[in.Node] {
			seen[in.Node] = true
			out = append(out, in.Node)
		}
	}
	return out
}

// UnreadableCaptures lists the packet captures (pcap, pcapng) that were
// recognized but whose header could not be read: parse lists them as
// inputs, with a warning, but they give no capture. They are unreadable
// inputs, as a capture that cannot be opened is.
func (s *Snapshot) UnreadableCaptures() []string {
	read := map[string]bool{}
	for _, c := range s.Captures {
		read[c.File] = true
	}
	var out []string
	for _, in := range s.Inputs {
		if in.Skipped == "" && in.Kind == KindCapture && (in.Format == "pcap" || in.Format == "pcapng") && !read[in.Path] {
			out = append(out, in.Path)
		}
	}
	return out
}
