package rules

import (
	"cmp"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
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

// criContainerLog is a kubelet's name for a container's log under
// /var/log/containers: POD_NAMESPACE_CONTAINER-ID.log.
var criContainerLog = lazyre.New(`^[^_]+_[^_]+_(.+)-[0-9a-f]{64}$`)

// subjectComponent returns the component of a log for a Subject: comp,
// the component the log says it is, or, when comp is the log's file name,
// the program that name stands for, the same wherever the log was saved
// and however it was rotated: "traefik.log", "traefik.log.1",
// "ns_traefik-x_traefik-<id>.log" and "traefik/0.log" are all "traefik".
func subjectComponent(comp, file string) string {
	if comp != path.Base(file) {
		return comp
	}
	file = filepath.ToSlash(file)
	base := path.Base(file)
	for {
		ext := path.Ext(base)
		if ext == "" || ext == base {
			break
		}
		if _, err := strconv.Atoi(ext[1:]); err != nil && !slices.Contains([]string{".log", ".txt", ".gz", ".out"}, ext) {
			break
		}
		base = strings.TrimSuffix(base, ext)
	}
	if _, err := strconv.Atoi(base); err == nil {
		if dir := path.Base(path.Dir(file)); dir != "." && dir != "/" {
			return dir // /var/log/pods/NS_POD_UID/CONTAINER/0.log
		}
	}
	if m := criContainerLog.FindStringSubmatch(base); m != nil {
		return m[1]
	}
	return base
}

// logComponent is subjectComponent for a log line: its source, or, when
// the line names none (a JSON log's), the program its file is named after
// (speaker.log), or def.
func logComponent(le *model.LogEvent, def string) string {
	if c := subjectComponent(le.Source, le.Pos.File); c != "" {
		return c
	}
	return cmp.Or(subjectComponent(path.Base(le.Pos.File), le.Pos.File), def)
}
