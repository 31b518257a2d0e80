package facts

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/netmortem/netmortem/model"
)

// InNamespace reports whether an object of namespace objNS can be of
// namespace ns: the same, or not known (a kubectl table without it).
func InNamespace(objNS, ns string) bool { return objNS == ns || objNS == "" }

// Addresses are the addresses of a Service's Endpoints, or else of its
// EndpointSlices, ready or not.
type Addresses struct {
	Ready    int
	NotReady []string  // the IPs not ready
	Pos      model.Pos // the object read last
	Found    bool      // the bundle holds the Service's Endpoints or EndpointSlices
}

// ServiceAddresses gathers the addresses of Service ns/name in s (its
// objects of no namespace too, as a kubectl table without the column
// gives them).
func ServiceAddresses(s *model.Snapshot, ns, name string) Addresses {
	var a Addresses
	for i := range s.Kube.Endpoints {
		ep := &s.Kube.Endpoints[i]
		if ep.Name != name || !InNamespace(ep.Namespace, ns) {
			continue
		}
		a.Found, a.Pos = true, ep.Source.Pos
		if a.Pos.Object == "" {
			a.Pos.Object = model.ObjectName("Endpoints", ns, name)
		}
		for _, ss := range ep.Subsets {
			a.Ready += len(ss.Addresses)
			for _, ad := range ss.NotReadyAddresses {
				a.NotReady = append(a.NotReady, ad.IP)
			}
		}
	}
	if a.Found {
		return a
	}
	for i := range s.Kube.EndpointSlices {
		sl := &s.Kube.EndpointSlices[i]
		if sl.Labels["kubernetes.io/service-name"] != name || !InNamespace(sl.Namespace, ns) {
			continue
		}
		a.Found, a.Pos = true, sl.Source.Pos
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				a.Ready += len(e.Addresses)
			} else {
				a.NotReady = append(a.NotReady, e.Addresses...)
			}
		}
	}
	return a
}

// SelectedPods is what the Pods of a snapshot say of a selector in a
// namespace.
type SelectedPods struct {
	Listed          int  // Pods of the namespace whose labels the bundle gives
	Listing         bool // some come from a listing (a file holding several Pods), not one Pod asked by name
	Matching, Ready int  // of them, those the selector matches, and of those the ready ones
	Unknown         int  // matching ones whose readiness the bundle does not give (a manifest)
	// First is the first Pod listed, FirstMatching the first matching.
	First, FirstMatching model.Pos
}

// PodsSelected weighs the Pods of s in namespace ns against selector. A
// `kubectl get pods` table gives no labels, and its Pods are left out.
func PodsSelected(s *model.Snapshot, ns string, selector map[string]string) SelectedPods {
	var p SelectedPods
	perFile := map[string]int{}
	for i := range s.Kube.Pods {
		perFile[s.Kube.Pods[i].Source.Pos.File]++
	}
	sel := labels.SelectorFromSet(selector)
	for i := range s.Kube.Pods {
		pod := &s.Kube.Pods[i]
		if !InNamespace(pod.Namespace, ns) || pod.Source.FromTable {
			continue
		}
		if p.Listed == 0 {
			p.First = pod.Source.Pos
		}
		p.Listed++
		p.Listing = p.Listing || perFile[pod.Source.Pos.File] > 1
		if !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if p.Matching == 0 {
			p.FirstMatching = pod.Source.Pos
		}
		p.Matching++
		switch ready, known := PodReadiness(pod); {
		case !known:
			p.Unknown++
		case ready:
			p.Ready++
		}
	}
	return p
}

// PodReadiness reports whether pod's Ready condition is true, and known
// when the Pod has one (a manifest has no status).
func PodReadiness(pod *model.Pod) (ready, known bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, true
		}
	}
	return false, false
}
