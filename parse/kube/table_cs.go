package kube

import "github.com/netmortem/netmortem/internal/lazyre"

// csNameRe is the name of a ComponentStatus: the apiserver checks the
// scheduler, the controller-manager and each etcd server (etcd-0 ...),
// and no other object, so the names are known.
var csNameRe = lazyre.New(`^(?:scheduler|controller-manager|etcd-\d+)$`)

// headerlessCS is the layout of `kubectl get cs` rows pasted without their
// header and without the command line ("scheduler  Unhealthy  Get
// http://127.0.0.1:10251/healthz: ... connection refused"). Rows of other
// kinds tell themselves apart by their cells; a ComponentStatus row's
// MESSAGE is free text, so the row is taken for one only when its NAME is
// a component the apiserver checks and its STATUS is Healthy, Unhealthy or
// Unknown.
func headerlessCS() *tableHeader {
	h := newHeader(tkComponentStatus, tableLayouts[tkComponentStatus][0], nil)
	h.specs[0] = cellSpec{1, 1, re(csNameRe)}
	return h
}
