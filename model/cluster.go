package model

import "net/netip"

// KindDNS is the evidence of DNS checks run inside the cluster.
const KindDNS Kind = "dns"

// ServerVersion is the version the Kubernetes apiserver reports: the
// serverVersion of `kubectl version -o json`, or troubleshoot's
// cluster-info/cluster_version.json.
type ServerVersion struct {
	GitVersion string `json:"git_version"` // v1.31.2+k3s1
	Major      string `json:"major,omitempty"`
	Minor      string `json:"minor,omitempty"` // as printed: "31", or "31+" on some distributions
	Platform   string `json:"platform,omitempty"`
	BuildDate  string `json:"build_date,omitempty"`
	Pos        Pos    `json:"pos"`
}

// DNSCheck is a DNS check run from a pod of the cluster, as troubleshoot's
// dns collector writes it (dns/debug.json): the pod's resolv.conf, the
// names it looked up and what they gave, and the cluster DNS Service, pods
// and endpoints the API server lists.
type DNSCheck struct {
	// ClusterIP is the ClusterIP of the kubernetes Service, as the API
	// server says.
	ClusterIP netip.Addr `json:"cluster_ip,omitzero"`
	// ResolvConf is the pod's /etc/resolv.conf, with what it says read
	// into Nameservers, Search and Ndots (0 when not set).
	ResolvConf  string       `json:"resolv_conf,omitempty"`
	Nameservers []netip.Addr `json:"nameservers,omitempty"`
	Search      []string     `json:"search,omitempty"`
	Ndots       int          `json:"ndots,omitempty"`
	// Queries are the lookups made from the pod, by the collector's
	// name for each ("kubernetes", "nonResolvableDomain").
	Queries []DNSQuery `json:"queries,omitempty"`
	// DNSPods are the cluster DNS pods found running, DNSService the
	// kube-dns Service's ClusterIP and DNSEndpoints its endpoints.
	DNSPods      []string         `json:"dns_pods,omitempty"`
	DNSService   netip.Addr       `json:"dns_service,omitzero"`
	DNSEndpoints []netip.AddrPort `json:"dns_endpoints,omitempty"`
	Pos          Pos              `json:"pos"`
}

// DNSQuery is one lookup of a DNSCheck: the name asked and the address it
// resolved to ("" when it did not resolve).
type DNSQuery struct {
	Check   string `json:"check"` // the collector's key: kubernetes, nonResolvableDomain ...
	Name    string `json:"name"`
	Address string `json:"address,omitempty"`
}
