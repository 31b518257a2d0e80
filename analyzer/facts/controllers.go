package facts

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// Controllers says which load-balancer controllers the cluster runs.
type Controllers struct {
	// MetalLB is true when MetalLB runs (a DaemonSet or Pod) or kubespray
	// deploys it (metallb_enabled).
	MetalLB bool
	// KubeVIPServices is true when kube-vip handles LoadBalancer Services:
	// it runs with svc_enable=true, or kubespray turns its services mode on
	// (kube_vip_services_enabled).
	KubeVIPServices bool
	// Evidence cites what shows them.
	Evidence []analyzer.Evidence
}

// LBControllers reports which load-balancer controllers run in the
// cluster, from DaemonSets and Pods, with kube-vip's services mode, and
// which kubespray's inventory deploys.
var LBControllers = &analyzer.Fact[Controllers]{
	Name: "lb-controllers",
	Doc: "which load-balancer controllers run (MetalLB; kube-vip with its services mode on), from DaemonSets, Pods " +
		"and kubespray's inventory",
	Compute: func(fs *analyzer.FactSet) Controllers { return lbControllers(fs.Snapshot()) },
}

func lbControllers(s *model.Snapshot) (c Controllers) {
	if st, ok := s.Setting("metallb_enabled"); ok {
		if v, _ := st.Bool(); v {
			c.MetalLB = true
			c.Evidence = append(c.Evidence, analyzer.Evidence{Pos: st.Pos, Note: "kubespray deploys MetalLB: metallb_enabled: " + st.Value})
		}
	}
	if st, ok := s.Setting("kube_vip_services_enabled"); ok {
		if v, _ := st.Bool(); v {
			c.KubeVIPServices = true
			c.Evidence = append(c.Evidence, analyzer.Evidence{Pos: st.Pos,
				Note: "kubespray turns kube-vip's services mode on: kube_vip_services_enabled: " + st.Value})
		}
	}
	check := func(namespace, name string, containers []corev1.Container, pos model.Pos) {
		n := strings.ToLower(name)
		// MetalLB's manifests name the DaemonSet "speaker" in the
		// metallb-system namespace; its images say metallb.
		isMetalLB := strings.Contains(n, "metallb") || strings.Contains(namespace, "metallb")
		for _, ct := range containers {
			isMetalLB = isMetalLB || strings.Contains(ct.Image, "metallb/")
		}
		if isMetalLB {
			c.MetalLB = true
			c.Evidence = append(c.Evidence, analyzer.Evidence{Pos: pos, Note: "MetalLB runs: " + name})
		}
		for _, ct := range containers {
			if !strings.Contains(strings.ToLower(ct.Image), "kube-vip") && !strings.Contains(n, "kube-vip") {
				continue
			}
			for _, e := range ct.Env {
				if e.Name == "svc_enable" && strings.EqualFold(e.Value, "true") {
					c.KubeVIPServices = true
					c.Evidence = append(c.Evidence, analyzer.Evidence{Pos: pos, Note: "kube-vip runs with svc_enable=true: " + name})
				}
			}
		}
	}
	for _, ds := range s.Kube.DaemonSets {
		check(ds.Namespace, ds.Name, ds.Spec.Template.Spec.Containers, ds.Source.Pos)
	}
	for _, pod := range s.Kube.Pods {
		check(pod.Namespace, pod.Name, pod.Spec.Containers, pod.Source.Pos)
	}
	return c
}
