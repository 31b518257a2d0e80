package facts

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// IsKubeProxyLog reports whether a log event is kube-proxy's own, by its
// source or its file.
func IsKubeProxyLog(le *model.LogEvent) bool {
	src := strings.ToLower(le.Source + " " + le.Pos.File)
	return strings.Contains(src, "kube-proxy") || strings.Contains(src, "kubeproxy")
}

// kubeProxyListRe finds kube-proxy's informers failing to list or watch
// what it programs the dataplane from: "*v1.Service", "*v1beta1.EndpointSlice",
// and the types of older versions, "*api.Endpoints" (before 1.7) and the
// internal "*core.Service".
var kubeProxyListRe = lazyre.New(`(?i)failed to (?:list|watch) \*(?:v1|v1beta1|api|core|discovery)\.(Service|Endpoints|EndpointSlice|Node)\b`)

// ListError is one of kube-proxy's log lines saying it cannot list or
// watch a resource.
type ListError struct {
	Event *model.LogEvent
	// Kind is the resource as the line names it: Service, Endpoints,
	// EndpointSlice or Node.
	Kind string
}

// Plural is the resource's plural: Services, Endpoints, EndpointSlices.
func (e ListError) Plural() string {
	if strings.HasSuffix(e.Kind, "s") {
		return e.Kind // Endpoints is plural already
	}
	return e.Kind + "s"
}

// KubeProxyLog classifies the snapshot's log lines as kube-proxy's own or
// not, and gathers kube-proxy's list errors.
type KubeProxyLog struct {
	own []bool // by index in Snapshot.Logs
	// ListErrors are kube-proxy's lines failing to list or watch Services,
	// Endpoints, EndpointSlices or Nodes, in log order.
	ListErrors []ListError
}

// KubeProxyLogs reads kube-proxy's own log lines.
var KubeProxyLogs = &analyzer.Fact[*KubeProxyLog]{
	Name: "kube-proxy-logs",
	Doc:  "which log lines are kube-proxy's own, and those where it fails to list Services, Endpoints, EndpointSlices or Nodes",
	Compute: func(fs *analyzer.FactSet) *KubeProxyLog {
		logs := fs.Snapshot().Logs
		k := &KubeProxyLog{own: make([]bool, len(logs))}
		for i := range logs {
			le := &logs[i]
			if !IsKubeProxyLog(le) {
				continue
			}
			k.own[i] = true
			if m := kubeProxyListRe.FindStringSubmatch(le.Message); m != nil {
				k.ListErrors = append(k.ListErrors, ListError{Event: le, Kind: m[1]})
			}
		}
		return k
	},
}

// Own reports whether Snapshot.Logs[i] is kube-proxy's.
func (k *KubeProxyLog) Own(i int) bool { return i >= 0 && i < len(k.own) && k.own[i] }

// AppError is a log line where a client failed to connect.
type AppError struct {
	Event *model.LogEvent
	// Needle is how it failed: "no route to host" or "connection refused".
	Needle string
	text   string // the message and fields
}

// AppErrorLog holds the log lines of clients that failed to connect.
type AppErrorLog struct {
	Lines []AppError
}

// AppErrors gathers the log lines where a client failed to connect: "no
// route to host" (EHOSTUNREACH; musl says "Host is unreachable") and
// "connection refused".
var AppErrors = &analyzer.Fact[*AppErrorLog]{
	Name: "app-errors",
	Doc:  `log lines of clients failing to connect: "no route to host" (musl: "host is unreachable") and "connection refused", with the message and its fields`,
	Compute: func(fs *analyzer.FactSet) *AppErrorLog {
		out := &AppErrorLog{}
		logs := fs.Snapshot().Logs
		for i := range logs {
			le := &logs[i]
			text := le.Message
			for _, v := range le.Fields {
				text += " " + v
			}
			lower := strings.ToLower(text)
			// musl (Alpine, busybox) says "Host is unreachable" for
			// EHOSTUNREACH.
			for _, w := range [][2]string{{"no route to host", "no route to host"},
				{"host is unreachable", "no route to host"}, {"connection refused", "connection refused"}} {
				if strings.Contains(lower, w[0]) {
					out.Lines = append(out.Lines, AppError{Event: le, Needle: w[1], text: text})
				}
			}
		}
		return out
	},
}

// For counts the lines where a client failed to reach dst the way an ICMP
// error of kind what makes it fail (host, net or admin unreachable: "no
// route to host"; port unreachable: "connection refused"), and cites the
// first three.
func (l *AppErrorLog) For(dst netip.Addr, what string) (int, []analyzer.Evidence) {
	var needle string
	switch what {
	case "host-unreachable", "net-unreachable", "admin-prohibited":
		needle = "no route to host"
	case "port-unreachable":
		needle = "connection refused"
	default:
		return 0, nil
	}
	ip := dst.String()
	n := 0
	var ev []analyzer.Evidence
	for _, e := range l.Lines {
		if e.Needle != needle || !strings.Contains(e.text, ip) {
			continue
		}
		n++
		if n <= 3 {
			ev = append(ev, analyzer.Evidence{Pos: e.Event.Pos, Note: fmt.Sprintf("%s: %s to %s", e.Event.Source, needle, ip)})
		}
	}
	return n, ev
}
