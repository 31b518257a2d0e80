package bundle

import (
	"bytes"
	"path"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/parse/internal/text"
	"github.com/netmortem/netmortem/parse/logs"
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
	LayoutNetmortem      = "netmortem-collect" // netmortem collect-script, one node
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
	// disk is set for a file read from disk, at its name (opener.file):
	// a capture there may be one of a rotated series (series.go).
	disk bool
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
	case troubleshootVersion, collect.ManifestFile, "hostname", "node_list.json", "nodes.json", "instance-id.txt", clusterInfoPodsFile, "pods.yaml":
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
	// manifest is the collector's manifest of a netmortem-collect
	// bundle.
	manifest *collect.Manifest
}

// layouts is every layout found in one tree, deepest root first.
type layouts struct {
	list []*layout
	base placement
	// folders are the tree's host folders, which tie the files beside
	// them that name their host (nameFolders).
	folders []hostFolder
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
	ls.nameFolders(ix)
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
	if treeName == StdinName {
		return "" // an archive on stdin has no name to tell
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
	case ix.has(at(collect.ManifestFile)):
		return netmortemLayout(ix, d)
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

func newLayout(kind, root string) *layout {
	return &layout{kind: kind, root: root, nodes: map[string]bool{}, listed: map[string]bool{}, podNode: map[string]string{}, runInfo: map[string]string{}}
}

// eachFile calls fn with every file of the index under the layout's root
// (its path, its path from the root, and its content).
func (l *layout) eachFile(ix *index, fn func(p, rel string, b []byte)) {
	for p, b := range ix.files {
		if rel, ok := l.rel(p); ok {
			fn(p, rel, b)
		}
	}
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
	if pl.node == "" {
		pl.node = containerLogNode(p)
	}
	if pl.node == "" {
		pl.node = ls.hostOfName(p)
	}
	return pl
}

// containerLogNode names the node of a container's log file copied with
// the node's name above it, in a tree no layout claims: kind's exported
// logs (<node>/pods/<ns>_<pod>_<uid>/<container>/<n>.log, <node>/containers/...)
// and per-node copies of /var/log (<node>/var/log/pods/..., <node>/var/log/containers/...).
// "" when p is no such path.
func containerLogNode(p string) string {
	if _, ok := logs.ContainerLogPath(p); !ok {
		return ""
	}
	parts := strings.Split(p, "/")
	for i := len(parts) - 2; i >= 1; i-- {
		if parts[i] != "pods" && parts[i] != "containers" {
			continue
		}
		j := i - 1
		if j >= 2 && parts[j] == "log" && parts[j-1] == "var" {
			j -= 2
		}
		if j >= 0 && parts[j] != "" && parts[j] != "var" && parts[j] != "log" {
			return parts[j]
		}
		return ""
	}
	return ""
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
	case LayoutNetmortem:
		return l.placeNetmortem(rel)
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

// collectorDateRE matches the date suffix collectors add to a host name:
// -2024-05-06_10_11_12 (Rancher), _2024-05-06_1011-UTC... (EKS).
var collectorDateRE = lazyre.New(`[-_]\d{4}-\d{2}-\d{2}[_T-].*$`)
