package bundle

import (
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// A component names the node it runs on in its own log: kube-proxy the
// node's IP ("Successfully retrieved node IP: 10.0.0.5", "Successfully
// retrieved node IP(s)" IPs=["10.0.0.5"], "Detected node IP" address=...,
// "Using node IP" ...) or name ("Failed to retrieve node info: Get
// \".../api/v1/nodes/worker-1\""), the kubelet its node's name
// ("Successfully registered node" node="worker-1", "Attempting to register
// node worker-1").
var (
	logNodeIPRE    = lazyre.New(`(?i)\b(?:successfully retrieved node ips?(?:\(s\))?|detected node ips?(?:\(s\))?|using node ips?(?:\(s\))?)\b[:\s"=]*\[?"?([0-9a-f.:]+)`)
	logNodeIPMsgRE = lazyre.New(`(?i)^(?:successfully retrieved node ips?(?:\(s\))?|detected node ips?(?:\(s\))?|using node ips?(?:\(s\))?)$`)
	logNodeNameRE  = lazyre.New(`(?i)\b(?:successfully registered node|attempting to register node|failed to retrieve node info: get "[^"]*/api/v1/nodes/)\s*"?([a-z0-9][a-z0-9.-]*)`)
	logNodeNameMsg = lazyre.New(`(?i)^(?:successfully registered node|attempting to register node)$`)
)

// logNodeClaim is a log line's word about its node: a name, or an address.
type logNodeClaim struct {
	name string
	ip   netip.Addr
}

// claimOf reads what a log event says of its own node.
func claimOf(le *model.LogEvent) (logNodeClaim, bool) {
	msg := strings.TrimSpace(le.Message)
	if logNodeIPMsgRE.MatchString(msg) {
		for _, k := range []string{"IPs", "ips", "address", "ip", "IP", "nodeIP", "node_ip"} {
			v := strings.Trim(le.Fields[k], `[]" `)
			v, _, _ = strings.Cut(v, `"`)
			v, _, _ = strings.Cut(v, ",")
			if a, err := netip.ParseAddr(strings.TrimSpace(v)); err == nil {
				return logNodeClaim{ip: a}, true
			}
		}
	}
	if logNodeNameMsg.MatchString(msg) {
		if n := le.Fields["node"]; n != "" {
			return logNodeClaim{name: n}, true
		}
	}
	if m := logNodeIPRE.FindStringSubmatch(msg); m != nil {
		if a, err := netip.ParseAddr(strings.TrimRight(m[1], ".:")); err == nil {
			return logNodeClaim{ip: a}, true
		}
	}
	if m := logNodeNameRE.FindStringSubmatch(msg); m != nil {
		return logNodeClaim{name: strings.TrimRight(m[1], ".")}, true
	}
	return logNodeClaim{}, false
}

// tieLogsToNodes gives the log lines the bundle tied to no node the node
// their own file names: each line takes the node of the last claim before
// it in its file, or of the file's first claim. An address is the node's
// whose Node object or `ip addr` has it; a name is taken as it is. A file
// all of whose lines are tied to one node is that node's input.
func tieLogsToNodes(s *model.Snapshot) {
	byIP := nodeAddrs(s)
	type fileClaims struct {
		at    []int    // index in s.Logs of each claim
		nodes []string // the node of each claim
	}
	files := map[string]*fileClaims{}
	for i := range s.Logs {
		le := &s.Logs[i]
		if le.Node != "" {
			continue
		}
		c, ok := claimOf(le)
		if !ok {
			continue
		}
		node := c.name
		if node == "" {
			node = byIP[c.ip]
		}
		if node == "" {
			continue
		}
		fc := files[le.Pos.File]
		if fc == nil {
			fc = &fileClaims{}
			files[le.Pos.File] = fc
		}
		fc.at, fc.nodes = append(fc.at, i), append(fc.nodes, node)
	}
	if len(files) == 0 {
		return
	}
	one := map[string]string{} // file to its one node, "" when several
	for f, fc := range files {
		one[f] = fc.nodes[0]
		for _, n := range fc.nodes[1:] {
			if n != fc.nodes[0] {
				one[f] = ""
			}
		}
	}
	seen := map[string]int{} // claims passed, per file
	for i := range s.Logs {
		le := &s.Logs[i]
		fc := files[le.Pos.File]
		if fc == nil || le.Node != "" {
			continue
		}
		k := seen[le.Pos.File]
		for k < len(fc.at) && fc.at[k] <= i {
			k++
		}
		seen[le.Pos.File] = k
		le.Node = fc.nodes[max(k-1, 0)]
	}
	for i := range s.Inputs {
		in := &s.Inputs[i]
		if n := one[in.Path]; n != "" && in.Node == "" {
			in.Node = n
		}
	}
}

// nodeAddrs maps the addresses of the snapshot's nodes to their names:
// the Node objects' addresses, and the addresses `ip addr` shows on a
// node the bundle names. An address two nodes share is left out.
func nodeAddrs(s *model.Snapshot) map[netip.Addr]string {
	out := map[netip.Addr]string{}
	shared := map[netip.Addr]bool{}
	add := func(a netip.Addr, node string) {
		if !a.IsValid() || node == "" || a.IsLoopback() {
			return
		}
		if n, ok := out[a]; ok && n != node {
			shared[a] = true
		}
		out[a] = node
	}
	for _, n := range s.Kube.Nodes {
		for _, a := range n.Status.Addresses {
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				add(ip, n.Name)
			}
		}
	}
	for _, a := range s.Addrs {
		if !strings.Contains(a.Node, netnsNodeSeparator) {
			add(a.Prefix.Addr(), a.Node)
		}
	}
	for a := range shared {
		delete(out, a)
	}
	return out
}
