package kube

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/netmortem/netmortem/parse/internal/text"
)

// kubectlResourceKinds maps the resource names kubectl get takes (plural,
// singular, short) to the kinds netmortem keeps.
var kubectlResourceKinds = map[string]string{
	"services": "Service", "service": "Service", "svc": "Service",
	"endpoints": "Endpoints", "ep": "Endpoints",
	"endpointslices": "EndpointSlice", "endpointslice": "EndpointSlice",
	"pods": "Pod", "pod": "Pod", "po": "Pod",
	"nodes": "Node", "node": "Node", "no": "Node",
	"leases": "Lease", "lease": "Lease",
	"events": "Event", "event": "Event", "ev": "Event",
	"configmaps": "ConfigMap", "configmap": "ConfigMap", "cm": "ConfigMap",
	"daemonsets": "DaemonSet", "daemonset": "DaemonSet", "ds": "DaemonSet",
	"ingresses": "Ingress", "ingress": "Ingress", "ing": "Ingress",
}

// kubectlGet is what a `kubectl get RESOURCE NAME -n NS -o yaml` command
// says of the object it prints: its kind, name and namespace ("" when not
// said).
type kubectlGet struct {
	kind, name, namespace string
}

// kubectlGetOf reads cmd as kubectl get of one kind; ok is false for any
// other command.
func kubectlGetOf(cmd string) (kubectlGet, bool) {
	k, ok := text.ParseKubectl(cmd)
	if !ok || k.Verb != "get" || len(k.Args) == 0 {
		return kubectlGet{}, false
	}
	res, name, _ := strings.Cut(k.Args[0], "/") // kubectl get cm/kube-proxy
	kind := kubectlResourceKinds[strings.ToLower(res)]
	if kind == "" {
		return kubectlGet{}, false
	}
	g := kubectlGet{kind: kind, name: name, namespace: k.Namespace}
	if g.name == "" && len(k.Args) == 2 {
		g.name = k.Args[1]
	}
	return g, true
}

// leadingPrompts reads the shell prompt lines (and blank lines) a pasted
// kubectl output starts with and returns the reader of the whole input,
// those lines blanked so that the YAML's lines keep their numbers, with
// the last prompt's command ("" without).
func leadingPrompts(r io.Reader) (io.Reader, string) {
	br := bufio.NewReader(r)
	var head bytes.Buffer
	cmd := ""
	for range 5 {
		// A prompt is a short line: look no further than the buffer.
		buf, _ := br.Peek(4096)
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		if l := string(buf[:i]); strings.TrimSpace(l) != "" {
			_, c, ok := text.Prompt(l)
			if !ok {
				break
			}
			cmd = c
		}
		_, _ = br.Discard(i + 1)
		head.WriteByte('\n')
	}
	return io.MultiReader(&head, br), cmd
}
