package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/collect"
)

func newCollectScriptCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "collect-script [flags]",
		Short: "print a shell script that collects a node's network evidence into one archive",
		Long: "Prints a POSIX sh script to run as root on a node: it runs the commands whose outputs the\n" +
			"rules read (iptables and nft, IPVS, conntrack, ss, sysctl, ip, kubelet and kube-proxy logs,\n" +
			"static pod manifests, a bounded tcpdump capture, and with --kubectl the cluster objects),\n" +
			"each bounded by a timeout and skipped with a note when its tool is missing, and writes one\n" +
			".tar.gz that netmortem analyze reads, with a manifest of what ran. It changes nothing on the\n" +
			"node, never reads Secrets and redacts values that look like credentials. --doc prints what to\n" +
			"collect for each symptom instead (docs/collect.md).",
		Example: "  netmortem collect-script > netmortem-collect.sh\n" +
			"  netmortem collect-script --capture-seconds 300 --capture-size 500 --conntrack-max 50000 > collect.sh\n" +
			"  netmortem collect-script --kubectl --capture-seconds 0 > collect-cluster.sh\n" +
			"  netmortem collect-script --doc > collect.md",
		Annotations: map[string]string{exitCodesKey: exitCodesList},
		Args:        noArgs,
	}
	o := collect.DefaultOptions()
	fs := cmd.Flags()
	fs.IntVar(&o.CaptureSeconds, "capture-seconds", o.CaptureSeconds, "how long the capture runs, in seconds (0: no capture)")
	fs.IntVar(&o.CaptureMB, "capture-size", o.CaptureMB, "the capture file's size cap, in MB (past it the capture keeps the newest packets)")
	fs.StringVar(&o.Filter, "filter", "", "tcpdump filter expression for the capture (default: everything)")
	fs.BoolVar(&o.Kubectl, "kubectl", false, "also collect the cluster objects the rules read, with kubectl (never Secrets)")
	fs.IntVar(&o.ConntrackMax, "conntrack-max", o.ConntrackMax, "the most conntrack entries listed")
	doc := fs.Bool("doc", false, "print what to collect for each symptom (docs/collect.md) instead of the script")
	completeFlags(cmd, map[string]cobra.CompletionFunc{
		"capture-seconds": completeValues("0", "30", "60", "120", "300"),
		"capture-size":    completeValues("50", "100", "500", "1000"),
		"conntrack-max":   completeValues("10000", "200000", "1000000"),
		"filter":          completeValues("tcp or icmp or arp", "not port 22"),
	})
	c.runs(cmd, "", func([]string) int { return runCollectScript(c.stdout, c.stderr, o, *doc) })
	return cmd
}

func runCollectScript(stdout, stderr io.Writer, o collect.Options, doc bool) int {
	if err := o.Check(); err != nil {
		fmt.Fprintln(stderr, "netmortem collect-script:", err)
		return exitUsage
	}
	var err error
	if doc {
		err = collect.WriteDoc(stdout, rules.All())
	} else {
		err = collect.WriteScript(stdout, o)
	}
	if err != nil {
		fmt.Fprintln(stderr, "netmortem collect-script:", err)
		return exitUnreadable
	}
	return exitOK
}
