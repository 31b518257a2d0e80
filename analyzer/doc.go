// # Subjects
//
// A Finding's Subject says what the finding is about, as a few string
// keys and values; Run computes the Fingerprint from the rule's name and
// the Subject, and suppressions (Config.Ignore) select findings by it. A
// Subject holds identities only, never a count, a time, a frame number,
// a file name, a client's ephemeral port, a list of what was seen or
// wording, so that the same problem seen in another capture of it (a
// shorter one, one that starts at another frame) has the same Subject,
// and two problems of one rule have different ones. The keys are:
//
//	node           a node's name: "node1"
//	namespace      a Kubernetes namespace: "kube-system"
//	object         a Kubernetes object, "Kind namespace/name", or "Kind name"
//	               for a cluster-scoped one: "Service default/web"
//	service_port   the name of a port of the Service of object: "dns-tcp"
//	service_chain  the chain of a Service port whose dump does not name
//	               the Service: "KUBE-SVC-NPX46M4PTMTKRN6Y"
//	container      a container's name in the Pod of object: "etcd"
//	address        the address the finding is about (a server's, a
//	               destination's), IP or IP:port: "10.96.0.10:53"
//	client         a client's address, an IP (its ports change between
//	               connections): "10.0.0.5"
//	backend        a Service backend (an endpoint), IP:port, or IP where
//	               the port is not known: "10.244.1.7:8080"
//	vip            a virtual IP (a ClusterIP, LoadBalancer or IPVS
//	               address), IP or IP:port: "10.96.0.1:443"
//	source         the sending end of a one-way flow, an IP
//	destination    its receiving end, an IP
//	from           the host that sent an ICMP message, an IP
//	port           a port number alone: "30080"
//	proto          a protocol, lower case: "tcp", "udp"
//	icmp           an ICMP message's kind: "port-unreachable"
//	interface      a network interface: "eth0"
//	setting        a sysctl or configuration key: "net.ipv4.ip_local_port_range"
//	component      a component ("kube-proxy", "kubelet", "felix"), or
//	               several, comma separated: "MetalLB,kube-vip"
//	chain          a netfilter chain: "PREROUTING", "KUBE-SVC-ABC"
//	hook           a netfilter table and hook: "nat OUTPUT", "nft output"
//	counter        a kernel counter (conntrack -S): "insert_failed", "drop"
//	check          a check a component makes: "componentstatuses"
//
// Addresses are written in their canonical form (net/netip's String:
// "10.0.0.5", "[fd00::1]:53"); an ignore entry's address selector matches
// the values of address, client, backend, vip, source and destination. A
// rule may add a key of its own for what none of these names, lower case;
// the values stay identities. A rule lists the keys its Subjects may hold
// in Rule.SubjectKeys.
//
// # Fingerprints
//
// Fingerprint is the first 16 hexadecimal digits of the SHA-256 of the
// rule's name and the Subject's keys and values in key order. It is the
// same for the same rule and Subject in every netmortem version that
// keeps the rule's Subject keys; a rule changing what its Subject holds
// changes its fingerprints (and says so in its release notes). A finding
// whose Subject is empty (a rule of a library user that does not set
// one) is fingerprinted from its rule and Title instead, as stable as
// the Title is. Two findings of one run with the same fingerprint (a rule
// reporting twice about one Subject) are told apart by a suffix, "-2",
// "-3", ... on the later ones in the order Sort gives.
package analyzer
