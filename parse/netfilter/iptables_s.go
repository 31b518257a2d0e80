package netfilter

import (
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// IPTablesRulesFormat reads iptables -S rule specifications, the lines
// of iptables-save without its tables (see iptables_save.go).
var IPTablesRulesFormat = &format.Format{
	Name:    "iptables-S",
	Kind:    model.KindNetfilter,
	Command: "iptables -S (-t TABLE, CHAIN, -v with -c counters), ip6tables -S",
	Doc: "the table comes from the prompt or the bundle's command, else filter (nat when the first" +
		" chain is PREROUTING, POSTROUTING or one of kube-proxy's NAT chains)",
	Sniff: sniffIPTablesRules,
	Parse: rulesets(readIPTables),
}

func sniffIPTablesRules(_ string, head []byte) int {
	c, ok := sniffIPTables(head)
	if !ok || c.save > 0 || c.list > 0 || c.counted > 0 || c.prompt[formSave] > 0 || (c.spec == 0 && c.rules == 0 && c.prompt[formRules] == 0) {
		return 0
	}
	if c.spec == 0 && c.prompt[formRules] == 0 {
		// -A lines alone (a grep of iptables-save or of iptables -S):
		// read as iptables -S, the table guessed from the rules.
		return text.RatioScore(c.rules, c.total, 90)
	}
	return text.RatioScore(c.rules+c.spec, c.total, 98)
}
