package logs

import (
	"net/netip"
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// CiliumMonitorFormat reads the text cilium monitor prints: its drop lines
// above all, whose reason says when a NetworkPolicy dropped a packet.
var CiliumMonitorFormat = logFormat("cilium", format.Format{
	Name: "cilium-monitor",
	Command: "cilium monitor, cilium monitor --type drop (kubectl exec -n kube-system cilium-XXXXX -- cilium monitor), " +
		"a CI's monitor.log",
	Doc: "`xx drop (Policy denied) flow 0x1b9ea6d4 to endpoint 2337, identity 53326->3149: " +
		"10.0.1.164:46870 -> 10.0.1.225:80 tcp SYN` (Cilium 1.2 and later, with or without `ifindex` and " +
		"`file` before the identities), `[2018-10-17 06:34:51] node: drop: Policy denied (L3) ( " +
		"10.12.1.209:57214) => (kube-system/coredns-... 10.12.1.182:53)` (a CI's monitor.log, the node " +
		"and time of each line; its trace and debug lines too) and 2017's `drop [ifindex 402 / endpoint " +
		"37114] (Policy denied)` and `from [...]` lines: source `cilium-monitor`, Fields `event` (drop, " +
		"trace, debug, from), `reason`, `src` and `dst` (address:port, or address), `proto`, `flags`, " +
		"`flow`, `endpoint`, `ifindex`, `src_identity`, `dst_identity` and `dst_labels`. " +
		"`network-policy-deny` joins the \"Policy denied\" drops with the NetworkPolicies",
})

// Cilium monitor's line shapes.
var (
	// ciliumDropRe: "xx drop (Policy denied (L3)) flow 0x3a91d07e to
	// endpoint 0, ifindex 29, file bpf_lxc.c:1497, , identity
	// 10472->7318: 10.6.1.104:50733 -> 10.6.2.169:53 udp".
	ciliumDropRe = lazyre.New(`^xx drop \((.+?)\) flow (0x[0-9a-f]+) to endpoint (\d+), (.*?)identity ([\w:.-]+)->([\w:.-]+): (\S+) -> (\S+) (\w+)(?: (.*))?$`)
	// ciliumLogRe: the "[2018-10-17 06:34:51] kn2: " of a monitor.log.
	ciliumLogRe = lazyre.New(`^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] ([\w.-]+): (drop|trace|debug)(?::? )`)
	// ciliumFlowRe: "( 10.12.1.209:57214) => (kube-system/coredns-x 10.12.1.182:53)".
	ciliumFlowRe = lazyre.New(`\(\s*(?:(\S+) )?(\S+)\) => \(\s*(?:(\S+) )?(\S+)\)$`)
	// ciliumBannerRe: "Listening for events on 2 CPUs with 64x4096 of
	// shared memory", the first line cilium monitor prints.
	ciliumBannerRe = lazyre.New(`^Listening for events on \d+ CPUs with \d+x\d+ of shared memory$`)
	// cilium2017Re: "drop [ifindex 402 / endpoint 37114] (Policy
	// denied)" and "from [container 402 / endpoint 37114]".
	cilium2017Re = lazyre.New(`^(drop|from) \[(\w+) (\d+)(?: / (\w+) (\d+))?\](?: > \[(\w+) (\d+)\])?(?: \((.+)\))?$`)
)

// parseCilium reads one line of cilium monitor's text.
func parseCilium(line string) (model.LogEvent, bool) {
	switch {
	case ciliumBannerRe.MatchString(line) || line == "Press Ctrl-C to quit":
		// The banner cilium monitor prints before its events.
		return model.LogEvent{Source: "cilium-monitor", Message: line, Fields: map[string]string{"event": "banner"}}, true
	case strings.HasPrefix(line, "xx drop ("):
		m, _ := submatches(ciliumDropRe, line)
		if m == nil || !ciliumAddr(m[7]) || !ciliumAddr(m[8]) {
			return model.LogEvent{}, false
		}
		f := map[string]string{"event": "drop", "reason": m[1], "flow": m[2], "endpoint": m[3],
			"src_identity": m[5], "dst_identity": m[6], "src": m[7], "dst": m[8], "proto": m[9]}
		for kv := range strings.SplitSeq(m[4], ", ") {
			if k, v, ok := strings.Cut(strings.TrimSpace(kv), " "); ok && (k == "ifindex" || k == "file") {
				f[k] = v
			}
		}
		if m[10] != "" {
			f["flags"] = m[10]
		}
		return model.LogEvent{Source: "cilium-monitor", Message: line, Fields: f}, true
	case strings.HasPrefix(line, "drop [") || strings.HasPrefix(line, "from ["):
		m, _ := submatches(cilium2017Re, line)
		if m == nil || m[0] != line {
			return model.LogEvent{}, false
		}
		f := map[string]string{"event": m[1]}
		for _, kv := range [][2]string{{m[2], m[3]}, {m[4], m[5]}} {
			if kv[0] != "" {
				f[kv[0]] = kv[1]
			}
		}
		if m[6] != "" {
			f["to_"+m[6]] = m[7]
		}
		if m[8] != "" {
			f["reason"] = m[8]
		}
		return model.LogEvent{Source: "cilium-monitor", Message: line, Fields: f}, true
	case len(line) > 24 && line[0] == '[' && line[5] == '-':
		m, rest := submatches(ciliumLogRe, line)
		if m == nil {
			return model.LogEvent{}, false
		}
		ts, err := time.Parse(time.DateTime, m[1])
		if err != nil {
			return model.LogEvent{}, false
		}
		ev := model.LogEvent{Source: "cilium-monitor", Node: m[2], Time: ts, Message: m[3] + ": " + rest,
			Fields: map[string]string{"event": m[3]}}
		if m[3] == "debug" {
			return ev, true
		}
		loc := ciliumFlowRe.FindStringSubmatchIndex(rest)
		if loc == nil {
			return model.LogEvent{}, false
		}
		if m[3] == "drop" {
			ev.Fields["reason"] = strings.TrimSpace(rest[:loc[0]])
		}
		fm := make([]string, 5)
		for i := range fm {
			if loc[2*i] >= 0 {
				fm[i] = rest[loc[2*i]:loc[2*i+1]]
			}
		}
		if !ciliumAddr(fm[2]) || !ciliumAddr(fm[4]) || (m[3] == "drop" && ev.Fields["reason"] == "") {
			return model.LogEvent{}, false
		}
		ev.Fields["src"], ev.Fields["dst"] = fm[2], fm[4]
		if fm[1] != "" {
			ev.Fields["src_labels"] = fm[1]
		}
		if fm[3] != "" {
			ev.Fields["dst_labels"] = fm[3]
		}
		return ev, true
	}
	return model.LogEvent{}, false
}

// ciliumAddr reports whether s is an address with a port
// ("10.0.0.1:80", "[f00d::1]:80") or an address alone, as cilium monitor
// prints them.
func ciliumAddr(s string) bool {
	if _, err := netip.ParseAddrPort(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}
