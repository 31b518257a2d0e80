package parse

import (
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/parse/internal/text"
)

// The bundle layouts Open recognizes. The layout never decides a file's
// format (its content does); it says which node a file belongs to and,
// where it can, which command produced it.
const (
	LayoutTroubleshoot   = "troubleshoot"      // troubleshoot.sh support bundle
	LayoutSOSReport      = "sosreport"         // sos report (sosreport) of one host
	LayoutRancher        = "rancher"           // Rancher v2.x logs collector, one node
	LayoutEKS            = "eks"               // Amazon EKS log collector, one node
	LayoutClusterInfo    = "cluster-info-dump" // kubectl cluster-info dump --output-directory
	LayoutMustGather     = "must-gather"       // oc adm must-gather
	LayoutAttachments    = ""                  // loose files: a ticket's attachments
	netnsNodeSeparator   = "/netns/"
	maxLayoutFileBytes   = 16 << 20 // a layout file (pod list, node list) larger than this is not indexed
	maxLayoutIndexBytes  = 64 << 20 // all layout files of one tree
	layoutCommandBonus   = 20       // sniff bonus for a format whose program the layout names
	clusterInfoPodsFile  = "pods.json"
	troubleshootVersion  = "version.yaml"
	sosCommandsDir       = "sos_commands"
	rancherNetworkingDir = "networking"
)

// NetnsNode names the network namespace ns of host as a node of its own,
// "host/netns/ns", so its sockets and rules never mix with the host's.
func NetnsNode(host, ns string) string { return host + netnsNodeSeparator + ns }

// placement is what a layout says of one file.
type placement struct {
	layout  string
	node    string
	command string
	// errorsFile marks a collector's error list (troubleshoot
	// *-errors.json): its entries are read as warnings.
	errorsFile bool
	// blank lists lines the collector added around the command output
	// (banners, trailers); they are read as empty lines so line numbers
	// stay those of the file.
	blank func(line string) bool
	// direct is set for a file named on the command line.
	direct bool
}

// index is what the first pass over a tree learns: every path, and the
// content of the small files that tell the layout (version.yaml,
// hostname, node and pod lists, run-host info files).
type index struct {
	kinds map[string]entryKind
	dirs  map[string]bool
	files map[string][]byte
	bytes int64
}

func newIndex() *index {
	return &index{kinds: map[string]entryKind{}, dirs: map[string]bool{"": true}, files: map[string][]byte{}}
}

func (ix *index) add(e *entry) {
	ix.kinds[e.name] = e.kind
	d := e.name
	if e.kind != entDir {
		d = path.Dir(e.name)
	}
	for d != "." && d != "" && !ix.dirs[d] {
		ix.dirs[d] = true
		d = path.Dir(d)
	}
}

func (ix *index) has(p string) bool { _, ok := ix.kinds[p]; return ok }

func (ix *index) isDir(p string) bool { return ix.dirs[p] }

// wantContent reports whether the first pass keeps the content of name.
func wantContent(name string) bool {
	base := path.Base(name)
	switch base {
	case troubleshootVersion, "hostname", "node_list.json", "nodes.json", "instance-id.txt", clusterInfoPodsFile, "pods.yaml":
		return true
	}
	dir := path.Dir(name)
	switch {
	case strings.HasSuffix(base, "-info.json") && strings.Contains(name, "host-collectors/"):
		return true
	case strings.HasSuffix(dir, "cluster-resources/pods") && strings.HasSuffix(base, ".json"):
		return true
	case strings.HasSuffix(dir, "cluster-resources/nodes") || strings.HasSuffix(dir, "core/nodes"):
		return true
	case strings.Contains(name, "/pods/") && strings.HasSuffix(base, ".yaml") && path.Base(path.Dir(name)) == strings.TrimSuffix(base, ".yaml"):
		return true // must-gather: namespaces/<ns>/pods/<pod>/<pod>.yaml
	}
	return false
}

// layout is one recognized bundle layout rooted at a directory of a tree.
type layout struct {
	kind string
	root string // "" is the tree root
	// node is the node the whole layout belongs to (single-node
	// collectors); "" for cluster-wide bundles.
	node string
	// nodes are node names the bundle lists; a path element equal to one
	// attributes the file to it.
	nodes map[string]bool
	// listed are the nodes of the cluster's node list (nodes.json).
	listed map[string]bool
	// podNode maps "namespace/pod" to the node running the pod, for logs.
	podNode map[string]string
	// runInfo maps a troubleshoot run-host output file to its command.
	runInfo map[string]string
}

// layouts is every layout found in one tree, deepest root first.
type layouts struct {
	list []*layout
	base placement
}

// detectLayouts finds the layouts of a tree from its index. treeName is the
// tree's own name (directory or archive path), used when a collector names
// its output after the node.
func detectLayouts(ix *index, treeName string, base placement) *layouts {
	ls := &layouts{base: base}
	dirs := make([]string, 0, len(ix.dirs))
	for d := range ix.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if l := detectAt(ix, d, treeName); l != nil {
			ls.list = append(ls.list, l)
		}
	}
	sort.SliceStable(ls.list, func(i, j int) bool { return len(ls.list[i].root) > len(ls.list[j].root) })
	return ls
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// rootName is the name a collector gave its output: the root directory's
// base name, or the archive's name without extensions for the tree root.
func rootName(root, treeName string) string {
	if root != "" {
		return path.Base(root)
	}
	b := path.Base(strings.ReplaceAll(treeName, "\\", "/"))
	if i := strings.LastIndex(b, "!"); i >= 0 {
		b = path.Base(b[i+1:])
	}
	for _, ext := range []string{".gz", ".tgz", ".xz", ".bz2", ".zst", ".tar", ".zip"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

func detectAt(ix *index, d, treeName string) *layout {
	at := func(p string) string { return join(d, p) }
	switch {
	case ix.has(at(troubleshootVersion)) && (ix.isDir(at("cluster-resources")) || ix.isDir(at("host-collectors")) ||
		bytes.Contains(ix.files[at(troubleshootVersion)], []byte("troubleshoot"))):
		return troubleshootLayout(ix, d)
	case ix.isDir(at(sosCommandsDir)):
		return &layout{kind: LayoutSOSReport, root: d, node: sosHost(ix, d, treeName)}
	case ix.isDir(at(rancherNetworkingDir)) && (ix.has(at("networking/iptablessave")) || ix.has(at("networking/ssanp")) ||
		ix.has(at("systeminfo/sysctla")) || ix.has(at("networking/ipaddrshow"))):
		return &layout{kind: LayoutRancher, root: d, node: rancherHost(ix, d, treeName)}
	case ix.isDir(at(rancherNetworkingDir)) && (ix.has(at("system/instance-id.txt")) || ix.isDir(at("ipamd")) ||
		ix.has(at("sysctls/sysctl_all.txt")) || strings.HasPrefix(rootName(d, treeName), "eks_")):
		return &layout{kind: LayoutEKS, root: d, node: eksNode(ix, d, treeName)}
	case ix.isDir(at("cluster-scoped-resources")) || (ix.isDir(at("namespaces")) && ix.has(at("timestamp"))):
		return mustGatherLayout(ix, d)
	case ix.has(at("nodes.json")) && hasChild(ix, d, clusterInfoPodsFile):
		return clusterInfoLayout(ix, d)
	}
	return nil
}

// hasChild reports whether some directory directly under d holds name.
func hasChild(ix *index, d, name string) bool {
	for p := range ix.kinds {
		if path.Base(p) == name && path.Dir(path.Dir(p)) == pathOrDot(d) {
			return true
		}
	}
	return false
}

func pathOrDot(d string) string {
	if d == "" {
		return "."
	}
	return d
}

// firstLine returns the first non-empty line of b, trimmed.
func firstLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// sosNameRE takes the host out of sosreport-<host>[-<case id>]-<date>-<random>.
var sosNameRE = regexp.MustCompile(`^sosreport-(.+?)(?:-\d{5,})?-\d{4}-\d{2}-\d{2}-[a-z0-9]+$`)

// sosOldNameRE takes the host out of sosreport-<host>[.<case>]-<YYYYMMDDhhmmss>.
var sosOldNameRE = regexp.MustCompile(`^sosreport-(.+?)(?:\.\d+)?-\d{14}$`)

func sosHost(ix *index, d, treeName string) string {
	if h := firstLine(ix.files[join(d, "hostname")]); h != "" {
		return h
	}
	n := rootName(d, treeName)
	if m := sosNameRE.FindStringSubmatch(n); m != nil {
		return m[1]
	}
	if m := sosOldNameRE.FindStringSubmatch(n); m != nil {
		return m[1]
	}
	return strings.TrimPrefix(n, "sosreport-")
}

// collectorDateRE matches the date suffix collectors add to a host name:
// -2024-05-06_10_11_12 (Rancher), _2024-05-06_1011-UTC... (EKS).
var collectorDateRE = regexp.MustCompile(`[-_]\d{4}-\d{2}-\d{2}[_T-].*$`)

func rancherHost(ix *index, d, treeName string) string {
	if h := firstLine(ix.files[join(d, "systeminfo/hostname")]); h != "" {
		return h
	}
	return collectorDateRE.ReplaceAllString(rootName(d, treeName), "")
}

var eksNameRE = regexp.MustCompile(`^eks_(i-[0-9a-f]+|[^_]+)`)

func eksNode(ix *index, d, treeName string) string {
	if id := firstLine(ix.files[join(d, "system/instance-id.txt")]); id != "" {
		return id
	}
	if m := eksNameRE.FindStringSubmatch(rootName(d, treeName)); m != nil {
		return m[1]
	}
	return collectorDateRE.ReplaceAllString(rootName(d, treeName), "")
}

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

func newLayout(kind, root string) *layout {
	return &layout{kind: kind, root: root, nodes: map[string]bool{}, listed: map[string]bool{}, podNode: map[string]string{}, runInfo: map[string]string{}}
}

// rel returns p relative to the layout root.
func (l *layout) rel(p string) (string, bool) {
	if l.root == "" {
		return p, true
	}
	if strings.HasPrefix(p, l.root+"/") {
		return p[len(l.root)+1:], true
	}
	return "", false
}

func troubleshootLayout(ix *index, d string) *layout {
	l := newLayout(LayoutTroubleshoot, d)
	for p, b := range ix.files {
		rel, ok := l.rel(p)
		if !ok {
			continue
		}
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
	}
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

func clusterInfoLayout(ix *index, d string) *layout {
	l := newLayout(LayoutClusterInfo, d)
	for p, b := range ix.files {
		rel, ok := l.rel(p)
		if !ok {
			continue
		}
		switch {
		case rel == "nodes.json":
			l.addNodes(b)
		case path.Base(rel) == clusterInfoPodsFile && strings.Count(rel, "/") == 1:
			l.addPods(b, path.Dir(rel))
		}
	}
	return l
}

func mustGatherLayout(ix *index, d string) *layout {
	l := newLayout(LayoutMustGather, d)
	for p, b := range ix.files {
		rel, ok := l.rel(p)
		if !ok {
			continue
		}
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
	}
	for p, k := range ix.kinds {
		if rel, ok := l.rel(p); ok && k == entFile && strings.HasPrefix(rel, "cluster-scoped-resources/core/nodes/") {
			l.nodes[strings.TrimSuffix(path.Base(rel), path.Ext(rel))] = true
		}
	}
	return l
}

// place says where the file p of the tree belongs.
func (ls *layouts) place(p string) placement {
	for _, l := range ls.list {
		rel, ok := l.rel(p)
		if !ok {
			continue
		}
		pl := l.place(p, rel)
		pl.layout = l.kind
		switch {
		case clusterWide(pl):
			pl.node = ""
		case pl.node == "":
			pl.node = ls.base.node
		}
		return pl
	}
	pl := ls.base
	pl.direct = false
	return pl
}

// clusterWide reports whether a placement names cluster-wide evidence
// (kubectl output), which belongs to no node.
func clusterWide(pl placement) bool {
	return text.Program(pl.command) == "kubectl" && !strings.Contains(pl.command, " logs ")
}

func (l *layout) place(p, rel string) placement {
	switch l.kind {
	case LayoutTroubleshoot:
		return l.placeTroubleshoot(p, rel)
	case LayoutSOSReport:
		return placeSOS(l.node, rel)
	case LayoutRancher:
		return placeRancher(l.node, rel)
	case LayoutEKS:
		return placeEKS(l.node, rel)
	case LayoutClusterInfo:
		return l.placeClusterInfo(rel)
	case LayoutMustGather:
		return l.placeMustGather(rel)
	}
	return placement{}
}

// nodeInPath returns a known node named by an element of rel (a directory,
// or the file name without its extension).
func (l *layout) nodeInPath(rel string) string {
	parts := strings.Split(rel, "/")
	for i := len(parts) - 1; i >= 0; i-- {
		name := parts[i]
		if i == len(parts)-1 {
			if l.nodes[name] {
				return name
			}
			name = strings.TrimSuffix(name, path.Ext(name))
		}
		if l.nodes[name] {
			return name
		}
	}
	return ""
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
		pl.command = "kubectl logs -n " + ns + " " + pod + " -c " + container + prev
		if n := l.podNodeOf(ns, pod); n != "" {
			pl.node = n
		}
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

// kubeconfigRE removes the kubeconfig argument sos puts in kubectl command
// names (kubectl --kubeconfig /etc/kubernetes/admin.conf get pods ...).
var kubeconfigRE = regexp.MustCompile(`\s--kubeconfig[ =]\S+`)

// SOSCommand turns a sosreport sos_commands file name back into the
// command it ran. sos replaces spaces (and other characters outside
// [\w.-/]) with "_" and "/" with ".", so the result is what ran up to
// those characters; a --kubeconfig argument is dropped. For example
// "kubectl_--kubeconfig_.etc.kubernetes.admin.conf_get_pods_-o_json"
// is "kubectl get pods -o json".
func SOSCommand(file string) string {
	c := strings.Join(strings.FieldsFunc(file, func(r rune) bool { return r == '_' }), " ")
	c = kubeconfigRE.ReplaceAllString(c, "")
	return c
}

func placeSOS(host, rel string) placement {
	pl := placement{node: host}
	parts := strings.Split(rel, "/")
	switch {
	case parts[0] == sosCommandsDir && len(parts) >= 3:
		pl.command = SOSCommand(parts[len(parts)-1])
		if i := indexOf(parts, "namespaces"); i >= 0 && i+2 < len(parts) && parts[1] == "networking" {
			pl.node = NetnsNode(host, parts[i+1])
		} else if strings.HasPrefix(pl.command, "ip netns exec ") {
			if f := strings.Fields(pl.command); len(f) > 3 {
				pl.node = NetnsNode(host, f[3])
			}
		}
	case parts[0] == "proc" || parts[0] == "etc" || parts[0] == "sys":
		pl.command = "cat /" + rel
	}
	return pl
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// rancherCommands maps the Rancher v2.x logs collector's file names to the
// commands that wrote them (rancher2_logs_collector.sh).
var rancherCommands = map[string]string{
	"networking/iptablessave":         "iptables-save",
	"networking/ip6tablessave":        "ip6tables-save",
	"networking/iptablesmangle":       "iptables --wait 1 --numeric --verbose --list --table mangle",
	"networking/iptablesnat":          "iptables --wait 1 --numeric --verbose --list --table nat",
	"networking/iptables":             "iptables --wait 1 --numeric --verbose --list",
	"networking/ip6tablesmangle":      "ip6tables --wait 1 --numeric --verbose --list --table mangle",
	"networking/ip6tablesnat":         "ip6tables --wait 1 --numeric --verbose --list --table nat",
	"networking/ip6tables":            "ip6tables --wait 1 --numeric --verbose --list",
	"networking/nft_ruleset":          "nft list ruleset",
	"networking/netstat":              "netstat --programs --all --numeric --tcp --udp",
	"networking/netstatistics":        "netstat --statistics",
	"networking/ipvsadm":              "ipvsadm -ln",
	"networking/procnetxfrmstat":      "cat /proc/net/xfrm_stat",
	"networking/ipaddrshow":           "ip addr show",
	"networking/iproute":              "ip route show table all",
	"networking/ipneighbour":          "ip neighbour",
	"networking/iprule":               "ip rule show",
	"networking/iplinkshow":           "ip -s link show",
	"networking/ipv6neighbour":        "ip -6 neighbour",
	"networking/ipv6rule":             "ip -6 rule show",
	"networking/ipv6route":            "ip -6 route show",
	"networking/ipv6addrshow":         "ip -6 addr show",
	"networking/ifconfiga":            "ifconfig -a",
	"networking/ssanp":                "ss -anp",
	"networking/ssitan":               "ss -itan",
	"networking/ssuapn":               "ss -uapn",
	"networking/sswapn":               "ss -wapn",
	"networking/ssxapn":               "ss -xapn",
	"networking/ss4apn":               "ss -4apn",
	"networking/ss6apn":               "ss -6apn",
	"networking/sstunlp6":             "ss -tunlp6",
	"networking/sstunlp4":             "ss -tunlp4",
	"systeminfo/sysctla":              "sysctl -a",
	"systeminfo/ps":                   "ps auxfww",
	"systeminfo/hostname":             "hostname",
	"systeminfo/kubectl-version.json": "kubectl version -o json",
}

// rancherKubectl maps files under <distro>/kubectl/ to their commands.
var rancherKubectl = map[string]string{
	"nodes":      "kubectl get nodes -o wide",
	"nodes.json": "kubectl get nodes -o json",
	"pods":       "kubectl get pods -o wide --all-namespaces",
	"services":   "kubectl get services -o wide --all-namespaces",
	"endpoints":  "kubectl get endpoints -o wide --all-namespaces",
	"version":    "kubectl version",
}

func placeRancher(host, rel string) placement {
	pl := placement{node: host}
	if c, ok := rancherCommands[rel]; ok {
		pl.command = c
		return pl
	}
	parts := strings.Split(rel, "/")
	if len(parts) >= 3 && parts[1] == "kubectl" {
		file := parts[len(parts)-1]
		if c, ok := rancherKubectl[file]; ok {
			pl.command = c
		} else if res, ok := strings.CutSuffix(file, ".json"); ok {
			pl.command = "kubectl get " + res + " --all-namespaces -o json"
		} else {
			pl.command = "kubectl get " + file + " --all-namespaces"
		}
		pl.node = ""
	}
	if len(parts) == 3 && parts[1] == "podlogs" {
		pl.command = "kubectl logs " + parts[2]
		pl.node = "" // the pod may run on any node
	}
	if parts[0] == "journald" && len(parts) == 2 {
		pl.command = "journalctl -u " + parts[1]
	}
	return pl
}

// eksCommands maps the EKS log collector's files to the commands that wrote
// them (eks-log-collector.sh).
var eksCommands = map[string]string{
	"networking/iptables-save.txt":   "iptables-save",
	"networking/iptables-nat.txt":    "iptables --wait 1 --numeric --verbose --list --table nat",
	"networking/iptables-filter.txt": "iptables --wait 1 --numeric --verbose --list --table filter",
	"networking/iptables-mangle.txt": "iptables --wait 1 --numeric --verbose --list --table mangle",
	"networking/iptables.txt":        "iptables --wait 1 --numeric --verbose --list",
	"networking/ipvsadm.txt":         "ipvsadm --list --numeric",
	"networking/conntrack.txt":       "conntrack -S; conntrack -L",
	"networking/iprule.txt":          "ip rule show",
	"networking/iproute.txt":         "ip route show table all",
	"networking/ifconfig.txt":        "ifconfig",
	"networking/resolv.conf":         "cat /etc/resolv.conf",
	"sysctls/sysctl_all.txt":         "sysctl --all",
	"system/netstat.txt":             "netstat -plant",
	"system/ps.txt":                  "ps fauxwww --headers",
	"system/instance-id.txt":         "cat /var/lib/cloud/data/instance-id",
	"kubelet/kubelet.log":            "journalctl --unit=kubelet",
	"kubelet/svc.log":                "kubectl get svc",
	"kubelet/kubeconfig.yaml":        "kubectl config view --output yaml",
	"var_log/kube-proxy.log":         "cat /var/log/kube-proxy.log",
}

// eksBanner matches the lines the EKS collector adds around command output:
// "=======" and "Total Number of Rules: N" after each iptables listing, and
// "*** Output of conntrack -S ***" headers.
var eksBanner = regexp.MustCompile(`^(=+\s*|Total Number of Rules: \d+\s*|\*\*\* Output of .* \*\*\*\s*)$`)

func placeEKS(node, rel string) placement {
	pl := placement{node: node, command: eksCommands[rel]}
	if strings.HasPrefix(rel, "networking/") {
		pl.blank = eksBanner.MatchString
	}
	if strings.HasPrefix(rel, "ipamd/") {
		pl.command = "curl http://localhost:61679/v1/" + strings.TrimSuffix(path.Base(rel), ".json")
	}
	if pl.command != "" && text.Program(pl.command) == "kubectl" {
		pl.node = ""
	}
	return pl
}

func (l *layout) placeClusterInfo(rel string) placement {
	parts := strings.Split(rel, "/")
	pl := placement{node: l.nodeInPath(rel)}
	switch {
	case len(parts) == 1 && strings.HasSuffix(rel, ".json"):
		pl.command = "kubectl cluster-info dump: kubectl get " + strings.TrimSuffix(rel, ".json") + " -o json"
		pl.node = ""
	case len(parts) == 2 && strings.HasSuffix(rel, ".json"):
		pl.command = "kubectl cluster-info dump: kubectl get " + strings.TrimSuffix(parts[1], ".json") + " -n " + parts[0] + " -o json"
		pl.node = ""
	case len(parts) == 3 && parts[2] == "logs.txt":
		pl.command = "kubectl logs -n " + parts[0] + " " + parts[1]
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
