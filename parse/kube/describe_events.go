package kube

import (
	"cmp"
	"io"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// DescribeEventsFormat reads the Events table `kubectl describe` ends an
// object with (a Pod's, a Node's, a Deployment's), alone or with the rest of
// the description, which it passes over: the part of a `kubectl describe
// pod` tickets paste most.
var DescribeEventsFormat = &format.Format{
	Name:    "describe-events",
	Kind:    model.KindKube,
	Command: "kubectl describe pod POD (its Events table; kubectl describe node and others alike)",
	Doc: "the rows under `Type  Reason  Age  From  Message`, or such rows pasted alone (and kubectl's before 1.10, `FirstSeen  LastSeen  Count  " +
		"From  SubObjectPath  Type  Reason  Message`, tab-separated): one Event per row, its type, reason, message " +
		"and count (`(x48 over 13m)`), AGE and FROM in the row's cells; a message's lines past its row joined to it; " +
		"the node a `kubelet, NODE` FROM names, else the description's `Node:`; the " +
		"object the description's `Name:` and `Namespace:` give, of the kind its command names (describe pod); the " +
		"description's other lines are passed over; a Service's or Endpoints' description is kubectl-describe's",
	Sniff: sniffDescribeEvents,
	Parse: format.Records(readDescribeEvents, func(s *model.Snapshot, out []model.Event) {
		s.Kube.Events = append(s.Kube.Events, out...)
	}, "Events"),
}

var (
	// describeEventsHeaderRe matches the table's header, today's and
	// kubectl's before 1.10.
	describeEventsHeaderRe = lazyre.New(`^\s*(?:Type\s+Reason\s+Age\s+From\s+Message|FirstSeen\s+LastSeen\s+Count\s+From\s+SubObjectPath\s+Type\s+Reason\s+Message)\s*$`)
	// describeEventsRuleRe matches the dashes under it.
	describeEventsRuleRe = lazyre.New(`^\s*-{4,}(?:\s+-{2,})+\s*$`)
	// describeEventRowRe matches a row of today's table: the type, the
	// reason, the age ("13m", "3m34s (x48 over 13m)", "<unknown>"), and
	// what follows, the source and the message, read by the header's
	// columns.
	describeEventRowRe = lazyre.New(`^\s+(Normal|Warning)\s+([A-Za-z]+)\s+(<unknown>|<invalid>|\d+[smhdy]\S*(?: \(x(\d+) over [^)]+\))?)\s+(.*)$`)
	// describeKindRe matches the resource a describe command names.
	describeKindRe = lazyre.New(`\bdescribe\s+(pods?|po|nodes?|no|services?|svc|deployments?|deploy|replicasets?|rs|daemonsets?|ds|statefulsets?|sts|ingress(?:es)?|ing|persistentvolumeclaims?|pvc)\b`)
)

// describeKinds are the kinds of describe's resource names.
var describeKinds = map[string]string{"po": "Pod", "pod": "Pod", "pods": "Pod", "no": "Node", "node": "Node",
	"nodes": "Node", "svc": "Service", "service": "Service", "services": "Service", "deploy": "Deployment",
	"deployment": "Deployment", "deployments": "Deployment", "rs": "ReplicaSet", "replicaset": "ReplicaSet",
	"replicasets": "ReplicaSet", "ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet",
	"sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet", "ing": "Ingress",
	"ingress": "Ingress", "ingresses": "Ingress", "pvc": "PersistentVolumeClaim",
	"persistentvolumeclaim": "PersistentVolumeClaim", "persistentvolumeclaims": "PersistentVolumeClaim"}

// describeEventsReader reads one file.
type describeEventsReader struct {
	out      []model.Event
	kind     string // the kind the command describes
	name, ns string // the object described, from its Name: and Namespace:
	node     string // the node its Node: names (a Pod's)
	from     int    // today's table: the column FROM starts at, -1 outside a table
	msg      int    // ... and MESSAGE
	old      bool   // in a table of kubectl before 1.10
	// afterRow is set after a row pasted without its header, whose
	// message may go on on the lines below, at their start.
	afterRow bool
}

func readDescribeEvents(r io.Reader, src *format.File, errs *model.ErrorList) []model.Event {
	d := &describeEventsReader{from: -1}
	d.command(src.Command)
	text.ReadLines(r, src, errs, text.Hooks{Command: d.command}, d.line)
	return d.out
}

// command starts the description a command prints.
func (d *describeEventsReader) command(cmd string) {
	d.kind, d.name, d.ns, d.node, d.from, d.old = "", "", "", "", -1, false
	if m := describeKindRe.FindStringSubmatch(cmd); m != nil {
		d.kind = describeKinds[m[1]]
	}
	if k, ok := text.ParseKubectl(cmd); ok {
		d.ns = k.Namespace
	}
}

func (d *describeEventsReader) line(l *text.Line) {
	raw, t := l.Text(), l.Trimmed
	switch {
	case describeEventsHeaderRe.MatchString(raw):
		d.old = strings.HasPrefix(t, "FirstSeen")
		d.from, d.msg = strings.Index(raw, "From"), strings.Index(raw, "Message")
		return
	case describeEventsRuleRe.MatchString(raw):
		return
	case d.from >= 0 && raw[0] != ' ' && raw[0] != '\t':
		if len(d.out) > 0 && !describeFieldRe.MatchString(raw) && !describeEventRowRe.MatchString(raw) {
			// The rest of a message kubectl printed on lines of its own,
			// or a terminal wrapped.
			d.out[len(d.out)-1].Message += " " + t
			return
		}
		d.from = -1 // the table ends at a line of the description
	}
	if d.from < 0 {
		if m := describeEventRowRe.FindStringSubmatch(raw); m != nil {
			// A row pasted without its header: split at two spaces.
			d.row(l, m, -1, -1)
			d.afterRow = true
			return
		}
		if d.afterRow && describeRowGoesOn(raw) {
			// The rest of its message, on a line of its own (a probe's
			// output, as kubectl prints it).
			d.out[len(d.out)-1].Message += " " + t
			return
		}
		d.afterRow = false
		d.description(l)
		return
	}
	if d.old {
		d.oldRow(l)
		return
	}
	m := describeEventRowRe.FindStringSubmatch(raw)
	if m == nil {
		if len(d.out) > 0 && !strings.HasPrefix(t, "Normal ") && !strings.HasPrefix(t, "Warning ") {
			// The rest of a message on a line of its own.
			d.out[len(d.out)-1].Message += " " + t
			return
		}
		l.Errorf("%w: expected a row of kubectl describe's Events (Type Reason Age From Message), got %q", format.ErrSyntax, t)
		return
	}
	d.row(l, m, d.from, d.msg)
}

// row keeps the row m of describeEventRowRe, its source and message
// split at the columns from and msg (-1: not known).
func (d *describeEventsReader) row(l *text.Line, m []string, from, msg int) {
	source, message := describeSplit(l.Text(), m[5], from, msg)
	count := 1
	if m[4] != "" {
		count, _ = strconv.Atoi(m[4])
	}
	d.add(l, m[1], m[2], m[3], source, message, count)
}

// describeSplit splits rest, the end of row raw past its age, into the
// source and the message, at the header's MESSAGE column when the row
// keeps its alignment, else at its first run of two spaces.
func describeSplit(raw, rest string, from, msg int) (string, string) {
	start := len(raw) - len(rest)
	if from >= 0 && msg > start && msg < len(raw) && raw[msg-1] == ' ' && raw[msg] != ' ' && start >= from-1 {
		return strings.TrimSpace(raw[start:msg]), strings.TrimSpace(raw[msg:])
	}
	if from >= 0 && msg >= len(raw) {
		return strings.TrimSpace(rest), "" // an event without a message (kube-proxy's Starting)
	}
	if i := strings.Index(rest, "  "); i >= 0 {
		return strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i:])
	}
	return "", strings.TrimSpace(rest)
}

// oldRow reads a row of kubectl's table before 1.10: FirstSeen, LastSeen,
// Count, From, SubObjectPath (often empty), Type, Reason, Message, between
// tabs.
func (d *describeEventsReader) oldRow(l *text.Line) {
	var f []string
	for _, c := range strings.Split(l.Trimmed, "\t") {
		if c = strings.TrimSpace(c); c != "" {
			f = append(f, c)
		}
	}
	typ := -1
	for i := 3; i < len(f) && i < 6; i++ {
		if f[i] == "Normal" || f[i] == "Warning" {
			typ = i
			break
		}
	}
	if typ < 0 || typ+2 >= len(f) {
		l.Errorf("%w: expected a row of kubectl describe's Events (FirstSeen LastSeen Count From SubObjectPath "+
			"Type Reason Message), got %q", format.ErrSyntax, l.Trimmed)
		return
	}
	count, err := strconv.Atoi(f[2])
	if err != nil {
		count = 1
	}
	d.add(l, f[typ], f[typ+1], f[1], f[3], strings.Join(f[typ+2:], " "), count)
}

// add keeps one event.
func (d *describeEventsReader) add(l *text.Line, typ, reason, age, from, message string, count int) {
	var e model.Event
	e.InvolvedObject = corev1.ObjectReference{Kind: d.kind, Name: d.name, Namespace: d.ns}
	e.Namespace, e.Type, e.Reason, e.Message, e.Count = d.ns, typ, reason, message, int32(count)
	node := cmp.Or(d.node, l.Node) // the Pod's node, else the file's
	if comp, host, ok := strings.Cut(from, ","); ok && strings.TrimSpace(comp) == "kubelet" {
		node = strings.TrimSpace(host) // "kubelet, worker-1"
	}
	e.Source = model.Source{Pos: l.Pos(), Node: node, FromTable: true, Cells: map[string]string{"AGE": age, "FROM": from}}
	d.out = append(d.out, e)
}

// describeRowGoesOn reports whether raw, a line below a row pasted without
// its header, goes on with the row's message: it starts at the line's
// start, and is no field of a description ("Name:  web").
func describeRowGoesOn(raw string) bool {
	return raw[0] != ' ' && raw[0] != '\t' && !describeFieldRe.MatchString(raw) && !kubectlStderrRe.MatchString(raw)
}

// description reads a line of the description before its Events: the
// object's name and namespace; the others are passed over. A line of
// another shape is reported.
func (d *describeEventsReader) description(l *text.Line) {
	raw := l.Text()
	if raw[0] == ' ' || raw[0] == '\t' {
		return // a field's value or a section's lines
	}
	m := describeFieldRe.FindStringSubmatch(raw)
	if m == nil {
		if kubectlStderrRe.MatchString(raw) {
			return
		}
		l.Errorf("%w: expected a \"Field:  value\" line of kubectl describe, or its Events table", format.ErrSyntax)
		return
	}
	switch v := strings.TrimSpace(m[2]); m[1] {
	case "Name":
		d.name, d.node = v, ""
	case "Namespace":
		d.ns = v
	case "Node":
		d.node, _, _ = strings.Cut(v, "/") // "worker-2/10.0.0.12"
		if d.node == "<none>" {
			d.node = ""
		}
	}
}

// sniffDescribeEvents claims text holding describe's Events table header
// and a row below it, or made of its rows alone, unless a `kubectl
// describe` of Endpoints or a Service (the kubectl-describe format's)
// holds it.
func sniffDescribeEvents(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	header, rows, other := false, 0, 0
	goesOn := false // the line before was a row, or went on with one
	for _, line := range text.HeadLines(head, 400) {
		if describeCmdRe.MatchString(line) || strings.HasPrefix(line, "Subsets:") || strings.HasPrefix(line, "TargetPort:") ||
			strings.HasPrefix(line, "Endpoints:") {
			return 0 // a Service's or Endpoints' description, kubectl-describe's
		}
		if strings.TrimSpace(line) == "" || text.IsPromptOrMarker(line) {
			goesOn = false
			continue
		}
		other++
		switch {
		case describeEventsHeaderRe.MatchString(line):
			header, goesOn = true, false
		case describeEventRowRe.MatchString(line) ||
			header && (strings.Contains(line, "\tNormal\t") || strings.Contains(line, "\tWarning\t")):
			rows++
			goesOn = true
		case goesOn && !header && describeRowGoesOn(line):
			other-- // a headerless row's message going on
		default:
			goesOn = false
		}
	}
	switch {
	case header && rows > 0:
		return 85
	case rows > 0 && rows == other:
		return 80 // rows pasted without their header
	}
	return 0
}

// DescribeEvents reads the Events tables of kubectl describe output. A
// line of no describe shape is reported with its position and the rest is
// read. name is used only in positions.
func DescribeEvents(r io.Reader, name string) ([]model.Event, error) {
	return format.ReadAll(r, name, readDescribeEvents)
}
