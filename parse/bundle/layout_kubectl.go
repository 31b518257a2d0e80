package bundle

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/internal/shq"
)

// objectMeta is the part of a Kubernetes object the layout reads.
type objectMeta struct {
	Metadata struct {
		Name      string `json:"name" yaml:"name"`
		Namespace string `json:"namespace" yaml:"namespace"`
	} `json:"metadata" yaml:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName" yaml:"nodeName"`
	} `json:"spec" yaml:"spec"`
}

// objectList reads a List ({"items": [...]}), a bare array of objects (older
// troubleshoot bundles) or a single object, in JSON or YAML.
func objectList(b []byte) []objectMeta {
	var list struct {
		Items []objectMeta `json:"items" yaml:"items"`
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil
	}
	if t[0] == '[' {
		var arr []objectMeta
		if json.Unmarshal(t, &arr) == nil {
			return arr
		}
		return nil
	}
	if t[0] == '{' {
		if json.Unmarshal(t, &list) == nil && list.Items != nil {
			return list.Items
		}
		var one objectMeta
		if json.Unmarshal(t, &one) == nil && one.Metadata.Name != "" {
			return []objectMeta{one}
		}
		return nil
	}
	if yaml.Unmarshal(t, &list) == nil && list.Items != nil {
		return list.Items
	}
	var one objectMeta
	if yaml.Unmarshal(t, &one) == nil && one.Metadata.Name != "" {
		return []objectMeta{one}
	}
	return nil
}

func (l *layout) addPods(b []byte, ns string) {
	for _, p := range objectList(b) {
		if p.Spec.NodeName == "" || p.Metadata.Name == "" {
			continue
		}
		pns := p.Metadata.Namespace
		if pns == "" {
			pns = ns
		}
		l.podNode[pns+"/"+p.Metadata.Name] = p.Spec.NodeName
		l.nodes[p.Spec.NodeName] = true
	}
}

func (l *layout) addNodes(b []byte) {
	for _, n := range objectList(b) {
		if n.Metadata.Name != "" {
			l.nodes[n.Metadata.Name] = true
			l.listed[n.Metadata.Name] = true
		}
	}
}

// podNodeOf returns the node that ran pod ns/name: the pod list says, or,
// when the pod is not listed (deleted, a static pod) and the cluster has a
// single node, that node.
func (l *layout) podNodeOf(ns, name string) string {
	if n := l.podNode[ns+"/"+name]; n != "" {
		return n
	}
	if len(l.listed) == 1 {
		for n := range l.listed {
			return n
		}
	}
	return ""
}

func clusterInfoLayout(ix *index, d string) *layout {
	l := newLayout(LayoutClusterInfo, d)
	l.eachFile(ix, func(_, rel string, b []byte) {
		switch {
		case rel == "nodes.json":
			l.addNodes(b)
		case path.Base(rel) == clusterInfoPodsFile && strings.Count(rel, "/") == 1:
			l.addPods(b, path.Dir(rel))
		}
	})
	return l
}

func mustGatherLayout(ix *index, d string) *layout {
	l := newLayout(LayoutMustGather, d)
	l.eachFile(ix, func(_, rel string, b []byte) {
		parts := strings.Split(rel, "/")
		switch {
		case strings.Contains(rel, "core/nodes/"):
			l.addNodes(b)
			l.nodes[strings.TrimSuffix(path.Base(rel), path.Ext(rel))] = true
		case len(parts) == 5 && parts[0] == "namespaces" && parts[2] == "pods":
			l.addPods(b, parts[1])
		case len(parts) == 4 && parts[0] == "namespaces" && parts[2] == "core" && parts[3] == "pods.yaml":
			l.addPods(b, parts[1])
		}
	})
	for p, k := range ix.kinds {
		if rel, ok := l.rel(p); ok && k == entFile && strings.HasPrefix(rel, "cluster-scoped-resources/core/nodes/") {
			l.nodes[strings.TrimSuffix(path.Base(rel), path.Ext(rel))] = true
		}
	}
	return l
}

func (l *layout) placeClusterInfo(rel string) placement {
	parts := strings.Split(rel, "/")
	pl := placement{node: l.nodeInPath(rel)}
	switch {
	case len(parts) == 1 && strings.HasSuffix(rel, ".json"):
		pl.command = "kubectl cluster-info dump: kubectl get " + shq.Quote(strings.TrimSuffix(rel, ".json")) + " -o json"
		pl.node = ""
	case len(parts) == 2 && strings.HasSuffix(rel, ".json"):
		pl.command = "kubectl cluster-info dump: " + shq.Command("kubectl", "get", strings.TrimSuffix(parts[1], ".json"), "-n", parts[0], "-o", "json")
		pl.node = ""
	case len(parts) == 3 && parts[2] == "logs.txt":
		pl.command = shq.Command("kubectl", "logs", "-n", parts[0], parts[1])
		pl.node = l.podNodeOf(parts[0], parts[1])
	}
	return pl
}

func (l *layout) placeMustGather(rel string) placement {
	parts := strings.Split(rel, "/")
	pl := placement{node: l.nodeInPath(rel)}
	if len(parts) >= 5 && parts[0] == "namespaces" && parts[2] == "pods" {
		if n := l.podNodeOf(parts[1], parts[3]); n != "" {
			pl.node = n
		}
		if strings.HasSuffix(rel, ".log") {
			pl.command = "oc logs -n " + parts[1] + " " + parts[3]
		}
	}
	if parts[0] == "namespaces" || parts[0] == "cluster-scoped-resources" {
		if strings.HasSuffix(rel, ".yaml") && !strings.HasSuffix(rel, ".log") && pl.command == "" {
			pl.command = "oc get -o yaml"
			pl.node = ""
		}
	}
	if len(parts) >= 2 && parts[0] == "nodes" {
		pl.node = parts[1]
	}
	return pl
}
