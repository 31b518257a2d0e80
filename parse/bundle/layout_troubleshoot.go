package bundle

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/shq"
)

func troubleshootLayout(ix *index, d string) *layout {
	l := newLayout(LayoutTroubleshoot, d)
	l.eachFile(ix, func(p, rel string, b []byte) {
		switch {
		case rel == "cluster-resources/nodes.json":
			l.addNodes(b)
		case path.Dir(rel) == "cluster-resources/nodes":
			l.addNodes(b)
		case path.Base(rel) == "node_list.json":
			var nl struct {
				Nodes []string `json:"nodes"`
			}
			if json.Unmarshal(b, &nl) == nil {
				for _, n := range nl.Nodes {
					l.nodes[n] = true
					l.listed[n] = true
				}
			}
		case path.Dir(rel) == "cluster-resources/pods" && strings.HasSuffix(rel, ".json"):
			l.addPods(b, strings.TrimSuffix(path.Base(rel), ".json"))
		case strings.HasPrefix(rel, "host-collectors/") && strings.HasSuffix(rel, "-info.json"):
			if cmd := runInfoCommand(b); cmd != "" {
				out := strings.TrimSuffix(p, "-info.json") + ".txt"
				l.runInfo[out] = cmd
			}
		}
	})
	// sysctl/<node>: the in-cluster sysctl collector names files after nodes.
	for p, k := range ix.kinds {
		if rel, ok := l.rel(p); ok && k == entFile && path.Dir(rel) == "sysctl" {
			l.nodes[path.Base(rel)] = true
		}
	}
	return l
}

// runInfoCommand reads the command of a troubleshoot run-host info file:
// {"command": "iptables-save -t nat", ...}, or a command with "args".
func runInfoCommand(b []byte) string {
	var info map[string]any
	if json.Unmarshal(b, &info) != nil {
		return ""
	}
	var parts []string
	switch c := info["command"].(type) {
	case string:
		parts = append(parts, c)
	case []any:
		for _, a := range c {
			if s, ok := a.(string); ok {
				parts = append(parts, s)
			}
		}
	}
	if args, ok := info["args"].([]any); ok {
		for _, a := range args {
			if s, ok := a.(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

func (l *layout) placeTroubleshoot(p, rel string) placement {
	pl := placement{node: l.nodeInPath(rel)}
	parts := strings.Split(rel, "/")
	base := path.Base(rel)
	switch {
	case base == "errors.json" || strings.HasSuffix(base, "-errors.json") || strings.HasSuffix(base, "-error.json") ||
		strings.HasSuffix(parts[0], "-errors"):
		pl.errorsFile = true
		return pl
	case parts[0] == "sysctl" && len(parts) == 2:
		pl.node = parts[1]
		pl.command = "sysctl (troubleshoot sysctl collector: /proc/sys/net/ipv4, net/bridge, vm)"
	case parts[0] == "cluster-resources" && len(parts) >= 6 && parts[1] == "pods" && parts[2] == "logs":
		ns, pod, file := parts[3], parts[4], parts[len(parts)-1]
		container := strings.TrimSuffix(file, ".log")
		prev := ""
		if c, ok := strings.CutSuffix(container, "-previous"); ok {
			container, prev = c, " --previous"
		}
		pl.command = shq.Command("kubectl", "logs", "-n", ns, pod, "-c", container) + prev
		if n := l.podNodeOf(ns, pod); n != "" {
			pl.node = n
		}
	case parts[0] == "cluster-resources" && len(parts) == 4 && parts[1] == "custom-resources":
		// custom-resources/<plural.group>/<namespace>.json and .yaml
		ext := strings.TrimPrefix(path.Ext(base), ".")
		pl.command = shq.Command("kubectl", "get", parts[2], "-n", strings.TrimSuffix(base, path.Ext(base)), "-o", ext)
	case rel == "cluster-info/cluster_version.json":
		pl.command = "kubectl version -o json"
	case rel == "dns/debug.json":
		pl.command = "troubleshoot's dns collector (dns/debug.json)"
	case parts[0] == "cluster-resources" && len(parts) == 3 && strings.HasSuffix(base, ".json"):
		pl.command = "kubectl get " + parts[1] + " -n " + strings.TrimSuffix(base, ".json") + " -o json"
	case parts[0] == "cluster-resources" && len(parts) == 2 && strings.HasSuffix(base, ".json"):
		pl.command = "kubectl get " + strings.TrimSuffix(base, ".json") + " -o json"
	case parts[0] == "host-collectors":
		if cmd := l.runInfo[p]; cmd != "" {
			pl.command = cmd
		}
	}
	return pl
}
