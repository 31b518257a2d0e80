package netmortem

import (
	"github.com/netmortem/netmortem/internal/anon"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// Mapping is one replacement anonymization made: the kind of value
// ("ip", "mac", "node", "pod", ...), the original and its token. The CLI's
// --anonymize-map writes them as a JSON list.
type Mapping = anon.Mapping

// Anonymizer replaces addresses (prefix-preserving) and the names of
// hosts, nodes, pods, namespaces and clusters by stable tokens derived
// from a key; Kubernetes system names are kept (docs/output.md).
type Anonymizer = anon.Anonymizer

// NewAnonymizer returns the Anonymizer of key, knowing the names of the
// snapshots; an empty key is replaced by a random one, so that tokens are
// consistent within the run only.
func NewAnonymizer(key string, snaps ...*model.Snapshot) *Anonymizer {
	a := anon.New(key)
	for _, s := range snaps {
		a.Learn(s) // nil: none
	}
	return a
}

// Anonymize returns a copy of v (a report, a diff, any value of
// netmortem's outputs) with its addresses and names replaced by a's
// tokens; v itself when a is nil.
func Anonymize[T any](a *Anonymizer, v T) T { return anon.Apply(a, v) }

// anonymizeReport returns rep with its addresses and names replaced by a's
// tokens; rep itself when a is nil.
func anonymizeReport(a *Anonymizer, rep *report.Report) *report.Report {
	return anon.Apply(a, rep)
}
