package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// FilterForwardDrop finds a node's filter FORWARD chain that drops the
// Pod traffic the CNI's and kube-proxy's rules would accept: a host
// firewall's catch-all REJECT or DROP, or a DROP policy no rule before it
// lets Pod traffic past.
var FilterForwardDrop = &analyzer.Rule{
	Name:        "filter-forward-drop",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindNetfilter, model.KindLogs, model.KindClient},
	Requires:    []analyzer.FactKey{facts.Detours},
	SubjectKeys: []string{"node", "hook"},
	Run:         runFilterForwardDrop,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(210), DNSTimeouts.At(120), ConnectionsTimeOut.At(30)},
	Proof: "the node's filter FORWARD chain (iptables-save -c, iptables -nvL FORWARD, nft list ruleset) ends " +
		"in a catch-all REJECT or DROP, or a DROP policy, that no earlier rule lets Pod traffic past, " +
		"and the kernel's log of that firewall rejecting forwarded Pod packets (IN=/OUT= a CNI interface)",
	Unproven: "the ruleset alone (the drop's counter climbing, or no rule accepting Pod traffic before it), " +
		"or the kernel's log lines alone, name the cause as likely and ask for the other " +
		"(iptables-save -c on the node while the failing connection is retried); a drop that the CNI's " +
		"own rules come before, with no packet counted, is normal and not reported; without any ruleset, a " +
		"client transcript where a Service's address goes unanswered while the same request to a Pod's is " +
		"answered is the symptom only: a warning of unknown cause, the FORWARD chain's counters to decide",
	Doc: `the filter FORWARD chain drops the Pod traffic

Traffic between Pods on different nodes, and Service traffic DNAT-ed to a
Pod elsewhere, crosses the filter FORWARD chain, where the CNI (flannel's
"-s 10.244.0.0/16 -j ACCEPT" or FLANNEL-FWD, Calico's cali-FORWARD ...) and
kube-proxy (KUBE-FORWARD) accept it. A host firewall or Docker can drop it
first: the final "REJECT --reject-with icmp-host-prohibited" of firewalld or
iptables-services, ufw's routed deny, an admin's catch-all REJECT, Docker's
FORWARD policy DROP when nothing accepts the Pod bridge. Clients see "No
route to host" (a REJECT) or a hang (a DROP).

Evidence: in the rulesets (iptables-save -c, iptables -nvL FORWARD, -S, nft
list ruleset) of nodes that hold Kubernetes rules, the first catch-all
REJECT or DROP of FORWARD, or its DROP policy, its counter, the rules before
it that accept Pod traffic (a CNI chain, an ACCEPT on a CNI interface or an
address range) and the ACCEPT rules after it, which nothing reaches; the
kernel's log lines of a firewall dropping a forwarded packet
("filter_FWD_public_REJECT:", "[UFW BLOCK]", a LOG rule's prefix) from or to
a CNI interface.

Severity: an error when the ruleset and the kernel's log both show it; a
warning of likely cause from either alone; info when no packet crossed the
chain. A drop after the CNI's rules that counted nothing is not reported.

Fix: let the Pod network through before the drop: firewalld's trusted zone
(firewall-cmd --permanent --zone=trusted --add-source=<pod CIDR>
--add-interface=cni0) or firewalld stopped, as the CNI's documentation says;
ufw route allow from and to the Pod CIDR; iptables -P FORWARD ACCEPT against
Docker's policy (or the Pod CIDR accepted in DOCKER-USER); an admin's
catch-all REJECT removed or moved after the CNI's rules.`,
}

// fwdDrop is what a node's FORWARD chain shows of a drop of Pod traffic.
type fwdDrop struct {
	node  string
	rs    *model.Ruleset
	table *model.Table
	chain *model.Chain
	// drop is the catch-all REJECT or DROP; nil when the policy drops.
	drop *model.Rule
	// counted says the drop's counter was shown; taken is its packets.
	counted bool
	taken   uint64
	// accept is the first earlier rule that lets Pod traffic past;
	// shadowed the ACCEPT rules after the catch-all; logRule a LOG rule
	// right before the drop.
	accept, logRule *model.Rule
	shadowed        []*model.Rule
	owner           string
	logs            []fwdLog
}

// fwdLog is a kernel log line of a firewall dropping a forwarded packet.
type fwdLog struct {
	ev                     *model.LogEvent
	prefix, in, out        string
	src, dst, proto, dport string
}

func runFilterForwardDrop(p *analyzer.Pass) error {
	logs := fwdLogs(p.Snap.Logs)
	var drops []*fwdDrop
	for _, rs := range p.Snap.Netfilter {
		if !fwdKubeRuleset(rs) {
			continue
		}
		for _, t := range rs.Tables {
			for _, c := range t.Chains {
				if d := forwardDrop(rs, t, c); d != nil {
					drops = append(drops, d)
				}
			}
		}
	}
	used := map[*model.LogEvent]bool{}
	for _, d := range drops {
		for _, l := range logs {
			sameNode := l.ev.Node == d.node || l.ev.Node == "" || d.node == ""
			logged := d.logRule != nil && strings.TrimSpace(fwdLogPrefix(d.logRule)) == l.prefix
			if sameNode && (logged || fwdPodIface(l.in) || fwdPodIface(l.out)) {
				d.logs = append(d.logs, l)
				used[l.ev] = true
			}
		}
		if d.owner == "" {
			d.owner = fwdOwner(d.rs, d.drop, d.logs)
		}
		if len(d.logs) > 0 && d.node == "" {
			d.node = d.logs[0].ev.Node
		}
		if c, ok := judgeForwardDrop(d); ok {
			p.Report(withFinding(c, forwardDropWords(d)))
		}
	}
	// Kernel lines of a node whose ruleset the bundle lacks.
	byNode := map[string]*fwdDrop{}
	var order []*fwdDrop
	for _, l := range logs {
		if used[l.ev] || !fwdPodIface(l.in) && !fwdPodIface(l.out) {
			continue
		}
		d := byNode[l.ev.Node]
		if d == nil {
			d = &fwdDrop{node: l.ev.Node}
			byNode[l.ev.Node] = d
			order = append(order, d)
		}
		d.logs = append(d.logs, l)
	}
	for _, d := range order {
		d.owner = fwdOwner(nil, nil, d.logs)
		c, _ := judgeForwardDrop(d)
		p.Report(withFinding(c, forwardDropWords(d)))
	}
	for _, dt := range facts.Detours.Of(p) {
		if len(p.Snap.Netfilter) == 0 && len(logs) == 0 {
			p.Report(fwdDetourFinding(dt))
		}
	}
	return nil
}

// fwdDetourFinding is the symptom of a drop of translated traffic alone:
// a request unanswered at a Service's address, answered at a Pod's.
func fwdDetourFinding(d facts.Detour) analyzer.Finding {
	return analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Unknown, Subject: subject("hook", "filter FORWARD"),
		Title:   fmt.Sprintf("Requests to %s go unanswered while %s answers them: the translated path drops them", d.Via, d.To),
		Summary: d.Describe() + ". The destination answers; the way to it through " + d.Via.String() + " does not.",
		Cause: "Not established: Service traffic DNAT-ed to a Pod on another node crosses the filter FORWARD chain, " +
			"where a host firewall (ufw's routed deny, firewalld's REJECT, Docker's DROP policy) can drop it.",
		Fix: fwdFixes[""], Evidence: d.Evidence(), Supports: []string{d.Describe()},
		Alternatives: []string{"the filter FORWARD chain (a host firewall) drops the translated packets",
			"kube-proxy's rules for the Service are missing or stale on the client's node",
			"the reply is not translated back (bridge-nf-call-iptables off, a hairpin the bridge does not do)"},
		Decide: collected("iptables-save", "on the client's node while the request to "+d.Via.String()+" is retried"),
		Facts:  map[string]any{"unanswered": d.Via.String(), "answered": d.To.String()}}
}

// judgeForwardDrop decides how firmly d shows Pod traffic dropped, and
// whether it is reported at all.
func judgeForwardDrop(d *fwdDrop) (analyzer.Finding, bool) {
	f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely}
	f.Decide = collected("iptables-save", "on "+nodeName(d.node)+" while the failing connection is retried: the "+
		"counter of the FORWARD rule or policy that drops climbing")
	if len(d.logs) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("the kernel logged %d forwarded %s dropped by %q, first %s",
			len(d.logs), plural(len(d.logs), "packet", "packets"), d.logs[0].prefix, d.logs[0].ev.Pos))
	}
	if d.chain == nil {
		f.Alternatives = []string{"a host firewall's rule that drops only some forwarded traffic (a zone, a port) " +
			"while the rest of the Pod traffic passes"}
		return f, true
	}
	none := fmt.Sprintf("no rule of %s before %s accepts Pod traffic (%s)", d.chain.Name, fwdDropName(d), fwdDropPos(d))
	switch {
	case d.accept != nil && d.taken == 0 && len(d.shadowed) == 0 && len(d.logs) == 0:
		return f, false // the CNI's rules come first, nothing counted: normal
	case d.counted && d.taken == 0 && fwdIdle(d.chain):
		// Nothing crossed the chain: the drop would take Pod traffic, none
		// was seen.
		f.Severity, f.Certainty, f.Supports = analyzer.Info, analyzer.Unknown, []string{none}
		f.Contradicts = []string{"every counter of " + d.chain.Name + " is 0: no packet was forwarded since they were last reset"}
		f.Alternatives = []string{"a node that forwards no Pod traffic (a single node, a CNI that bypasses netfilter)"}
		return f, d.accept == nil
	case d.counted && d.taken > 0:
		f.Supports = append(f.Supports, fmt.Sprintf("%s counted %d %s (%s)", fwdDropName(d), d.taken,
			plural(int(d.taken), "packet", "packets"), fwdDropPos(d)))
	case d.accept == nil:
		f.Supports = append(f.Supports, none)
		if d.counted {
			f.Contradicts = append(f.Contradicts, fwdDropName(d)+"'s counter is 0: no packet has reached it since the "+
				"counters were last reset")
		}
	}
	if d.accept != nil {
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s comes before the drop and accepts Pod traffic it matches (%s)",
			fwdRuleText(d.accept), d.accept.Pos))
	}
	if len(d.shadowed) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%d ACCEPT %s after %s never reached, first %s", len(d.shadowed),
			plural(len(d.shadowed), "rule", "rules"), fwdDropName(d), d.shadowed[0].Pos))
	}
	if len(d.logs) > 0 {
		f.Certainty, f.Severity, f.Decide = analyzer.Proven, analyzer.Error, ""
	} else if d.drop != nil && !d.counted && d.accept == nil {
		f.Alternatives = []string{"the host firewall's own chains before it (zones, ufw's user rules) accepting the " +
			"Pod network, which the dump does not show expanded"}
	}
	return f, true
}

// forwardDrop returns what c shows of a drop of forwarded traffic when c
// is the filter table's FORWARD chain (or an nftables filter chain of the
// forward hook) that drops; nil otherwise.
func forwardDrop(rs *model.Ruleset, t *model.Table, c *model.Chain) *fwdDrop {
	nft := rs.Format == "nft"
	if nft && (c.Hook != "forward" || c.Type != "" && c.Type != "filter") || !nft && (c.Name != "FORWARD" || t.Name != "filter" && t.Name != "") {
		return nil
	}
	d := &fwdDrop{node: rs.Node, rs: rs, table: t, chain: c}
	for i, r := range c.Rules {
		switch {
		case fwdCatchAll(rs, r) && (r.Target == "REJECT" || r.Target == "DROP"):
			d.drop = r
			d.counted, d.taken = r.Counted, r.Packets
			if i > 0 && c.Rules[i-1].Target == "LOG" {
				d.logRule = c.Rules[i-1]
			}
			for _, s := range c.Rules[i+1:] {
				if s.Target == "ACCEPT" || fwdCniChain(s.Target) {
					d.shadowed = append(d.shadowed, s)
				}
			}
			return d
		case r.Target == "ACCEPT" && fwdCatchAll(rs, r):
			return nil // everything is accepted before any drop
		case d.accept == nil && (fwdAcceptsPods(r) || r.Target == "ACCEPT" && r.CTState == "" && fwdHidden(rs, r)):
			d.accept = r
		}
	}
	if c.Policy != "DROP" {
		return nil
	}
	d.taken = c.Packets
	d.counted = rs.Format == "iptables-save" || rs.Format == "iptables-list" && slices.ContainsFunc(c.Rules, func(r *model.Rule) bool { return r.Counted })
	if n := len(c.Rules); n > 0 && c.Rules[n-1].Target == "LOG" {
		d.logRule = c.Rules[n-1]
	}
	return d
}

// fwdIdle says whether the chain's counters are shown and all 0.
func fwdIdle(c *model.Chain) bool {
	return len(c.Rules) > 0 && c.Packets == 0 && !slices.ContainsFunc(c.Rules, func(r *model.Rule) bool { return !r.Counted || r.Packets > 0 })
}

// fwdKubeRuleset says whether rs holds rules of Kubernetes' components.
func fwdKubeRuleset(rs *model.Ruleset) bool {
	for _, t := range rs.Tables {
		if rs.Format == "nft" && (t.Name == "kube-proxy" || strings.HasPrefix(t.Name, "cilium")) {
			return true
		}
		for _, c := range t.Chains {
			if fwdKubeChain(c.Name) {
				return true
			}
			for _, r := range c.Rules {
				if fwdKubeChain(r.Target) || r.Target == "ACCEPT" && (fwdPodIface(r.InIface) || fwdPodIface(r.OutIface)) {
					return true
				}
			}
		}
	}
	return false
}

func fwdKubeChain(name string) bool {
	return strings.HasPrefix(name, "KUBE-") || fwdCniChain(name)
}

// fwdCniChain says whether name is a chain a CNI plugin fills with the
// rules that accept its Pods' traffic.
func fwdCniChain(name string) bool {
	for _, p := range []string{"cali-", "FLANNEL", "CILIUM", "KUBE-ROUTER", "KUBE-POD-FW", "WEAVE", "ANTREA", "OVN-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// fwdPodIface says whether an interface name (or iptables' prefix "cali+")
// is one a CNI plugin uses for Pods or between nodes.
func fwdPodIface(name string) bool {
	name = strings.TrimSuffix(name, "+")
	for _, p := range []string{"cni", "cbr0", "flannel", "cali", "vxlan.calico", "tunl", "weave", "cilium_", "lxc",
		"kube-bridge", "kube-ipvs", "antrea-", "genev_sys", "ovn-k8s"} {
		if name != "" && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// fwdHidden says whether r is a row of an iptables -L listing made without
// -v, which does not show the interfaces a rule matches.
func fwdHidden(rs *model.Ruleset, r *model.Rule) bool {
	return rs.Format == "iptables-list" && !r.Counted
}

// fwdAcceptsPods says whether r lets (some) Pod traffic past: a jump to a
// CNI chain, an ACCEPT on a CNI interface, or an ACCEPT of an address
// range that is not limited to replies.
func fwdAcceptsPods(r *model.Rule) bool {
	if fwdCniChain(r.Target) {
		return true
	}
	if r.Target != "ACCEPT" || r.CTState != "" && !r.NotCTState {
		return false
	}
	if fwdPodIface(r.InIface) && !r.NotInIface || fwdPodIface(r.OutIface) && !r.NotOutIface {
		return true
	}
	return fwdMatchRange(r.Src) || fwdMatchRange(r.Dst)
}

// fwdMatchRange says whether a rule's address match is a range (a /8 to a
// /31), as a CNI's Pod CIDR rules are.
func fwdMatchRange(s string) bool {
	pf, ok := (&model.Rule{Src: s}).SrcPrefix()
	return ok && pf.Bits() >= 8 && pf.Bits() < pf.Addr().BitLen()
}

var (
	fwdIptCommentRe = lazyre.New(`(?:-m comment )?--comment (?:"(?:[^"\\]|\\.)*"|\S+)|/\* .*? \*/|comment "(?:[^"\\]|\\.)*"`)
	fwdIptCounterRe = lazyre.New(`^\[\d+:\d+\]\s*|-c \d+ \d+\s*|counter packets \d+ bytes \d+\s*`)
)

// fwdCatchAll says whether r matches every packet (a comment at most),
// whatever the form of its dump.
func fwdCatchAll(rs *model.Ruleset, r *model.Rule) bool {
	if r.Proto != "" || r.Src != "" || r.Dst != "" || r.InIface != "" || r.OutIface != "" || r.DPort != "" ||
		r.SPort != "" || r.CTState != "" || r.MarkMatch != "" || r.DstType != "" || r.Recent != nil || r.Statistic != "" {
		return false
	}
	raw := fwdIptCounterRe.ReplaceAllString(fwdIptCommentRe.ReplaceAllString(r.Raw, ""), "")
	f := strings.Fields(raw)
	switch rs.Format {
	case "nft":
		return len(f) > 0 && (f[0] == "reject" || f[0] == "drop" || f[0] == "accept")
	case "iptables-list":
		i := slices.Index(f, r.Target)
		if i < 0 || fwdHidden(rs, r) {
			return false
		}
		extra := f[min(i+5, len(f)):] // target prot opt source destination
		if r.Counted {
			extra = f[min(i+7, len(f)):] // with the in and out columns
		}
		return len(extra) == 0 || len(extra) == 2 && extra[0] == "reject-with"
	}
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case "-A", "-I", "-j", "--reject-with":
			i++
		default:
			return false
		}
	}
	return true
}

var fwdPrefixRe = lazyre.New(`(?:--log-prefix|prefix) (?:"([^"]*)"|(\S+))`)

// fwdLogPrefix returns the prefix of a LOG rule, unquoted.
func fwdLogPrefix(r *model.Rule) string {
	if m := fwdPrefixRe.FindStringSubmatch(r.Raw); m != nil {
		return m[1] + m[2]
	}
	return ""
}

var (
	fwdLogRe  = lazyre.New(`^(.*?)\s*IN=(\S*) OUT=(\S*)`)
	fwdDenyRe = lazyre.New(`(?i)reject|drop|block|deny`)
)

// fwdLogs returns the kernel's lines of a firewall dropping a forwarded
// packet: a log prefix that says it rejects, drops, blocks or denies, and
// both an input and an output interface.
func fwdLogs(evs []model.LogEvent) []fwdLog {
	var out []fwdLog
	for i := range evs {
		ev := &evs[i]
		m := fwdLogRe.FindStringSubmatch(ev.Message)
		if m == nil || m[2] == "" || m[3] == "" || !fwdDenyRe.MatchString(m[1]) {
			continue
		}
		l := fwdLog{ev: ev, prefix: strings.TrimSpace(m[1]), in: m[2], out: m[3]}
		fields := map[string]*string{"SRC": &l.src, "DST": &l.dst, "PROTO": &l.proto, "DPT": &l.dport}
		for _, kv := range strings.Fields(ev.Message[len(m[0]):]) {
			if k, v, _ := strings.Cut(kv, "="); fields[k] != nil {
				*fields[k] = v
			}
		}
		out = append(out, l)
	}
	return out
}

// fwdOwners name who writes a firewall's chains or log prefixes.
var fwdOwners = []struct{ prefix, owner string }{
	{"filter_FWD_", "firewalld"}, {"FWD_", "firewalld"}, {"FINAL_REJECT", "firewalld"},
	{"FORWARD_IN_ZONES", "firewalld"}, {"FORWARD_direct", "firewalld"}, {"[UFW ", "ufw"}, {"ufw-", "ufw"},
	{"DOCKER", "Docker"},
}

// fwdOwner names who wrote the drop, from the log prefixes and the chains
// beside it (Docker only for a DROP policy).
func fwdOwner(rs *model.Ruleset, drop *model.Rule, logs []fwdLog) string {
	var names []string
	for _, l := range logs {
		names = append(names, l.prefix)
	}
	for _, t := range cmp.Or(rs, &model.Ruleset{}).Tables {
		names = append(names, t.Name)
		for _, c := range t.Chains {
			names = append(names, c.Name)
			for _, r := range c.Rules {
				names = append(names, r.Target)
			}
		}
	}
	owner := ""
	for _, n := range names {
		for _, o := range fwdOwners {
			if strings.HasPrefix(n, o.prefix) && (o.owner != "Docker" || drop == nil) && owner != "firewalld" && owner != "ufw" {
				owner = o.owner
			}
		}
		if n == "firewalld" {
			owner = "firewalld"
		}
	}
	return owner
}

// fwdDropName names the drop: "the catch-all REJECT" or "the DROP policy".
func fwdDropName(d *fwdDrop) string {
	if d.drop == nil {
		return "the DROP policy"
	}
	return "the catch-all " + d.drop.Target
}

func fwdDropPos(d *fwdDrop) model.Pos {
	if d.drop != nil {
		return d.drop.Pos
	}
	return d.chain.Pos
}

// fwdRuleText is a rule as its dump printed it, without its leading spaces.
// An iptables -L row starts with its number and counters, left out.
func fwdRuleText(r *model.Rule) string {
	f := strings.Fields(r.Raw)
	for len(f) > 1 && strings.TrimRight(f[0], "0123456789KMGT") == "" {
		f = f[1:]
	}
	return strings.Join(f, " ")
}

// forwardDropWords words the finding of d.
func forwardDropWords(d *fwdDrop) analyzer.Finding {
	hook := "filter FORWARD"
	if d.chain != nil && d.rs.Format == "nft" {
		hook = "nft " + d.table.Name + " " + d.chain.Name
	}
	f := analyzer.Finding{
		Subject: subject("node", d.node, "hook", hook),
		Facts:   map[string]any{"hook": hook},
	}
	if d.owner != "" {
		f.Facts["owner"] = d.owner
	}
	var ev []analyzer.Evidence
	if d.chain == nil {
		l := d.logs[0]
		f.Title = fmt.Sprintf("%s on %s drops forwarded Pod traffic (%s to %s)", cmp.Or(d.owner, "a host firewall"),
			nodeName(d.node), l.in, l.out)
		f.Summary = fmt.Sprintf("The kernel of %s logged %d forwarded %s dropped by the firewall rule logging %q, "+
			"from %s to %s: %s.", nodeName(d.node), len(d.logs), plural(len(d.logs), "packet", "packets"), l.prefix,
			l.in, l.out, fwdLogPacket(l))
	} else {
		what := fwdDropName(d)
		if d.drop != nil {
			what += " " + strings.TrimSpace(strings.TrimPrefix(fwdRuleText(d.drop), "-A "+d.chain.Name))
		}
		f.Title = fmt.Sprintf("Forwarded Pod traffic dropped by %s of %s on %s", fwdDropName(d), hook, nodeName(d.node))
		if d.counted && d.taken == 0 && fwdIdle(d.chain) {
			f.Title = fmt.Sprintf("%s on %s: %s would drop Pod traffic, none forwarded yet", hook, nodeName(d.node), fwdDropName(d))
		} else if d.counted && d.taken > 0 {
			f.Title = fmt.Sprintf("%s on %s: %s took %d forwarded %s", hook, nodeName(d.node), fwdDropName(d),
				d.taken, plural(int(d.taken), "packet", "packets"))
		}
		f.Summary = fmt.Sprintf("In %s on %s, %s", hook, nodeName(d.node), what)
		if d.owner != "" {
			f.Summary += " (" + d.owner + "'s)"
		}
		switch {
		case d.accept != nil:
			f.Summary += fmt.Sprintf(" drops what the rules before it do not accept; %s accepts only the Pod traffic it matches.", fwdRuleText(d.accept))
		default:
			f.Summary += " comes before any rule that accepts Pod traffic (the CNI's chain or its ACCEPT of the Pod network): " +
				"Pod traffic this node forwards between nodes, and Service traffic DNAT-ed to a Pod elsewhere, is dropped there."
		}
		if d.counted {
			f.Summary += fmt.Sprintf(" Its counter shows %d %s.", d.taken, plural(int(d.taken), "packet", "packets"))
			f.Facts["packets"] = d.taken
		}
		if len(d.shadowed) > 0 {
			f.Summary += fmt.Sprintf(" %d ACCEPT %s after it, %s first, never see a packet.", len(d.shadowed),
				plural(len(d.shadowed), "rule", "rules"), fwdRuleText(d.shadowed[0]))
			f.Facts["shadowed_accepts"] = len(d.shadowed)
		}
		if len(d.logs) > 0 {
			f.Summary += fmt.Sprintf(" The kernel logged %d of them dropped (%q, %s).", len(d.logs), d.logs[0].prefix, fwdLogPacket(d.logs[0]))
		}
		if d.logRule != nil {
			ev = append(ev, analyzer.Evidence{Pos: d.logRule.Pos, Note: "LOG before the drop"})
		}
		ev = append([]analyzer.Evidence{{Pos: fwdDropPos(d), Note: fwdDropName(d)}}, ev...)
		if d.accept != nil {
			ev = append(ev, analyzer.Evidence{Pos: d.accept.Pos, Note: "accepts Pod traffic before the drop"})
		}
		for _, s := range d.shadowed[:min(len(d.shadowed), maxGroupEvidence)] {
			ev = append(ev, analyzer.Evidence{Pos: s.Pos, Note: "ACCEPT after the drop"})
		}
	}
	for _, l := range d.logs[:min(len(d.logs), maxGroupEvidence)] {
		ev = append(ev, analyzer.Evidence{Pos: l.ev.Pos, Note: l.prefix + " " + l.in + " to " + l.out})
	}
	f.Evidence = dedupEvidence(ev)
	what := fwdDropName(d)
	if d.chain == nil {
		what = fmt.Sprintf("the firewall rule logging %q", d.logs[0].prefix)
	}
	if d.owner != "" {
		what += " (" + d.owner + "'s)"
	}
	f.Cause = fmt.Sprintf("In %s, %s drops forwarded traffic before the CNI's and kube-proxy's ACCEPT rules let "+
		"the Pod traffic through, so connections between Pods on different nodes, and to Services whose Pod runs "+
		"elsewhere, fail (\"No route to host\" from a REJECT, a hang from a DROP).", hook, what)
	f.Fix = fwdFixes[d.owner]
	if d.owner == "" && d.chain != nil && d.drop == nil {
		f.Fix = fwdFixes["Docker"][:strings.Index(fwdFixes["Docker"], ", and")] + ", or accept the Pod network before the policy " +
			"(iptables -A FORWARD -s <pod CIDR> -j ACCEPT; iptables -A FORWARD -d <pod CIDR> -j ACCEPT)."
	}
	return f
}

// fwdLogPacket words the packet of a log line: "10.244.1.0 to 10.244.0.2".
func fwdLogPacket(l fwdLog) string {
	s := cmp.Or(l.src, "-") + " to " + cmp.Or(l.dst, "-")
	if l.proto != "" {
		s += " " + l.proto
	}
	if l.dport != "" {
		s += " port " + l.dport
	}
	return s
}

var fwdFixes = map[string]string{
	"firewalld": "Put the Pod CIDR and the CNI's interfaces in firewalld's trusted zone (firewall-cmd --permanent " +
		"--zone=trusted --add-source=<pod CIDR> --add-interface=cni0; firewall-cmd --reload), or stop and " +
		"disable firewalld as the CNI's documentation says.",
	"ufw": "Let routed Pod traffic through ufw: ufw route allow from <pod CIDR> and ufw route allow to <pod CIDR> " +
		"(or ufw default allow routed).",
	"Docker": "iptables -P FORWARD ACCEPT on the node, and keep Docker from setting it back (\"ip-forward-no-drop\": " +
		"true in /etc/docker/daemon.json), or accept the Pod network in DOCKER-USER.",
	"": "Remove the catch-all drop from FORWARD, or insert the Pod network's ACCEPT rules before it " +
		"(iptables -I FORWARD -s <pod CIDR> -j ACCEPT; iptables -I FORWARD -d <pod CIDR> -j ACCEPT), and " +
		"keep the host's firewall configuration from restoring it (/etc/sysconfig/iptables).",
}
