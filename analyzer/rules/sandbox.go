package rules

import (
	"maps"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// sandboxError is one report of a Pod sandbox's network failing: a log
// line of the kubelet or a runtime, or an event.
type sandboxError struct {
	node  string
	text  string // the message, with a log line's fields after it
	pos   model.Pos
	count int // the times it stands for: an event's count, 1 for a line
	// pod says the line is a Pod sandbox's (podSandboxLine), as every
	// event is; other lines may be another libcni user's.
	pod bool
	src string // a line's source, file and container
}

// eachSandboxError calls fn for each log line and event of p's snapshot
// whose text holds needle, saying whether it is a Pod sandbox's
// (podSandboxLine):
// the kubelet's, containerd's or CRI-O's lines (their message, and the
// fields structured logs put the error in, klog's err= and containerd's
// error=), and the FailedCreatePodSandBox or FailedSync events, whose node
// is the Pod's (the event's source), not the file's.
func eachSandboxError(p *analyzer.Pass, needle string, fn func(sandboxError)) {
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if !strings.Contains(le.Message, needle) && !fieldsHold(le.Fields, needle) {
			continue
		}
		text := le.Message
		for _, k := range slices.Sorted(maps.Keys(le.Fields)) {
			text += " " + le.Fields[k]
		}
		fn(sandboxError{node: le.Node, text: text, pos: le.Pos, count: 1, pod: podSandboxLine(le, text),
			src: le.Source + " " + le.Pos.File + " " + le.Container})
	}
	for i := range p.Snap.Kube.Events {
		e := &p.Snap.Kube.Events[i]
		if strings.Contains(e.Message, needle) {
			fn(sandboxError{node: e.Source.Node, text: e.Message, pos: e.Source.Pos, count: max(int(e.Count), 1),
				pod: true})
		}
	}
}

// fieldsHold reports whether a field's value holds needle.
func fieldsHold(fields map[string]string, needle string) bool {
	for _, v := range fields {
		if strings.Contains(v, needle) {
			return true
		}
	}
	return false
}

// podSandboxLine reports whether le is a Pod sandbox's error: of the
// kubelet (its CNI driver, cni.go), a CRI runtime or Multus, or naming a
// sandbox or a Pod, text being its message and fields; not another
// libcni user's (podman, a container engine's own networks).
func podSandboxLine(le *model.LogEvent, text string) bool {
	src := strings.ToLower(le.Source + " " + le.Pos.File + " " + le.Container)
	for _, c := range []string{"kubelet", "containerd", "crio", "cri-o", "multus"} {
		if strings.Contains(src, c) {
			return true
		}
	}
	t := strings.ToLower(text)
	return strings.HasPrefix(le.Fields["caller"], "cni.go:") || strings.Contains(t, "sandbox") ||
		podWordRe.MatchString(t) || strings.Contains(t, "networkplugin")
}

// podWordRe finds the word pod ("for pod \"coredns-...\"", pod=), not
// podman's name.
var podWordRe = lazyre.New(`\bpods?\b`)

// sandboxSetup reports whether text fails a sandbox's setup (ADD), rather
// than only its teardown (DEL, after a CNI was replaced).
func sandboxSetup(text string) bool {
	t := strings.ToLower(text)
	for _, s := range []string{"set up", "setup", "(add)", "adding", "createpodsandbox", "runpodsandbox"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
