package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// IPVSStrictARP finds kube-proxy in IPVS mode without strict ARP next to a
// controller that announces LoadBalancer IPs with ARP.
var IPVSStrictARP = &analyzer.Rule{
	Name:        "ipvs-strict-arp",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindKube, model.KindSettings, model.KindComponents},
	Uses:        []model.Kind{model.KindIPVS, model.KindCapture, model.KindNeighbors, model.KindLogs, model.KindClient},
	Requires:    []analyzer.FactKey{facts.LBControllers},
	SubjectKeys: []string{"component", "setting"},
	Run:         runIPVSStrictARP,
	Explains:    []*analyzer.Rule{ARPFlap},
	Symptoms:    []analyzer.SymptomRef{LoadBalancer502.At(20)},
	Plot: analyzer.Plot{
		Parts:    []analyzer.PlotPart{analyzer.PlotARP, analyzer.PlotCitedLogs},
		ARPAddrs: []analyzer.Selector{analyzer.InFacts("flapping_ips")},
	},
	Proof: "kube-proxy's configuration (IPVS mode, strictARP off) beside a controller that announces with ARP, and a " +
		"LoadBalancer IP claimed by more than one MAC (a capture's ARP replies, ip neigh)",
	Unproven: "from the configuration alone the nodes may still ignore those ARP requests (arp_ignore and " +
		"arp_announce set by other means): a warning (likely), with the nodes' sysctls to decide; a client " +
		"transcript where a LoadBalancer IP refuses what its ClusterIP answers, without kube-proxy's " +
		"configuration, is the symptom only: a warning of unknown cause with arping as what decides",
	Doc: `kube-proxy's IPVS mode answers ARP for LoadBalancer IPs

In IPVS mode kube-proxy binds every Service IP, LoadBalancer IPs included,
to the kube-ipvs0 dummy interface of every node. Unless strict ARP is on
(ipvs.strictARP: true in kube-proxy's configuration, which sets the kernel's
arp_ignore=1 and arp_announce=2), every node then answers ARP requests for
those IPs. MetalLB in layer 2 mode, and kube-vip in ARP mode, announce each
LoadBalancer IP from one node only: with the other nodes answering too, the
IP's ARP owner flips between nodes, and clients reach nodes that do not
serve it. MetalLB's installation guide requires strict ARP with IPVS.

Evidence: kube-proxy's mode and strictARP from its ConfigMap (config.conf),
its command line (--proxy-mode, --ipvs-strict-arp), or kubespray's
kube_proxy_mode and kube_proxy_strict_arp; the IPVS table; MetalLB or
kube-vip from their workloads, kubespray's settings, their logs or the
Services' annotations; ARP claims of the LoadBalancer IPs from more than one
MAC (captures, ip neigh).

Without kube-proxy's configuration, a client transcript (curl, nc,
telnet) where a LoadBalancer IP refuses the connection its Service's
ClusterIP accepts shows the symptom only: the node the client reached
for that IP is not one that serves it. strictARP off is then one
candidate among others (externalTrafficPolicy: Local announced from a node
without an endpoint, a second controller announcing the IP), and the ARP
answers for the IP (arping) decide.

Severity: error when a LoadBalancer IP is claimed by more than one MAC;
warning from the configuration alone; warning of unknown cause from the
transcript alone.

Fix: turn strict ARP on: kubectl -n kube-system edit configmap kube-proxy,
set ipvs.strictARP: true, and restart kube-proxy (kubectl -n kube-system
rollout restart ds/kube-proxy); with kubespray, kube_proxy_strict_arp: true.`,
}

// kubeProxyConfig is what kube-proxy's configuration says of its mode.
type kubeProxyConfig struct {
	pos       model.Pos
	what      string // where it comes from, for the evidence note
	mode      string // "" when not said
	strictARP *bool  // nil when not said
}

// kubeProxyConfigs gathers kube-proxy's mode and strict ARP setting from
// its ConfigMaps, its command lines and kubespray's settings.
func kubeProxyConfigs(s *model.Snapshot) []kubeProxyConfig {
	var out []kubeProxyConfig
	for _, cm := range s.Kube.ConfigMaps {
		if !strings.Contains(cm.Name, "kube-proxy") {
			continue
		}
		for key, text := range cm.Data {
			if !strings.HasSuffix(key, ".conf") && !strings.HasSuffix(key, ".yaml") && key != "config" {
				continue
			}
			var conf struct {
				Kind string `yaml:"kind"`
				Mode string `yaml:"mode"`
				IPVS struct {
					StrictARP *bool `yaml:"strictARP"`
				} `yaml:"ipvs"`
			}
			if yaml.Unmarshal([]byte(text), &conf) != nil || conf.Kind != "KubeProxyConfiguration" {
				continue
			}
			out = append(out, kubeProxyConfig{pos: cm.Source.Pos, what: "ConfigMap " + objectName(cm.Namespace, cm.Name) + " " + key,
				mode: conf.Mode, strictARP: conf.IPVS.StrictARP})
		}
	}
	for i := range s.Components {
		c := &s.Components[i]
		if c.Name != "kube-proxy" {
			continue
		}
		kc := kubeProxyConfig{what: "kube-proxy's command line"}
		for _, a := range c.Args {
			switch a.Name {
			case "proxy-mode":
				kc.mode, kc.pos = a.Value, a.Pos
			case "ipvs-strict-arp":
				v := a.Value != "false"
				kc.strictARP, kc.pos = &v, a.Pos
			}
		}
		if kc.mode != "" || kc.strictARP != nil {
			out = append(out, kc)
		}
	}
	if st, ok := s.Setting("kube_proxy_mode"); ok {
		kc := kubeProxyConfig{pos: st.Pos, what: "kubespray's kube_proxy_mode", mode: st.Value}
		if sa, ok := s.Setting("kube_proxy_strict_arp"); ok {
			if v, isBool := sa.Bool(); isBool {
				kc.strictARP, kc.pos, kc.what = &v, sa.Pos, "kubespray's kube_proxy_strict_arp"
			}
		}
		out = append(out, kc)
	}
	return out
}

func runIPVSStrictARP(p *analyzer.Pass) error {
	s := p.Snap
	var conf *kubeProxyConfig
	for _, kc := range kubeProxyConfigs(s) {
		if kc.mode == "ipvs" {
			conf = &kc
			break
		}
	}
	if conf == nil {
		if len(kubeProxyConfigs(s)) == 0 {
			reportLBRefused(p)
		}
		return nil
	}
	if conf.strictARP != nil && *conf.strictARP {
		return nil
	}
	ctrl := facts.LBControllers.Of(p)
	metallb, kvServices, wev := ctrl.MetalLB, ctrl.KubeVIPServices, slices.Clone(ctrl.Evidence)
	if !metallb {
		// MetalLB's own log: its controller or speaker at work.
		for _, le := range s.Logs {
			if strings.Contains(strings.ToLower(le.Source+" "+le.Pos.File), "metallb") {
				metallb = true
				wev = append(wev, analyzer.Evidence{Pos: le.Pos, Note: "MetalLB runs: its log"})
				break
			}
		}
	}
	kubeVIPARP := false
	if st, ok := s.Setting("kube_vip_arp_enabled"); ok {
		if v, _ := st.Bool(); v {
			kubeVIPARP = true
			wev = append(wev, analyzer.Evidence{Pos: st.Pos, Note: "kube-vip announces with ARP: kube_vip_arp_enabled: " + st.Value})
		}
	}
	if !metallb && !(kvServices && kubeVIPARP) {
		return nil
	}
	var controllers []string
	if metallb {
		controllers = append(controllers, "MetalLB")
	}
	if kvServices && kubeVIPARP {
		controllers = append(controllers, "kube-vip")
	}
	sa := &strictARPOff{controllers: controllers, setting: "strictARP is not set (off by default)"}
	if conf.strictARP != nil {
		sa.setting = "strictARP is false"
	}
	f := judgeStrictARP(s, sa, conf, wev)
	f.Title, f.Summary, f.Cause, f.Fix = strictARPWords(sa)
	p.Report(f)
	return nil
}

// strictARPOff is kube-proxy in IPVS mode without strict ARP beside a
// controller that announces LoadBalancer IPs by ARP, and its judgement
// (judgeStrictARP): the IPs more than one MAC claims. strictARPWords words
// it.
type strictARPOff struct {
	setting     string   // what the configuration says of strictARP
	controllers []string // the controllers that announce the IPs
	flapping    []string // the IPs more than one MAC claims, with their Service
}

// judgeStrictARP judges sa from kube-proxy's configuration conf, the
// controllers' evidence wev and the ARP seen. It fills in sa and returns the
// finding without its words.
func judgeStrictARP(s *model.Snapshot, sa *strictARPOff, conf *kubeProxyConfig, wev []analyzer.Evidence) analyzer.Finding {
	setting := sa.setting
	ev := []analyzer.Evidence{{Pos: conf.pos, Note: fmt.Sprintf("%s: mode ipvs, %s", conf.what, setting)}}
	ev = append(ev, wev...)
	facts := map[string]any{"mode": "ipvs", "strict_arp": false, "controllers": sa.controllers}
	sev := analyzer.Warning
	// The symptom: a LoadBalancer IP claimed by more than one MAC.
	lbIPs := map[string]string{}
	for i := range s.Kube.Services {
		svc := &s.Kube.Services[i]
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" {
				lbIPs[ing.IP] = objectName(svc.Namespace, svc.Name)
			}
		}
	}
	var flapping []string
	for _, ip := range slices.Sorted(maps.Keys(lbIPs)) {
		svc := lbIPs[ip]
		macs := map[string]model.Pos{}
		for _, a := range s.ARP {
			if a.IP.String() == ip && a.MAC != "" && (a.Op == "reply" || a.Gratuitous) {
				if _, seen := macs[a.MAC]; !seen {
					macs[a.MAC] = a.Pos
				}
			}
		}
		for _, n := range s.Neighbors {
			if n.IP.String() == ip && n.MAC != "" {
				if _, seen := macs[n.MAC]; !seen {
					macs[n.MAC] = n.Pos
				}
			}
		}
		if len(macs) > 1 {
			flapping = append(flapping, fmt.Sprintf("%s (%s): %d MACs", ip, svc, len(macs)))
			for _, mac := range slices.Sorted(maps.Keys(macs)) {
				ev = append(ev, analyzer.Evidence{Pos: macs[mac], Note: fmt.Sprintf("%s is at %s", ip, mac)})
			}
		}
	}
	supports := []string{fmt.Sprintf("%s: %s: mode ipvs, %s", conf.pos, conf.what, setting)}
	for _, e := range wev {
		supports = append(supports, fmt.Sprintf("%s: %s", e.Pos, e.Note))
	}
	var contradicts, alternatives []string
	certainty, decide := analyzer.Likely, ""
	if len(flapping) > 0 {
		slices.Sort(flapping)
		sev, certainty = analyzer.Error, analyzer.Proven
		facts["flapping_ips"] = flapping
		supports = append(supports, "more than one MAC claims "+strings.Join(flapping, "; "))
	} else {
		contradicts = append(contradicts, "no LoadBalancer IP of the bundle is claimed by more than one MAC (no capture "+
			"of ARP or neighbor table shows it)")
		alternatives = []string{"the nodes ignore ARP requests for kube-ipvs0's addresses anyway (arp_ignore=1 and " +
			"arp_announce=2 set by other means)"}
		decide = collected("sysctl-net", "net.ipv4.conf.all.arp_ignore and net.ipv4.conf.all.arp_announce, on a node")
	}
	sa.flapping = flapping
	return analyzer.Finding{
		Subject:      subject("component", "kube-proxy", "setting", "strictARP"),
		Severity:     sev,
		Certainty:    certainty,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Facts:        facts,
		Evidence:     ev,
	}
}

// strictARPWords words the finding of sa, as judgeStrictARP judged it.
func strictARPWords(sa *strictARPOff) (title, summary, cause, fix string) {
	summary = fmt.Sprintf("kube-proxy runs in IPVS mode and %s: every node binds the LoadBalancer IPs to kube-ipvs0 "+
		"and answers ARP for them, while %s announces each from one node.", sa.setting, strings.Join(sa.controllers, " and "))
	if len(sa.flapping) > 0 {
		summary += " The symptom shows: " + strings.Join(sa.flapping, "; ") + "."
	}
	title = "kube-proxy's IPVS mode answers ARP for LoadBalancer IPs (strictARP off)"
	cause = "Without strict ARP, the kernel answers ARP for any address bound to any interface, kube-ipvs0 " +
		"included: every node claims every LoadBalancer IP, not only the one the controller chose."
	fix = "Turn strict ARP on: `kubectl -n kube-system edit configmap kube-proxy` and set `ipvs: strictARP: true`, then " +
		"`kubectl -n kube-system rollout restart ds/kube-proxy` (kubespray: kube_proxy_strict_arp: true)."
	return title, summary, cause, fix
}

// lbRefused is a LoadBalancer IP a client was refused at while the same
// Service's ClusterIP accepted a connection.
type lbRefused struct {
	svc, lbIP, clusterIP string
	refused, accepted    *model.ClientResult
	svcPos               model.Pos
}

// reportLBRefused reports, when nothing says how kube-proxy runs, each
// LoadBalancer IP a client transcript shows refused while its Service's
// ClusterIP answered: the symptom of another node than the one that
// serves the IP answering its ARP, of unknown cause.
func reportLBRefused(p *analyzer.Pass) {
	s := p.Snap
	var found []lbRefused
	for i := range s.Kube.Services {
		svc := &s.Kube.Services[i]
		if svc.Spec.ClusterIP == "" {
			continue
		}
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			lr := lbRefused{svc: objectName(svc.Namespace, svc.Name), lbIP: ing.IP, clusterIP: svc.Spec.ClusterIP, svcPos: svc.Source.Pos}
			for j := range s.Client {
				r := &s.Client[j]
				for _, a := range r.Dests() {
					switch {
					case a.String() == lr.lbIP && r.Outcome == model.ClientRefused && lr.refused == nil:
						lr.refused = r
					case a.String() == lr.clusterIP && r.Outcome == model.ClientConnected && lr.accepted == nil:
						lr.accepted = r
					}
				}
			}
			if ing.IP != "" && lr.refused != nil && lr.accepted != nil {
				found = append(found, lr)
			}
		}
	}
	for _, lr := range found {
		p.Report(lbRefusedFinding(lr))
	}
}

func lbRefusedFinding(lr lbRefused) analyzer.Finding {
	return analyzer.Finding{
		Subject:   subject("component", "kube-proxy", "setting", "strictARP"),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Title: fmt.Sprintf("LoadBalancer IP %s of %s refuses what its ClusterIP accepts: a node that does not serve it "+
			"may answer its ARP (kube-proxy's IPVS mode without strictARP?)", lr.lbIP, lr.svc),
		Summary: fmt.Sprintf("A client was refused at %s, the LoadBalancer IP of %s, while the Service's ClusterIP %s "+
			"accepted the same request: the Service has a ready endpoint, and the node the client's packets reached "+
			"for the LoadBalancer IP did not pass them to it. The bundle holds no kube-proxy configuration nor ARP "+
			"answers for the IP to tell why.", lr.lbIP, lr.svc, lr.clusterIP),
		Cause: "In IPVS mode without strict ARP every node binds the LoadBalancer IPs to kube-ipvs0 and answers ARP " +
			"for them, so clients land on whichever node answered last; with externalTrafficPolicy: Local a node " +
			"without a local endpoint refuses them.",
		Fix: "If kube-proxy runs in IPVS mode, turn strict ARP on: `kubectl -n kube-system edit configmap kube-proxy`, " +
			"set `ipvs: strictARP: true`, then `kubectl -n kube-system rollout restart ds/kube-proxy`.",
		Supports: []string{
			fmt.Sprintf("%s: %q: refused at the LoadBalancer IP %s", lr.refused.Pos, lr.refused.Message, lr.lbIP),
			fmt.Sprintf("%s: %q: the ClusterIP %s accepts", lr.accepted.Pos, lr.accepted.Message, lr.clusterIP),
		},
		Contradicts: []string{"nothing shows kube-proxy's mode: in iptables mode no node answers ARP for a " +
			"LoadBalancer IP of its own accord"},
		Alternatives: []string{
			"kube-proxy in IPVS mode without strictARP: every node answers ARP for " + lr.lbIP,
			"externalTrafficPolicy: Local with the IP announced from a node without a ready endpoint",
			"two controllers announcing " + lr.lbIP + " from different nodes",
		},
		Decide: fmt.Sprintf("# from a host on the nodes' network: more than one MAC answering decides\narping -c 3 %s\n"+
			"kubectl -n kube-system get cm kube-proxy -o yaml | grep -A3 'ipvs:'", lr.lbIP),
		Facts: map[string]any{"service": lr.svc, "lb_ip": lr.lbIP, "cluster_ip": lr.clusterIP},
		Evidence: []analyzer.Evidence{
			{Pos: lr.refused.Pos, Note: lr.refused.Message},
			{Pos: lr.accepted.Pos, Note: lr.accepted.Message},
			{Pos: lr.svcPos, Note: fmt.Sprintf("%s: ClusterIP %s, LoadBalancer IP %s", lr.svc, lr.clusterIP, lr.lbIP)},
		},
	}
}
