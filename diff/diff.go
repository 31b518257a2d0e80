// Package diff compares two bundles of one cluster, as `netmortem diff`
// does: the findings that appeared, resolved, changed (severity, certainty
// or facts) or stayed the same, matched by fingerprint; the NAT backends
// of each Service port on each node; and the Services' endpoints.
//
//	res, err := diff.Bundles(ctx, "before.tar.gz", "after.tar.gz", nil)
//	if err != nil { ... }
//	diff.WriteText(os.Stdout, res.Diff)
package diff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// Diff is what `netmortem diff -o json` prints.
type Diff struct {
	// SchemaVersion is report.SchemaVersion: the version of netmortem's
	// machine outputs.
	SchemaVersion string `json:"schema_version"`
	// Tool is the netmortem that wrote the diff.
	Tool     buildinfo.Info `json:"tool"`
	Old      string         `json:"old"`
	New      string         `json:"new"`
	Findings FindingsDiff   `json:"findings"`
	// Suppressed counts the findings of each bundle that the
	// configuration's ignore entries or the baseline left out of the
	// comparison.
	Suppressed SuppressedCounts `json:"suppressed"`
	Dataplane  []DataplaneDiff  `json:"dataplane"`
	Endpoints  []EndpointsDiff  `json:"endpoints"`
}

// SuppressedCounts counts suppressed findings in OLD and in NEW.
type SuppressedCounts struct {
	Old int `json:"old"`
	New int `json:"new"`
}

// DataplaneDiff is how the NAT backends of a Service port on a node
// changed.
type DataplaneDiff struct {
	Node    string   `json:"node,omitempty"`
	Service string   `json:"service"`
	Added   []string `json:"added"`   // backends in NEW only
	Removed []string `json:"removed"` // backends in OLD only
}

// EndpointsDiff is how the endpoint addresses of a Service changed.
type EndpointsDiff struct {
	Service string   `json:"service"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

// Options are the rules run on both bundles, their configuration and the
// baseline whose findings are left out on both sides. The nil *Options
// runs every rule, without configuration or baseline.
type Options struct {
	// Rules are the rules run, nil for rules.All(); Config their
	// configuration (netmortem.SelectRules), nil for none.
	Rules  []*analyzer.Rule
	Config *analyzer.Config
	// Baseline are the fingerprints of an earlier report
	// (netmortem.ReadBaseline), read from the file BaselineName.
	Baseline     map[string]bool
	BaselineName string
}

// Side is what was read and left out of one bundle.
type Side struct {
	Snapshot   *model.Snapshot
	Suppressed []analyzer.Suppressed
	// Expired are the warnings of the configuration's expired ignore
	// entries.
	Expired []report.Warning
}

// Result is the diff of two bundles, with each side.
type Result struct {
	Diff     Diff
	Old, New Side
	// Now is when the configuration's ignore entries were found expired
	// or not.
	Now time.Time
}

// ErrInterrupted is the error of Bundles when ctx ended.
var ErrInterrupted = errors.New("interrupted")

// Bundles reads, analyzes and compares the bundles old and new (paths).
// The error is the first bundle that could not be read, or ErrInterrupted.
func Bundles(ctx context.Context, old, new string, o *Options) (*Result, error) {
	if o == nil {
		o = &Options{}
	}
	rs := o.Rules
	if rs == nil {
		rs = rules.All()
	}
	var sides [2]Side
	var results [2]analyzer.Result
	now := time.Now()
	for i, p := range []string{old, new} {
		in := operand.OpenPaths(ctx, []string{p}, &parse.Options{Summary: parse.Summary{Enabled: true}})
		if in.Err != nil {
			return nil, in.Err
		}
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		res := analyzer.Run(ctx, in.Snap, rs, o.Config)
		sup, expired := netmortem.Suppress(&res, o.Config, o.Baseline, o.BaselineName, now)
		sides[i], results[i] = Side{Snapshot: in.Snap, Suppressed: sup, Expired: expired}, res
	}
	d := Diff{SchemaVersion: report.SchemaVersion, Tool: buildinfo.Get(), Old: old, New: new,
		Findings:   Findings(results[0].Findings, results[1].Findings),
		Suppressed: SuppressedCounts{len(sides[0].Suppressed), len(sides[1].Suppressed)},
		Dataplane:  Dataplane(dataplane.Build(sides[0].Snapshot), dataplane.Build(sides[1].Snapshot)),
		Endpoints:  Endpoints(sides[0].Snapshot, sides[1].Snapshot)}
	return &Result{Diff: d, Old: sides[0], New: sides[1], Now: now}, nil
}

// Unreadable lists the captures of both sides whose header could not be
// read.
func (r *Result) Unreadable() []string {
	return slices.Concat(r.Old.Snapshot.UnreadableCaptures(), r.New.Snapshot.UnreadableCaptures())
}

func backendSet(sp dataplane.ServicePort) []string {
	var out []string
	for _, b := range sp.Backends {
		a := b.Address
		if a == "" {
			a = b.Chain
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func minus(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// Dataplane compares the NAT backends of each Service port on each node.
func Dataplane(old, new []dataplane.ServicePort) []DataplaneDiff {
	key := func(sp dataplane.ServicePort) string { return sp.Node + "|" + sp.Service + "|" + sp.Chain }
	idx := map[string]dataplane.ServicePort{}
	for _, sp := range old {
		idx[key(sp)] = sp
	}
	out := []DataplaneDiff{}
	seen := map[string]bool{}
	for _, sp := range new {
		k := key(sp)
		seen[k] = true
		nb := backendSet(sp)
		ob := backendSet(idx[k])
		if add, rem := minus(nb, ob), minus(ob, nb); len(add)+len(rem) > 0 {
			out = append(out, DataplaneDiff{Node: sp.Node, Service: sp.Service, Added: add, Removed: rem})
		}
	}
	for _, sp := range old {
		if !seen[key(sp)] {
			out = append(out, DataplaneDiff{Node: sp.Node, Service: sp.Service, Added: []string{}, Removed: backendSet(sp)})
		}
	}
	return out
}

func endpointAddrs(s *model.Snapshot) map[string][]string {
	out := map[string][]string{}
	for _, ep := range s.Kube.Endpoints {
		k := ep.Namespace + "/" + ep.Name
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				if a.IP != "" && !slices.Contains(out[k], a.IP) {
					out[k] = append(out[k], a.IP)
				}
			}
		}
		slices.Sort(out[k])
	}
	return out
}

// Endpoints compares the endpoint addresses of each Service.
func Endpoints(old, new *model.Snapshot) []EndpointsDiff {
	o, n := endpointAddrs(old), endpointAddrs(new)
	var keys []string
	for k := range n {
		keys = append(keys, k)
	}
	for k := range o {
		if _, ok := n[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := []EndpointsDiff{}
	for _, k := range keys {
		if add, rem := minus(n[k], o[k]), minus(o[k], n[k]); len(add)+len(rem) > 0 {
			out = append(out, EndpointsDiff{Service: k, Added: add, Removed: rem})
		}
	}
	return out
}

// WriteText writes d as `netmortem diff` does, escaped for a terminal
// (unfitted: the CLI fits it to the terminal's width).
func WriteText(w io.Writer, d Diff) {
	escape.Fprintf(w, "old: %s\nnew: %s\n\nfindings: %d appeared, %d resolved, %d changed, %d unchanged\n", d.Old, d.New,
		len(d.Findings.Appeared), len(d.Findings.Resolved), len(d.Findings.Changed), len(d.Findings.Unchanged))
	if d.Suppressed.Old+d.Suppressed.New > 0 {
		fmt.Fprintf(w, "suppressed (left out): %d in old, %d in new\n", d.Suppressed.Old, d.Suppressed.New)
	}
	for _, r := range d.Findings.Appeared {
		escape.Fprintf(w, "  + %s %s: %s [%s]\n", r.Severity, r.Rule, r.Title, r.Fingerprint)
	}
	for _, r := range d.Findings.Resolved {
		escape.Fprintf(w, "  - %s %s: %s [%s]\n", r.Severity, r.Rule, r.Title, r.Fingerprint)
	}
	for _, c := range d.Findings.Changed {
		worse := ""
		if c.Worse {
			worse = " (worse)"
		}
		escape.Fprintf(w, "  ~ %s %s: %s [%s]%s\n      %s\n", c.Severity, c.Rule, c.Title, c.Fingerprint, worse, ChangeText(c.Changes))
	}
	for _, r := range d.Findings.Unchanged {
		escape.Fprintf(w, "  = %s %s: %s [%s]\n", r.Severity, r.Rule, r.Title, r.Fingerprint)
	}
	if len(d.Dataplane) > 0 {
		fmt.Fprintln(w, "\nNAT backends:")
		for _, x := range d.Dataplane {
			where := x.Service
			if x.Node != "" {
				where = x.Node + " " + where
			}
			escape.Fprintf(w, "  %s: %s\n", where, changes(x.Added, x.Removed))
		}
	}
	if len(d.Endpoints) > 0 {
		fmt.Fprintln(w, "\nendpoints:")
		for _, x := range d.Endpoints {
			escape.Fprintf(w, "  %s: %s\n", x.Service, changes(x.Added, x.Removed))
		}
	}
}

func changes(add, rem []string) string {
	var parts []string
	for _, a := range add {
		parts = append(parts, "+"+a)
	}
	for _, r := range rem {
		parts = append(parts, "-"+r)
	}
	return strings.Join(parts, " ")
}
