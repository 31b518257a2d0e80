package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// RBACListForbidden finds components the apiserver forbids to list or
// watch a resource they sync from.
var RBACListForbidden = &analyzer.Rule{
	Name:        "rbac-list-forbidden",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"user", "resource"},
	Run:         runRBACListForbidden,
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(97), ServiceUnreachable.At(281)},
	Proof: "the component's own line quoting the apiserver's refusal (\"endpointslices.discovery.k8s.io is " +
		"forbidden: User \\\"system:serviceaccount:kube-system:coredns\\\" cannot list resource \\\"endpointslices\\\" " +
		"in API group \\\"discovery.k8s.io\\\" at the cluster scope\"), which names the identity and the right it lacks",
	Unproven: "why the role lacks it (a component upgraded past its RBAC manifest, a chart's role, a renamed " +
		"ServiceAccount); `kubectl auth can-i` with the identity decides that it still does",
	Doc: `the apiserver forbids a component to list what it syncs from

A component that watches the cluster (CoreDNS's kubernetes plugin, an
ingress controller, a load balancer's controller, a CNI agent) lists and
watches the resources it works from with its ServiceAccount's rights. A
release that starts reading a new resource needs its role to allow it:
CoreDNS 1.8.3 reads EndpointSlices, and a CoreDNS upgraded without its
ClusterRole logs, every second, "Failed to watch *v1.EndpointSlice:
failed to list *v1.EndpointSlice: endpointslices.discovery.k8s.io is
forbidden: User \"system:serviceaccount:kube-system:coredns\" cannot list
resource \"endpointslices\" in API group \"discovery.k8s.io\" at the
cluster scope". It never syncs: CoreDNS stays not ready ("Still waiting
on: \"kubernetes\""), or starts with an unsynced API and answers no
Service name.

Evidence: the components' log lines quoting the refusal, per identity
and resource. kube-proxy's are left to kube-proxy-sync-errors.

Severity: a warning, of likely cause: the apiserver names the identity
and the right it lacks.

Fix: give the role the right (verbs list and watch on the resource, in
its API group): for CoreDNS, the rule of its deployment manifest
(kubectl edit clusterrole system:coredns); for a chart, upgrade the
chart with the image.`,
}

// rbacForbiddenRe is the apiserver's refusal as client-go quotes it,
// straight or curly quotes (a paste through a word processor).
var rbacForbiddenRe = lazyre.New(`(\S+?) is forbidden: User ["“]([^"”]+)["”] cannot (list|watch|get) resource ["“]([^"”]+)["”] in API group ["“]([^"”]*)["”](?: (at the cluster scope)| in the namespace ["“]([^"”]+)["”])?`)

// rbacForbidden is one identity refused one resource.
type rbacForbidden struct {
	user, verb, resource, group, ns string
	comp, node                      string
	lineRun
}

func runRBACListForbidden(p *analyzer.Pass) error {
	var groups []*rbacForbidden
	byKey := map[string]*rbacForbidden{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if facts.IsKubeProxyLog(le) {
			continue // kube-proxy-sync-errors reads kube-proxy's
		}
		text := logText(le)
		m := rbacForbiddenRe.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		k := m[2] + "\x00" + m[4] + "\x00" + m[5]
		g := byKey[k]
		if g == nil {
			g = &rbacForbidden{user: m[2], verb: m[3], resource: m[4], group: m[5], ns: m[7],
				comp: subjectComponent(le.Source, le.Pos.File), node: le.Node}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.add(le)
	}
	for _, g := range groups {
		p.Report(rbacForbiddenFinding(g))
	}
	return nil
}

// rbacForbiddenFinding words one identity's refusal.
func rbacForbiddenFinding(g *rbacForbidden) analyzer.Finding {
	res := g.resource
	if g.group != "" {
		res += "." + g.group
	}
	where := "at the cluster scope"
	if g.ns != "" {
		where = "in the namespace " + g.ns
	}
	who := g.user
	if sa, ok := strings.CutPrefix(g.user, "system:serviceaccount:"); ok {
		who = "the ServiceAccount " + strings.Replace(sa, ":", "/", 1)
	}
	group := g.group
	if group == "" {
		group = `""`
	}
	f := analyzer.Finding{
		Subject:   subject("user", g.user, "resource", res),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("%s may not %s %s: %s never syncs", who, g.verb, res, g.comp),
		Summary: fmt.Sprintf("The apiserver refuses %s the %s of %s %s, %s: %s cannot sync from it, and works from "+
			"nothing or from what it last knew.", who, g.verb, res, where, times(g.count), g.comp),
		Cause: fmt.Sprintf("The role bound to %s lacks list and watch on %s in API group %s: the component reads a "+
			"resource its RBAC does not grant (a release newer than its role, as CoreDNS 1.8.3's EndpointSlices).", g.user,
			g.resource, group),
		Alternatives: []string{"the component runs as another ServiceAccount than the one its role is bound to"},
		Fix: fmt.Sprintf("Add verbs list and watch on %s in API group %s to the component's ClusterRole (for CoreDNS, "+
			"kubectl edit clusterrole system:coredns), or upgrade its manifest or chart with its image.", g.resource, group),
		Decide:   fmt.Sprintf("kubectl auth can-i %s %s --as=%s", g.verb, res, g.user),
		Facts:    map[string]any{"user": g.user, "verb": g.verb, "resource": res, "component": g.comp, "lines": g.count},
		Evidence: g.evidence(fmt.Sprintf("%s cannot %s %s", g.user, g.verb, res), "the last such line"),
		Supports: []string{fmt.Sprintf("%s: %s is forbidden: User %q cannot %s resource %q in API group %q %s",
			g.first.Pos, res, g.user, g.verb, g.resource, g.group, where)},
	}
	if strings.Contains(strings.ToLower(g.comp+" "+g.user), "coredns") {
		f.Summary += " CoreDNS stays not ready (its ready plugin still waiting on \"kubernetes\"), or answers without " +
			"the cluster's names."
	}
	return f
}
