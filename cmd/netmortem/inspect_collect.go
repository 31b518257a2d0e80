package main

import (
	"slices"
	"strings"

	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// nodeCollect is what one node lacks, and the commands to run there; or
// what every node lacks when the bundle names no node for it (Node
// empty); or what the cluster lacks (Scope cluster).
type nodeCollect struct {
	Node     string           `json:"node"`
	Scope    collect.Scope    `json:"scope"`
	Lacks    []model.Kind     `json:"lacks"`
	Commands []collectCommand `json:"commands"`
}

// collectCommand is one command of a nodeCollect, with the rules it lets
// run and those that would join its output.
type collectCommand struct {
	Command  string     `json:"command"`
	Shell    string     `json:"shell"`
	Kind     model.Kind `json:"kind"`
	Unblocks []string   `json:"unblocks"`
	Joins    []string   `json:"joins"`
}

// perNode groups next evidence by the node it is needed from: the named
// nodes in order, then the commands asked of every node, then the
// cluster's.
func perNode(next []report.NextEvidence) []nodeCollect {
	var out []nodeCollect
	index := map[[2]string]int{}
	add := func(node string, scope collect.Scope, e report.NextEvidence) {
		key := [2]string{node, string(scope)}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, nodeCollect{Node: node, Scope: scope, Lacks: []model.Kind{}, Commands: []collectCommand{}})
		}
		g := &out[i]
		if e.Kind != "" && !slices.Contains(g.Lacks, e.Kind) {
			g.Lacks = append(g.Lacks, e.Kind)
		}
		g.Commands = append(g.Commands, collectCommand{Command: e.Command, Shell: e.Shell, Kind: e.Kind,
			Unblocks: e.Unblocks, Joins: e.Joins})
	}
	for _, e := range next {
		switch {
		case e.Scope == collect.ScopeCluster:
			add("", collect.ScopeCluster, e)
		case len(e.Nodes) == 0:
			add("", collect.ScopeNode, e)
		default:
			for _, n := range e.Nodes {
				add(n, collect.ScopeNode, e)
			}
		}
	}
	rank := func(g nodeCollect) int {
		switch {
		case g.Scope == collect.ScopeCluster:
			return 2
		case g.Node == "":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b nodeCollect) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Node, b.Node)
	})
	return out
}

// collectHeading names a nodeCollect in inspect's table.
func collectHeading(g nodeCollect) string {
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

// collectWhy says what a command of a nodeCollect is for: "lets
// timewait-churn run; used by apiserver-affinity".
func collectWhy(c collectCommand) string {
	var parts []string
	if len(c.Unblocks) > 0 {
		parts = append(parts, "lets "+strings.Join(c.Unblocks, ", ")+" run")
	}
	if len(c.Joins) > 0 {
		parts = append(parts, "used by "+strings.Join(c.Joins, ", "))
	}
	return strings.Join(parts, "; ")
}
