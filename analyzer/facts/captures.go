package facts

import (
	"fmt"
	"net/netip"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// How a capture's node is known.
const (
	// NodeFromBundle: the bundle names it (its layout, a terminal
	// session's prompt, the --node option).
	NodeFromBundle = "bundle"
	// NodeFromFileName: the capture's file name names one node and no
	// other ("tcpdump-worker-2.pcap").
	NodeFromFileName = "file-name"
	// NodeFromAddresses: the capture's traffic has addresses that only
	// that node's interfaces carry (ip addr output).
	NodeFromAddresses = "addresses"
	// NodeFromTraffic: the capture's traffic has the addresses of that
	// Kubernetes Node and of no other.
	NodeFromTraffic = "traffic"
)

// CaptureNode is the node a capture was taken on.
type CaptureNode struct {
	File string
	Node string
	// How says how the node is known: NodeFromBundle, NodeFromFileName,
	// NodeFromAddresses or NodeFromTraffic, from the surest to the least
	// sure.
	How string
	// Evidence cites what tells the node: the interface address or the
	// Node object matched (none for NodeFromBundle).
	Evidence []analyzer.Evidence
}

// CaptureNodeIndex holds the nodes of the snapshot's captures.
type CaptureNodeIndex struct {
	files  []string
	byFile map[string]CaptureNode
}

// CaptureNodes tells which node each capture was taken on, as far as the
// snapshot can: the bundle's layout or the capture's own record of it, a
// node's name in the file name, the interface addresses of the nodes (ip
// addr), or the Kubernetes Nodes' addresses in its traffic.
var CaptureNodes = &analyzer.Fact[*CaptureNodeIndex]{
	Name: "capture-nodes",
	Doc: "which node each capture was taken on: from the bundle's layout, from a node's name in its file name, from addresses only that node's " +
		"interfaces carry (ip addr), or from the Kubernetes Node whose addresses its traffic shows",
	Compute: func(fs *analyzer.FactSet) *CaptureNodeIndex { return captureNodes(fs.Snapshot()) },
}

// Files returns the capture files of the snapshot, in the order of the
// evidence.
func (x *CaptureNodeIndex) Files() []string { return slices.Clone(x.files) }

// Of returns the node of the capture file; ok is false when the snapshot
// cannot tell it.
func (x *CaptureNodeIndex) Of(file string) (CaptureNode, bool) {
	cn, ok := x.byFile[file]
	return cn, ok
}

// captureTraffic gathers, per capture file, the node its records carry and
// the addresses its traffic shows.
type captureTraffic struct {
	files []string
	node  map[string]string
	addrs map[string][]netip.Addr
}

func (c *captureTraffic) file(f string) {
	if _, ok := c.addrs[f]; !ok {
		c.files = append(c.files, f)
		c.addrs[f] = nil
	}
}

func (c *captureTraffic) add(f, node string, as ...netip.Addr) {
	c.file(f)
	if c.node[f] == "" {
		c.node[f] = node
	}
	for _, a := range as {
		if a = a.Unmap(); a.IsValid() && !slices.Contains(c.addrs[f], a) {
			c.addrs[f] = append(c.addrs[f], a)
		}
	}
}

func gatherTraffic(s *model.Snapshot) *captureTraffic {
	c := &captureTraffic{node: map[string]string{}, addrs: map[string][]netip.Addr{}}
	for _, ci := range s.Captures {
		c.add(ci.File, ci.Node)
	}
	for _, a := range s.Attempts {
		c.add(a.Pos.File, a.Node, a.Client.Addr(), a.Server.Addr())
	}
	for _, st := range s.EndpointStats {
		c.add(st.File, st.Node, append([]netip.Addr{st.Server.Addr()}, st.ClientAddrs...)...)
	}
	for _, e := range s.ICMP {
		c.add(e.Pos.File, e.Node, e.From, e.To)
	}
	for _, e := range s.ARP {
		c.add(e.Pos.File, e.Node, e.IP, e.Target)
	}
	return c
}

// nodeAddr is an address that one node holds, and what says so.
type nodeAddr struct {
	node string
	ev   analyzer.Evidence
}

// ifAddrs returns the addresses that exactly one node's interfaces carry
// (loopback, link-local and shared addresses, such as the Service IPs every
// node binds in IPVS mode, tell nothing).
func ifAddrs(s *model.Snapshot) map[netip.Addr]nodeAddr {
	out := map[netip.Addr]nodeAddr{}
	shared := map[netip.Addr]bool{}
	for _, ia := range s.Addrs {
		a := ia.Prefix.Addr().Unmap()
		if ia.Node == "" || !a.IsValid() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
			continue
		}
		if prev, ok := out[a]; ok && prev.node != ia.Node {
			shared[a] = true
			continue
		}
		if _, ok := out[a]; !ok {
			out[a] = nodeAddr{node: ia.Node, ev: analyzer.Evidence{Pos: ia.Pos, Note: fmt.Sprintf("%s is on %s of node %s", a, ia.Dev, ia.Node)}}
		}
	}
	for a := range shared {
		delete(out, a)
	}
	return out
}

// kubeNodeAddrs returns the addresses of the Kubernetes Nodes that one
// Node alone reports.
func kubeNodeAddrs(s *model.Snapshot) map[netip.Addr]nodeAddr {
	out := map[netip.Addr]nodeAddr{}
	shared := map[netip.Addr]bool{}
	for _, n := range s.Kube.Nodes {
		pos := objectPos(n.Source.Pos, "Node", "", n.Name)
		for _, na := range n.Status.Addresses {
			a, err := netip.ParseAddr(na.Address)
			if err != nil || n.Name == "" {
				continue
			}
			a = a.Unmap()
			if prev, ok := out[a]; ok && prev.node != n.Name {
				shared[a] = true
				continue
			}
			if _, ok := out[a]; !ok {
				out[a] = nodeAddr{node: n.Name, ev: analyzer.Evidence{Pos: pos, Note: fmt.Sprintf("%s is the %s of Node %s", a, na.Type, n.Name)}}
			}
		}
	}
	for a := range shared {
		delete(out, a)
	}
	return out
}

// onlyNode returns the one node whose addresses appear in as, with what
// says so; nodes is how many nodes' addresses appear (the node is known
// when it is one).
func onlyNode(as []netip.Addr, held map[netip.Addr]nodeAddr) (node string, ev []analyzer.Evidence, nodes int) {
	for _, a := range as {
		na, ok := held[a]
		if !ok {
			continue
		}
		if node != "" && na.node != node {
			return "", nil, 2
		}
		node = na.node
		ev = append(ev, na.ev)
	}
	if node == "" {
		return "", nil, 0
	}
	return node, ev, 1
}

// knownNodes returns the names of the snapshot's nodes: the Kubernetes
// Nodes and the nodes its inputs were placed on.
func knownNodes(s *model.Snapshot) []string {
	var out []string
	for _, n := range s.Kube.Nodes {
		if n.Name != "" && !slices.Contains(out, n.Name) {
			out = append(out, n.Name)
		}
	}
	for _, in := range s.Inputs {
		if in.Node != "" && !slices.Contains(out, in.Node) {
			out = append(out, in.Node)
		}
	}
	return out
}

// nodeInFileName returns the one node of nodes whose name the file's base
// name holds as a whole word (between non-alphanumeric characters or the
// ends: "tcpdump-worker-2.pcap" names worker-2, not worker-20); "" when
// none does, or several.
func nodeInFileName(file string, nodes []string) string {
	base := path.Base(filepath.ToSlash(file))
	found := ""
	for _, n := range nodes {
		for i := 0; ; {
			j := strings.Index(base[i:], n)
			if j < 0 {
				break
			}
			j += i
			before, after := j == 0 || !isAlnum(base[j-1]), j+len(n) == len(base) || !isAlnum(base[j+len(n)])
			if before && after {
				if found != "" && found != n && !strings.Contains(n, found) && !strings.Contains(found, n) {
					return "" // two nodes named
				}
				if len(n) > len(found) {
					found = n
				}
				break
			}
			i = j + 1
		}
	}
	return found
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func captureNodes(s *model.Snapshot) *CaptureNodeIndex {
	c := gatherTraffic(s)
	inputNode := map[string]string{}
	for _, in := range s.Inputs {
		if in.Node != "" {
			inputNode[in.Path] = in.Node
		}
	}
	var ifs, kube map[netip.Addr]nodeAddr
	x := &CaptureNodeIndex{files: c.files, byFile: map[string]CaptureNode{}}
	for _, f := range c.files {
		node := c.node[f]
		if node == "" {
			node = inputNode[f]
		}
		if node != "" {
			x.byFile[f] = CaptureNode{File: f, Node: node, How: NodeFromBundle}
			continue
		}
		if n := nodeInFileName(f, knownNodes(s)); n != "" {
			x.byFile[f] = CaptureNode{File: f, Node: n, How: NodeFromFileName}
			continue
		}
		if ifs == nil {
			ifs, kube = ifAddrs(s), kubeNodeAddrs(s)
		}
		// Addresses of several nodes' interfaces leave it unknown: the
		// Kubernetes Nodes cannot say more.
		n, ev, nodes := onlyNode(c.addrs[f], ifs)
		how := NodeFromAddresses
		if nodes == 0 {
			n, ev, nodes = onlyNode(c.addrs[f], kube)
			how = NodeFromTraffic
		}
		if nodes == 1 {
			x.byFile[f] = CaptureNode{File: f, Node: n, How: how, Evidence: ev}
		}
	}
	return x
}
