package bundle

import (
	"path"
	"sort"
	"strings"
)

// hostFolder is a folder that holds one host's evidence: a single-node
// layout's root (sosreport-node-a/, a netmortem-collect archive's folder)
// or, among a ticket's loose files, a folder named after a host that a
// capture or host command's output beside it names too (node-a/ beside
// node-a-eth0.pcap or iptables-legacy-node-a.txt).
type hostFolder struct {
	dir   string
	node  string
	names []string // what a file's name may call the host: the node, its short name, the folder's name
}

// nameFolders finds the host folders of a tree: the roots of its
// single-node layouts, and the loose folders that a loose capture or a
// host command's output beside them names. Files outside any layout are then tied to the host their name
// gives (see hostOfName).
func (ls *layouts) nameFolders(ix *index) {
	children := map[string][]string{} // a folder's sub-folders
	for d := range ix.dirs {
		if d != "" {
			children[pathOrDot(path.Dir(d))] = append(children[pathOrDot(path.Dir(d))], d)
		}
	}
	for _, l := range ls.list {
		if l.node != "" && l.root != "" {
			ls.folders = append(ls.folders, hostFolder{dir: l.root, node: l.node,
				names: hostNames(l.node, path.Base(l.root))})
		}
	}
	loose := func(p string) bool { _, in := ls.layoutOf(p); return !in }
	for p, k := range ix.kinds {
		if k == entDir || !loose(p) {
			continue
		}
		for _, d := range children[pathOrDot(path.Dir(p))] {
			name := path.Base(d)
			if ls.folderAt(d) == nil && loose(d+"/") && hostLike(name) && (isCapture(p) || isNodeOutput(p)) &&
				nameHost(path.Base(p), []string{name}) != "" {
				ls.folders = append(ls.folders, hostFolder{dir: d, node: name, names: []string{name}})
			}
		}
	}
	sort.Slice(ls.folders, func(i, j int) bool { return ls.folders[i].dir < ls.folders[j].dir })
}

// hostLike reports whether a loose folder's name may be a host's: it has
// a digit, a "-" or a "." (node-a, worker1, ip-10-0-1-5.ec2.internal),
// which the names of folders of kinds of evidence (logs, captures) do not.
func hostLike(name string) bool { return strings.ContainsAny(name, "0123456789-.") }

// isCapture reports whether p is named as a packet capture.
func isCapture(p string) bool {
	for _, ext := range []string{".gz", ".zst", ".xz", ".bz2"} {
		p = strings.TrimSuffix(p, ext)
	}
	return strings.HasSuffix(p, ".pcap") || strings.HasSuffix(p, ".pcapng") || strings.HasSuffix(p, ".cap")
}

// nodeOutputTools start the names of files of one host's commands
// (iptables-legacy-node-a.txt, ipvsadm-node-a.txt), as a ticket's
// attachments are named after the command and the host.
var nodeOutputTools = []string{"iptables", "ip6tables", "nft", "ipvsadm", "conntrack", "tcpdump", "sysctl", "nstat",
	"ss-", "ip-", "ip_", "arp"}

// isNodeOutput reports whether p is named as the output of a command
// that shows one host's state.
func isNodeOutput(p string) bool {
	base := strings.ToLower(path.Base(p))
	for _, t := range nodeOutputTools {
		if strings.HasPrefix(base, t) {
			return true
		}
	}
	return false
}

// hostNames is what a file's name may call a host: its node name, the
// name without its domain, and its folder's name.
func hostNames(node, folder string) []string {
	names := []string{node, folder}
	if short, _, ok := strings.Cut(node, "."); ok && short != "" {
		names = append(names, short)
	}
	return names
}

// folderAt returns the host folder d, or nil.
func (ls *layouts) folderAt(d string) *hostFolder {
	for i := range ls.folders {
		if ls.folders[i].dir == d {
			return &ls.folders[i]
		}
	}
	return nil
}

// layoutOf returns the layout whose tree holds p, if any.
func (ls *layouts) layoutOf(p string) (*layout, bool) {
	for _, l := range ls.list {
		if _, ok := l.rel(p); ok {
			return l, true
		}
	}
	return nil, false
}

// hostOfName returns the host of a file outside any layout: the host of
// the loose host folder that holds it, or else the host its name gives
// (node-a.pcap, node-a-eth0.pcap, node-a_eth0.pcap, tcpdump-node-a.pcap)
// when that host's folder is beside it. "" when neither.
func (ls *layouts) hostOfName(p string) string {
	for _, f := range ls.folders {
		if strings.HasPrefix(p, f.dir+"/") {
			return f.node
		}
	}
	dir, best, node := path.Dir(p), "", ""
	for _, f := range ls.folders {
		if pathOrDot(path.Dir(f.dir)) != dir {
			continue
		}
		if n := nameHost(path.Base(p), f.names); len(n) > len(best) {
			best, node = n, f.node
		}
	}
	return node
}

// captureExts are the extensions a capture's (or an output's) name ends
// with, outermost first.
var captureExts = []string{".gz", ".zst", ".xz", ".bz2", ".pcapng", ".pcap", ".cap", ".txt", ".log", ".out"}

// nameHost returns which of names the file name base calls its host:
// the name alone, or followed by "-", "_" or "." and an interface or
// suffix, or preceded by a tool's name ("tcpdump-"). The longest such
// name, or "".
func nameHost(base string, names []string) string {
	for _, ext := range captureExts {
		base = strings.TrimSuffix(base, ext)
	}
	best := ""
	for _, n := range names {
		if n == "" || len(n) <= len(best) {
			continue
		}
		if base == n || strings.HasSuffix(base, "-"+n) || strings.HasSuffix(base, "_"+n) ||
			hasPrefixSep(base, n) || hasPrefixSep(strings.TrimPrefix(base, "tcpdump-"), n) {
			best = n
		}
	}
	return best
}

// hasPrefixSep reports whether s is n followed by "-", "_" or "." and more.
func hasPrefixSep(s, n string) bool {
	if !strings.HasPrefix(s, n) || len(s) <= len(n)+1 {
		return false
	}
	c := s[len(n)]
	return c == '-' || c == '_' || c == '.'
}
