package model

import "net/netip"

// KindResolvConf is the evidence of resolver configurations
// (/etc/resolv.conf).
const KindResolvConf Kind = "resolvconf"

// ResolvConf is a resolver configuration, as `cat /etc/resolv.conf` prints
// it: the nameservers in order, the search list and the options. Command
// is the command that printed it when a prompt says ("cat
// /etc/resolv.conf", "kubectl exec POD -- cat /etc/resolv.conf"): a
// node's file and a Pod's differ.
type ResolvConf struct {
	Node        string       `json:"node,omitempty"`
	Command     string       `json:"command,omitempty"`
	Nameservers []Nameserver `json:"nameservers"`
	Search      []string     `json:"search,omitempty"`
	Options     []string     `json:"options,omitempty"`
	Pos         Pos          `json:"pos"` // the first directive's line
}

// Nameserver is one nameserver line of a resolv.conf.
type Nameserver struct {
	Addr netip.Addr `json:"addr"`
	Pos  Pos        `json:"pos"`
}
