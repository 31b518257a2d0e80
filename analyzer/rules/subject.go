package rules

import (
	"strings"

	"github.com/netmortem/netmortem/dataplane"
)

// subject builds a Finding's Subject from key, value pairs, leaving out
// the empty values (a node a capture does not name, say). The keys are
// those of the analyzer package doc.
func subject(kv ...string) map[string]string {
	out := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// object names a Kubernetes object in a Subject: "Kind namespace/name",
// or "Kind name" for a cluster-scoped one.
func object(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// servicePortSubjectKeys are the keys servicePortSubject sets.
var servicePortSubjectKeys = []string{"node", "object", "service_port", "service_chain", "proto"}

// servicePortSubject is the Subject of a finding about a Service port as
// a node's dataplane programs it: the Service and port name when the
// dump names them (kube-proxy's comments), its chain otherwise.
func servicePortSubject(sp *dataplane.ServicePort) map[string]string {
	if sp.Service == "" {
		return subject("node", sp.Node, "service_chain", sp.Chain, "proto", strings.ToLower(sp.Proto))
	}
	return subject("node", sp.Node, "object", object("Service", sp.Namespace(), sp.ServiceName()),
		"service_port", sp.PortName(), "proto", strings.ToLower(sp.Proto))
}
