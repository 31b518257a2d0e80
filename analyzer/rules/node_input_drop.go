package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// NodeInputDrop finds a node whose host firewall drops what the other
// nodes of a cluster send it: the kubelet's port and the overlays' ports,
// dropped for every sender by the filter table's INPUT chain.
var NodeInputDrop = &analyzer.Rule{
	Name:        "node-input-drop",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindNetfilter},
	SubjectKeys: []string{"node", "chain"},
	Run:         runNodeInputDrop,
	Symptoms:    []analyzer.SymptomRef{PodStreamsFail.At(20), ServiceUnreachable.At(290), ConnectionsTimeOut.At(160)},
	Proof: "the filter table's INPUT chain (iptables-save, iptables -S, iptables -L) drops a new connection to the " +
		"kubelet's port 10250/tcp from any sender: walked rule by rule, no rule that could match it (whatever its " +
		"source, interface or other match the dump cannot evaluate) accepts it before a DROP or REJECT, or the " +
		"chain's DROP policy, takes it; the overlays' ports the chain drops the same way are named with it. The " +
		"rules show the drop; that it is what the cluster suffers from is likely, and the policy's or rule's " +
		"counter above 0 supports it",
	Unproven: "a chain that may accept the connection (an allow-list of sources, an interface, a set, a mark, a " +
		"queue to userspace) is not a drop, and the rule says nothing; so it is when the kubelet's port is accepted, " +
		"whatever else is dropped (a firewall written with Kubernetes in mind), and for nftables rulesets",
	Doc: `the node's firewall drops the kubelet's and overlay's ports

A host firewall with a default deny on the way in (an INPUT chain with
policy DROP, or a final DROP or REJECT: a hardening script, firewalld's
final reject, ufw's default deny incoming) that does not accept what the
other nodes send cuts the node off from its cluster while the node itself
looks healthy: the control plane cannot reach the kubelet on 10250/tcp
(kubectl logs, exec and port-forward fail, metrics are missing), and the
overlay's packets from other nodes (VXLAN on 8472/udp or 4789/udp, Geneve
on 6081/udp, Weave Net on 6783/tcp and 6784/udp, Calico's BGP on 179/tcp)
are dropped, so Pods on other nodes cannot reach Pods here.

Evidence: the filter table's rules (iptables-save, iptables -S, iptables
-L). The rule walks the INPUT chain for a new connection to each of those
ports from an unknown sender, into the chains it jumps to and back, and
judges it dropped only when no rule that could match it accepts it first:
a rule's source, interface, set, mark or other match it cannot evaluate
counts as matching when it accepts and as not matching when it drops.
Established traffic (conntrack ESTABLISHED, RELATED) and loopback are
not what other nodes send.

Severity: a warning of likely cause when the kubelet's port is dropped,
with the overlays' ports the chain drops too; the counters of the rule or
policy that drops them, above 0, support it. Nothing when the kubelet's
port may be accepted.

Fix: accept the cluster's ports from the nodes before the default deny:
iptables -I INPUT -s NODE_CIDR -p tcp --dport 10250 -j ACCEPT, and the
overlay's (-p udp --dport 8472 for flannel and Cilium's VXLAN, 4789 for
Calico's, -p tcp --dport 179 for BGP, -p tcp --dport 6783 and -p udp
--dport 6783:6784 for Weave Net), or the firewall's own way
(firewall-cmd --permanent --add-port=10250/tcp or a trusted zone for the
nodes' subnet; ufw allow from NODE_CIDR), persisted.`,
}

// nodeInPort is a port the other hosts of a cluster send a node traffic
// on.
type nodeInPort struct {
	proto string
	port  uint16
	what  string
}

// nodeInPorts are the ports node-input-drop probes; the kubelet's first.
var nodeInPorts = []nodeInPort{
	{"tcp", 10250, "the kubelet"},
	{"udp", 8472, "VXLAN (flannel, Cilium)"},
	{"udp", 4789, "VXLAN (Calico, Cilium)"},
	{"udp", 6081, "Geneve (OVN, Antrea)"},
	{"tcp", 179, "BGP (Calico, kube-router, MetalLB)"},
	{"tcp", 6783, "Weave Net's control"},
	{"udp", 6784, "Weave Net's data"},
}

func (p nodeInPort) String() string { return fmt.Sprintf("%d/%s", p.port, p.proto) }

// inResult is what a walk of a chain makes of a new connection.
type inResult int

const (
	inFall  inResult = iota // the chain ends (or RETURNs) without a verdict
	inDrop                  // dropped or rejected, whatever the unknown matches
	inMaybe                 // possibly accepted (or handed to userspace)
)

// inMatch is how far a rule is known to match the connection.
type inMatch int

const (
	inNo inMatch = iota
	inPerhaps
	inYes
)

// inputWalk walks one filter table for one new connection.
type inputWalk struct {
	chains map[string]*model.Chain
	probe  nodeInPort
	rule   *model.Rule  // the rule that dropped it, when one did
	chain  *model.Chain // the chain whose policy dropped it, when that did
	evals  int
}

// maxInputDepth and maxInputRules bound a walk (chains that jump to each
// other can only be in an edited dump).
const (
	maxInputDepth = 16
	maxInputRules = 20_000
)

func runNodeInputDrop(p *analyzer.Pass) error {
	for _, rs := range p.Snap.Netfilter {
		if rs.Format == "nft" || rs.Family == "ipv6" {
			continue // ip6tables' INPUT says nothing of the IPv4 traffic the probes stand for
		}
		for _, t := range rs.Tables {
			if t.Name != "" && t.Name != "filter" {
				continue
			}
			chains := map[string]*model.Chain{}
			for _, c := range t.Chains {
				chains[c.Name] = c
			}
			in := chains["INPUT"]
			if in == nil {
				continue
			}
			var dropped []*inputWalk
			for _, port := range nodeInPorts {
				w := &inputWalk{chains: chains, probe: port}
				if w.walk(in, 0) != inDrop {
					if port.port == 10250 {
						break // the kubelet's port may be accepted: nothing to say
					}
					continue
				}
				dropped = append(dropped, w)
			}
			if len(dropped) > 0 && dropped[0].probe.port == 10250 {
				p.Report(nodeInputFinding(rs, in, dropped))
			}
		}
	}
	return nil
}

// walk walks chain c for w's connection.
func (w *inputWalk) walk(c *model.Chain, depth int) inResult {
	if depth > maxInputDepth {
		return inMaybe
	}
	if res := w.rules(c.Rules, depth); res != inFall || c.Policy == "" {
		return res
	}
	if strings.EqualFold(c.Policy, "DROP") || strings.EqualFold(c.Policy, "REJECT") { // ufw's default reject
		w.rule, w.chain = nil, c
		return inDrop
	}
	return inMaybe
}

// inputPassTargets are the targets that neither decide nor jump: the walk
// goes on after them.
var inputPassTargets = map[string]bool{"": true, "LOG": true, "NFLOG": true, "ULOG": true, "MARK": true,
	"CONNMARK": true, "CT": true, "NOTRACK": true, "TRACE": true, "TCPMSS": true, "CLASSIFY": true, "DSCP": true,
	"TOS": true, "TTL": true, "SET": true, "AUDIT": true, "CHECKSUM": true, "TEE": true}

// rules walks a chain's rules, from the first of rules on; inFall when
// they end without a verdict.
func (w *inputWalk) rules(rules []*model.Rule, depth int) inResult {
	for i, r := range rules {
		if w.evals++; w.evals > maxInputRules {
			return inMaybe
		}
		m := w.matches(r)
		if m == inNo {
			continue
		}
		switch t := strings.ToUpper(r.Target); {
		case t == "ACCEPT":
			return inMaybe
		case t == "DROP" || t == "REJECT":
			if m == inYes {
				w.rule, w.chain = r, nil
				return inDrop
			}
		case t == "RETURN":
			if m == inYes {
				return inFall
			}
			if w.rules(rules[i+1:], depth) != inFall {
				return inMaybe // returning and going on end apart
			}
			return inFall
		case w.chains[r.Target] != nil:
			switch sub := w.walk(w.chains[r.Target], depth+1); {
			case sub == inMaybe:
				return inMaybe
			case sub == inDrop && m == inYes:
				return inDrop
			case sub == inFall && r.Goto && m == inYes:
				return inFall
			case sub == inFall && r.Goto:
				// Taken, the goto leaves this chain; not taken, the walk
				// goes on: the same when the rest ends without a verdict
				// too (firewalld's INPUT_ZONES: "-i eth0 -g IN_public",
				// then "-g IN_public").
				if w.rules(rules[i+1:], depth) != inFall {
					return inMaybe
				}
				return inFall
			}
		case !inputPassTargets[t]:
			return inMaybe // a chain the dump does not hold, or a queue to userspace
		}
	}
	return inFall
}

// inputSaveOptions are the options of iptables-save's and iptables -S's
// rules whose matches the typed fields hold, or that match every packet
// (a module's name, a comment, a target's own options), each with how
// many words follow it. Any other option is a match the walk does not
// evaluate (--tcp-flags, --syn, -f, --limit, --match-set ...).
var inputSaveOptions = map[string]int{"-A": 1, "--append": 1, "-I": 1, "--insert": 1, "-p": 1, "--protocol": 1,
	"-s": 1, "--source": 1, "-d": 1, "--destination": 1, "-i": 1, "--in-interface": 1, "-o": 1,
	"--out-interface": 1, "-j": 1, "--jump": 1, "-g": 1, "--goto": 1, "--dport": 1, "--destination-port": 1,
	"--dports": 1, "--destination-ports": 1, "--sport": 1, "--source-port": 1, "--sports": 1,
	"--source-ports": 1, "--ctstate": 1, "--state": 1, "--comment": 1, "--reject-with": 1, "--log-prefix": 1,
	"--log-level": 1, "--set-xmark": 1, "--icmp-type": 1, "!": 0}

// inputSaveModules are the match modules (-m) whose matches the typed
// fields hold.
var inputSaveModules = map[string]bool{"tcp": true, "udp": true, "conntrack": true, "state": true,
	"comment": true, "multiport": true, "icmp": true}

// inputListingWords are the words of an iptables -L row past its
// destination that the typed fields hold, each with how many words follow
// it; any other word is a match the walk does not evaluate (PKTTYPE, TIME,
// flags:, match-set ...).
var inputListingWords = map[string]int{"tcp": 0, "udp": 0, "multiport": 0, "dports": 1, "ports": 1, "ctstate": 1,
	"state": 1, "reject-with": 1, "[goto]": 0}

// inputUnevaluated says whether r holds a match the typed fields do not:
// the walk then cannot tell whether it matches.
func inputUnevaluated(r *model.Rule) bool {
	raw := strings.TrimSpace(r.Raw)
	if strings.HasPrefix(raw, "[") { // iptables-save -c's counters
		if _, rest, ok := strings.Cut(raw, "] "); ok {
			raw = rest
		}
	}
	if strings.HasPrefix(raw, "-") {
		f := shellWords(raw)
		for i := 0; i < len(f); i++ {
			n, known := inputSaveOptions[f[i]]
			switch {
			case f[i] == "-m" || f[i] == "--match":
				if i+1 >= len(f) || !inputSaveModules[f[i+1]] {
					return true
				}
				i++
			case known:
				i += n
			case strings.HasPrefix(f[i], "-"):
				return true
			}
		}
		return false
	}
	// An iptables -L row: [pkts bytes] target prot opt [in out] source
	// destination, then the matches.
	f := strings.Fields(inputCommentRe.ReplaceAllString(raw, ""))
	at := slices.Index(f, r.Target)
	if at < 0 {
		return true
	}
	cols := 5 // target prot opt source destination
	if r.Counted {
		cols = 7 // with in and out
	}
	if len(f) < at+cols || strings.Contains(f[at+2], "f") {
		return true // -f in the opt column: fragments only
	}
	if t := strings.ToUpper(r.Target); !r.Counted && t != "ACCEPT" && !inputPassTargets[t] {
		return true // without -v the listing hides the interfaces the rule may match on
	}
	extra := f[at+cols:]
	for i := 0; i < len(extra); i++ {
		w := extra[i]
		if n, ok := inputListingWords[w]; ok {
			i += n
			continue
		}
		if strings.HasPrefix(w, "dpt:") || strings.HasPrefix(w, "dpts:") || strings.HasPrefix(w, "icmp-") {
			continue
		}
		return true
	}
	return false
}

// inputCommentRe is a comment in an iptables -L row.
var inputCommentRe = lazyre.New(`/\*.*?\*/`)

// shellWords splits an iptables-save rule into its words, a quoted
// string ("kubernetes service portals") one word.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	quoted, escaped, in := false, false, false
	for _, c := range s {
		switch {
		case escaped:
			b.WriteRune(c)
			escaped = false
		case c == '\\' && quoted:
			escaped = true
		case c == '"':
			quoted, in = !quoted, true
		case (c == ' ' || c == '\t') && !quoted:
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// matches says how far r is known to match w's connection: a new one, from
// a host elsewhere, to one of the node's addresses.
func (w *inputWalk) matches(r *model.Rule) inMatch {
	if r.Proto != "" {
		proto := map[string]string{"6": "tcp", "17": "udp", "132": "sctp"}[r.Proto]
		if proto == "" {
			proto = strings.ToLower(r.Proto)
		}
		if proto != "all" && proto != "0" && (proto == w.probe.proto) == r.NotProto {
			return inNo
		}
	}
	if r.DPort != "" {
		in, known := inputPortIn(r.DPort, w.probe.port)
		if !known {
			return inPerhaps
		}
		if in == r.NotDPort {
			return inNo
		}
	}
	if r.CTState != "" && strings.Contains(strings.ToUpper(r.CTState), "NEW") == r.NotCTState {
		return inNo
	}
	if r.InIface == "lo" && !r.NotInIface {
		return inNo // what other hosts send does not arrive on loopback
	}
	if r.Src != "" || r.Dst != "" || r.InIface != "" || r.OutIface != "" || r.SPort != "" || r.MarkMatch != "" ||
		r.Recent != nil || r.DstType != "" || r.Statistic != "" {
		return inPerhaps
	}
	if inputUnevaluated(r) {
		return inPerhaps
	}
	return inYes
}

// inputPortIn says whether port is in a port match as the dumps print it:
// "22", "6783:6784", multiport's "80,443,8000:8080"; known is false for a
// service name.
func inputPortIn(spec string, port uint16) (in, known bool) {
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(part, ":")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.ParseUint(lo, 10, 16)
		b, err2 := strconv.ParseUint(hi, 10, 16)
		if lo == "" && isRange { // ":1024"
			a, err1 = 0, nil
		}
		if hi == "" && isRange { // "1024:"
			b, err2 = 65535, nil
		}
		if err1 != nil || err2 != nil {
			return false, false
		}
		if uint64(port) >= a && uint64(port) <= b {
			return true, true
		}
	}
	return false, true
}

// nodeInputFinding words the drops of one ruleset's INPUT chain: the
// kubelet's port first, then the overlays'.
func nodeInputFinding(rs *model.Ruleset, in *model.Chain, dropped []*inputWalk) analyzer.Finding {
	node := rs.Node
	where := "the node"
	if node != "" {
		where = node
	}
	var ports []string
	for _, w := range dropped {
		ports = append(ports, fmt.Sprintf("%s (%s)", w.probe, w.probe.what))
	}
	f := analyzer.Finding{
		Subject:   subject("node", node, "chain", "INPUT"),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"dropped_ports": ports, "chain": "INPUT"},
		Title: fmt.Sprintf("%s's firewall drops the kubelet's port 10250/tcp and %d other cluster %s from every "+
			"sender (filter INPUT)", where, len(dropped)-1, plural(len(dropped)-1, "port", "ports")),
		Decide: "# on the node, while the other nodes' traffic fails: the counter of the rule or policy that drops it climbs\n" +
			"iptables -nvL INPUT",
	}
	if len(dropped) == 1 {
		f.Title = fmt.Sprintf("%s's firewall drops the kubelet's port 10250/tcp from every sender (filter INPUT)", where)
	}
	if node != "" {
		f.Facts["node"] = node
	}
	var counted []string
	seen := map[model.Pos]bool{}
	for _, w := range dropped {
		at, note, pkts := model.Pos{}, "", uint64(0)
		if w.chain != nil {
			at, note, pkts = w.chain.Pos, fmt.Sprintf("chain %s policy %s", w.chain.Name, w.chain.Policy), w.chain.Packets
		} else {
			at, note, pkts = w.rule.Pos, w.rule.Raw, w.rule.Packets
		}
		if seen[at] {
			continue
		}
		seen[at] = true
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: at, Note: "drops " + w.probe.String() + ": " + note})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s drops a new connection to %s from any sender, no rule "+
			"before it accepting one", at, note, w.probe))
		if pkts > 0 {
			counted = append(counted, fmt.Sprintf("%s counted %d %s", note, pkts, plural(int(pkts), "packet", "packets")))
		}
	}
	if len(counted) > 0 {
		f.Facts["dropped_packets_counted"] = counted
		f.Supports = append(f.Supports, "the counters show packets dropped: "+strings.Join(counted, "; "))
	}
	f.Contradicts = []string{"an ACCEPT of the other nodes' addresses or of these ports in a table or backend the " +
		"bundle does not show (nftables, iptables-legacy beside iptables-nft), or the counters not climbing while " +
		"the traffic fails"}
	f.Summary = fmt.Sprintf("The filter table's INPUT chain of %s drops new connections from other hosts to %s: "+
		"walked rule by rule, nothing that could match such a connection accepts it first. The control plane "+
		"cannot reach the kubelet there (kubectl logs, exec and port-forward fail), and whichever of those "+
		"overlay ports the cluster uses, the other nodes' Pod traffic is dropped on arrival.",
		where, strings.Join(ports, ", "))
	f.Cause = fmt.Sprintf("A default deny on the way in (%s) that does not accept what the cluster's nodes send "+
		"each other.", inputDenyWords(in))
	f.Fix = "Accept the cluster's ports from the nodes' subnet before the default deny, and persist it: " +
		"`iptables -I INPUT -s NODE_CIDR -p tcp --dport 10250 -j ACCEPT`, and the overlay's port (udp 8472 for " +
		"flannel and Cilium, udp 4789 for Calico's VXLAN, tcp 179 for BGP, tcp 6783 and udp 6783:6784 for Weave " +
		"Net), or the firewall's own way (`firewall-cmd --permanent --add-port=10250/tcp`, a trusted zone for the " +
		"nodes' subnet, `ufw allow from NODE_CIDR`)."
	return f
}

// inputDenyWords says how chain in denies by default: its policy, or its
// last rule.
func inputDenyWords(in *model.Chain) string {
	if strings.EqualFold(in.Policy, "DROP") {
		return "the INPUT chain's policy is DROP"
	}
	if n := len(in.Rules); n > 0 {
		return fmt.Sprintf("the INPUT chain ends in %q", in.Rules[n-1].Raw)
	}
	return "the INPUT chain drops"
}
