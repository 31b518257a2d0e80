package host

import (
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// RuleFormat reads policy routing rules: ip rule.
var RuleFormat = &format.Format{
	Name:    "ip-rule",
	Kind:    model.KindRoutes,
	Command: "ip rule, ip rule show, ip -6 rule, ip -4 rule list",
	Doc: "one record per rule: its priority, `not`, the selectors (from and to, a bare address read as " +
		"a host prefix and `all` as none; iif, oif, fwmark) and the action (lookup/table TABLE, or " +
		"unreachable, prohibit, blackhole, goto, nop); other selectors (tos, uidrange, " +
		"ipproto, sport, dport, suppress_prefixlength ...) stay in the raw line; the family from " +
		"the addresses or the command (ip -6 rule); prompts name the node",
	Sniff: sniffRule,
	Parse: format.Records(readRules, func(s *model.Snapshot, out []model.RouteRule) { s.RouteRules = append(s.RouteRules, out...) }, "rules"),
}

// Rules parses policy routing rules printed by ip rule: "PRIO:\t[not]
// from SRC [to DST] [iif DEV] [oif DEV] [fwmark M] ... lookup TABLE" or an
// action instead of the lookup (unreachable, prohibit, blackhole, goto N,
// nop). Shell prompts name the node of the lines below them. A line that
// is not a rule is reported with its position and the rest is read. name
// is used only in positions.
func Rules(r io.Reader, name string) ([]model.RouteRule, error) {
	return format.ReadAll(r, name, readRules)
}

func readRules(r io.Reader, src *format.File, errs *model.ErrorList) []model.RouteRule {
	var out []model.RouteRule
	v6 := false
	hooks := text.Hooks{Command: func(cmd string) { v6 = routeCmdV6(cmd) }}
	text.ReadLines(r, src, errs, hooks, func(l *text.Line) {
		rule, err := parseRule(l.Trimmed)
		if !l.Syntax(err) {
			return
		}
		if rule.Family == "" && v6 {
			rule.Family = "inet6"
		}
		rule.Node, rule.Pos = l.Node, l.Pos()
		out = append(out, rule)
	})
	return out
}

// ruleErr is a rule line that could not be read.
type ruleErr string

func (e ruleErr) Error() string { return string(e) }

// parseRule reads one line of ip rule.
func parseRule(line string) (model.RouteRule, error) {
	rule := model.RouteRule{Raw: line}
	prio, rest, ok := strings.Cut(line, ":")
	p, err := strconv.Atoi(prio)
	if !ok || err != nil || p < 0 {
		return rule, ruleErr("expected a rule: \"PRIORITY:\\tfrom ... lookup TABLE\"")
	}
	rule.Priority = p
	f := strings.Fields(rest)
	arg := func(i int) (string, bool) {
		if i+1 < len(f) {
			return f[i+1], true
		}
		return "", false
	}
	for i := 0; i < len(f); i++ {
		w := f[i]
		switch w {
		case "not":
			rule.Not = true
		case "from", "to", "iif", "oif", "fwmark", "lookup", "table", "goto":
			v, ok := arg(i)
			if !ok {
				return rule, ruleErr(w + " without its value")
			}
			i++
			if err := ruleSet(&rule, w, v); err != nil {
				return rule, err
			}
		case "unreachable", "prohibit", "blackhole", "nop":
			rule.Action = w
		}
	}
	if rule.Action == "" {
		return rule, ruleErr("expected an action: lookup TABLE, unreachable, prohibit, blackhole, goto or nop")
	}
	return rule, nil
}

// ruleSet takes one selector or action of a rule and its value.
func ruleSet(rule *model.RouteRule, key, v string) error {
	switch key {
	case "from", "to":
		if v == "all" {
			return nil
		}
		pfx, err := hostOrPrefix(v)
		if err != nil {
			return ruleErr(key + " " + strconv.Quote(v) + " is not an address or a prefix")
		}
		if key == "from" {
			rule.From = pfx
		} else {
			rule.To = pfx
		}
		if pfx.Addr().Is6() {
			rule.Family = "inet6"
		} else {
			rule.Family = "inet"
		}
	case "iif":
		rule.Iif = v
	case "oif":
		rule.Oif = v
	case "fwmark":
		rule.FwMark = v
	case "lookup", "table":
		rule.Action, rule.Table = "lookup", v
	case "goto":
		rule.Action, rule.Table = "goto", ""
	}
	return nil
}

// hostOrPrefix reads a prefix, or an address as its host prefix.
func hostOrPrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func sniffRule(_ string, head []byte) int {
	matched, total, _ := text.SniffLines(head, 100, func(cmd string) bool {
		return text.Program(cmd) == "ip" && ruleCmd(cmd)
	}, func(line string) text.Match {
		t := strings.TrimSpace(line)
		if _, err := parseRule(t); err == nil && strings.Contains(t, "from ") {
			return text.Hit
		}
		return text.Miss
	})
	return text.RatioScore(matched, total, 90)
}

// ruleCmd reports whether an ip command lists rules (ip rule, ip -6 ru
// show).
func ruleCmd(cmd string) bool {
	for _, w := range strings.Fields(cmd)[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		return len(w) >= 2 && strings.HasPrefix("rule", w)
	}
	return false
}
