package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// bundleDiff is what `netmortem diff -o json` prints.
type bundleDiff struct {
	// SchemaVersion is report.SchemaVersion: the version of netmortem's
	// machine outputs.
	SchemaVersion string `json:"schema_version"`
	// Tool is the netmortem that wrote the diff.
	Tool     buildinfo.Info `json:"tool"`
	Old      string         `json:"old"`
	New      string         `json:"new"`
	Findings findingsDiff   `json:"findings"`
	// Suppressed counts the findings of each bundle that the
	// configuration's ignore entries or the baseline left out of the
	// comparison.
	Suppressed suppressedCounts `json:"suppressed"`
	Dataplane  []dataplaneDiff  `json:"dataplane"`
	Endpoints  []endpointsDiff  `json:"endpoints"`
}

// suppressedCounts counts suppressed findings in OLD and in NEW.
type suppressedCounts struct {
	Old int `json:"old"`
	New int `json:"new"`
}

type dataplaneDiff struct {
	Node    string   `json:"node,omitempty"`
	Service string   `json:"service"`
	Added   []string `json:"added"`   // backends in NEW only
	Removed []string `json:"removed"` // backends in OLD only
}

type endpointsDiff struct {
	Service string   `json:"service"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

func newDiffCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff [flags] OLD NEW",
		Short: "compare two bundles of one cluster: findings, NAT backends, endpoints",
		Long: "Compares two bundles of the same cluster: the findings that appeared, resolved, changed (severity,\n" +
			"certainty or facts) or stayed the same, matched by fingerprint; the NAT backends of each\n" +
			"Service port on each node; and the Services' endpoints.\n\n" +
			"The configuration (--config, or .netmortem.yaml next to NEW) applies to both bundles: its rule\n" +
			"settings, and its ignore entries, whose findings are left out on either side and counted; so are\n" +
			"the findings of a --baseline report. --anonymize replaces the addresses and names of both bundles\n" +
			"with one mapping (docs/output.md).",
		Example: "  netmortem diff fixtures/incidents/stale-dnat-control fixtures/incidents/stale-dnat\n" +
			"  netmortem diff -o json fixtures/incidents/mtu-blackhole-control fixtures/incidents/mtu-blackhole\n" +
			"  netmortem diff --anonymize fixtures/incidents/stale-dnat-control fixtures/incidents/stale-dnat",
		Annotations: map[string]string{exitCodesKey: exitCodesDiff},
	}
	fs := cmd.Flags()
	output := fs.StringP("output", "o", "text", "output format: text, json")
	failOn := fs.String("fail-on", "warning", "exit 1 when a finding that appeared, or that changed for the worse (severity rose, certainty firmed), is at or above this severity (its severity in NEW): info, warning, error, or never")
	config := fs.String("config", "", "configuration file (docs/config.md); default: .netmortem.yaml next to NEW, if any")
	baseline := fs.String("baseline", "", "leave out, on both sides, the findings of this earlier report (analyze -o json, or batch lines)")
	var ao anonymizeOptions
	addAnonymizeFlags(fs, &ao)
	completeFlags(cmd, map[string]cobra.CompletionFunc{"output": completeValues("text", "json"), "fail-on": completeValues(failOnValues...)})
	c.runs(cmd, "OLD and NEW", func([]string) int {
		return runDiff(fs, c.stdout, c.stderr, output, failOn, diffOptions{config: *config, baseline: *baseline, anon: ao})
	})
	return cmd
}

// diffOptions are diff's configuration, baseline and anonymization.
type diffOptions struct {
	config, baseline string
	anon             anonymizeOptions
}

func runDiff(fs *pflag.FlagSet, stdout, stderr io.Writer, output, failOn *string, o diffOptions) int {
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "netmortem diff: want exactly two bundles, OLD and NEW")
		return exitUsage
	}
	if err := oneOf("output", *output, []string{"text", "json"}); err != nil {
		escape.Fprintln(stderr, "netmortem diff:", err)
		return exitUsage
	}
	level, err := parseFailOn(*failOn)
	if err != nil {
		fmt.Fprintln(stderr, "netmortem diff: --fail-on:", err)
		return exitUsage
	}
	if err := o.anon.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem diff:", err)
		return exitUsage
	}
	var found bool
	o.config, found = findConfig(o.config, fs.Args()[1:])
	sayConfig(stderr, "diff", o.config, found)
	rules, cfg, err := selectRules(analyzeOptions{config: o.config})
	if err != nil {
		sayError(stderr, "diff", err)
		return exitUsage
	}
	var baseline map[string]bool
	if o.baseline != "" {
		if baseline, err = readBaseline(o.baseline); err != nil {
			escape.Fprintln(stderr, "netmortem diff: --baseline:", err)
			return exitUsage
		}
	}
	ctx, stop := signalContext()
	defer stop()
	type side struct {
		snap *model.Snapshot
		res  analyzer.Result
		sup  []analyzer.Suppressed
	}
	var sides [2]side
	now := time.Now()
	for i, p := range fs.Args() {
		in := openPaths(ctx, []string{p}, &parse.Options{Summary: parse.Summary{Enabled: true}})
		if in.err != nil {
			escape.Fprintln(stderr, "netmortem diff:", in.err)
			return exitUnreadable
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "netmortem diff: interrupted")
			return exitUnreadable
		}
		res := analyzer.Run(ctx, in.snap, rules, cfg)
		sup, expired := suppress(&res, cfg, baseline, o.baseline, now)
		if i == 1 { // the same entries for both: warned about once
			for _, w := range expired {
				escape.Fprintf(stderr, "warning: %s: %s\n", w.Position, w.Message)
			}
		}
		sides[i] = side{in.snap, res, sup}
	}
	sayUnmatched(stderr, cfg, append(slices.Clone(sides[0].sup), sides[1].sup...), now)
	d := bundleDiff{SchemaVersion: report.SchemaVersion, Tool: buildinfo.Get(), Old: fs.Arg(0), New: fs.Arg(1),
		Findings:   diffFindings(sides[0].res.Findings, sides[1].res.Findings),
		Suppressed: suppressedCounts{len(sides[0].sup), len(sides[1].sup)},
		Dataplane:  diffDataplane(dataplane.Build(sides[0].snap), dataplane.Build(sides[1].snap)),
		Endpoints:  diffEndpoints(sides[0].snap, sides[1].snap)}
	// One mapping for both bundles: an address or a name is the same
	// token in OLD and NEW.
	anonymizer := o.anon.anonymizer(sides[0].snap)
	if anonymizer != nil {
		anonymizer.Learn(sides[1].snap)
	}
	d = anonymizeValue(anonymizer, d)
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			escape.Fprintln(stderr, "netmortem diff:", err)
			return exitUnreadable
		}
	} else {
		var b strings.Builder
		writeDiff(&b, d)
		if _, err := io.WriteString(stdout, fitText(b.String(), outputWidth(stdout))); err != nil {
			escape.Fprintln(stderr, "netmortem diff:", err)
			return exitUnreadable
		}
	}
	if err := o.anon.writeMapping(anonymizer); err != nil {
		escape.Fprintln(stderr, "netmortem diff:", err)
		return exitUnreadable
	}
	if bad := slices.Concat(unreadableCaptures(sides[0].snap), unreadableCaptures(sides[1].snap)); len(bad) > 0 {
		escape.Fprintf(stderr, "netmortem diff: %s could not be read: %s\n", count(len(bad), "capture"), strings.Join(bad, ", "))
		return exitUnreadable
	}
	if failingChanges(d.Findings, level) > 0 {
		return exitFindings
	}
	return exitOK
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

func diffDataplane(old, new []dataplane.ServicePort) []dataplaneDiff {
	key := func(sp dataplane.ServicePort) string { return sp.Node + "|" + sp.Service + "|" + sp.Chain }
	idx := map[string]dataplane.ServicePort{}
	for _, sp := range old {
		idx[key(sp)] = sp
	}
	out := []dataplaneDiff{}
	seen := map[string]bool{}
	for _, sp := range new {
		k := key(sp)
		seen[k] = true
		nb := backendSet(sp)
		ob := backendSet(idx[k])
		if add, rem := minus(nb, ob), minus(ob, nb); len(add)+len(rem) > 0 {
			out = append(out, dataplaneDiff{Node: sp.Node, Service: sp.Service, Added: add, Removed: rem})
		}
	}
	for _, sp := range old {
		if !seen[key(sp)] {
			out = append(out, dataplaneDiff{Node: sp.Node, Service: sp.Service, Added: []string{}, Removed: backendSet(sp)})
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

func diffEndpoints(old, new *model.Snapshot) []endpointsDiff {
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
	out := []endpointsDiff{}
	for _, k := range keys {
		if add, rem := minus(n[k], o[k]), minus(o[k], n[k]); len(add)+len(rem) > 0 {
			out = append(out, endpointsDiff{Service: k, Added: add, Removed: rem})
		}
	}
	return out
}

func writeDiff(w io.Writer, d bundleDiff) {
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
		escape.Fprintf(w, "  ~ %s %s: %s [%s]%s\n      %s\n", c.Severity, c.Rule, c.Title, c.Fingerprint, worse, changeText(c.Changes))
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
