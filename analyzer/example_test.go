package analyzer_test

import (
	"context"
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// Open a bundle and run every rule on it.
func ExampleRun() {
	ctx := context.Background()
	snap, warnings, err := parse.Open(ctx, "../fixtures/incidents/stale-dnat", &parse.Options{Summary: parse.Summary{Enabled: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := analyzer.Run(ctx, snap, rules.All(), nil)
	fmt.Println(len(warnings), "warnings")
	for _, f := range res.Findings {
		fmt.Printf("%s %s: %s\n", f.Severity, f.Rule, f.Title)
	}
	// Output:
	// 0 warnings
	// error kube-proxy-sync-errors: kube-proxy cannot list EndpointSlice, Service: its dataplane is not updated
	// error stale-dnat: kube-system/kube-dns:dns-tcp: 1 of 4 NAT targets are stale (~25.0% of connections fail)
	// warning syn-unanswered: 10.244.2.7:53 does not answer: 8 connection attempts from 10.10.0.5 got no reply
}

// Run one rule on a snapshot built by hand: a node whose ephemeral port
// range reaches into the NodePort range.
func ExampleRun_oneRule() {
	snap := &model.Snapshot{
		Inputs: []model.Input{{Path: "sysctl.txt", Kind: model.KindSysctl}},
		Sysctls: []model.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1024 65000",
			Pos: model.Pos{File: "sysctl.txt", Line: 1}}},
	}
	res := analyzer.Run(context.Background(), snap, []*analyzer.Rule{rules.EphemeralNodePortOverlap}, nil)
	for _, f := range res.Findings {
		fmt.Println(f.Severity, f.Title)
		fmt.Println("evidence:", f.Evidence[0].Pos)
	}
	// Output:
	// warning ephemeral ports 1024-65000 overlap the NodePort range 30000-32767 on this node
	// evidence: sysctl.txt:1
}
