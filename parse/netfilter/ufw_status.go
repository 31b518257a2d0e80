package netfilter

import (
	"fmt"
	"io"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// UFWStatusFormat reads ufw's status: its default policies and its rules,
// as the filter table of the chains they govern.
var UFWStatusFormat = &format.Format{
	Name:    "ufw-status",
	Kind:    model.KindNetfilter,
	Command: "ufw status verbose (ufw status, ufw status numbered)",
	Doc: "one IPv4 ruleset per node, in a filter table of three chains: `Default: deny (incoming), allow " +
		"(outgoing), deny (routed)` gives the policies of INPUT, OUTPUT and FORWARD (deny is DROP, reject " +
		"REJECT; a `disabled` routed policy and a listing without the line leave the policy unknown); each rule " +
		"row (`To  Action  From`, with `[ N]` when numbered) is a rule of INPUT (`IN`, or no direction), OUTPUT " +
		"(`OUT`) or FORWARD (`FWD`): ALLOW and LIMIT accept, DENY drops, REJECT rejects; the To column's " +
		"port (`22/tcp`, `6783:6784/udp`, `80,443/tcp`, an application profile's name), address and `on IFACE`, " +
		"and the From column's address, are its matches. `(v6)` rows are left out; `Status: inactive` gives no " +
		"ruleset (nothing is filtered)",
	Sniff: sniffUFWStatus,
	Parse: rulesets(readUFWStatus),
}

// UFWStatus parses the output of ufw status. A line of no known shape is
// reported with its position and the rest is read. name is used only in
// positions.
func UFWStatus(r io.Reader, name string) ([]*model.Ruleset, error) {
	return format.ReadAll(r, name, readUFWStatus)
}

var (
	ufwDefaultRe = lazyre.New(`^Default: (\w+) \(incoming\), (\w+) \(outgoing\)(?:, (\w+) \(routed\))?$`)
	// ufwActionRe is the Action column: the action, then the direction.
	ufwActionRe = lazyre.New(`^(ALLOW|DENY|REJECT|LIMIT)(?: (IN|OUT|FWD))?$`)
	ufwNumberRe = lazyre.New(`^\[\s*\d+\] `)
	ufwPortRe   = lazyre.New(`^([\w,:-]+)(?:/(tcp|udp|sctp))?$`)
	// ufwAppRe is an application profile's name after the ports it opens.
	ufwAppRe = lazyre.New(`(\S+/(?:tcp|udp|sctp)) \([^)]*\)$`)
)

// ufwReader reads one status listing; a ruleset per node.
type ufwReader struct {
	out    []*model.Ruleset
	cur    *model.Ruleset
	chains map[string]*model.Chain
	header bool // the To, Action and From header was read
}

func readUFWStatus(r io.Reader, src *format.File, errs *model.ErrorList) []*model.Ruleset {
	u := &ufwReader{}
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { u.cur = nil }}, func(l *text.Line) {
		u.line(l)
	})
	return u.out
}

func (u *ufwReader) line(l *text.Line) {
	t := l.Trimmed
	switch {
	case t == "Status: active":
		u.start(l)
		return
	case t == "Status: inactive":
		u.cur = nil // nothing is filtered: no ruleset
		return
	case strings.HasPrefix(t, "Logging: "), strings.HasPrefix(t, "New profiles: "), strings.Trim(t, "- ") == "":
		return
	}
	if u.cur == nil {
		l.Syntax(fmt.Errorf("expected \"Status: active\" before ufw's listing, got %q", t))
		return
	}
	if m := ufwDefaultRe.FindStringSubmatch(t); m != nil {
		for i, chain := range []string{"INPUT", "OUTPUT", "FORWARD"} {
			c := u.chains[chain]
			c.Policy, c.Pos = ufwPolicy(m[i+1]), l.Pos() // the line that shows the policy
		}
		return
	}
	if strings.HasPrefix(t, "To ") && strings.Contains(t, " Action ") && strings.HasSuffix(t, " From") {
		u.header = true
		return
	}
	if !u.header {
		l.Syntax(fmt.Errorf("expected a ufw rule under its To, Action and From header, got %q", t))
		return
	}
	rule, chain, err := ufwRow(t)
	if err != nil {
		l.Syntax(err)
		return
	}
	if rule == nil {
		return // an IPv6 row
	}
	rule.Raw, rule.Pos = t, l.Pos()
	c := u.chains[chain]
	c.Rules = append(c.Rules, rule)
}

// start starts the ruleset of the node of l.
func (u *ufwReader) start(l *text.Line) {
	t := &model.Table{Name: "filter", Pos: l.Pos()}
	u.chains = map[string]*model.Chain{}
	for _, name := range []string{"INPUT", "FORWARD", "OUTPUT"} {
		c := &model.Chain{Name: name, Pos: l.Pos()}
		u.chains[name] = c
		t.Chains = append(t.Chains, c)
	}
	u.cur = &model.Ruleset{Node: l.Node, Family: "ipv4", Format: "ufw-status", Tables: []*model.Table{t}, Pos: l.Pos()}
	u.out = append(u.out, u.cur)
	u.header = false
}

// ufwPolicy is the chain policy of a ufw default: "" when ufw leaves the
// chain alone (disabled) or the word is unknown.
func ufwPolicy(word string) string {
	switch word {
	case "allow":
		return "ACCEPT"
	case "deny":
		return "DROP"
	case "reject":
		return "REJECT"
	}
	return ""
}

// ufwRow reads a rule row, "[ 1] 22/tcp on eth1   ALLOW IN   10.0.0.0/8
// # ssh": the rule, and the chain it is in; a nil rule for an IPv6 row.
// The columns are told apart by the action, which neither end holds: a
// long To column shifts the others.
func ufwRow(row string) (*model.Rule, string, error) {
	row = ufwNumberRe.ReplaceAllString(row, "")
	if c := strings.Index(row, " # "); c >= 0 {
		row = strings.TrimSpace(row[:c]) // the rule's comment
	}
	f := strings.Fields(row)
	at := -1
	for i, w := range f {
		if w == "ALLOW" || w == "DENY" || w == "REJECT" || w == "LIMIT" {
			at = i
			break
		}
	}
	if at <= 0 {
		return nil, "", fmt.Errorf("expected To, then ALLOW, DENY, REJECT or LIMIT, then From, got %q", row)
	}
	action := f[at]
	rest := f[at+1:]
	if len(rest) > 0 && (rest[0] == "IN" || rest[0] == "OUT" || rest[0] == "FWD") {
		action, rest = action+" "+rest[0], rest[1:]
	}
	to, from := strings.Join(f[:at], " "), strings.Join(rest, " ")
	// "(log)" and "(log-all)" mark a logged rule; verbose listings put an
	// application profile's name after its ports: "22/tcp (OpenSSH)".
	from = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(from, "(log-all)"), "(log)"))
	to = ufwAppRe.ReplaceAllString(to, "$1")
	if from == "" {
		return nil, "", fmt.Errorf("expected the From column after %q", action)
	}
	if strings.Contains(to, "(v6)") || strings.Contains(from, "(v6)") {
		return nil, "", nil
	}
	m := ufwActionRe.FindStringSubmatch(action)
	r := &model.Rule{Target: map[string]string{"ALLOW": "ACCEPT", "LIMIT": "ACCEPT", "DENY": "DROP", "REJECT": "REJECT"}[m[1]]}
	chain := map[string]string{"": "INPUT", "IN": "INPUT", "OUT": "OUTPUT", "FWD": "FORWARD"}[m[2]]
	toAddr, toPort, toIface, err := ufwEnd(to)
	if err != nil {
		return nil, "", fmt.Errorf("the To column %q: %w", to, err)
	}
	fromAddr, fromPort, fromIface, err := ufwEnd(from)
	if err != nil {
		return nil, "", fmt.Errorf("the From column %q: %w", from, err)
	}
	r.Dst, r.Src = toAddr, fromAddr
	if toPort != "" {
		r.Proto, r.DPort = ufwPortParts(toPort)
	}
	if fromPort != "" {
		proto, port := ufwPortParts(fromPort)
		r.SPort = port
		if r.Proto == "" {
			r.Proto = proto
		}
	}
	// ufw shows the interface of an incoming rule in To ("22/tcp on
	// eth1"), of an outgoing one in From, and of a routed one on both
	// sides: the way out in To, the way in in From.
	switch chain {
	case "INPUT":
		r.InIface = toIface + fromIface
	case "OUTPUT":
		r.OutIface = toIface + fromIface
	default:
		r.InIface, r.OutIface = fromIface, toIface
	}
	return r, chain, nil
}

// ufwEnd reads one end of a rule, the To or the From column: "Anywhere",
// an address or network, a port ("22/tcp", an application profile's
// name), an address and a port, each maybe followed by "on IFACE".
func ufwEnd(s string) (addr, port, iface string, err error) {
	if before, after, ok := strings.Cut(s, " on "); ok {
		s, iface = strings.TrimSpace(before), strings.TrimSpace(after)
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return "", "", "", fmt.Errorf("empty")
	}
	if f[0] == "Anywhere" {
		f = f[1:]
	} else if _, ok := matchPrefixOf(f[0]); ok {
		addr, f = f[0], f[1:]
	}
	if len(f) > 0 && f[0] == "port" { // "10.0.0.1 port 22", as some releases print it
		f = f[1:]
	}
	// The ports, or an application profile's name ("OpenSSH", "Nginx
	// Full"), which says nothing of its ports: a port no match can know.
	return addr, strings.Join(f, " "), iface, nil
}

// ufwPortParts splits "6783:6784/udp" into its protocol and ports; an
// application profile's name is the port, unknown, with no protocol.
func ufwPortParts(s string) (proto, port string) {
	if m := ufwPortRe.FindStringSubmatch(s); m != nil {
		return m[2], m[1]
	}
	return "", s
}

// sniffUFWStatus recognizes ufw's status by its first line and its
// header or defaults.
func sniffUFWStatus(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	status, listing := false, false
	for _, line := range text.HeadLines(head, 40) {
		t := strings.TrimSpace(line)
		switch {
		case t == "Status: active" || t == "Status: inactive":
			status = true
		case ufwDefaultRe.MatchString(t), strings.HasPrefix(t, "To") && strings.Contains(t, "Action") && strings.HasSuffix(t, "From"):
			listing = true
		}
	}
	switch {
	case status && listing:
		return 95
	case status:
		return 60
	}
	return 0
}
