package facts

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// PolicyDrop is a dataplane's log line saying it dropped a packet because
// a policy denied it: a cilium monitor drop with reason "Policy denied"
// ("Policy denied (L3)", "Policy denied by denylist" ...), or the kernel's
// line of the LOG rule --log-prefix "calico-drop: " that Calico's Felix
// puts before its DROP rules ("calico-drop: IN=cali... OUT=... SRC=...
// DST=... PROTO=TCP SPT=... DPT=...").
type PolicyDrop struct {
	Event *model.LogEvent
	// Client and Server are the packet's source and destination, as the
	// line prints them (a port of 0 when it prints none).
	Client, Server netip.AddrPort
	// Proto is the protocol in upper case: TCP, UDP, SCTP, ICMP ...
	Proto string
	// Reason is the drop reason as the line says it ("calico-drop" for
	// Calico's, whose line says no more).
	Reason string
	// Dataplane is "Cilium" or "Calico".
	Dataplane string
}

// Teller names what printed the line: "cilium monitor", or "the kernel's
// log of Felix's calico-drop rule".
func (d PolicyDrop) Teller() string {
	if d.Dataplane == "Calico" {
		return "the kernel's log of Felix's calico-drop rule"
	}
	return "cilium monitor"
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
	Doc: "the dataplane's log lines of packets a policy denied (cilium monitor's \"Policy denied\" drops, the " +
		"kernel's lines of Calico's calico-drop LOG rules), " +
		"with their addresses, ports and protocol",
	Compute: func(fs *analyzer.FactSet) *PolicyDropIndex {
		logs := fs.Snapshot().Logs
		x := &PolicyDropIndex{}
		for i := range logs {
			le := &logs[i]
			if d, ok := calicoDrop(le); ok {
				x.Drops = append(x.Drops, d)
				continue
			}
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
				Proto: strings.ToUpper(le.Fields["proto"]), Reason: reason, Dataplane: "Cilium"})
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

// calicoPrefix is the --log-prefix of Felix's LOG rules before its DROP
// rules (felix-issue1118 in fixtures/real/incident-evidence).
const calicoPrefix = "calico-drop: "

// calicoDrop reads the kernel's line of Felix's LOG rule: the fields the
// kernel prints for a logged packet (KEY=VALUE, with runs of spaces where
// a paste wrapped them) after the prefix.
func calicoDrop(le *model.LogEvent) (PolicyDrop, bool) {
	i := strings.Index(le.Message, calicoPrefix)
	if i < 0 || (le.Source != "kernel" && !strings.Contains(le.Message[:i], "kernel")) {
		return PolicyDrop{}, false
	}
	kv := map[string]string{}
	f := strings.Fields(le.Message[i+len(calicoPrefix):])
	for j := 0; j < len(f); j++ {
		k, v, ok := strings.Cut(f[j], "=")
		if !ok {
			continue
		}
		if v == "" && j+1 < len(f) && !strings.Contains(f[j+1], "=") {
			v = f[j+1] // "SRC=     192.0.2.108": the value after the spaces
			j++
		}
		if _, seen := kv[k]; !seen {
			kv[k] = v
		}
	}
	src, err1 := netip.ParseAddr(kv["SRC"])
	dst, err2 := netip.ParseAddr(kv["DST"])
	if err1 != nil || err2 != nil || kv["PROTO"] == "" {
		return PolicyDrop{}, false
	}
	sport, _ := strconv.ParseUint(kv["SPT"], 10, 16)
	dport, _ := strconv.ParseUint(kv["DPT"], 10, 16)
	return PolicyDrop{Event: le, Client: netip.AddrPortFrom(src, uint16(sport)), Server: netip.AddrPortFrom(dst, uint16(dport)),
		Proto: strings.ToUpper(kv["PROTO"]), Reason: strings.TrimSuffix(calicoPrefix, ": "), Dataplane: "Calico"}, true
}
