// Package netfilter reads the state of the kernel's packet filter and
// load balancer as the tools print it: iptables-save, iptables -L and -S,
// nft list ruleset, ipvsadm, and conntrack's table and counters. Each
// file holds one format: its Format, its sniffer and its parser.
package netfilter

import (
	"context"
	"io"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// rulesets makes the Parse of a ruleset format from its reader: the
// rulesets read are added to the snapshot, their rules counted as the
// records and in the details with their chains.
func rulesets(read format.ReadFunc[*model.Ruleset]) func(context.Context, io.Reader, *format.File, *model.Snapshot) (int, error) {
	return func(_ context.Context, r io.Reader, src *format.File, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		sets := read(r, src, &errs)
		rules, chains := 0, 0
		for _, rs := range sets {
			rules += rs.Rules()
			for _, t := range rs.Tables {
				chains += len(t.Chains)
			}
		}
		snap.Netfilter = append(snap.Netfilter, sets...)
		src.Count("rules", rules)
		src.Count("chains", chains)
		return rules, errs.Err()
	}
}
