package main

import (
	"reflect"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// recordNodes maps each input path to the nodes its records carry, in the
// order first met: a file that concatenates the outputs of several nodes
// (`=== node1 ===` banners, a for-each-node loop's `>>> node` echoes) has
// no node of its own, but each record has the node of its section. Every
// record list of the snapshot whose elements have a Node and a Pos counts,
// but the Kubernetes objects, whose Node is where a Pod runs, not where the
// file came from.
func recordNodes(snap *model.Snapshot) map[string][]string {
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

// nodeCell is what inspect's NODE column shows for in: its node, or else
// the nodes its records carry, comma separated.
func nodeCell(in model.Input, nodes map[string][]string) string {
	if in.Node != "" {
		return in.Node
	}
	return strings.Join(nodes[in.Path], ",")
}
