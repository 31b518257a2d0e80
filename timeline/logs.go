package timeline

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// maxLabel bounds an event label made of a log line.
const maxLabel = 160

// logSource names a log event's lane: its component and node, or its
// file.
func logSource(e *model.LogEvent) string {
	name := e.Source
	if e.Container != "" && e.Pod != "" {
		name = fmt.Sprintf("container %s (pod %s/%s)", e.Container, e.Namespace, e.Pod)
	}
	if name == "" {
		name = path.Base(filepath.ToSlash(e.Pos.File))
	}
	if e.Node != "" {
		name += " on " + e.Node
	}
	return name
}

// logKind classes a log line: an error or anything else.
func logKind(e *model.LogEvent) string {
	switch strings.ToLower(e.Level) {
	case "e", "f", "error", "err", "fatal", "crit", "critical", "alert", "emerg", "panic":
		return report.EventError
	}
	return report.EventInfo
}

// clip shortens a log message to a label.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxLabel {
		return s
	}
	cut := maxLabel
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// logLanes groups log events into lanes by source, in the order first
// seen.
func logLanes(events []*model.LogEvent, kind func(*model.LogEvent) string) []report.Lane {
	byName := map[string]*report.Lane{}
	var order []string
	for _, e := range events {
		n := logSource(e)
		l := byName[n]
		if l == nil {
			l = &report.Lane{Name: n}
			byName[n] = l
			order = append(order, n)
		}
		l.Events = append(l.Events, report.Event{Time: e.Time, Kind: kind(e), Label: clip(e.Message), Count: 1, Pos: e.Pos})
	}
	var lanes []report.Lane
	for _, n := range order {
		finishLane(byName[n])
		lanes = append(lanes, *byName[n])
	}
	return lanes
}

// citedLogs draws the timed log lines f's evidence cites.
func (b *builder) citedLogs(f *analyzer.Finding, cited map[posKey]bool) part {
	var events []*model.LogEvent
	for i := range b.snap.Logs {
		if e := &b.snap.Logs[i]; !e.Time.IsZero() && cited[keyOf(e.Pos)] {
			events = append(events, e)
		}
	}
	if len(events) == 0 {
		return part{}
	}
	return part{title: "Log lines the finding cites", lanes: logLanes(events, logKind)}
}

// logErrors draws the errors of the logs f cites (kube-proxy's, for
// kube-proxy-sync-errors and stale-dnat): the cited lines and the other
// errors of the same files. The mark at the first stale DNAT is
// staleMark's.
func (b *builder) logErrors(f *analyzer.Finding, cited map[posKey]bool) part {
	files := map[string]bool{}
	for i := range b.snap.Logs {
		if e := &b.snap.Logs[i]; cited[keyOf(e.Pos)] {
			files[e.Pos.File] = true
		}
	}
	if b.plot(f.Rule).NodeKubeProxyErrors {
		// kube-proxy's errors on the finding's node explain a stale
		// dataplane.
		node := f.Subject["node"]
		for i := range b.snap.Logs {
			e := &b.snap.Logs[i]
			if isKubeProxy(e) && logKind(e) == report.EventError && (node == "" || e.Node == "" || e.Node == node) {
				files[e.Pos.File] = true
			}
		}
	}
	var events []*model.LogEvent
	for i := range b.snap.Logs {
		e := &b.snap.Logs[i]
		if e.Time.IsZero() || !files[e.Pos.File] {
			continue
		}
		if cited[keyOf(e.Pos)] || logKind(e) == report.EventError {
			events = append(events, e)
		}
	}
	p := part{}
	if len(events) > 0 {
		p.title = "Errors logged"
		if isKubeProxy(events[0]) {
			p.title = "kube-proxy errors"
		}
		p.lanes = logLanes(events, func(e *model.LogEvent) string {
			if cited[keyOf(e.Pos)] {
				return report.EventError
			}
			return logKind(e)
		})
	}
	return p
}

// staleMark marks the first stale DNAT on f's timeline (see firstStale).
func (b *builder) staleMark(f *analyzer.Finding) part {
	m, ok := b.firstStale(f)
	if !ok {
		return part{}
	}
	return part{title: "the first stale DNAT", marks: []report.Mark{m}}
}

// isKubeProxy reports whether a log line is kube-proxy's.
func isKubeProxy(e *model.LogEvent) bool {
	return strings.Contains(e.Source, "kube-proxy") || strings.Contains(e.Container, "kube-proxy") ||
		strings.Contains(path.Base(filepath.ToSlash(e.Pos.File)), "kube-proxy")
}

// firstStale is the first failed attempt to a stale DNAT target of a
// finding whose rule's Plot names StaleTargets (f itself, when its rule
// does, or else one on f's node): the moment the stale rules are seen to
// harm.
func (b *builder) firstStale(f *analyzer.Finding) (report.Mark, bool) {
	var sel selector
	own := b.plot(f.Rule).StaleTargets != nil
	for i := range b.all {
		g := &b.all[i]
		targets := b.plot(g.Rule).StaleTargets
		if targets == nil {
			continue
		}
		if g != f && g.Fingerprint != f.Fingerprint && f.Subject["node"] != "" && g.Subject["node"] != "" && g.Subject["node"] != f.Subject["node"] {
			continue
		}
		if own && g.Fingerprint != f.Fingerprint {
			continue
		}
		for _, t := range values(g, *targets) {
			sel.addServer(t)
		}
	}
	if len(sel.servers) == 0 {
		return report.Mark{}, false
	}
	var first *model.Attempt
	for i := range b.snap.Attempts {
		a := &b.snap.Attempts[i]
		if a.Outcome.Failed() && sel.server(a.Server) && !a.Start.IsZero() && (first == nil || a.Start.Before(first.Start)) {
			first = a
		}
	}
	if first == nil {
		return report.Mark{}, false
	}
	return report.Mark{Time: first.Start, Pos: first.Pos,
		Label: fmt.Sprintf("first stale DNAT: %s → %s %s", first.Client, first.Server, outcomeWords(first.Outcome))}, true
}

// restarts draws a container's runs and restarts against its liveness
// probe's window, for probe-restart-loop.
func (b *builder) restarts(f *analyzer.Finding, cited map[posKey]bool) part {
	kind, nsName, _ := strings.Cut(f.Subject["object"], " ")
	ns, name, ok := strings.Cut(nsName, "/")
	container := f.Subject["container"]
	if kind != "Pod" || !ok || container == "" {
		return part{}
	}
	l := report.Lane{Name: fmt.Sprintf("container %s (pod %s/%s)", container, ns, name)}
	var starts []time.Time
	for i := range b.snap.Kube.Pods {
		pod := &b.snap.Kube.Pods[i]
		if pod.Name != name || pod.Namespace != ns {
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name != container {
				continue
			}
			if r := cs.State.Running; r != nil && !r.StartedAt.IsZero() {
				starts = append(starts, r.StartedAt.UTC())
				l.Events = append(l.Events, report.Event{Time: r.StartedAt.UTC(), Kind: report.EventRestart, Count: 1, Pos: pod.Source.Pos,
					Label: fmt.Sprintf("run %d started (the current one)", cs.RestartCount+1)})
			}
			if t := cs.LastTerminationState.Terminated; t != nil {
				if !t.StartedAt.IsZero() {
					starts = append(starts, t.StartedAt.UTC())
					l.Events = append(l.Events, report.Event{Time: t.StartedAt.UTC(), Kind: report.EventInfo, Count: 1, Pos: pod.Source.Pos,
						Label: fmt.Sprintf("run %d started", cs.RestartCount)})
				}
				if !t.FinishedAt.IsZero() {
					l.Events = append(l.Events, report.Event{Time: t.FinishedAt.UTC(), Kind: report.EventRestart, Count: 1, Pos: pod.Source.Pos,
						Label: fmt.Sprintf("restart %d: run ended with status %d (%s)", cs.RestartCount, t.ExitCode, t.Reason)})
				}
			}
		}
	}
	for i := range b.snap.Kube.Events {
		e := &b.snap.Kube.Events[i]
		if e.InvolvedObject.Name != name || e.InvolvedObject.Namespace != ns {
			continue
		}
		msg := strings.ToLower(e.Message)
		if (e.Reason != "Unhealthy" && e.Reason != "Killing") || !strings.Contains(msg, "liveness") {
			continue
		}
		count := int(max(e.Count, 1))
		kindOf := report.EventError
		if e.Reason == "Killing" {
			kindOf = report.EventRestart
		}
		label := fmt.Sprintf("%s: %s", e.Reason, clip(e.Message))
		switch first, last := e.FirstTimestamp.UTC(), e.LastTimestamp.UTC(); {
		case !e.FirstTimestamp.IsZero() && !e.LastTimestamp.IsZero() && last.After(first) && count > 1:
			// The event stands for count occurrences from the first to
			// the last: one event over that time, not two instants
			// that look like the only ones.
			l.Events = append(l.Events,
				report.Event{Time: first, End: last, Kind: kindOf, Count: count, Pos: e.Source.Pos,
					Label: fmt.Sprintf("%s (%d times, the first at %s, the last at %s)", label, count,
						first.Format("2006-01-02 15:04:05"), last.Format("2006-01-02 15:04:05"))})
		case !e.LastTimestamp.IsZero():
			l.Events = append(l.Events, report.Event{Time: last, Kind: kindOf, Count: count, Pos: e.Source.Pos, Label: label})
		case !e.EventTime.IsZero():
			l.Events = append(l.Events, report.Event{Time: e.EventTime.UTC(), Kind: kindOf, Count: count, Pos: e.Source.Pos, Label: label})
		}
	}
	lanes := []report.Lane{}
	if len(l.Events) > 0 {
		finishLane(&l)
		lanes = append(lanes, l)
	}
	// The lines of logs the finding cites (the kubelet restarting the
	// container, the container stopped by a signal), and the kubelet's
	// liveness probe failures of the pod.
	var logs []*model.LogEvent
	for i := range b.snap.Logs {
		e := &b.snap.Logs[i]
		if e.Time.IsZero() {
			continue
		}
		if cited[keyOf(e.Pos)] || livenessFailure(e, ns, name) {
			logs = append(logs, e)
		}
	}
	if len(lanes) == 0 && len(logs) == 0 {
		return part{}
	}
	p := part{title: "Restarts of container " + container + " against its liveness probe's window", lanes: lanes}
	// The probe's failure window after each run's start: the initial
	// delay, then failureThreshold failed checks an interval apart: the
	// period, or the timeout when it is longer (a check waits for its
	// timeout before the next starts), as the rule counts it.
	delay, _ := factInt(f, "initial_delay_s")
	period, okP := factInt(f, "period_s")
	timeout, _ := factInt(f, "timeout_s")
	period = max(period, timeout)
	threshold, okT := factInt(f, "failure_threshold")
	if okP && okT && period > 0 && threshold > 0 {
		slices.SortFunc(starts, time.Time.Compare)
		for _, s := range slices.Compact(starts) {
			from := s.Add(time.Duration(delay) * time.Second)
			p.spans = append(p.spans, report.Span{Start: from, End: from.Add(time.Duration(period*threshold) * time.Second),
				Kind:  report.SpanWindow,
				Label: fmt.Sprintf("liveness probe window (%d × %d s after %d s)", threshold, period, delay)})
		}
	}
	if len(logs) > 0 {
		logPart := part{lanes: logLanes(logs, func(e *model.LogEvent) string {
			if livenessFailure(e, ns, name) {
				return report.EventError
			}
			return logKind(e)
		})}
		if len(p.lanes) == 0 || alignClock(&logPart, partTimes(&p)) {
			p.lanes = append(p.lanes, logPart.lanes...)
		}
	}
	return p
}

// livenessFailure reports whether a log line is the kubelet's report of a
// failed liveness probe of the pod ns/name: "Liveness probe failed" or
// "failed liveness probe" with the pod's name.
func livenessFailure(e *model.LogEvent, ns, name string) bool {
	msg := strings.ToLower(e.Message)
	if !strings.Contains(msg, "liveness probe failed") && !strings.Contains(msg, "failed liveness probe") &&
		!(strings.Contains(msg, "probe failed") && strings.Contains(msg, "liveness")) {
		return false
	}
	if e.Pod != "" {
		return e.Pod == name && (e.Namespace == "" || e.Namespace == ns)
	}
	return strings.Contains(e.Message, name)
}
