package inspect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// NodeCollect is what one node lacks, and the commands to run there; or
// what every node lacks when the bundle names no node for it (Node
// empty); or what the cluster lacks (Scope cluster). Collected are the
// commands for what it lacks that netmortem's collector ran there with
// status 0 (and got nothing the rules could use) or skipped there: they
// are not asked again.
type NodeCollect struct {
	Node      string        `json:"node"`
	Scope     collect.Scope `json:"scope"`
	Lacks     []model.Kind  `json:"lacks"`
	Commands  []Command     `json:"commands"`
	Collected []Command     `json:"collected,omitempty"`
}

// Command is one command of a NodeCollect, with the rules it lets
// run and those that would join its output; and, when the collector's
// manifest of the node records it, what came of it there (Outcome, with
// Status or Why: report.Collected).
type Command struct {
	Command  string     `json:"command"`
	Shell    string     `json:"shell"`
	Kind     model.Kind `json:"kind"`
	Unblocks []string   `json:"unblocks"`
	Joins    []string   `json:"joins"`
	Outcome  string     `json:"outcome,omitempty"`
	Status   int        `json:"status,omitempty"`
	Why      string     `json:"why,omitempty"`
}

// perNode groups next evidence by the node it is needed from: the named
// nodes in order, then the commands asked of every node, then the
// cluster's.
func perNode(next []report.NextEvidence) []NodeCollect {
	var out []NodeCollect
	index := map[[2]string]int{}
	group := func(node string, scope collect.Scope, e report.NextEvidence) *NodeCollect {
		key := [2]string{node, string(scope)}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, NodeCollect{Node: node, Scope: scope, Lacks: []model.Kind{}, Commands: []Command{}})
		}
		g := &out[i]
		if e.Kind != "" && !slices.Contains(g.Lacks, e.Kind) {
			g.Lacks = append(g.Lacks, e.Kind)
		}
		return g
	}
	command := func(e report.NextEvidence, node string) Command {
		c := Command{Command: e.Command, Shell: e.Shell, Kind: e.Kind, Unblocks: e.Unblocks, Joins: e.Joins}
		for _, got := range e.Collected {
			if got.Node == node {
				c.Outcome, c.Status, c.Why = got.Outcome, got.Status, got.Why
			}
		}
		return c
	}
	add := func(node string, scope collect.Scope, e report.NextEvidence) {
		g := group(node, scope, e)
		g.Commands = append(g.Commands, command(e, node))
	}
	for _, e := range next {
		switch {
		case e.Scope == collect.ScopeCluster:
			add("", collect.ScopeCluster, e)
		case len(e.Nodes) == 0 && e.Asks():
			add("", collect.ScopeNode, e)
		default:
			for _, n := range e.Nodes {
				add(n, collect.ScopeNode, e)
			}
		}
		if e.Scope != collect.ScopeNode {
			continue
		}
		for _, got := range e.Collected {
			if !slices.Contains(e.Nodes, got.Node) {
				g := group(got.Node, collect.ScopeNode, e)
				g.Collected = append(g.Collected, command(e, got.Node))
			}
		}
	}
	rank := func(g NodeCollect) int {
		switch {
		case g.Scope == collect.ScopeCluster:
			return 2
		case g.Node == "":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b NodeCollect) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Node, b.Node)
	})
	return out
}

// collectHeading names a NodeCollect in inspect's table.
func collectHeading(g NodeCollect) string {
	var who string
	switch {
	case g.Scope == collect.ScopeCluster:
		who = "the cluster (once, with kubectl)"
	case g.Node == "":
		who = "every node (the bundle does not say which)"
	default:
		who = "node " + g.Node
	}
	var kinds []string
	for _, k := range g.Lacks {
		kinds = append(kinds, string(k))
	}
	return who + ": lacks " + strings.Join(kinds, ", ")
}

// collectWhy says what a command of a NodeCollect is for: "lets
// timewait-churn run; used by apiserver-affinity".
func collectWhy(c Command) string {
	var parts []string
	if len(c.Unblocks) > 0 {
		parts = append(parts, "lets "+strings.Join(c.Unblocks, ", ")+" run")
	}
	if len(c.Joins) > 0 {
		parts = append(parts, "used by "+strings.Join(c.Joins, ", "))
	}
	if c.Outcome == report.CollectedFailed {
		parts = append(parts, fmt.Sprintf("the collector's run failed (exit status %d)", c.Status))
	}
	return strings.Join(parts, "; ")
}

// collectedLine says what came of a command the collector ran or skipped
// on a node: "ip neigh: ran, nothing the rules could use"; "ipvsadm -Ln:
// skipped (ip_vs not loaded)".
func collectedLine(c Command) string {
	switch c.Outcome {
	case report.CollectedEmpty:
		return c.Shell + ": collected, empty"
	case report.CollectedRead:
		return c.Shell + ": collected, read"
	case report.CollectedSkipped:
		return c.Shell + ": not collected: " + c.Why
	}
	return c.Shell
}
