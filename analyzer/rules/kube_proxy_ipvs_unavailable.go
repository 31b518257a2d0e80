package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// KubeProxyIPVSUnavailable finds kube-proxy asked for IPVS mode and unable
// to use it: it fell back to iptables, or, from Kubernetes 1.26, exited.
var KubeProxyIPVSUnavailable = &analyzer.Rule{
	Name:        "kube-proxy-ipvs-unavailable",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindSysctl}, // lsmod
	SubjectKeys: []string{"node", "reason"},
	Run:         runKubeProxyIPVSUnavailable,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(275)},
	Proof: "kube-proxy's own line that it cannot use the IPVS proxier and why (\"the following required kernel " +
		"modules are not loaded: [...]\", \"error getting ipset version\", \"Could not create dummy VS\"), and whether " +
		"it went on in iptables mode or exited",
	Unproven: "why the node lacks what IPVS needs (a kernel without the modules, modules not loaded at boot, a " +
		"kube-proxy image without ipset): `lsmod` and `modprobe` on the node, and `ipset version` in kube-proxy's " +
		"container, decide",
	Doc: `kube-proxy cannot use the IPVS mode it was given

In IPVS mode kube-proxy programs Services as IPVS virtual servers and
keeps their addresses in ipsets. At start it checks that it can: the
kernel modules ip_vs, its schedulers (ip_vs_rr, ip_vs_wrr, ip_vs_sh) and
nf_conntrack loaded, and the ipset tool present (from 1.27, that it can
create a dummy virtual server with its scheduler). When a check fails,
kube-proxy up to 1.25 logs why ("Can't use the IPVS proxier: IPVS
proxier will not be used because the following required kernel modules
are not loaded: [ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh]") and falls back to
iptables mode: Services work, but not as configured (IPVS schedulers,
strictARP and the ipvs settings are ignored; nodes of both modes mix).
From 1.26 it exits ("Error running ProxyServer" err="can't use the IPVS
proxier: ...") and crash-loops: no Service is programmed on the node.

Known causes: the modules are not loaded and kube-proxy cannot load
them (its container without /lib/modules, a kernel built without IPVS);
on kernels 4.19 and later nf_conntrack_ipv4 is merged into nf_conntrack,
and kube-proxy before 1.13 asks for the old name; the kube-proxy image
lacks the ipset binary (hyperkube 1.9), or the kernel lacks ip_set.

Evidence: kube-proxy's lines of the check ("can't determine whether to
use ipvs proxy" and "Can't use ipvs proxier, trying iptables proxier" up
to about 1.14, the second alone not counted as kube-proxy 1.9 logs it for
any mode but ipvs; then "Can't use the IPVS proxier", in err= from 1.21;
from 1.26 "can't use the IPVS proxier" in "Error running ProxyServer",
and the scheduler of "Could not create dummy VS"), its "Failed to load
kernel module X with modprobe" warnings, "Using iptables Proxier" after
them, a version line ("Version: v1.14.0"), and an lsmod of the node;
per kube-proxy: its node, or of no node its file. nf_conntrack_ipv4
alone is the 4.19 rename only for a kube-proxy before 1.13, and a
kernel before 4.19 without it from 1.13 on.

Severity: a warning, whether kube-proxy went on in iptables mode or
exited (the summary says which); of likely cause when the line names
what is missing, unknown when it names nothing known, an lsmod of the
node lists every module it names as loaded, or a later start of the same
kube-proxy used IPVS.

Fix: load the modules at boot (/etc/modules-load.d: ip_vs, ip_vs_rr,
ip_vs_wrr, ip_vs_sh, nf_conntrack) or give kube-proxy's container
/lib/modules; on kernels 4.19 and later, a kube-proxy of 1.13 or later;
an image with ipset (or install it); else set mode iptables (or nftables)
on purpose.`,
}

var (
	// ipvsCheckRe finds kube-proxy's line that it cannot use IPVS, in each
	// release's wording, and the reason after it.
	ipvsCheckRe = lazyre.New(`(?i)(?:can't determine whether to use ipvs proxy, error: |can't use (?:the )?ipvs proxier(?:: |, trying iptables proxier)?)(.*)`)
	// ipvsModulesRe is the reason naming the modules not loaded.
	ipvsModulesRe = lazyre.New(`required kernel modules are not loaded: \[([^\]]*)\]`)
	// ipvsExitRe is kube-proxy 1.26 and later exiting on the check.
	ipvsExitRe = lazyre.New(`(?i)error running proxyserver|command failed`)
	// modprobeFailRe is kube-proxy's warning that it could not load a module.
	modprobeFailRe = lazyre.New(`Failed to load kernel module (\S+) with modprobe`)
)

// ipvsUnavailable is what one kube-proxy's lines say.
type ipvsUnavailable struct {
	node        string
	reason      string // the kind of reason: modules, ipset-missing, ipset, dummy-vs, unknown
	text        string // the reason as the first line gives it
	modules     []string
	modprobe    []string // modules kube-proxy failed to load
	exits, fell bool
	first, last model.Pos
	firstText   string
	count       int
	file        string          // the file of its first line
	structured  bool            // the reason came in err= (kube-proxy 1.21 on)
	mended      *model.LogEvent // a later "Using ipvs Proxier" of the same kube-proxy
	version     int             // kube-proxy's minor version, 0 when not shown
	scheduler   string          // the scheduler its dummy virtual server was refused with
}

func runKubeProxyIPVSUnavailable(p *analyzer.Pass) error {
	byKey := map[string]*ipvsUnavailable{}
	var groups []*ipvsUnavailable
	// key names one kube-proxy: its node, and, of no node, its file (two
	// Pods' logs of no node are two kube-proxies).
	key := func(le *model.LogEvent) string {
		if le.Node != "" {
			return le.Node
		}
		return "\x00" + le.Pos.File
	}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		matched, reason := ipvsCheck(le)
		g := byKey[key(le)]
		if !matched {
			if g == nil || le.Pos.File != g.file && !facts.IsKubeProxyLog(le) {
				continue
			}
			msg := strings.ToLower(le.Message)
			switch {
			case strings.Contains(msg, "using iptables proxier"):
				g.fell = true
			case strings.Contains(msg, "using ipvs proxier"):
				g.mended = le // a later start in IPVS mode
			case modprobeFailRe.MatchString(le.Message):
				if m := modprobeFailRe.FindStringSubmatch(le.Message)[1]; !slices.Contains(g.modprobe, m) {
					g.modprobe = append(g.modprobe, m)
				}
			}
			continue
		}
		if g == nil {
			if reason == "" && !ipvsExitRe.MatchString(le.Message) {
				// "Can't use ipvs proxier, trying iptables proxier" alone:
				// kube-proxy 1.9 logs it for any mode but ipvs.
				continue
			}
			g = &ipvsUnavailable{node: le.Node, file: le.Pos.File, first: le.Pos,
				firstText: firstLine(strings.TrimSpace(le.Message))}
			byKey[key(le)] = g
			groups = append(groups, g)
			g.modprobe = modprobeBefore(p.Snap.Logs[:i], g)
		}
		g.mended = nil
		if reason != "" && g.text == "" {
			g.text = reason
			g.reason, g.modules = ipvsReason(reason)
			g.structured = le.Fields["err"] != ""
		}
		g.exits = g.exits || ipvsExitRe.MatchString(le.Message) || le.Level == "fatal"
		g.fell = g.fell || strings.Contains(strings.ToLower(le.Message), "trying iptables proxier")
		if strings.Contains(strings.ToLower(le.Message), "command failed") && g.count > 0 {
			continue // the same failure, as the command's wrapper logs it again
		}
		g.last = le.Pos
		g.count++
	}
	for _, g := range groups {
		if g.reason == "" {
			g.reason = "unknown"
		}
		readOwnLines(p.Snap, g)
		p.Report(ipvsUnavailableFinding(g, loadedModules(p.Snap, g, len(groups))))
	}
	return nil
}

// holds reports whether le is a line of g's kube-proxy: of its node, or,
// of no node, of its file.
func (g *ipvsUnavailable) holds(le *model.LogEvent) bool {
	return le.Node == g.node && (g.node != "" || le.Pos.File == g.file)
}

// modprobeBefore returns the modules kube-proxy's lines before its check
// (logs) failed to load, of g's kube-proxy.
func modprobeBefore(logs []model.LogEvent, g *ipvsUnavailable) []string {
	var out []string
	for i := range logs {
		o := &logs[i]
		if !g.holds(o) || o.Pos.File != g.file && !facts.IsKubeProxyLog(o) {
			continue
		}
		if m := modprobeFailRe.FindStringSubmatch(o.Message); m != nil && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// kubeProxyVersionRe is kube-proxy's version line at start ("Version:
// v1.14.0").
var kubeProxyVersionRe = lazyre.New(`\bVersion: v(\d+)\.(\d+)\.`)

// readOwnLines sets g's version, the minor version kube-proxy's own lines
// give (0 when none does), and its scheduler, the one its "Could not
// create dummy VS" line names (1.27 on; "" when none does).
func readOwnLines(s *model.Snapshot, g *ipvsUnavailable) {
	versionSeen, dummySeen := false, false
	for i := range s.Logs {
		le := &s.Logs[i]
		if !g.holds(le) {
			continue
		}
		if m := kubeProxyVersionRe.FindStringSubmatch(le.Message); m != nil && m[1] == "1" && !versionSeen {
			g.version, _ = strconv.Atoi(m[2])
			versionSeen = true
		}
		if strings.Contains(le.Message, "dummy VS") && !dummySeen {
			g.scheduler = le.Fields["scheduler"]
			dummySeen = true
		}
	}
}

// ipvsSchedulers are the schedulers of Linux's IPVS.
var ipvsSchedulers = []string{"rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "mh", "fo", "ovf", "twos"}

// ipvsCheck reports whether le is kube-proxy's line that it cannot use
// IPVS, and the reason it gives: after the words in its message, or in its
// err= field (structured klog, 1.21 on).
func ipvsCheck(le *model.LogEvent) (bool, string) {
	matched := false
	for _, t := range append([]string{le.Message}, le.Fields["err"], le.Fields["error"]) {
		if m := ipvsCheckRe.FindStringSubmatch(t); m != nil {
			matched = true
			if r := strings.Trim(m[1], `" `); r != "" {
				return true, firstLine(r)
			}
		}
	}
	if matched && le.Fields["err"] != "" {
		return true, firstLine(le.Fields["err"])
	}
	return matched, ""
}

// ipvsReason sorts kube-proxy's reason: the modules it names, ipset
// missing or failing, the dummy virtual server it could not create.
func ipvsReason(text string) (string, []string) {
	switch {
	case ipvsModulesRe.MatchString(text):
		return "modules", strings.Fields(ipvsModulesRe.FindStringSubmatch(text)[1])
	case strings.Contains(text, "ipset") && strings.Contains(text, "executable file not found"):
		return "ipset-missing", nil
	case strings.Contains(text, "ipset"):
		return "ipset", nil
	case strings.Contains(text, "no such file or directory"):
		return "dummy-vs", nil
	}
	return "unknown", nil
}

// loadedModules returns the whole lsmod listing of g's node; of no node,
// the one listing of no node when g is the bundle's only kube-proxy
// failing (groups); nil otherwise.
func loadedModules(s *model.Snapshot, g *ipvsUnavailable, groups int) *model.KernelModules {
	var found *model.KernelModules
	for i := range s.KernelModules {
		km := &s.KernelModules[i]
		if km.Node != g.node || km.Pattern != "" {
			continue
		}
		if g.node != "" {
			return km
		}
		if found != nil {
			return nil // several nodes' listings, none named
		}
		found = km
	}
	if g.node == "" && groups > 1 {
		return nil
	}
	return found
}

// ipvsUnavailableFinding words what one kube-proxy's lines say, beside
// an lsmod of its node.
func ipvsUnavailableFinding(g *ipvsUnavailable, lsmod *model.KernelModules) analyzer.Finding {
	on := onNode(g.node)
	then := "went on in iptables mode"
	if g.exits {
		then = "exited: it programs no Service on the node, and crash-loops"
	} else if !g.fell {
		then = "fell back to iptables mode (kube-proxy before 1.26) or exited (1.26 on)"
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "reason", g.reason),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"reason": g.reason, "exits": g.exits, "lines": g.count},
		Title:     fmt.Sprintf("kube-proxy%s cannot use IPVS mode: %s", on, g.text),
		Summary: fmt.Sprintf("kube-proxy%s was given IPVS mode and cannot use it (%s), so it %s.", on,
			times(g.count), then),
		Supports: []string{fmt.Sprintf("%s: %s", g.first, g.firstText)},
		Evidence: []analyzer.Evidence{{Pos: g.first, Note: "kube-proxy cannot use IPVS"}},
		Decide: "# on the node, and in kube-proxy's container\nlsmod | grep -e ip_vs -e nf_conntrack; uname -r\n" +
			"kubectl -n kube-system exec KUBE_PROXY_POD -- ipset version",
	}
	if g.last != g.first {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.last, Note: "the last"})
	}
	if len(g.modules) > 0 {
		f.Facts["modules"] = g.modules
	}
	switch g.reason {
	case "modules":
		mods := strings.Join(g.modules, " ")
		f.Title = fmt.Sprintf("kube-proxy%s cannot use IPVS mode: kernel %s %s not loaded", on,
			plural(len(g.modules), "module", "modules"), mods)
		them := plural(len(g.modules), "it", "them")
		f.Cause = fmt.Sprintf("The node has not loaded %s, and kube-proxy could not load %s (its container "+
			"without /lib/modules, or a kernel without %s).", mods, them, them)
		f.Alternatives = []string{"the kernel was built without IPVS (a minimal or container-optimized image)"}
		f.Fix = "Load the modules at boot (" + mods + " in /etc/modules-load.d/ipvs.conf, then `modprobe` them), or " +
			"mount /lib/modules into kube-proxy's container; or set kube-proxy's mode to iptables on purpose."
		if len(g.modules) == 1 && g.modules[0] == "nf_conntrack_ipv4" {
			nfConntrackIPv4(&f, g)
		}
		if lsmod != nil {
			loaded := 0
			for _, m := range g.modules {
				if slices.Contains(lsmod.Loaded, m) {
					loaded++
				}
			}
			if loaded == len(g.modules) {
				f.Certainty = analyzer.Unknown
				f.Cause, f.Alternatives, f.Fix = "", nil, ""
				f.Summary += fmt.Sprintf(" The node's lsmod lists %s as loaded: the listing is from another time "+
					"than the lines, or kube-proxy checked another kernel's modules.", mods)
				f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: lsmod.Pos,
					Note: "lsmod lists " + plural(len(g.modules), "it", "them") + " loaded"})
			}
		}
	case "ipset-missing":
		f.Title = fmt.Sprintf("kube-proxy%s cannot use IPVS mode: no ipset binary", on)
		f.Cause = "kube-proxy's image (or host, when it runs as a binary) has no ipset tool, which IPVS mode needs."
		f.Alternatives = []string{"kube-proxy's PATH does not hold the directory ipset is in"}
		f.Fix = "Run a kube-proxy image that carries ipset (hyperkube 1.9's did not; 1.10.2 and later do), or install " +
			"ipset on the host; or set the mode to iptables on purpose."
	case "ipset":
		f.Cause = "kube-proxy's ipset tool fails (its version, or a kernel without the ip_set module)."
		f.Fix = "Load ip_set and xt_set (on RHEL-family images, from kernel-modules-extra), or fix the ipset tool."
	case "dummy-vs":
		f.Title = fmt.Sprintf("kube-proxy%s cannot use IPVS mode: it cannot make a virtual server (%s)", on, g.text)
		f.Cause = "kube-proxy could not create a virtual server with its scheduler: the kernel lacks ip_vs or " +
			"the scheduler's module (ip_vs_rr for rr)."
		f.Alternatives = []string{"kube-proxy's ipvs.scheduler names no IPVS scheduler"}
		f.Fix = "Load ip_vs and the scheduler's module at boot, or set the mode to iptables or nftables."
		if g.scheduler != "" && !slices.Contains(ipvsSchedulers, g.scheduler) {
			f.Title = fmt.Sprintf("kube-proxy%s cannot use IPVS mode: scheduler %q is no IPVS scheduler", on, g.scheduler)
			f.Cause = fmt.Sprintf("kube-proxy's configuration sets ipvs.scheduler to %q, which is no IPVS scheduler "+
				"(rr, wrr, lc, wlc, sh ...), so the kernel refuses its virtual server.", g.scheduler)
			f.Alternatives = nil
			f.Fix = "Set ipvs.scheduler in kube-proxy's configuration (the kube-proxy ConfigMap) to an IPVS " +
				"scheduler, rr by default, and restart kube-proxy."
		}
	default:
		f.Certainty = analyzer.Unknown
	}
	if len(g.modprobe) > 0 {
		f.Facts["modprobe_failed"] = g.modprobe
		f.Summary += fmt.Sprintf(" It could not load %s with modprobe.", strings.Join(g.modprobe, ", "))
	}
	if g.mended != nil {
		f.Certainty = analyzer.Unknown
		f.Cause, f.Alternatives, f.Fix = "", nil, ""
		f.Summary += " A later start of the same kube-proxy used IPVS: what it lacked was mended since."
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.mended.Pos, Note: "a later start in IPVS mode"})
	}
	return f
}

// nfConntrackIPv4 words the cause of nf_conntrack_ipv4 alone missing:
// kernels 4.19 and later merged it into nf_conntrack, which kube-proxy
// before 1.13 did not know; from 1.13 it asks for it only on older
// kernels, where it is simply not loaded.
func nfConntrackIPv4(f *analyzer.Finding, g *ipvsUnavailable) {
	rename := "On kernels 4.19 and later nf_conntrack_ipv4 is part of nf_conntrack, and kube-proxy before 1.13 " +
		"still asks for the old name."
	older := "The kernel is older than 4.19 and nf_conntrack_ipv4 is not loaded (kube-proxy 1.13 and later ask for " +
		"it only there)."
	renameFix := "Run kube-proxy 1.13 or later (kubernetes#70325), which takes nf_conntrack on kernels 4.19 and later."
	olderFix := "Load nf_conntrack_ipv4 at boot (/etc/modules-load.d), or mount /lib/modules into kube-proxy's container."
	switch {
	case g.structured || g.version >= 13:
		f.Cause, f.Fix = older, olderFix
		f.Alternatives = nil
	case g.version > 0:
		f.Cause, f.Fix = rename, renameFix
		f.Alternatives = []string{"the kernel is older than 4.19 and nf_conntrack_ipv4 is not loaded"}
	default:
		f.Cause = "nf_conntrack_ipv4 is not loaded and kube-proxy cannot load it: on kernels 4.19 and later it is " +
			"part of nf_conntrack, which kube-proxy before 1.13 does not know; on older kernels it is not loaded."
		f.Alternatives = nil
		f.Fix = renameFix + " On an older kernel: " + strings.ToLower(olderFix[:1]) + olderFix[1:]
		f.Decide = "# on the node: the kernel, then kube-proxy's version\nuname -r\n" +
			"kubectl -n kube-system exec KUBE_PROXY_POD -- kube-proxy --version"
	}
}
