package facts

import "github.com/netmortem/netmortem/model"

// NodeNamedByFile returns the one node of the snapshot (a Kubernetes Node,
// or a node an input was placed on) whose name the base name of file holds
// as a whole word ("iptables-legacy-worker-2.txt" names worker-2, not
// worker-20); "" when none does, or several. Rules use it for evidence the
// bundle tied to no node.
func NodeNamedByFile(s *model.Snapshot, file string) string {
	return nodeInFileName(file, knownNodes(s))
}
