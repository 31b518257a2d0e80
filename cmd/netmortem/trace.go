package main

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/operand"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

func newTraceCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace --dst IP:PORT [flags] BUNDLE...",
		Short: "walk a connection through each node's nat table, rule by rule",
		Long: "Walks a new connection through each node's nat table as the kernel does (PREROUTING or OUTPUT,\n" +
			"KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-*; for kube-proxy's nftables mode the base chains of the hook\n" +
			"in priority order, services, service-*, endpoint-*, and the filter chains that reject Services\n" +
			"without endpoints), printing every rule that matches with its file:line and the share of\n" +
			"connections that reach it, then where the connections end up; with an IPVS table, the virtual\n" +
			"service and its real servers by weight. --anonymize replaces the addresses and names of the\n" +
			"output by tokens (docs/output.md).",
		Example: "  netmortem trace --dst 10.96.0.10:53 fixtures/incidents/stale-dnat\n" +
			"  netmortem trace --from-node --dst 10.96.0.10:53 fixtures/incidents/stale-dnat/iptables-save.txt\n" +
			"  netmortem trace --dst 10.10.85.235:36704 fixtures/incidents/ephemeral-nodeport\n" +
			"  netmortem trace --anonymize --dst 10.96.0.10:53 fixtures/incidents/stale-dnat",
		Annotations: map[string]string{exitCodesKey: exitCodesTrace},
	}
	fs := cmd.Flags()
	dst := fs.String("dst", "", "destination IP:PORT of the connection (required)")
	src := fs.String("src", "", "source IP[:PORT]; unknown when not given")
	proto := fs.String("proto", "tcp", "tcp, udp or sctp")
	local := fs.Bool("local", false, "the destination is an address of the node itself (NodePorts)")
	output := fs.Bool("from-node", false, "the node itself opens the connection (nat OUTPUT) instead of a pod or a client elsewhere (PREROUTING)")
	node := fs.String("node", "", "trace only this node's rulesets")
	var ao anonymizeOptions
	addAnonymizeFlags(fs, &ao)
	completeFlags(cmd, map[string]cobra.CompletionFunc{"proto": completeValues("tcp", "udp", "sctp"),
		"dst": cobra.NoFileCompletions, "src": cobra.NoFileCompletions, "node": cobra.NoFileCompletions})
	c.runs(cmd, "BUNDLE", func([]string) int {
		return runTrace(fs, c.stdout, c.stderr, dst, src, proto, local, output, node, ao)
	})
	return cmd
}

func runTrace(fs *pflag.FlagSet, stdout, stderr io.Writer, dst, src, proto *string, local, output *bool, node *string, ao anonymizeOptions) int {
	if err := ao.loadKey(); err != nil {
		escape.Fprintln(stderr, "netmortem trace:", err)
		return exitUsage
	}
	d, err := netip.ParseAddrPort(*dst)
	if err != nil {
		fmt.Fprintf(stderr, "netmortem trace: --dst %q: want IP:PORT\n", *dst)
		return exitUsage
	}
	probe := dataplane.Probe{Dst: d, Proto: strings.ToLower(*proto), Local: *local, Output: *output}
	if *src != "" {
		if ap, err := netip.ParseAddrPort(*src); err == nil {
			probe.Src = ap.Addr()
		} else if a, err := netip.ParseAddr(*src); err == nil {
			probe.Src = a
		} else {
			fmt.Fprintf(stderr, "netmortem trace: --src %q: want IP or IP:PORT\n", *src)
			return exitUsage
		}
	}
	ctx, stop := signalContext()
	defer stop()
	in := operand.OpenPaths(ctx, fs.Args(), &parse.Options{Summary: parse.Summary{Enabled: true}, Stdin: stdin})
	testHook("read")
	if in.Err != nil {
		escape.Fprintln(stderr, "netmortem trace:", in.Err)
		return exitUnreadable
	}
	if in.Stopped() {
		fmt.Fprintln(stderr, "netmortem trace: interrupted")
		return exitUnreadable
	}
	snap := in.Snap
	traced := 0
	// The trace is written whole once done.
	var out bytes.Buffer
	anonymizer := ao.anonymizer(snap)
	shown := netmortem.Anonymize(anonymizer, probe)
	var traces []natTrace
	var files []string
	for _, rs := range snap.Netfilter {
		if *node != "" && rs.Node != *node {
			continue
		}
		tr, err := dataplane.TraceNAT(rs, probe)
		if err != nil {
			continue // a filter-only dump
		}
		traces = append(traces, natTrace{rs: rs, tr: tr, group: traceGroup(rs)})
		files = append(files, rs.Pos.File)
	}
	ipvs := dataplane.Build(snap)
	for _, sp := range ipvs {
		files = append(files, sp.Pos.File)
	}
	// Positions are relative to the bundle's folder, named once, when
	// the output is fitted to a width.
	root := ""
	if outputWidth(stdout) > 0 {
		if root = commonDir(files); root != "" {
			escape.Fprintf(&out, "Bundle %s (paths below are relative to it)\n\n", netmortem.Anonymize(anonymizer, root))
		}
	}
	se := endpointsFor(snap, probe)
	for _, t := range mergeTraces(traces) {
		traced++
		stale := make([]string, len(t.tr.Destinations))
		for i, d := range t.tr.Destinations {
			stale[i] = netmortem.Anonymize(anonymizer, se.stale(d))
		}
		t.rs = &model.Ruleset{Pos: model.Pos{File: netmortem.Anonymize(anonymizer, t.rs.Pos.File)}}
		for i, f := range t.same {
			t.same[i] = netmortem.Anonymize(anonymizer, f)
		}
		t.tr = netmortem.Anonymize(anonymizer, t.tr)
		writeTrace(&out, t, shown, stale, netmortem.Anonymize(anonymizer, root), outputWidth(stdout))
	}
	// IPVS: the virtual service the destination hits, and its real servers.
	for _, sp := range ipvs {
		if sp.Mode != "ipvs" || (*node != "" && sp.Node != *node) || !strings.EqualFold(sp.Proto, probe.Proto) ||
			len(sp.Frontends) == 0 || sp.Frontends[0] != probe.Dst.String() {
			continue
		}
		traced++
		sp = netmortem.Anonymize(anonymizer, sp)
		where := relPath(sp.Pos.File, root)
		if sp.Node != "" {
			where = "node " + sp.Node + " (" + where + ")"
		}
		name := ""
		if sp.Service != "" {
			name = " (" + sp.Service + ")"
		}
		escape.Fprintf(&out, "%s: %s connection to %s, IPVS virtual service at %s%s\n  destinations:\n", where, shown.Proto, shown.Dst, relPos(sp.Pos, root), name)
		if len(sp.Backends) == 0 {
			fmt.Fprintln(&out, "    none: the virtual service has no real servers (connections are reset)")
		}
		for _, b := range sp.Backends {
			escape.Fprintf(&out, "    %-22s %7s  real server at %s\n", b.Address, dataplane.Percent(b.Probability), relPos(b.Pos, root))
		}
		fmt.Fprintln(&out)
	}
	if _, err := io.WriteString(stdout, fitText(out.String(), outputWidth(stdout))); err != nil {
		escape.Fprintln(stderr, "netmortem trace:", err)
		return exitUnreadable
	}
	if err := ao.writeMapping(anonymizer); err != nil {
		escape.Fprintln(stderr, "netmortem trace:", err)
		return exitUnreadable
	}
	if traced == 0 {
		fmt.Fprintln(stderr, "netmortem trace: no nat table or IPVS virtual service for that destination in the bundle "+
			"(give iptables-save, iptables -t nat -L, nft list ruleset or ipvsadm -Ln output)")
		return exitUnreadable
	}
	if bad := snap.UnreadableCaptures(); len(bad) > 0 {
		escape.Fprintf(stderr, "netmortem trace: %s could not be read: %s\n", count(len(bad), "capture"), strings.Join(bad, ", "))
		return exitUnreadable
	}
	return exitOK
}
