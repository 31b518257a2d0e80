package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// LBControllerConflict finds LoadBalancer Services that two load-balancer
// controllers both manage.
var LBControllerConflict = &analyzer.Rule{
	Name:        "lb-controller-conflict",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindKube, model.KindLogs, model.KindSettings},
	Uses:        []model.Kind{model.KindCapture, model.KindNeighbors},
	Requires:    []analyzer.FactKey{facts.LBControllers},
	SubjectKeys: []string{"object", "component"},
	ObjectKinds: []string{"Service"},
	Run:         runLBControllerConflict,
	Explains:    []*analyzer.Rule{IPVSStrictARP},
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(10)},
	Plot: analyzer.Plot{
		Parts:    []analyzer.PlotPart{analyzer.PlotARP, analyzer.PlotCitedLogs},
		ARPAddrs: []analyzer.Selector{analyzer.InFacts("load_balancer_ips")},
	},
	Proof: "both controllers shown managing the Service or the Services (both marks on a Service, or both deployed with " +
		"kube-vip's services mode on) and a second source showing them at it: their logs rewriting the Service, or its " +
		"IP with two ARP owners or ICMP errors in a capture",
	Unproven: "marks or deployments alone may be leftovers of a migration from one controller to the other: a warning " +
		"(likely), with the command that shows what runs; k3s's servicelb Pods (svclb-*) that cannot be scheduled " +
		"because the Service's ports are taken on the nodes show servicelb taking LoadBalancer Services another " +
		"controller or its own other Pods hold: likely, with the command that lists both controllers' Pods",
	Doc: `two load-balancer controllers manage the same Services

MetalLB and kube-vip (with its services mode on) both assign and announce
LoadBalancer IPs. Run together without spec.loadBalancerClass, they both
claim every LoadBalancer Service: each rewrites the Service's status, and each
announces the VIP from the node it chose, so the VIP's ARP owner changes and
nodes that do not serve it answer for it (ICMP host unreachable, connections
reset).

Evidence: the Services (annotations, labels and managedFields of both
controllers, loadBalancerClass), the controllers' workloads (a kube-vip
DaemonSet or static pod with svc_enable=true next to MetalLB), kubespray's
inventory settings (kube_vip_services_enabled, metallb_enabled), the
controllers' logs (MetalLB reconciling and updating the same Services), and
ARP claims or ICMP errors for the Services' IPs.

Without the Services, the controllers themselves: MetalLB updating Service
objects in its log (serviceUpdated) while kube-vip is deployed too (its
workloads or kubespray's kube_vip_enabled), or both deployed with kube-vip's
services mode on.

Severity: error when both controllers are shown managing the Services (both
marks on a Service, or both running with kube-vip's services mode on) and a
second source shows them at it (their logs rewriting the Service, its IP
flapping or unreachable in a capture); warning otherwise.

Fix: keep one controller per Service: turn kube-vip's services mode off
(svc_enable=false; kubespray: kube_vip_services_enabled: false) and leave
LoadBalancer Services to MetalLB, or give each Service a loadBalancerClass
that only one controller handles.`,
}

// lbConflictFix is the fix of both findings: one controller per Service.
const lbConflictFix = "Turn kube-vip's services mode off (svc_enable=false; kubespray: kube_vip_services_enabled: false) so " +
	"MetalLB alone handles LoadBalancer Services, or set spec.loadBalancerClass on each Service for the " +
	"controller that should own it."

func controllersOf(svc *model.Service) []string {
	var out []string
	has := func(prefix string) bool {
		for k := range svc.Annotations {
			if strings.HasPrefix(k, prefix) {
				return true
			}
		}
		for k := range svc.Labels {
			if strings.HasPrefix(k, prefix) {
				return true
			}
		}
		return false
	}
	mgr := func(sub string) bool {
		for _, m := range svc.ManagedFields {
			if strings.Contains(strings.ToLower(m.Manager), sub) {
				return true
			}
		}
		return false
	}
	if has("metallb.universe.tf/") || has("metallb.io/") || mgr("metallb") {
		out = append(out, "MetalLB")
	}
	if has("kube-vip.io/") || mgr("kube-vip") {
		out = append(out, "kube-vip")
	}
	return out
}

func runLBControllerConflict(p *analyzer.Pass) error {
	s := p.Snap
	ctrl := facts.LBControllers.Of(p)
	metallb, kvServices, wev := ctrl.MetalLB, ctrl.KubeVIPServices, ctrl.Evidence
	reported := servicelbBlocked(p)
	defer func() {
		if !reported {
			controllerConflict(p, metallb, kvServices, wev)
		}
	}()
	for i := range s.Kube.Services {
		svc := &s.Kube.Services[i]
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		ctrls := controllersOf(svc)
		both := len(ctrls) == 2
		if !both && !(metallb && kvServices && svc.Spec.LoadBalancerClass == nil) {
			continue
		}
		c := &lbClaim{svc: svc, ctrls: ctrls, both: both}
		f := judgeLBClaim(s, c, metallb && kvServices, wev)
		f.Title, f.Summary, f.Cause, f.Fix = lbClaimWords(c)
		reported = true
		p.Report(f)
	}
	return nil
}

// lbClaim is a LoadBalancer Service that two controllers claim, and its
// judgement (judgeLBClaim): the controllers' log lines that touch it, its
// VIPs' symptoms, kubespray's setting of kube-vip. lbClaimWords words it.
type lbClaim struct {
	svc   *model.Service
	ctrls []string // the controllers whose marks it carries
	both  bool     // it carries the marks of both

	name        string
	ips         []string
	updates     int       // the controllers' log lines that touch it
	symptoms    int       // its VIPs' symptoms: more than one ARP owner, ICMP errors
	servicesOff bool      // kubespray turns kube-vip's services mode off
	offPos      model.Pos // there
}

// judgeLBClaim judges c; running says MetalLB runs and kube-vip handles
// Services, as the controllers' evidence wev shows. It fills in c and
// returns the finding without its words.
func judgeLBClaim(s *model.Snapshot, c *lbClaim, running bool, wev []analyzer.Evidence) analyzer.Finding {
	svc, ctrls := c.svc, c.ctrls
	name := objectName(svc.Namespace, svc.Name)
	var ips []string
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			ips = append(ips, ing.IP)
		}
	}
	ev := []analyzer.Evidence{{Pos: svc.Source.Pos, Note: fmt.Sprintf("LoadBalancer Service %s marked by %s", name, orNone(ctrls))}}
	ev = append(ev, wev...)
	values := map[string]any{"service": name}
	if len(ips) > 0 {
		values["load_balancer_ips"] = ips
	}
	if len(ctrls) > 0 {
		values["marked_by"] = ctrls
	}
	// Controller logs touching this Service.
	updates := 0
	for _, le := range s.Logs {
		text := le.Message
		for _, v := range le.Fields {
			text += " " + v
		}
		if strings.Contains(text, name) && (strings.Contains(strings.ToLower(le.Source+" "+le.Pos.File), "metallb") ||
			strings.Contains(strings.ToLower(le.Source+" "+le.Pos.File), "kube-vip")) {
			updates++
			if updates <= 3 {
				ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "controller log: " + name})
			}
		}
	}
	if updates > 0 {
		values["controller_log_lines"] = updates
	}
	// The VIPs flapping or unreachable.
	symptoms := 0
	for _, ip := range ips {
		macs := map[string]bool{}
		for _, a := range s.ARP {
			if a.IP.String() == ip && a.MAC != "" && (a.Op == "reply" || a.Gratuitous) {
				macs[a.MAC] = true
			}
		}
		if len(macs) > 1 {
			symptoms++
			values["vip_macs"] = len(macs)
		}
		for _, e := range s.ICMP {
			if e.Quoted.Dst.Addr().String() == ip && (e.What == "host-unreachable" || e.What == "redirect") {
				symptoms++
				ev = append(ev, analyzer.Evidence{Pos: e.Pos, Note: fmt.Sprintf("ICMP %s from %s for %s", e.What, e.From, ip)})
				break
			}
		}
	}
	supports := []string{fmt.Sprintf("%s: %s is marked by %s", svc.Source.Pos, name, orNone(ctrls))}
	for _, e := range wev {
		supports = append(supports, fmt.Sprintf("%s: %s", e.Pos, e.Note))
	}
	var contradicts, alternatives []string
	if updates > 0 {
		supports = append(supports, fmt.Sprintf("the controllers' logs touch %s %d times", name, updates))
	}
	if symptoms > 0 {
		supports = append(supports, fmt.Sprintf("the capture shows %s with more than one ARP owner or ICMP errors from "+
			"a node that does not serve it", strings.Join(ips, ", ")))
	} else if !s.Has(model.KindCapture) && !s.Has(model.KindNeighbors) {
		contradicts = append(contradicts, "no capture or neighbor table in the bundle: whether the VIP changes owner is not shown")
	} else {
		contradicts = append(contradicts, "the capture shows the VIP with one owner and no ICMP errors for it")
	}
	sev, certainty, decide := analyzer.Warning, analyzer.Likely, ""
	if (c.both || running) && (symptoms > 0 || updates > 0) {
		sev, certainty = analyzer.Error, analyzer.Proven
	} else {
		alternatives = []string{"one controller's marks or deployment are leftovers of a migration to the other"}
		decide = "# and kube-vip's svc_enable\nkubectl get pods -A -o wide | grep -e metallb -e kube-vip"
	}
	if st, ok := s.Setting("kube_vip_services_enabled"); ok {
		if v, isBool := st.Bool(); isBool && !v {
			c.servicesOff, c.offPos = true, st.Pos
			ev = append(ev, analyzer.Evidence{Pos: st.Pos, Note: "kube_vip_services_enabled: " + st.Value})
			values["kube_vip_services_enabled"] = false
		}
	}
	c.name, c.ips, c.updates, c.symptoms = name, ips, updates, symptoms
	return analyzer.Finding{
		Subject:      subject("object", object("Service", svc.Namespace, svc.Name)),
		Severity:     sev,
		Certainty:    certainty,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Facts:        values,
		Evidence:     ev,
	}
}

// lbClaimWords words the finding of c, as judgeLBClaim judged it.
func lbClaimWords(c *lbClaim) (title, summary, cause, fix string) {
	summary = fmt.Sprintf("LoadBalancer Service %s", c.name)
	if len(c.ips) > 0 {
		summary += fmt.Sprintf(" (%s)", strings.Join(c.ips, ", "))
	}
	switch {
	case c.both:
		summary += " carries the marks of both MetalLB and kube-vip: both controllers manage it."
	default:
		summary += " has no loadBalancerClass while MetalLB runs and kube-vip handles Services too (svc_enable=true): both claim it."
	}
	if c.updates > 0 {
		summary += fmt.Sprintf(" The controllers' logs touch it %d times.", c.updates)
	}
	if c.servicesOff {
		summary += fmt.Sprintf(" The kubespray inventory turns kube-vip's services mode off (%s): if the conflict "+
			"goes on, that setting has not reached the running kube-vip (re-run the playbook, then check its "+
			"svc_enable).", c.offPos)
	}
	if c.symptoms > 0 {
		summary += " Its IP shows the effect: more than one ARP owner, or ICMP errors from a node that announces it without serving it."
	}
	title = fmt.Sprintf("%s is managed by two load-balancer controllers", c.name)
	cause = "MetalLB and kube-vip's services mode both handle LoadBalancer Services, and nothing tells them apart."
	return title, summary, cause, lbConflictFix
}

// controllerConflict reports the two controllers from what shows them at
// work when no Service does: MetalLB's log updating Service objects, and
// kube-vip deployed (its workloads, kubespray's settings) or handling
// Services.
func controllerConflict(p *analyzer.Pass, metallb, kvServices bool, wev []analyzer.Evidence) {
	c := &controllersBoth{kvServices: kvServices}
	if f, ok := judgeControllers(p.Snap, c, metallb, wev); ok {
		f.Title, f.Summary, f.Cause, f.Fix = controllersWords(c)
		p.Report(f)
	}
}

// controllersBoth is MetalLB and kube-vip deployed side by side, and its
// judgement (judgeControllers): MetalLB's controller rewriting Services,
// kubespray's setting of kube-vip. controllersWords words it.
type controllersBoth struct {
	kvServices  bool             // kube-vip's services mode is shown on
	updates     []model.LogEvent // MetalLB's log lines updating Service objects
	updated     []string         // the Services they updated
	servicesOff bool             // kubespray turns kube-vip's services mode off
	offPos      model.Pos        // there
}

// judgeControllers judges c; ok is false unless both controllers are shown
// deployed. It fills in c and returns the finding without its words.
func judgeControllers(s *model.Snapshot, c *controllersBoth, metallb bool, wev []analyzer.Evidence) (analyzer.Finding, bool) {
	kvServices := c.kvServices
	ev := slices.Clone(wev)
	kubeVIP := kvServices
	if st, ok := s.Setting("kube_vip_enabled"); ok {
		if v, _ := st.Bool(); v {
			kubeVIP = true
			ev = append(ev, analyzer.Evidence{Pos: st.Pos, Note: "kubespray deploys kube-vip: kube_vip_enabled: " + st.Value})
		}
	}
	for _, ds := range s.Kube.DaemonSets {
		if strings.Contains(strings.ToLower(ds.Name), "kube-vip") {
			kubeVIP = true
			ev = append(ev, analyzer.Evidence{Pos: ds.Source.Pos, Note: "kube-vip runs: DaemonSet " + ds.Name})
		}
	}
	// MetalLB's controller at work: the Services it reconciled and updated.
	var updates []model.LogEvent
	services := map[string]bool{}
	last := ""
	for _, le := range s.Logs {
		where := strings.ToLower(le.Source + " " + le.Pos.File)
		if !strings.Contains(where, "metallb") {
			continue
		}
		if svc := le.Fields["start reconcile"]; svc != "" {
			last = svc
		}
		if le.Fields["event"] == "serviceUpdated" || le.Message == "updated service object" {
			updates = append(updates, le)
			if last != "" {
				services[last] = true
			}
		}
	}
	if len(updates) > 0 {
		metallb = true
	}
	if !metallb || !kubeVIP {
		return analyzer.Finding{}, false
	}
	c.updates = updates
	values := map[string]any{"metallb": true, "kube_vip": true, "kube_vip_services": kvServices}
	sev := analyzer.Warning
	if len(updates) > 0 {
		names := slices.Sorted(maps.Keys(services))
		c.updated = names
		values["service_updates"] = len(updates)
		if len(names) > 0 {
			values["services_updated"] = names
		}
		for i, le := range updates {
			if i == maxGroupEvidence {
				break
			}
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "MetalLB updated a Service object"})
		}
	}
	if st, ok := s.Setting("kube_vip_services_enabled"); ok {
		if v, isBool := st.Bool(); isBool && !v {
			c.servicesOff, c.offPos = true, st.Pos
			ev = append(ev, analyzer.Evidence{Pos: st.Pos, Note: "kube_vip_services_enabled: " + st.Value})
		}
	}
	supports := make([]string, 0, len(ev))
	for _, e := range ev {
		supports = append(supports, fmt.Sprintf("%s: %s", e.Pos, e.Note))
	}
	var contradicts, alternatives []string
	certainty, decide := analyzer.Likely, ""
	if kvServices && len(updates) > 0 {
		sev, certainty = analyzer.Error, analyzer.Proven
	} else {
		if !kvServices {
			contradicts = append(contradicts, "kube-vip's services mode is not shown on: kube-vip may hold the control-plane VIP only")
		}
		if len(updates) == 0 {
			contradicts = append(contradicts, "no MetalLB log rewriting Services in the bundle")
		}
		alternatives = []string{"kube-vip holds the control-plane VIP only and leaves LoadBalancer Services to MetalLB"}
		decide = "kubectl -n kube-system get ds,pods -o yaml | grep -A1 svc_enable"
	}
	return analyzer.Finding{
		Subject:      subject("component", "MetalLB,kube-vip"),
		Severity:     sev,
		Certainty:    certainty,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Facts:        values,
		Evidence:     ev,
	}, true
}

// controllersWords words the finding of c, as judgeControllers judged it.
func controllersWords(c *controllersBoth) (title, summary, cause, fix string) {
	says := []string{"MetalLB and kube-vip are both deployed."}
	if c.kvServices {
		says[0] = "MetalLB and kube-vip both run, and kube-vip handles LoadBalancer Services too (its services mode is on): " +
			"both controllers claim every LoadBalancer Service."
	}
	if n := len(c.updates); n > 0 {
		within := "within a second"
		if span := c.updates[n-1].Time.Sub(c.updates[0].Time); span >= time.Second {
			within = "in " + span.String()
		}
		says = append(says, fmt.Sprintf("MetalLB's controller updated Service objects %d %s %s (%s): a controller "+
			"that keeps rewriting Services it has already reconciled is fighting another one over them.",
			n, plural(n, "time", "times"), within, strings.Join(c.updated, ", ")))
	}
	if c.servicesOff {
		says = append(says, fmt.Sprintf("The kubespray inventory turns kube-vip's services mode off (%s): that is the "+
			"fix; if Services keep being rewritten, it has not reached the running kube-vip (re-run the playbook).", c.offPos))
	}
	title = "MetalLB and kube-vip both manage LoadBalancer Services"
	cause = "MetalLB and kube-vip's services mode both handle LoadBalancer Services, and nothing tells them apart: each " +
		"rewrites the Services the other just updated."
	return title, strings.Join(says, " "), cause, lbConflictFix
}

// servicelbBlocked reports k3s's servicelb (klipper-lb) Pods that the
// scheduler cannot place because their Service's ports are taken as host
// ports on the nodes: servicelb claims a LoadBalancer Service whose ports
// another claim holds. It reports whether it found any.
func servicelbBlocked(p *analyzer.Pass) bool {
	byDS := map[string][]*model.Event{}
	var names []string
	for i := range p.Snap.Kube.Events {
		e := &p.Snap.Kube.Events[i]
		pod := e.InvolvedObject.Name
		if !strings.HasPrefix(pod, "svclb-") || e.Reason != "FailedScheduling" ||
			!strings.Contains(e.Message, "didn't have free ports for the requested pod ports") {
			continue
		}
		ds := pod
		if i := strings.LastIndexByte(pod, '-'); i > len("svclb") {
			ds = pod[:i] // the DaemonSet, without the Pod's suffix
		}
		if byDS[ds] == nil {
			names = append(names, ds)
		}
		byDS[ds] = append(byDS[ds], e)
	}
	for _, ds := range names {
		evs := byDS[ds]
		svc := strings.TrimPrefix(ds, "svclb-")
		f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely,
			Subject: subject("component", "servicelb", "object", object("Service", "", svc)),
			Facts:   map[string]any{"servicelb_daemonset": ds, "events": len(evs), "message": evs[0].Message},
			Title:   fmt.Sprintf("k3s's servicelb claims LoadBalancer Service %s and cannot place its %s Pods: the ports are taken", svc, ds),
			Supports: []string{fmt.Sprintf("%s: %s/%s FailedScheduling %q: servicelb's Pods take the Service's ports "+
				"as host ports, which other Pods already hold on those nodes", evs[0].Source.Pos, evs[0].InvolvedObject.Namespace,
				evs[0].InvolvedObject.Name, evs[0].Message)},
			Contradicts: []string{"k3s started with --disable servicelb (--no-deploy servicelb), or the Service " +
				"carrying a loadBalancerClass servicelb does not handle"},
			Alternatives: []string{"servicelb beside another load-balancer controller (MetalLB, kube-vip) that should own " +
				"LoadBalancer Services", "servicelb alone, with two LoadBalancer Services on the same port (another svclb DaemonSet " +
				"holds it)", "another Pod with a hostPort on that port"},
			Decide: "kubectl -n kube-system get pods -o wide | grep svclb; kubectl get pods -A -o wide | grep -i -e metallb -e kube-vip",
		}
		for i, e := range evs {
			if i < maxGroupEvidence {
				f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: e.Source.Pos,
					Note: fmt.Sprintf("%s FailedScheduling: no free ports", e.InvolvedObject.Name)})
			}
		}
		f.Summary = fmt.Sprintf("The scheduler cannot place %s's Pod: %q. servicelb, k3s's built-in load balancer, "+
			"runs a DaemonSet per LoadBalancer Service whose Pods claim the Service's ports on every node.", ds, evs[0].Message)
		f.Cause = fmt.Sprintf("Most likely servicelb handles LoadBalancer Service %s while another claim holds its ports "+
			"on the nodes: another load-balancer controller's Service (MetalLB's, with servicelb left enabled) or "+
			"another Service's svclb Pods.", svc)
		f.Fix = "Run one load-balancer controller: start k3s with --disable servicelb (older releases: --no-deploy " +
			"servicelb) when MetalLB or kube-vip handles LoadBalancer Services, or give the Services distinct ports."
		p.Report(f)
	}
	return len(names) > 0
}
