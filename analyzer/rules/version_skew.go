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

// VersionSkew finds kubelets whose versions differ across nodes or from the
// apiserver beyond what Kubernetes supports.
var VersionSkew = &analyzer.Rule{
	Name:        "version-skew",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindKube, model.KindLogs},
	Uses:        []model.Kind{model.KindComponents},
	SubjectKeys: []string{"component"},
	Run:         runVersionSkew,
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(100), ControlPlaneUnhealthy.At(30)},
	Proof: "the Nodes' kubelet versions beside the apiserver's version (its static pod's image tag) show the skew " +
		"policy broken",
	Unproven: "nodes that differ within the policy, or with the apiserver's version not in the bundle, are shown by the " +
		"Nodes alone: an upgrade left half done is likely but not the only reason (a node added or rolled back on " +
		"purpose); a warning, with the nodes' creation times to decide",
	Doc: `kubelet versions differ across nodes or from the apiserver

Nodes report their kubelet version (kubectl get nodes VERSION, or
status.nodeInfo.kubeletVersion). Different minor versions across nodes mean an
upgrade stopped half way: nodes then differ in behaviour (probe handling,
kube-proxy rules, feature gates), and incidents hit some nodes only. A kubelet
newer than the apiserver, or older by more minor versions than the version
skew policy allows (2 before Kubernetes 1.28, 3 since), is unsupported.

Evidence: the Nodes; the apiserver's version from its static pod's image tag
when present, else the version it reported (kubectl version, troubleshoot's
cluster-info/cluster_version.json). Without the Nodes, kubeadm's preflight
refusal ("[ERROR KubeletVersion]: the kubelet version is higher than the
control plane version") names both versions: likely.

Severity: error when the skew policy is broken; warning for nodes that differ
within the policy.

Fix: finish the upgrade: drain and upgrade the odd nodes' kubelet to the
version of the others (kubeadm upgrade node; apt/yum install the kubelet
package; restart the kubelet). When the odd nodes are the newer ones, the
upgrade is under way: upgrade every apiserver first, and keep the upgraded
kubelets on an apiserver of their version until then.`,
}

type kubeVersion struct {
	raw          string
	major, minor int
}

func parseKubeVersion(s string) (kubeVersion, bool) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return kubeVersion{}, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return kubeVersion{}, false
	}
	return kubeVersion{raw: strings.TrimSpace(s), major: major, minor: minor}, true
}

// kubeletSkew is the judgement of the nodes' kubelet versions
// (judgeVersionSkew): the nodes off the cluster's minor version, and those
// outside the version skew policy. skewWords words it.
type kubeletSkew struct {
	majority string   // the cluster's minor version: that of most nodes
	odd      []string // the nodes of another minor version, with theirs
	versions []string // each version, with its nodes
	broken   []string // the nodes outside the skew policy, and why
	// ahead says the odd nodes all run a newer minor version than the
	// others: an upgrade under way, whose upgraded kubelets must not talk
	// to apiservers still on the old version.
	ahead bool
}

func runVersionSkew(p *analyzer.Pass) error {
	var sk kubeletSkew
	if f, ok := judgeVersionSkew(p.Snap, &sk); ok {
		f.Title, f.Summary, f.Cause, f.Fix = skewWords(&sk)
		p.Report(f)
		return nil
	}
	if f, ok := judgeKubeadmSkew(p.Snap); ok {
		p.Report(f)
	}
	return nil
}

// kubeadmSkewRe reads kubeadm's preflight check of the kubelet's version:
// "[ERROR KubeletVersion]: the kubelet version is higher than the control
// plane version. ... Kubelet version: "1.13.0" Control plane version:
// "1.12.2"".
var kubeadmSkewRe = lazyre.New(`(?i)kubelet version is (higher|lower) than [^.]*\..*Kubelet version: "([^"]+)" Control plane version: "([^"]+)"`)

// judgeKubeadmSkew reads kubeadm's own refusal of the kubelet's version,
// without the Nodes: likely, since kubeadm's check is one source, with the
// versions to compare by hand.
func judgeKubeadmSkew(s *model.Snapshot) (analyzer.Finding, bool) {
	for i := range s.Logs {
		le := &s.Logs[i]
		m := kubeadmSkewRe.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		kubelet, cp := m[2], m[3]
		return analyzer.Finding{
			Subject:   subject("component", "kubelet"),
			Severity:  analyzer.Warning,
			Certainty: analyzer.Likely,
			Supports: []string{fmt.Sprintf("%s: kubeadm's preflight refuses kubelet %s beside control plane %s (the "+
				"kubelet version is %s than the control plane's)", le.Pos, kubelet, cp, strings.ToLower(m[1]))},
			Evidence: []analyzer.Evidence{{Pos: le.Pos, Note: fmt.Sprintf("kubeadm: kubelet %s, control plane %s", kubelet, cp)}},
			Decide:   "kubelet --version; kubeadm version -o short; kubeadm config images list",
			Facts:    map[string]any{"kubelet": kubelet, "control_plane": cp},
			Title:    fmt.Sprintf("kubelet %s is %s than the control plane %s: kubeadm refuses the skew", kubelet, strings.ToLower(m[1]), cp),
			Summary: fmt.Sprintf("kubeadm's preflight check (KubeletVersion) finds the node's kubelet at %s and the "+
				"control plane it is asked to set up at %s: an unsupported version skew, so kubeadm stops.", kubelet, cp),
			Cause: fmt.Sprintf("The kubelet package installed (%s) and the Kubernetes version kubeadm is given (%s, "+
				"--kubernetes-version or the configuration's kubernetesVersion) do not match.", kubelet, cp),
			Fix: "Install the kubelet of the control plane's version (apt/yum pin), or give kubeadm the kubelet's " +
				"version (--kubernetes-version), so the kubelet is never newer than the control plane.",
		}, true
	}
	return analyzer.Finding{}, false
}

// judgeVersionSkew judges the kubelet versions the Nodes report against
// each other and against the apiserver's; ok is false when they agree. It
// fills in sk and returns the finding without its words.
func judgeVersionSkew(s *model.Snapshot, sk *kubeletSkew) (f analyzer.Finding, ok bool) {
	type nodeV struct {
		name string
		v    kubeVersion
		pos  model.Pos
	}
	var nodes []nodeV
	count := map[string]int{}
	for _, n := range s.Kube.Nodes {
		v, ok := parseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if !ok {
			continue
		}
		nodes = append(nodes, nodeV{name: n.Name, v: v, pos: n.Source.Pos})
		count[fmt.Sprintf("%d.%d", v.major, v.minor)]++
	}
	if len(nodes) == 0 {
		return f, false
	}
	// The apiserver's version, from the image tag of its static pod.
	var api *kubeVersion
	var apiPos model.Pos
	for _, pod := range s.Kube.Pods {
		for _, c := range pod.Spec.Containers {
			if c.Name != "kube-apiserver" && !strings.Contains(c.Image, "kube-apiserver") {
				continue
			}
			if _, tag, ok := strings.Cut(c.Image, ":"); ok {
				if v, ok := parseKubeVersion(tag); ok {
					api, apiPos = &v, pod.Source.Pos
				}
			}
		}
	}
	// Without the static pod, the version the apiserver reported
	// (kubectl version, troubleshoot's cluster_version.json).
	fromPod := api != nil
	for _, sv := range s.ServerVersions {
		if api != nil {
			break
		}
		if v, ok := parseKubeVersion(sv.GitVersion); ok {
			api, apiPos = &v, sv.Pos
		}
	}
	// The most common minor version is the cluster's.
	majority, best := "", 0
	for k, n := range count {
		if n > best || n == best && k > majority {
			majority, best = k, n
		}
	}
	var odd, brokenNodes []nodeV
	var broken []string
	cluster, _ := parseKubeVersion(majority)
	ahead := false
	for _, n := range nodes {
		if fmt.Sprintf("%d.%d", n.v.major, n.v.minor) != majority {
			newer := n.v.major > cluster.major || n.v.major == cluster.major && n.v.minor > cluster.minor
			ahead = newer && (len(odd) == 0 || ahead)
			odd = append(odd, n)
		}
		if api != nil {
			allowed := 2
			if api.minor >= 28 {
				allowed = 3
			}
			switch {
			case n.v.major == api.major && n.v.minor > api.minor:
				broken = append(broken, fmt.Sprintf("%s (%s) is newer than the apiserver (%s)", n.name, n.v.raw, api.raw))
				brokenNodes = append(brokenNodes, n)
			case n.v.major == api.major && api.minor-n.v.minor > allowed:
				broken = append(broken, fmt.Sprintf("%s (%s) is more than %d minor versions older than the apiserver (%s)", n.name, n.v.raw, allowed, api.raw))
				brokenNodes = append(brokenNodes, n)
			}
		}
	}
	if len(odd) == 0 && len(broken) == 0 {
		return f, false
	}
	var ev []analyzer.Evidence
	var oddDesc, supports, contradicts, alternatives []string
	for _, n := range odd {
		ev = append(ev, analyzer.Evidence{Pos: n.pos, Note: fmt.Sprintf("node %s runs kubelet %s", n.name, n.v.raw)})
		oddDesc = append(oddDesc, fmt.Sprintf("%s (%s)", n.name, n.v.raw))
		supports = append(supports, fmt.Sprintf("%s: node %s runs kubelet %s; %d other %s v%s", n.pos, n.name, n.v.raw,
			best, plural(best, "node runs", "nodes run"), majority))
	}
	for _, n := range brokenNodes { // outside the policy, though of the cluster's version
		if !slices.Contains(odd, n) {
			ev = append(ev, analyzer.Evidence{Pos: n.pos, Note: fmt.Sprintf("node %s runs kubelet %s", n.name, n.v.raw)})
		}
	}
	versions := map[string][]string{}
	for _, n := range nodes {
		versions[n.v.raw] = append(versions[n.v.raw], n.name)
	}
	var vlist []string
	for v, ns := range versions {
		vlist = append(vlist, fmt.Sprintf("%s: %s", v, strings.Join(ns, ", ")))
	}
	slices.Sort(vlist)
	facts := map[string]any{
		"kubelet_versions": vlist,
		"cluster_minor":    "v" + majority,
	}
	if len(odd) > 0 {
		facts["odd_nodes"] = oddDesc
	}
	sev := analyzer.Warning
	if api != nil {
		facts["apiserver"] = api.raw
		apiEv := analyzer.Evidence{Pos: apiPos, Note: "apiserver " + api.raw}
		if fromPod {
			// The image of the apiserver's static pod: its component's
			// definition, not what the API reports.
			apiEv.Kind = model.KindComponents
		}
		ev = append(ev, apiEv)
	} else {
		contradicts = append(contradicts, "the apiserver's version is not in the bundle: whether the skew policy holds is not shown")
	}
	certainty, decide := analyzer.Likely, ""
	if len(broken) > 0 {
		sev, certainty = analyzer.Error, analyzer.Proven
		facts["policy_broken"] = broken
		for _, b := range broken {
			by := "by the version it reported at"
			if fromPod {
				by = "by the image of"
			}
			supports = append(supports, fmt.Sprintf("%s, %s %s", b, by, apiPos))
		}
	} else {
		alternatives = []string{"a node was added, or rolled back, with another version on purpose (a canary of an upgrade)"}
		decide = "kubectl get nodes -o custom-columns=NAME:.metadata.name,KUBELET:.status.nodeInfo.kubeletVersion," +
			"CREATED:.metadata.creationTimestamp"
	}
	if ahead && len(broken) == 0 {
		// Which apiservers the upgraded kubelets reach decides.
		decide = "kubectl -n kube-system get pods -l component=kube-apiserver " +
			"-o 'custom-columns=NODE:.spec.nodeName,IMAGE:.spec.containers[0].image'"
	}
	sk.majority, sk.odd, sk.versions, sk.broken, sk.ahead = majority, oddDesc, vlist, broken, ahead
	return analyzer.Finding{
		Subject:      subject("component", "kubelet"),
		Severity:     sev,
		Certainty:    certainty,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Facts:        facts,
		Evidence:     ev,
	}, true
}

// skewWords words the finding of sk, as judgeVersionSkew judged it.
func skewWords(sk *kubeletSkew) (title, summary, cause, fix string) {
	title = fmt.Sprintf("kubelet versions differ: %s", strings.Join(sk.odd, ", "))
	if len(sk.odd) == 0 {
		title = "kubelets outside the version skew policy: " + strings.Join(sk.broken, "; ")
	} else {
		title += fmt.Sprintf(" against v%s on the other nodes", sk.majority)
	}
	summary = fmt.Sprintf("Kubelet versions across the nodes: %s.", strings.Join(sk.versions, "; "))
	if len(sk.broken) > 0 {
		summary += " Outside the supported skew: " + strings.Join(sk.broken, "; ") + "."
	}
	cause = "An upgrade did not reach every node, or a node was added with another version."
	fix = "Upgrade the odd nodes' kubelet to the cluster's version: drain the node, upgrade the kubelet (and kubeadm " +
		"upgrade node on kubeadm clusters), restart it, uncordon."
	if sk.ahead {
		// The odd nodes are the upgraded ones: upgrading the others is
		// the way forward, but a kubelet newer than the apiserver it
		// reaches (through a load balancer, say) is outside the policy.
		cause = "An upgrade is under way: the odd nodes run a newer kubelet than the others, and a kubelet must " +
			"never be newer than the apiserver it talks to."
		fix = "Upgrade every apiserver first (the control plane before the kubelets), and until then keep the " +
			"upgraded nodes' kubelets on an apiserver of their own version; then upgrade the other nodes."
	}
	return title, summary, cause, fix
}
