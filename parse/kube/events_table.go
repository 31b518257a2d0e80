package kube

import (
	"cmp"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// EventsTableFormat reads kubectl get events as printed, with or without
// its header (a paste often drops it).
var EventsTableFormat = &format.Format{
	Name:    "kubectl-events",
	Kind:    model.KindKube,
	Command: "kubectl get events [-A | -n NAMESPACE]",
	Doc: "one Event per row of LAST SEEN, TYPE, REASON, OBJECT and MESSAGE (NAMESPACE first with -A), the header " +
		"line optional: the object's kind (pod/x is Pod x), name and namespace (the row's, else the command's -n), " +
		"the type, reason and message; LAST SEEN is kept in the row's cells, not read as a time",
	Sniff: sniffEventsTable,
	Parse: format.Records(readEventsTable, func(s *model.Snapshot, out []model.Event) { s.Kube.Events = append(s.Kube.Events, out...) }, "Events"),
}

// eventRowRe matches a row: an optional namespace, LAST SEEN (5m, 2m27s,
// <unknown>), TYPE, REASON, OBJECT (kind/name) and MESSAGE.
var eventRowRe = lazyre.New(`^(?:([a-z0-9][-a-z0-9]*)\s+)?(<unknown>|(?:\d+[smhdy])+)\s+(Normal|Warning)\s+([A-Za-z]+)\s+([a-z][a-z.]*/\S+)\s+(.*)$`)

// eventsHeaderRe matches the header kubectl prints.
var eventsHeaderRe = lazyre.New(`^(?:NAMESPACE\s+)?LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$`)

// eventKinds are the kinds of kubectl's lower-case object names.
var eventKinds = map[string]string{"pod": "Pod", "node": "Node", "service": "Service", "deployment": "Deployment",
	"replicaset": "ReplicaSet", "daemonset": "DaemonSet", "statefulset": "StatefulSet", "job": "Job",
	"endpoints": "Endpoints", "persistentvolumeclaim": "PersistentVolumeClaim"}

func readEventsTable(r io.Reader, src *format.File, errs *model.ErrorList) []model.Event {
	var out []model.Event
	ns := namespaceOf(src.Command)
	text.ReadLines(r, src, errs, text.Hooks{Command: func(cmd string) { ns = namespaceOf(cmd) }}, func(l *text.Line) {
		if eventsHeaderRe.MatchString(l.Trimmed) {
			return
		}
		if i := strings.Index(l.Trimmed, "kubectl "); i >= 0 && strings.Contains(l.Trimmed, " events") {
			ns = namespaceOf(l.Trimmed[i:]) // the command behind a prompt not read as one ("-> kubectl get events")
			return
		}
		m := eventRowRe.FindStringSubmatch(l.Trimmed)
		if m == nil {
			l.Errorf("%w: expected a row of kubectl get events (LAST SEEN TYPE REASON OBJECT MESSAGE), got %q", format.ErrSyntax, l.Trimmed)
			return
		}
		kind, name, _ := strings.Cut(m[5], "/")
		if k, ok := eventKinds[kind]; ok {
			kind = k
		}
		var e model.Event
		e.InvolvedObject = corev1.ObjectReference{Kind: kind, Name: name, Namespace: cmp.Or(m[1], ns)}
		e.Namespace, e.Type, e.Reason, e.Message, e.Count = e.InvolvedObject.Namespace, m[3], m[4], m[6], 1
		e.Source = model.Source{Pos: l.Pos(), Node: l.Node, FromTable: true, Cells: map[string]string{"LAST SEEN": m[2]}}
		out = append(out, e)
	})
	return out
}

// namespaceOf is the namespace a kubectl command names with -n; "" when
// none.
func namespaceOf(cmd string) string {
	k, _ := text.ParseKubectl(cmd)
	return k.Namespace
}

// sniffEventsTable scores the share of rows of kubectl get events.
func sniffEventsTable(_ string, head []byte) int {
	rows := 0
	matched, total, _ := text.SniffLines(head, 200, nil, func(line string) text.Match {
		t := strings.TrimSpace(line)
		if eventsHeaderRe.MatchString(t) {
			return text.Hit
		}
		if strings.Contains(t, "kubectl ") && strings.Contains(t, " events") {
			return text.Skip
		}
		if eventRowRe.MatchString(t) {
			rows++
			return text.Hit
		}
		return text.Miss
	})
	if rows == 0 {
		return 0
	}
	return min(text.RatioScore(matched, total, 90), 90)
}
