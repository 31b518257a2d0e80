package rules

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// WeaveNPCBlocked finds connections Weave Net's policy controller,
// weave-npc, blocks.
var WeaveNPCBlocked = &analyzer.Rule{
	Name:        "weave-npc-blocked",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"node", "port", "proto"},
	Run:         runWeaveNPCBlocked,
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(45), ConnectionsTimeOut.At(195)},
	Proof: "not from weave-npc's lines alone: \"UDP connection from 100.110.128.7:45854 to 100.125.128.4:53 " +
		"blocked by Weave NPC\" shows the drop, not whether a NetworkPolicy or weave-npc's own state made it; the " +
		"cluster's NetworkPolicies decide",
	Unproven: "the drops are reported of unknown cause, a NetworkPolicy isolating the destination and weave-npc not " +
		"yet (or no longer) knowing the Pods among the alternatives, with the command that lists the policies",
	Doc: `weave net's policy controller blocks connections

Weave Net's weave-npc enforces NetworkPolicies with iptables and ipsets of
the Pods' addresses, and logs each connection it drops: "WARN: 2019/07/19
04:39:25.928494 UDP connection from 100.110.128.7:45854 to
100.125.128.4:53 blocked by Weave NPC." (TCP connections are logged at
their SYN). A drop is a NetworkPolicy at work when one isolates the
destination Pod (or the client's egress) and admits nothing for this
traffic; with no policy selecting it, it is weave-npc's own state: it
admits a Pod's traffic once it has learnt of the Pod from the apiserver,
a moment after the Pod starts, so the first packets of Pods started in a
burst are dropped (their DNS lookups at start time out: weave#3663,
weave#3829; Weave Net 2.6 narrowed the window, weave#3639), or its ipsets
were lost with a restart.

Evidence: weave-npc's log lines (the weave-npc container of the weave-net
Pods), grouped per destination port and protocol (DHCP's broadcasts,
which no policy can select, left out), and its debug lines of the
Pods it learns of ("EVENT AddPod {... "podIP":"10.42.0.11"}").

Severity: a warning. Of likely cause, weave-npc's own state, when its log
shows it learning of a Pod the drops are from or to within 10 seconds
after the first drop, and none after it; otherwise of unknown cause: the lines show the
drops, the NetworkPolicies which of the two it is.

Fix: if a NetworkPolicy selects the destination, add a rule that admits
the client (for DNS, every namespace to port 53, UDP and TCP); if none
does, upgrade Weave Net and, if the drops go on, restart weave-net on the
node.`,
}

var (
	// weaveBlockedRe matches weave-npc's line of a blocked connection.
	weaveBlockedRe = lazyre.New(`(TCP|UDP|SCTP) connection from ([0-9a-fA-F.:]+):(\d+) to ([0-9a-fA-F.:]+):(\d+) blocked by Weave NPC`)
	// weaveAddPodRe matches weave-npc's debug line of a Pod it learns of,
	// and the Pod's address.
	weaveAddPodRe = lazyre.New(`(?s)EVENT AddPod .*"podIP":"([0-9a-fA-F.:]+)"`)
)

// weaveLearnWindow is how long after a blocked connection weave-npc's
// learning of one of its Pods explains the drop: weave-npc learns each
// Pod from the apiserver a moment after it starts (100 ms in weave#3829).
const weaveLearnWindow = 10 * time.Second

// weaveBlocked is what weave-npc blocked to one port and protocol.
type weaveBlocked struct {
	node, proto, port string
	dsts, clients     []string
	lineRun
	// learnt is weave-npc's line of learning, after the first drop, of
	// a Pod the drops are from or to.
	learnt *model.LogEvent
}

// runWeaveNPCBlocked groups weave-npc's blocked connections per node,
// destination port and protocol: the Pods of one Service (CoreDNS's) are
// one finding.
func runWeaveNPCBlocked(p *analyzer.Pass) error {
	var groups []*weaveBlocked
	byKey := map[string]*weaveBlocked{}
	added := map[netip.Addr][]*model.LogEvent{} // weave-npc's AddPod lines, by the Pod's address
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if strings.Contains(le.Message, "EVENT AddPod") {
			if m := weaveAddPodRe.FindStringSubmatch(le.Message); m != nil {
				if a, err := netip.ParseAddr(m[1]); err == nil {
					added[a] = append(added[a], le)
				}
			}
			continue
		}
		if !strings.Contains(le.Message, "blocked by Weave NPC") {
			continue
		}
		m := weaveBlockedRe.FindStringSubmatch(le.Message)
		if m == nil || weaveNoise(m[2], m[4]) {
			continue
		}
		k := le.Node + "\x00" + m[1] + "\x00" + m[5]
		g := byKey[k]
		if g == nil {
			g = &weaveBlocked{node: le.Node, proto: m[1], port: m[5]}
			byKey[k] = g
			groups = append(groups, g)
		}
		if dst := net.JoinHostPort(m[4], m[5]); !slices.Contains(g.dsts, dst) {
			g.dsts = append(g.dsts, dst)
		}
		if !slices.Contains(g.clients, m[2]) {
			g.clients = append(g.clients, m[2])
		}
		g.add(le)
	}
	for _, g := range groups {
		g.learnt = weaveLearnt(g, added)
		p.Report(weaveBlockedFinding(g))
	}
	return nil
}

// weaveNoise reports whether a blocked connection from src to dst is one
// no NetworkPolicy can select: from the unspecified address (DHCP) or to
// a broadcast or multicast address.
func weaveNoise(src, dst string) bool {
	s, err1 := netip.ParseAddr(src)
	d, err2 := netip.ParseAddr(dst)
	return err1 != nil || err2 != nil || s.IsUnspecified() || d.IsMulticast() || d == netip.AddrFrom4([4]byte{255, 255, 255, 255})
}

// weaveLearnt returns weave-npc's line of learning, within
// weaveLearnWindow after g's first drop and before its last, of a Pod
// g's drops go to or come from, or nil: a drop after weave-npc knew the
// Pod is not its learning's.
func weaveLearnt(g *weaveBlocked, added map[netip.Addr][]*model.LogEvent) *model.LogEvent {
	t0 := g.first.Time
	if t0.IsZero() {
		return nil
	}
	var addrs []netip.Addr
	for _, d := range g.dsts {
		if ap, err := netip.ParseAddrPort(d); err == nil {
			addrs = append(addrs, ap.Addr())
		}
	}
	for _, c := range g.clients {
		if a, err := netip.ParseAddr(c); err == nil {
			addrs = append(addrs, a)
		}
	}
	for _, a := range addrs {
		for _, le := range added[a] {
			if d := le.Time.Sub(t0); d >= 0 && d <= weaveLearnWindow && !g.last.Time.After(le.Time) {
				return le
			}
		}
	}
	return nil
}

// weaveBlockedFinding words what weave-npc blocked to one port.
func weaveBlockedFinding(g *weaveBlocked) analyzer.Finding {
	dst := listSome(g.dsts, false)
	what := "connections"
	if g.port == "53" {
		what = "DNS queries"
	}
	isolates := "the destination Pod"
	if len(g.dsts) > 1 {
		isolates = "the destination Pods"
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "port", g.port, "proto", strings.ToLower(g.proto)),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Facts:     map[string]any{"lines": g.count, "clients": g.clients, "destinations": g.dsts, "proto": g.proto},
		Title: fmt.Sprintf("Weave NPC%s blocks %s %s to %s from %s", onNode(g.node), g.proto, what, dst,
			listSome(g.clients, false)),
		Summary: fmt.Sprintf("weave-npc%s dropped %s %s to %s, %s, from %d %s (%s): they time out at the client.",
			onNode(g.node), g.proto, what, dst, times(g.count), len(g.clients), plural(len(g.clients), "client", "clients"),
			listSome(g.clients, false)),
		Supports: []string{fmt.Sprintf("%s: %s connection from %s to %s blocked by Weave NPC", g.first.Pos, g.proto,
			g.clients[0], g.dsts[0])},
		Alternatives: []string{
			fmt.Sprintf("a NetworkPolicy isolates %s (or the clients' egress) and admits nothing for this traffic", isolates),
			"weave-npc did not yet know the Pods when their first packets came (it learns each Pod from the " +
				"apiserver a moment after the Pod starts: weave#3663, weave#3829), or lost its ipsets with a restart",
		},
		Fix: "If a NetworkPolicy selects the destination, add a rule that admits the clients (for DNS, every namespace " +
			"to port 53, UDP and TCP); if none does, upgrade Weave Net (2.6 narrowed weave-npc's window: weave#3639) " +
			"and, if the drops go on, restart weave-net on the node.",
		Decide: "# the policies; none selecting the destination's Pods leaves weave-npc's own state\n" +
			"kubectl get networkpolicy -A -o wide",
		Evidence: g.evidence(fmt.Sprintf("%s to %s blocked by Weave NPC", g.proto, g.dsts[0]), "the last such line"),
	}
	if le := g.learnt; le != nil {
		// The drop came before weave-npc knew the Pod: its own state.
		f.Certainty = analyzer.Likely
		f.Supports = append(f.Supports, fmt.Sprintf("%s: weave-npc learnt of the Pod only %s after the first drop",
			le.Pos, le.Time.Sub(g.first.Time).Round(time.Millisecond)))
		f.Cause = "weave-npc drops everything a NetworkPolicy does not admit, and admits a Pod's traffic only once it " +
			"has learnt of the Pod from the apiserver: the Pod's first packets came before that (Pods started in a " +
			"burst on a busy node), so they were dropped whatever the policies say."
		f.Alternatives = f.Alternatives[:1]
		f.Fix = "Retried connections succeed once weave-npc knows the Pod; upgrade Weave Net (2.6 narrowed the " +
			"window: weave#3639), and give clients that start at once a retry (DNS resolvers retry by themselves)."
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: le.Pos, Note: "weave-npc learns of the Pod"})
	}
	return f
}
