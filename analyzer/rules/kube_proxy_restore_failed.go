package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// KubeProxyRestoreFailed finds kube-proxy failing, sync after sync, to
// write its rules with iptables-restore.
var KubeProxyRestoreFailed = &analyzer.Rule{
	Name:        "kube-proxy-restore-failed",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindNetfilter},
	SubjectKeys: []string{"node", "component"},
	Run:         runKubeProxyRestoreFailed,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(25)},
	Proof: "kube-proxy's log failing its iptables-restore at two syncs or more with a chain it jumps to missing " +
		"(\"Couldn't load target `KUBE-MARK-DROP'\") from an iptables before 1.8 or of the legacy backend, and a dump " +
		"of the same node whose rules are in nf_tables, that chain among them, with no legacy tables beside them: its " +
		"iptables does not see the host's tables",
	Unproven: "the log alone shows the failures and what iptables-restore said, not why the chain is missing: the " +
		"backend of kube-proxy's iptables and the host's differ, or the chain was not made before kube-proxy's sync " +
		"(kubelet makes KUBE-MARK-DROP and KUBE-MARK-MASQ); in which backend the node holds the chain decides",
	Doc: `kube-proxy cannot write its rules

kube-proxy writes a node's Service rules at each sync with one
iptables-restore of the whole nat and filter tables. When it fails, it logs
"Failed to execute iptables-restore: exit status 2 (iptables-restore
v1.4.21: Couldn't load target ` + "`KUBE-MARK-DROP'" + `:No such file or directory
... Error occurred at line: 286 ...)", closes the NodePorts it holds, and
tries again at the next sync: none of its rules change until one succeeds,
so every Service change since the first failure is missing from the node
(new endpoints get no traffic, removed ones keep it, see stale-dnat).

The commonest failure names a chain the rules jump to that the tables
iptables-restore sees do not hold: KUBE-MARK-DROP or KUBE-MARK-MASQ, which
kubelet makes (--make-iptables-util-chains). Either kube-proxy's iptables
and the host's use different backends (an iptables before 1.8, always
legacy, in kube-proxy's image on a host whose iptables writes to nf_tables:
the chain kubelet made is in the other one), or the chain was not made
before kube-proxy's sync (kubelet started after it, as after a reboot, or
does not make it). A single failure at kube-proxy's start, when it cleans
up the rules of another mode, is not this: the rule needs two.

Another failure is kube-proxy's own rule: at -v=4 and above it logs what
it restores, and a rule whose -s has no value ("-A KUBE-XLB-... -s  -j
KUBE-SVC-...") makes iptables-restore take the jump's target for the
source ("Bad argument ` + "`KUBE-SVC-...'" + `"). kube-proxy fills that -s in with
its cluster CIDR: it runs without one, and before 1.5 it wrote the rule
anyway (kubernetes#36652). That is named as likely.

kube-proxy 1.21 and later log the failure as a structured line
("Failed to execute iptables-restore" err=<...>), read the same way. A
missing chain of kube-proxy's own (KUBE-SVC-, KUBE-SEP- ...) rather than
one kubelet makes is another agent removing them between its syncs
(Calico's eBPF data plane cleaning up kube-proxy's rules, a firewall
reload), which kube-proxy's partial syncs (1.26 and later) do not write
again.

Evidence: kube-proxy's log lines of the failures, the first and the last,
with the message of iptables-restore; the node's rulesets, whose header
says their backend.

Severity: an error when kube-proxy's iptables is legacy and a dump of the
same node shows its rules in nf_tables, the missing chain among them, with
no legacy tables beside them; otherwise a warning of unknown cause, with
the causes the message leaves open.

Fix: run kube-proxy with an image whose iptables picks the host's backend
(kube-proxy from Kubernetes 1.17 on), and make sure kubelet makes its
chains before kube-proxy syncs; then restart kube-proxy so it writes its
rules whole.`,
}

// restoreFailRe matches kube-proxy's failed iptables-restore: the binary,
// the exit status and the start of what it printed.
var restoreFailRe = lazyre.New(`(?i)Failed to execute (ip6?tables-restore)(?: for \w+)?: exit status (\d+) \((.*)`)

// restoreErrRe matches the err of kube-proxy's structured line
// ("Failed to execute iptables-restore" err=<...>): the exit status and
// what the tool printed, its first line a warning of no consequence
// ("Ignoring deprecated --wait-interval option.") when there is one.
var restoreErrRe = lazyre.New(`(?s)^exit status (\d+)(?:: | \()(?:Ignoring deprecated [^\n]*\n)?(.*)`)

// structuredRestoreFail reads kube-proxy's structured failure (klog's
// key="value" lines, from kube-proxy 1.21 on: "Failed to execute
// iptables-restore" err="exit status 1 (iptables-restore: line 1193
// failed\n)", or err=<...> over several lines) in restoreFailRe's groups:
// the whole, the tool, the exit status and what it printed.
func structuredRestoreFail(le *model.LogEvent, first string) []string {
	tool := ""
	for _, t := range []string{"ip6tables-restore", "iptables-restore"} {
		if strings.Contains(first, "Failed to execute "+t) {
			tool = t
			break
		}
	}
	e := restoreErrRe.FindStringSubmatch(strings.TrimSpace(le.Fields["err"]))
	if tool == "" || e == nil {
		return nil
	}
	return []string{first, tool, e[1], strings.ReplaceAll(strings.TrimSpace(e[2]), "\n", " ")}
}

// restoreToolRe matches what iptables-restore printed first: its name,
// version and backend.
var restoreToolRe = lazyre.New(`^(ip6?tables(?:-legacy|-nft)?-restore) v(\d+)\.(\d+)(?:\.(\d+))?(?: \((legacy|nf_tables)\))?: `)

// restoreMissingRe matches the chain iptables-restore found missing.
var restoreMissingRe = lazyre.New("(?:Couldn't load target [`'\"]|Chain [`'\"])([A-Z][A-Z0-9_-]*)[`'\"]")

// emptySourceRe matches a rule kube-proxy logged (at -v=4 and above it
// logs what it restores) whose -s has no value: "-A KUBE-XLB-... -s  -j
// KUBE-SVC-...", the jump's target taken as the source.
var emptySourceRe = lazyre.New(`^-A (KUBE-[A-Z0-9-]+) .*\s-s\s+-j\s+(\S+)`)

// restoreFailures are the failed iptables-restore of one kube-proxy.
type restoreFailures struct {
	key         string // restoreKey
	node, comp  string
	first, last *model.LogEvent
	count       int
	message     string // what iptables-restore printed first, of the first failure
	chain       string // the chain it found missing, "" when it says something else
	version     string // its iptables' version, "" when unnamed
	backend     string // model.BackendLegacy or BackendNFT when its name, version or mark says; ""
	closed      int    // "Closing local ports after iptables-restore failure" lines
	// emptySrc is the first rule of kube-proxy's with an empty -s whose
	// jump's target iptables-restore calls a bad argument; emptyChain its
	// chain.
	emptySrc   *model.LogEvent
	emptyChain string
}

func runKubeProxyRestoreFailed(p *analyzer.Pass) error {
	var groups []*restoreFailures
	byKey := map[string]*restoreFailures{}
	closing := map[string]int{}
	type emptySource struct {
		le            *model.LogEvent
		chain, target string
	}
	emptySrc := map[string][]emptySource{} // kube-proxy's logged rules with an empty -s, by restoreKey
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if !kubeProxyLine(le) {
			continue
		}
		k := restoreKey(le)
		first := firstLine(le.Message)
		if strings.Contains(first, "Closing local ports after iptables-restore failure") {
			closing[k]++
			continue
		}
		if r := emptySourceRe.FindStringSubmatch(strings.TrimSpace(first)); r != nil {
			emptySrc[k] = append(emptySrc[k], emptySource{le, r[1], r[2]})
			continue
		}
		m := restoreFailRe.FindStringSubmatch(first)
		if m == nil {
			if m = structuredRestoreFail(le, first); m == nil {
				continue
			}
		}
		g := byKey[k]
		if g == nil {
			g = &restoreFailures{key: k, node: le.Node, comp: subjectComponent(le.Source, le.Pos.File), first: le,
				message: strings.TrimSpace(m[3])}
			if t := restoreToolRe.FindStringSubmatch(g.message); t != nil {
				g.version, g.backend = iptablesBinary(t[1], t[2], t[3], t[4], t[5])
			}
			if c := restoreMissingRe.FindStringSubmatch(g.message); c != nil {
				g.chain = c[1]
			}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.last = le
		g.count++
	}
	for _, g := range groups {
		if g.count < 2 {
			continue // once, as at kube-proxy's start cleaning up another mode's rules
		}
		g.closed = closing[g.key]
		for _, e := range emptySrc[g.key] {
			if strings.HasPrefix(g.message, "Bad argument `"+e.target+"'") {
				g.emptySrc, g.emptyChain = e.le, e.chain
				break
			}
		}
		// A dump of the node in nf_tables that holds the missing chain,
		// with no legacy tables beside it: the chain is where kube-proxy's
		// legacy iptables does not look.
		var nft *model.Ruleset
		for _, rs := range p.Snap.Netfilter {
			if rs.Node == g.node && g.node != "" && rs.Backend == model.BackendNFT && rs.LegacyWarning.File == "" &&
				holdsChain(rs, g.chain) {
				nft = rs
				break
			}
		}
		p.Report(restoreFinding(g, nft))
	}
	return nil
}

// kubeProxyLine reports whether le is kube-proxy's: its source or file
// names it (facts.IsKubeProxyLog), or it comes from kube-proxy's proxier.
func kubeProxyLine(le *model.LogEvent) bool {
	return facts.IsKubeProxyLog(le) || strings.HasPrefix(le.Fields["caller"], "proxier.go:")
}

// restoreKey names the kube-proxy of le: its node and component, and,
// of no node, its file (two Pods' logs of no node are two kube-proxies).
func restoreKey(le *model.LogEvent) string {
	k := le.Node + "\x00" + subjectComponent(le.Source, le.Pos.File)
	if le.Node == "" {
		k += "\x00" + le.Pos.File
	}
	return k
}

// restoreFinding judges and words one kube-proxy's failures, with a dump
// of its node's rules in nf_tables (nft) when the bundle has one.
func restoreFinding(g *restoreFailures, nft *model.Ruleset) analyzer.Finding {
	comp := g.comp
	if !strings.Contains(strings.ToLower(comp), "proxy") {
		comp = "kube-proxy" // its lines, under a runtime's name (rkt, a journal's unit)
	}
	span := ""
	if t0, t1 := g.first.Time, g.last.Time; !t0.IsZero() && !t1.IsZero() && t1.After(t0) {
		span = fmt.Sprintf(" over %s", t1.Sub(t0).Round(time.Second))
	}
	f := analyzer.Finding{
		Subject:  subject("node", g.node, "component", g.comp),
		Severity: analyzer.Warning,
		Facts:    map[string]any{"failures": g.count, "message": g.message},
		Supports: []string{fmt.Sprintf("%s: %s's iptables-restore failed %d times%s, the first here: %s", g.first.Pos, comp,
			g.count, span, g.message)},
	}
	ev := []analyzer.Evidence{{Pos: g.first.Pos, Note: "iptables-restore failed"}, {Pos: g.last.Pos, Note: "the last failure"}}
	if g.version != "" {
		f.Facts["iptables_version"] = g.version
	}
	if g.closed > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%s closed its NodePorts after %d of the failures", comp, g.closed))
	}
	f.Summary = fmt.Sprintf("%s on %s failed to write its rules %d times%s (iptables-restore: %s). A sync that fails "+
		"changes none of them: every Service and endpoint change since the first failure is missing from the node's "+
		"rules until one succeeds.", comp, nodeName(g.node), g.count, span, g.message)
	if g.emptySrc != nil {
		return emptySourceFinding(f, g, comp, ev)
	}
	if g.chain == "" {
		f.Certainty = analyzer.Unknown
		f.Title = fmt.Sprintf("%s on %s cannot write its rules: iptables-restore fails", comp, nodeName(g.node))
		f.Alternatives = []string{"a rule kube-proxy writes that this iptables or kernel rejects (a module missing, " +
			"the line the message names)", "another program holding the xtables lock, or changing the same chains, " +
			"while kube-proxy restores"}
		f.Decide = "# on " + nodeName(g.node) + ": the rules kube-proxy writes, and what the kernel and iptables say of them\n" +
			"iptables-save -t nat | head -50\ndmesg | tail -50"
		f.Fix = "Read iptables-restore's message and the line it names, correct what it rejects, then restart " + comp + "."
		f.Evidence = ev
		return f
	}
	f.Facts["missing_chain"] = g.chain
	f.Title = fmt.Sprintf("%s on %s cannot write its rules: chain %s is missing from the tables its iptables sees",
		comp, nodeName(g.node), g.chain)
	backendSkew := "kube-proxy's iptables and the host's use different backends (one legacy, one nf_tables): " +
		"the chain is in the other one"
	notMade := fmt.Sprintf("%s was not made before kube-proxy's sync: kubelet makes it (--make-iptables-util-chains), "+
		"and had not yet (it started after kube-proxy, as after a reboot) or does not", g.chain)
	f.Fix = "Run " + comp + " with an image whose iptables picks the host's backend (kube-proxy from Kubernetes 1.17 on), " +
		"and make sure kubelet makes its chains before kube-proxy syncs; then restart " + comp + " so it writes its rules whole."
	switch {
	case g.backend == model.BackendLegacy && nft != nil:
		f.Certainty, f.Severity = analyzer.Proven, analyzer.Error
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the node's rules are in nf_tables, %s among them, and no legacy "+
			"tables beside them: %s's iptables %s, legacy, does not look there", nft.Pos, g.chain, comp, g.version))
		ev = append(ev, analyzer.Evidence{Pos: nft.Pos, Note: "host rules: nft"})
		f.Cause = fmt.Sprintf("%s's image carries iptables %s (legacy) while the host's iptables writes its rules to "+
			"nf_tables: its iptables-restore does not see %s, which the host's rules hold, and fails every sync.",
			comp, g.version, g.chain)
	case g.backend == model.BackendLegacy:
		f.Certainty = analyzer.Unknown
		f.Alternatives = []string{backendSkew + fmt.Sprintf(" (%s's iptables %s is legacy: the host's may be nf_tables)",
			comp, g.version), notMade}
	default:
		f.Certainty = analyzer.Unknown
		f.Alternatives = []string{notMade, backendSkew}
	}
	if f.Certainty != analyzer.Proven {
		f.Decide = fmt.Sprintf("# on %s: the backend that holds %s (a count above 0), beside the version %s's iptables names\n"+
			"iptables-legacy-save -t nat | grep -c %s\niptables-nft-save -t nat | grep -c %s",
			nodeName(g.node), g.chain, comp, g.chain, g.chain)
	}
	if f.Certainty != analyzer.Proven && kubeProxyOwnChain(g.chain) {
		// Not a chain kubelet makes: kube-proxy's own, which its partial
		// syncs expect to find where it left them.
		f.Alternatives = []string{fmt.Sprintf("another agent removed %s's own chains between its syncs (Calico's "+
			"eBPF data plane cleaning up kube-proxy's rules, bpfKubeProxyIptablesCleanupEnabled; a firewall reload; a "+
			"flush of the nat table), and its partial syncs (kube-proxy 1.26 and later) jump to chains they do not "+
			"write again", comp), backendSkew}
		f.Fix = fmt.Sprintf("Stop what removes %s's chains (with Calico's eBPF data plane, remove kube-proxy, or set "+
			"bpfKubeProxyIptablesCleanupEnabled to false while it runs), then restart %s, whose first sync writes "+
			"every chain.", comp, comp)
		f.Decide = fmt.Sprintf("# on %s: kube-proxy's Service chains left (none while it runs: removed under it), and "+
			"whether Calico runs its eBPF data plane\niptables-save -t nat | grep -c '^:KUBE-SVC-'; kubectl get "+
			"felixconfiguration default -o jsonpath='{.spec.bpfEnabled}'", nodeName(g.node))
	}
	f.Evidence = dedupEvidence(ev)
	return f
}

// emptySourceFinding words the failures of g whose cause kube-proxy's own
// logged rule shows: a -s with no value, the source kube-proxy fills in
// with its cluster CIDR.
func emptySourceFinding(f analyzer.Finding, g *restoreFailures, comp string, ev []analyzer.Evidence) analyzer.Finding {
	f.Certainty = analyzer.Likely
	f.Facts["empty_source_chain"] = g.emptyChain
	f.Title = fmt.Sprintf("%s on %s cannot write its rules: its rule in %s has an empty -s (no cluster CIDR)", comp,
		nodeName(g.node), g.emptyChain)
	f.Supports = append(f.Supports, fmt.Sprintf("%s: %s wrote %q: -s has no value, so iptables-restore takes the "+
		"jump's target for the source and rejects it (%s)", g.emptySrc.Pos, comp,
		strings.TrimSpace(firstLine(g.emptySrc.Message)), g.message))
	f.Cause = fmt.Sprintf("%s runs without a cluster CIDR (--cluster-cidr, clusterCIDR in its configuration, empty) and "+
		"writes the rule that sends Pods' traffic to a load balancer's address back to the Service (%s) with an empty "+
		"source: kube-proxy before 1.5 did not leave that rule out (kubernetes#36652), and the whole restore fails at "+
		"every sync.", comp, g.emptyChain)
	f.Alternatives = []string{"a cluster CIDR set to a value that expands to nothing (an unset variable in a " +
		"manifest or a systemd unit)"}
	f.Fix = fmt.Sprintf("Start %s with the cluster's Pod network as --cluster-cidr (clusterCIDR in its "+
		"KubeProxyConfiguration), or upgrade it to 1.5 or later, which leaves the rule out without one; then "+
		"restart it so it writes its rules whole.", comp)
	f.Decide = fmt.Sprintf("# on %s: the cluster CIDR kube-proxy was started with (none, or an empty value, decides; "+
		"with --config, its clusterCIDR)\n"+
		"ps -o args= -C kube-proxy | grep -o -e '--cluster-cidr[= ][^ ]*' -e '--config[= ][^ ]*'", nodeName(g.node))
	f.Evidence = dedupEvidence(append(ev, analyzer.Evidence{Pos: g.emptySrc.Pos, Note: "-s without a value"}))
	return f
}

// kubeProxyOwnChain reports whether chain is one kube-proxy makes and
// fills itself (a Service's, an endpoint's, a load balancer's), not one
// kubelet makes for it.
func kubeProxyOwnChain(chain string) bool {
	for _, p := range []string{"KUBE-SVC-", "KUBE-SEP-", "KUBE-XLB-", "KUBE-FW-", "KUBE-EXT-", "KUBE-SVL-"} {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// holdsChain reports whether rs has a chain called name in any table.
func holdsChain(rs *model.Ruleset, name string) bool {
	return name != "" && slices.ContainsFunc(rs.Tables, func(t *model.Table) bool { return t.Chain(name) != nil })
}
