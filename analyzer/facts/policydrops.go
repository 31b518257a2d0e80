package facts

import (
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// PolicyDrop is a dataplane's log line saying it dropped a packet because
// a policy denied it: a cilium monitor drop with reason "Policy denied"
// ("Policy denied (L3)", "Policy denied by denylist" ...).
type PolicyDrop struct {
	Event *model.LogEvent
	// Client and Server are the packet's source and destination, as the
	// line prints them (a port of 0 when it prints none).
	Client, Server netip.AddrPort
	// Proto is the protocol in upper case: TCP, UDP, SCTP, ICMP ...
	Proto string
	// Reason is the drop reason as the line says it.
	Reason string
}

// PolicyDropIndex holds the policy drops of the snapshot's logs.
type PolicyDropIndex struct {
	// Drops are in log order.
	Drops []PolicyDrop
}

// Of returns the drops of packets from client to server (its address and
// port), in log order.
func (x *PolicyDropIndex) Of(client netip.Addr, server netip.AddrPort) []PolicyDrop {
	var out []PolicyDrop
	for _, d := range x.Drops {
		if d.Client.Addr() == client && d.Server == server {
			out = append(out, d)
		}
	}
	return out
}

// PolicyDrops reads the policy drops of the snapshot's logs.
var PolicyDrops = &analyzer.Fact[*PolicyDropIndex]{
	Name: "policy-drops",
	Doc: "the dataplane's log lines of packets a policy denied (cilium monitor's \"Policy denied\" drops), " +
		"with their addresses, ports and protocol",
	Compute: func(fs *analyzer.Facts) *PolicyDropIndex {
		logs := fs.Snapshot().Logs
		x := &PolicyDropIndex{}
		for i := range logs {
			le := &logs[i]
			if le.Source != "cilium-monitor" || le.Fields["event"] != "drop" {
				continue
			}
			reason := le.Fields["reason"]
			if !strings.HasPrefix(strings.ToLower(reason), "policy den") {
				continue
			}
			src, ok1 := addrPortOf(le.Fields["src"])
			dst, ok2 := addrPortOf(le.Fields["dst"])
			if !ok1 || !ok2 {
				continue
			}
			x.Drops = append(x.Drops, PolicyDrop{Event: le, Client: src, Server: dst,
				Proto: strings.ToUpper(le.Fields["proto"]), Reason: reason})
		}
		return x
	},
}

// addrPortOf reads "10.0.0.1:80", "[f00d::1]:80" or an address alone
// (port 0).
func addrPortOf(s string) (netip.AddrPort, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, true
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, 0), true
}
