package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// IPForwardDisabled finds nodes whose kernel does not forward IPv4.
var IPForwardDisabled = &analyzer.Rule{
	Name:        "ip-forward-disabled",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindSysctl, model.KindLogs},
	Uses:        []model.Kind{model.KindCounters},
	SubjectKeys: []string{"node", "setting"},
	Run:         runIPForwardDisabled,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(260), ConnectionsTimeOut.At(90)},
	Decide: "# on the node: 0, and IpInAddrErrors rising while its Pods send\n" +
		"sysctl net.ipv4.ip_forward; nstat -az IpInAddrErrors IpForwDatagrams",
	Proof: "net.ipv4.ip_forward = 0 (or net.ipv4.conf.all.forwarding = 0) in the node's sysctl output, and the node's " +
		"IpInAddrErrors counter (nstat) above zero: packets the node was asked to route were dropped",
	Unproven: "the setting alone is a warning of likely cause: that Pods send through the node, and what it cost, " +
		"are not shown; nstat -az IpInAddrErrors IpForwDatagrams on the node decides",
	Doc: `ip_forward is off: a node does not route IPv4

A node routes its Pods' packets between their veths (or the bridge) and its
uplink: that is IP forwarding, which net.ipv4.ip_forward (the same switch as
net.ipv4.conf.all.forwarding) turns on. With it at 0, packets from a Pod to
anything beyond the node, and packets to a Pod from other nodes, are dropped
by the kernel (it answers ICMP host unreachable and counts IpInAddrErrors):
Pods reach nothing but their own node, DNS lookups through an upstream time
out, Services whose backends are elsewhere fail. Docker used to set it on
start; a node that runs containerd or CRI-O without it, a sysctl file that
sets it to 0, or a reboot that lost a runtime setting leaves it off. kubeadm's
preflight refuses such a node, other installers do not.

Evidence: the sysctl line; nstat's IpInAddrErrors (dropped) and
IpForwDatagrams (forwarded) counters; log lines of Pods timing out;
kubeadm's preflight check ("[ERROR FileContent--proc-sys-net-ipv4-ip_forward]:
/proc/sys/net/ipv4/ip_forward contents are not set to 1").

Severity: error when the node's counters show packets dropped for want of a
route (IpInAddrErrors) besides the setting; a warning of likely cause from
the setting alone, or from kubeadm's check: that stopped kubeadm init or
join (ERROR), or, made non-fatal (WARNING), left a node set up without
forwarding.

Fix: sysctl -w net.ipv4.ip_forward=1 on the node, and make it last:
net.ipv4.ip_forward = 1 in /etc/sysctl.d/99-kubernetes.conf (kubeadm's
prerequisites), or the installer's setting that writes it.`,
}

// ipForwardSettings are the sysctls that turn IPv4 forwarding on or off for
// every interface.
var ipForwardSettings = []string{"net.ipv4.ip_forward", "net.ipv4.conf.all.forwarding"}

func runIPForwardDisabled(p *analyzer.Pass) error {
	s := p.Snap
	var nodes []string
	seen := map[string]bool{}
	for _, sc := range s.Sysctls {
		if (sc.Name == ipForwardSettings[0] || sc.Name == ipForwardSettings[1]) && !seen[sc.Node] {
			seen[sc.Node] = true
			nodes = append(nodes, sc.Node)
		}
	}
	for _, node := range nodes {
		var off []model.Sysctl
		on := false
		for _, name := range ipForwardSettings {
			sc, ok := nodeSysctl(s, node, name)
			if !ok {
				continue
			}
			switch strings.TrimSpace(sc.Value) {
			case "0":
				off = append(off, sc)
			case "1":
				on = true
			}
		}
		if len(off) == 0 || on {
			continue // on, or the two disagree: the dump was taken while it changed
		}
		p.Report(ipForwardFinding(s, node, off))
	}
	for _, c := range preflightFiles(s, ipForwardSettings[0]) {
		if !seen[c.le.Node] {
			seen[c.le.Node] = true
			p.Report(ipForwardPreflight(c))
		}
	}
	return nil
}

// ipForwardPreflight words kubeadm's preflight check finding forwarding
// off on the node it ran on.
func ipForwardPreflight(c preflightFile) analyzer.Finding {
	where := c.le.Node
	if where == "" {
		where = "the node kubeadm ran on"
	}
	f := analyzer.Finding{
		Subject:   subject("node", c.le.Node, "setting", c.setting),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("IPv4 forwarding is off on %s: kubeadm's preflight stops on it", where),
		Summary: fmt.Sprintf("kubeadm's preflight check read %s: the kernel does not route packets between its "+
			"interfaces, and kubeadm refuses to set the node up (init or join stops).", c.says()),
		Supports: []string{fmt.Sprintf("%s: kubeadm's preflight: %s", c.le.Pos, c.says())},
		Evidence: []analyzer.Evidence{{Pos: c.le.Pos, Note: "kubeadm preflight: " + c.says()}},
		Facts:    map[string]any{"setting": c.setting, "check": "FileContent"},
		Decide:   "# on the node: 0, the value kubeadm's check read\nsysctl net.ipv4.ip_forward",
	}
	if !c.fatal {
		f.Title = fmt.Sprintf("IPv4 forwarding is off on %s: kubeadm's preflight check was ignored", where)
		f.Summary = fmt.Sprintf("kubeadm's preflight check read %s, and was made non-fatal: the node was set up "+
			"without forwarding, so its Pods reach nothing beyond it and other nodes reach none of its Pods.", c.says())
		f.Alternatives = []string{"forwarding was turned on after kubeadm ran (by the container runtime or a sysctl file)"}
		f.Decide = "# on the node: 0 while Pods fail beyond it\nsysctl net.ipv4.ip_forward"
	}
	f.Cause = "Nothing turned IPv4 forwarding on before kubeadm ran: the container runtime does not (Docker used to), " +
		"and no file in /etc/sysctl.d sets net.ipv4.ip_forward = 1, or one sets it to 0."
	f.Fix = "Run sysctl -w net.ipv4.ip_forward=1 on the node and keep it (net.ipv4.ip_forward = 1 in " +
		"/etc/sysctl.d/k8s.conf, kubeadm's prerequisites), then run kubeadm again."
	return f
}

// ipForwardFinding judges a node whose forwarding is off, from its counters
// and logs, then words it.
func ipForwardFinding(s *model.Snapshot, node string, off []model.Sysctl) analyzer.Finding {
	first := off[0]
	ev := []analyzer.Evidence{}
	for _, sc := range off {
		ev = append(ev, analyzer.Evidence{Pos: sc.Pos, Note: sc.Name + " = " + sc.Value})
	}
	values := map[string]any{"setting": first.Name, "value": first.Value}
	if node != "" {
		values["node"] = node
	}
	c := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely,
		Supports: []string{fmt.Sprintf("%s: %s = %s: the node does not route packets between its interfaces",
			first.Pos, first.Name, first.Value)},
		Alternatives: []string{"the host runs no Pods that need it (outside the cluster, or only hostNetwork Pods)"},
		Decide: "# on the node: IpInAddrErrors rising while its Pods send out, packets dropped for want of forwarding\n" +
			"nstat -az IpInAddrErrors IpForwDatagrams",
	}
	var says []string
	dropped, haveDropped := s.Counter(node, "IpInAddrErrors")
	fwd, haveFwd := s.Counter(node, "IpForwDatagrams")
	if haveDropped {
		values["ip_in_addr_errors"] = dropped.Value
		ev = append(ev, analyzer.Evidence{Pos: dropped.Pos, Note: fmt.Sprintf("IpInAddrErrors %d", dropped.Value)})
	}
	if haveFwd {
		values["ip_forw_datagrams"] = fwd.Value
		ev = append(ev, analyzer.Evidence{Pos: fwd.Pos, Note: fmt.Sprintf("IpForwDatagrams %d", fwd.Value)})
	}
	switch {
	case haveFwd && fwd.Value > 0:
		c.Contradicts = append(c.Contradicts, fmt.Sprintf("%s: IpForwDatagrams %d: the node did forward packets since "+
			"its counters started (forwarding was on for a while, or the setting was read from another host)", fwd.Pos, fwd.Value))
		says = append(says, fmt.Sprintf("Its counters show %d packets forwarded all the same.", fwd.Value))
	case haveDropped && dropped.Value > 0:
		c.Severity, c.Certainty = analyzer.Error, analyzer.Proven
		c.Alternatives, c.Decide = nil, ""
		c.Supports = append(c.Supports, fmt.Sprintf("%s: IpInAddrErrors %d: the kernel dropped packets it was asked "+
			"to route", dropped.Pos, dropped.Value))
		says = append(says, fmt.Sprintf("Its counters show %d packets dropped for want of a route (IpInAddrErrors).", dropped.Value))
	}
	// Pods timing out beyond the node: what it costs, when the logs say.
	n, lev := ipForwardTimeouts(s)
	if n > 0 {
		values["timeouts"] = n
		ev = append(ev, lev...)
		c.Supports = append(c.Supports, fmt.Sprintf("%s: a connection timed out (%d in the logs), as Pods' traffic "+
			"beyond the node does with forwarding off", lev[0].Pos, n))
		says = append(says, fmt.Sprintf("The logs show %d %s timing out.", n, plural(n, "connection", "connections")))
	}

	where := "this node"
	if node != "" {
		where = node
	}
	return withFinding(c, analyzer.Finding{
		Subject: subject("node", node, "setting", "net.ipv4.ip_forward"),
		Title:   fmt.Sprintf("IPv4 forwarding is off on %s (%s = %s)", where, first.Name, first.Value),
		Summary: strings.TrimSpace(fmt.Sprintf("%s has %s = %s: its kernel does not route packets between its "+
			"interfaces, so packets from its Pods to anything beyond the node, and to its Pods from other nodes, are "+
			"dropped. %s", where, first.Name, first.Value, strings.Join(says, " "))),
		Cause: "Nothing turns IPv4 forwarding on at boot: the container runtime does not (Docker used to), no file in " +
			"/etc/sysctl.d sets net.ipv4.ip_forward = 1, or one sets it to 0.",
		Fix: "Run sysctl -w net.ipv4.ip_forward=1 on the node, and keep it: net.ipv4.ip_forward = 1 in " +
			"/etc/sysctl.d/99-kubernetes.conf (or the installer's setting that writes it).",
		Facts:    values,
		Evidence: dedupEvidence(ev),
	})
}

// ipForwardTimeouts counts log lines of a read or dial from a Pod that
// timed out ("read udp 10.244.1.5:45217->8.8.8.8:53: i/o timeout").
func ipForwardTimeouts(s *model.Snapshot) (int, []analyzer.Evidence) {
	n := 0
	var ev []analyzer.Evidence
	for _, le := range s.Logs {
		m := le.Message
		if !strings.Contains(m, "i/o timeout") || !strings.Contains(m, "->") {
			continue
		}
		n++
		if len(ev) < 3 {
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "timed out"})
		}
	}
	return n, ev
}

// nodeSysctl returns the last value of the parameter name given for node
// itself: a dump that names no node is not taken for a named node's.
func nodeSysctl(s *model.Snapshot, node, name string) (model.Sysctl, bool) {
	var out model.Sysctl
	found := false
	for _, sc := range s.Sysctls {
		if sc.Name == name && sc.Node == node {
			out, found = sc, true
		}
	}
	return out, found
}
