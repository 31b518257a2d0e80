// Package inspect says what netmortem finds in a bundle before any rule
// judges it: each input file with the format recognized, its node, the
// records read, the warnings, the files skipped and why; which rules can
// run and which lack evidence; and what to collect, node by node, for the
// evidence the bundle lacks. It is what `netmortem inspect` prints.
package inspect

import (
	"context"
	"reflect"
	"slices"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// Inspection is what was found in a bundle (`netmortem inspect -o json`).
type Inspection struct {
	Inputs   []model.Input      `json:"inputs"`
	Warnings []report.Warning   `json:"warnings"`
	Skipped  []analyzer.Skipped `json:"skipped_rules"`
	Runnable []string           `json:"runnable_rules"`
	// Unreadable lists the captures recognized as such whose header
	// could not be read (model.Snapshot.UnreadableCaptures).
	Unreadable []string `json:"unreadable_captures"`
	// RecordNodes are the nodes each input's records carry
	// (RecordNodes), for the inputs without a node of their own whose
	// sections name theirs; the table's NODE column shows them.
	RecordNodes map[string][]string `json:"record_nodes"`
	// NextEvidence are the commands that would bring the evidence the
	// bundle lacks (as analyze's next_evidence, without findings to
	// decide); ToCollect groups them by the node they are needed from.
	NextEvidence []report.NextEvidence `json:"next_evidence"`
	ToCollect    []NodeCollect         `json:"to_collect"`
}

// Inspect inspects snap, read with the warnings warns, for the rules rs.
// Which of them can run is decided by the evidence alone: they run on an
// empty snapshot that keeps only the inputs of snap, until ctx is done.
func Inspect(ctx context.Context, snap *model.Snapshot, warns model.ErrorList, rs []*analyzer.Rule) Inspection {
	res := analyzer.Run(ctx, &model.Snapshot{Inputs: snap.Inputs}, rs, nil)
	rep := report.New(snap, warns, res)
	in := Inspection{Inputs: rep.Inputs, Warnings: rep.Warnings, Skipped: rep.Skipped, Runnable: []string{},
		Unreadable: snap.UnreadableCaptures(), RecordNodes: RecordNodes(snap)}
	// Without findings, what the bundle lacks: the kinds the skipped
	// rules need, and those the others would join.
	in.NextEvidence = report.NextEvidenceFor(snap, rs, res)
	in.ToCollect = perNode(in.NextEvidence)
	if in.Unreadable == nil {
		in.Unreadable = []string{}
	}
	skipped := map[string]bool{}
	for _, s := range res.Skipped {
		skipped[s.Rule] = true
	}
	for _, r := range rs {
		if !skipped[r.Name] {
			in.Runnable = append(in.Runnable, r.Name)
		}
	}
	return in
}

// RecordNodes maps each input path to the nodes its records carry, in the
// order first met: a file that concatenates the outputs of several nodes
// (`=== node1 ===` banners, a for-each-node loop's `>>> node` echoes) has
// no node of its own, but each record has the node of its section. Every
// record list of the snapshot whose elements have a Node and a Pos counts,
// but the Kubernetes objects, whose Node is where a Pod runs, not where the
// file came from.
func RecordNodes(snap *model.Snapshot) map[string][]string {
	out := map[string][]string{}
	v := reflect.ValueOf(snap).Elem()
	posType := reflect.TypeFor[model.Pos]()
	for i := range v.NumField() {
		if v.Type().Field(i).Name == "Kube" {
			continue
		}
		list := v.Field(i)
		if list.Kind() != reflect.Slice {
			continue
		}
		for j := range list.Len() {
			rec := reflect.Indirect(list.Index(j))
			if rec.Kind() != reflect.Struct {
				continue
			}
			node, pos := rec.FieldByName("Node"), rec.FieldByName("Pos")
			if !node.IsValid() || node.Kind() != reflect.String || !pos.IsValid() || pos.Type() != posType {
				continue
			}
			n, file := node.String(), pos.Interface().(model.Pos).File
			if n != "" && file != "" && !slices.Contains(out[file], n) {
				out[file] = append(out[file], n)
			}
		}
	}
	return out
}
