package kube

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// EventLinesFormat reads Events pasted from a dashboard's list (Rancher,
// Lens, the Kubernetes dashboard): each event as its object, its reason and
// its message on lines of their own.
var EventLinesFormat = &format.Format{
	Name:    "event-lines",
	Kind:    model.KindKube,
	Command: "Events copied from a dashboard's event list (one event: object, reason, message, a line each)",
	Doc: "`kube-system:svclb-traefik-...-8k4xr` (namespace:name or namespace/name), then `FailedScheduling`, then " +
		"`0/5 nodes are available: ...`: one Event per three lines, its involvedObject's namespace and name, " +
		"reason and message, at the object's line (partial: kind, type, count and times are not shown)",
	Sniff: sniffEventLines,
	Parse: func(ctx context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		evs := readEventLines(r, src, &errs)
		snap.Kube.Events = append(snap.Kube.Events, evs...)
		src.Count("Event", len(evs))
		return len(evs), errs.Err()
	},
}

var (
	// eventObjectRe: "kube-system:svclb-traefik-8k4xr", "default/web-0".
	eventObjectRe = lazyre.New(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)[:/]([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$`)
	// eventReasonRe: a reason as the kubelet and controllers write them.
	eventReasonRe = lazyre.New(`^[A-Z][a-z]+(?:[A-Z][A-Za-z]*)+$`)
)

// EventLines reads events pasted a line per field.
func EventLines(r io.Reader, name string) ([]model.Event, error) {
	var errs model.ErrorList
	evs := readEventLines(r, &format.File{Name: name}, &errs)
	return evs, errs.Err()
}

// sniffEventLines knows the shape by its lines: object, reason, message,
// again and again, blank lines aside.
func sniffEventLines(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	var lines []string
	for _, l := range text.HeadLines(head, 60) {
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	n := len(lines) / 3 * 3
	if n == 0 || n == len(lines)-1 || n < len(lines)-2 {
		return 0 // a whole number of events, the head's last one perhaps cut
	}
	for i := 0; i < n; i += 3 {
		if !eventObjectRe.MatchString(lines[i]) || !eventReasonRe.MatchString(lines[i+1]) {
			return 0
		}
	}
	return 80
}

func readEventLines(r io.Reader, src *format.File, errs *model.ErrorList) []model.Event {
	var out []model.Event
	var fields []string
	var pos model.Pos
	ls := text.NewLines(r, src.Name, errs)
	for ls.Next() {
		t := strings.TrimSpace(ls.Text())
		if t == "" {
			continue
		}
		if len(fields) == 0 {
			pos = ls.Pos()
		}
		fields = append(fields, t)
		switch {
		case len(fields) == 1 && !eventObjectRe.MatchString(t):
			errs.Addf(ls.Pos(), t, "%w: expected an event's object (namespace:name)", format.ErrSyntax)
			fields = nil
		case len(fields) == 2 && !eventReasonRe.MatchString(t):
			errs.Addf(ls.Pos(), t, "%w: expected an event's reason (FailedScheduling, BackOff ...)", format.ErrSyntax)
			fields = nil
		case len(fields) == 3:
			m := eventObjectRe.FindStringSubmatch(fields[0])
			ev := corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: m[1], Name: fmt.Sprintf("%s.line%d", m[3], pos.Line)},
				InvolvedObject: corev1.ObjectReference{Namespace: m[1], Name: m[3]},
				Reason:         fields[1], Message: fields[2],
			}
			out = append(out, model.Event{Event: ev, Source: model.Source{Pos: pos, Node: src.Node, FromTable: true}})
			fields = nil
		}
	}
	if len(fields) > 0 {
		errs.Addf(pos, fields[0], "%w: an event cut after its %s", format.ErrSyntax, []string{"", "object", "reason"}[len(fields)])
	}
	return out
}
