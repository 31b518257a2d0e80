package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// NetfilterExtensionMissing finds components whose iptables or conntrack
// calls fail because the node's kernel lacks the netfilter extension they
// use.
var NetfilterExtensionMissing = &analyzer.Rule{
	Name:        "netfilter-extension-missing",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"node", "component", "extension"},
	Run:         runNetfilterExtensionMissing,
	Explains:    []*analyzer.Rule{KubeProxyRestoreFailed},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(277), DNSTimeouts.At(95)},
	Proof: "the component's own line quoting iptables or conntrack refusing for want of a kernel extension " +
		"(\"Extension statistic revision 0 not supported, missing kernel module?\", \"Couldn't load match " +
		"`comment'\", ip6tables-restore's \"unknown option \\\"--xor-mark\\\"\", conntrack's \"Can't open handler\"), " +
		"which names the extension as a likely cause",
	Unproven: "whether the module is not built, not loaded or broken (a kernel regression): `lsmod`, `modprobe` " +
		"and `uname -r` on the node decide",
	Doc: `the kernel lacks a netfilter extension iptables needs

kube-proxy, the kubelet and the CNI agents write their rules with
iptables and clear connection-tracking entries with conntrack; each
match and target of a rule (statistic, comment, conntrack, mark, MARK,
MASQUERADE ...) is a kernel module (xt_statistic, xt_comment ...), and
conntrack talks to the kernel through nf_conntrack_netlink. A kernel
built without one, a module that is not loaded where the component
cannot load it, or a regression in a stable kernel makes the call fail,
and the tool says so: "Extension statistic revision 0 not supported,
missing kernel module?", "Couldn't load match ` + "`comment'" + `", for the MARK
target of ip6tables on the kernels whose backport broke it (5.15.168,
6.6.57, 6.11.4, Ubuntu's 6.8.0-56) "unknown option \"--xor-mark\"", and
conntrack's "Can't open handler".

What fails follows from the call: an iptables-restore of kube-proxy
fails whole, so none of its Service rules change (for ip6tables, its
IPv6 Services'); a failed conntrack deletion leaves UDP clients (DNS
among them) sending to endpoints that are gone.

Evidence: the components' log lines quoting the tool's message, per
component and node (kube-proxy's err=< value included).

Severity: a warning, of likely cause: the message names the extension
(where an iptables of the nf_tables backend says it, nft_compat is an
alternative).

Fix: load the module at boot (/etc/modules-load.d, or modprobe it) or
use a kernel built with it; for the MARK regression, a kernel with its
fix (or the one before); for conntrack, load nf_conntrack_netlink.`,
}

var (
	// nfExtRevisionRe is iptables' word on an extension the kernel does
	// not offer.
	nfExtRevisionRe = lazyre.New(`Extension ([A-Za-z][\w-]*) revision \d+ not supported(?:, missing kernel module\?)?`)
	// nfExtLoadRe is iptables' word on an extension it could not load: a
	// match (lower case) or a target (upper case), not a chain.
	nfExtLoadRe = lazyre.New("Couldn't load (match|target) [`'\"]([A-Za-z][\\w-]*)['\"`]")
	// nfExtXorMarkRe is ip6tables (or iptables) refusing the MARK
	// target's option: the kernel offers the target's revision 0 alone.
	nfExtXorMarkRe = lazyre.New(`(ip6?tables)(?:-legacy|-nft)?(?:-restore)?(?: v[\d.]+(?: \([\w_]+\))?)?: unknown option "--(?:xor|set-x|or|and)-?mark"`)
	// nfConntrackHandlerRe is conntrack's word when the kernel has no
	// netlink interface for it.
	nfConntrackHandlerRe = lazyre.New(`conntrack v[\d.]+ \(conntrack-tools\): Can't open handler`)
)

// nfTargets are the targets iptables loads from extensions, those a
// component's rules use: an upper-case name not among them is a chain.
var nfTargets = []string{"MARK", "CONNMARK", "MASQUERADE", "SNAT", "DNAT", "REDIRECT", "REJECT", "CT", "NOTRACK",
	"LOG", "NFLOG", "CHECKSUM", "TCPMSS", "TPROXY", "SET", "NFQUEUE", "TEE", "CLASSIFY"}

// nfExtMissing is what one component's lines say of one extension.
type nfExtMissing struct {
	node, comp string
	ext        string // the extension as iptables names it; "conntrack-netlink" for conntrack's
	ip6        bool   // ip6tables said it
	nft        bool   // an iptables of the nf_tables backend said it
	xorMark    bool   // known by the MARK option refused
	quote      string
	lineRun
}

func runNetfilterExtensionMissing(p *analyzer.Pass) error {
	var groups []*nfExtMissing
	byKey := map[string]*nfExtMissing{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		text := logText(le)
		ext, quote, ip6, xor := nfExtOf(text)
		if ext == "" {
			continue
		}
		comp := subjectComponent(le.Source, le.Pos.File)
		k := le.Node + "\x00" + comp + "\x00" + ext
		if le.Node == "" {
			k += "\x00" + le.Pos.File
		}
		g := byKey[k]
		if g == nil {
			g = &nfExtMissing{node: le.Node, comp: comp, ext: ext, quote: quote}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.ip6, g.xorMark = g.ip6 || ip6, g.xorMark || xor
		g.nft = g.nft || strings.Contains(quote, "(nf_tables)") || strings.Contains(text, "(nf_tables):")
		g.add(le)
	}
	for _, g := range groups {
		p.Report(nfExtFinding(g))
	}
	return nil
}

// nfExtOf returns the extension a log line's text says the kernel lacks,
// the tool's words, and whether ip6tables said it and through the MARK
// option; "" when it says none.
func nfExtOf(text string) (ext, quote string, ip6, xorMark bool) {
	if m := nfExtXorMarkRe.FindStringSubmatch(text); m != nil {
		return "MARK", m[0], m[1] == "ip6tables", true
	}
	if m := nfExtRevisionRe.FindStringSubmatch(text); m != nil {
		return m[1], m[0], strings.Contains(text, "ip6tables"), false
	}
	if m := nfExtLoadRe.FindStringSubmatch(text); m != nil {
		if m[1] == "match" && strings.ToLower(m[2]) == m[2] || m[1] == "target" && slices.Contains(nfTargets, m[2]) {
			return m[2], m[0], strings.Contains(text, "ip6tables"), false
		}
	}
	if m := nfConntrackHandlerRe.FindString(text); m != "" {
		return "conntrack-netlink", m, false, false
	}
	return "", "", false, false
}

// nfExtModule is the kernel module of an extension: a match's is xt_ and
// its name, a target's xt_ and its name in upper case, but for the
// targets a module of another name carries.
func nfExtModule(ext string) string {
	switch ext {
	case "conntrack-netlink":
		return "nf_conntrack_netlink"
	case "MARK", "CONNMARK", "SET":
		return "xt_" + strings.ToLower(ext)
	case "SNAT", "DNAT":
		return "xt_nat"
	case "NOTRACK":
		return "xt_CT"
	case "REJECT":
		return "ipt_REJECT"
	case "tcp", "udp":
		return "xt_tcpudp"
	}
	return "xt_" + ext
}

// nfExtFinding judges one component's lines of one extension.
func nfExtFinding(g *nfExtMissing) analyzer.Finding {
	on, node := onNode(g.node), nodeName(g.node)
	mod := nfExtModule(g.ext)
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp, "extension", g.ext),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"component": g.comp, "extension": g.ext, "module": mod, "lines": g.count},
		Evidence:  g.evidence(g.quote, "the last such line"),
		Supports: []string{fmt.Sprintf("%s: %s: %s (%s)", g.first.Pos, g.comp, g.quote,
			plural(g.count, "one line", fmt.Sprintf("%d lines", g.count)))},
		Decide: fmt.Sprintf("# on %s: the kernel, and whether the module is there and loads\nuname -r; lsmod | grep %s; "+
			"modprobe -v %[2]s", node, mod),
	}
	family := "iptables"
	if g.ip6 {
		family = "ip6tables"
	}
	switch {
	case g.ext == "conntrack-netlink":
		f.Title = fmt.Sprintf("%s%s cannot clear conntrack entries: the kernel offers no conntrack netlink", g.comp, on)
		f.Summary = fmt.Sprintf("%s%s runs conntrack to delete the connection-tracking entries of UDP Services whose "+
			"endpoints changed, and conntrack cannot talk to the kernel: UDP clients (DNS among them) keep sending to "+
			"endpoints that are gone until their entries time out.", g.comp, on)
		f.Cause = "The node's kernel has no nf_conntrack_netlink: the module is not built or not loaded, so the " +
			"conntrack tool cannot open its netlink handle."
		f.Alternatives = []string{"the component's container lacks CAP_NET_ADMIN"}
		f.Fix = "Load nf_conntrack_netlink (modprobe nf_conntrack_netlink, and list it in /etc/modules-load.d), or use " +
			"a kernel built with it."
	case g.xorMark:
		f.Title = fmt.Sprintf("%s%s: %s refuses the MARK target's options", g.comp, on, family)
		f.Summary = fmt.Sprintf("%s%s fails to write its %s rules: %s refuses an option of the MARK target that only a "+
			"newer revision of the target offers (%s).", g.comp, on, family, family, g.quote)
		f.Cause = fmt.Sprintf("The node's kernel does not offer the MARK target's revision that %s needs: a stable-"+
			"kernel backport broke it for IPv6 (5.15.168, 6.6.57, 6.11.4, Ubuntu's 6.8.0-56), or xt_mark is missing.", family)
		f.Alternatives = []string{"the kernel was built without xt_mark (CONFIG_NETFILTER_XT_MARK)"}
		f.Fix = "Run a kernel with the fix of the MARK regression (or the release before it); where the module is " +
			"missing, load xt_mark."
	default:
		f.Title = fmt.Sprintf("%s%s: the kernel lacks the %s extension %s", g.comp, on, family, g.ext)
		f.Summary = fmt.Sprintf("%s%s cannot write rules that use %s: %s says \"%s\".", g.comp, on, g.ext, family, g.quote)
		f.Cause = fmt.Sprintf("The node's kernel lacks the netfilter extension %s (module %s): it is not built, or not "+
			"loaded where the component cannot load it.", g.ext, mod)
		f.Alternatives = []string{"the iptables in the component's image and the host's kernel disagree on the " +
			"extension's revision (an iptables far newer or older than the kernel)"}
		f.Fix = fmt.Sprintf("Load %s on the node (modprobe, and /etc/modules-load.d), or use a kernel built with it.", mod)
	}
	if g.nft && g.ext != "conntrack-netlink" {
		// iptables-nft runs xtables extensions through nft_compat.
		f.Alternatives = append(f.Alternatives, "the kernel lacks nft_compat, through which an iptables of the "+
			"nf_tables backend loads every xtables extension (or iptables-legacy would find it)")
	}
	switch {
	case !strings.Contains(strings.ToLower(g.comp), "proxy") || g.ext == "conntrack-netlink":
	case g.ip6:
		f.Summary += " kube-proxy's IPv6 restore fails whole with it: none of its IPv6 Services' rules change until " +
			"the kernel offers the extension."
	default:
		f.Summary += " kube-proxy's whole restore fails with it: none of its Service rules change until the kernel " +
			"offers the extension."
	}
	return f
}
