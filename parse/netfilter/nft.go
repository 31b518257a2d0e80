package netfilter

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// NFTFormat reads `nft list ruleset` output.
var NFTFormat = &format.Format{
	Name: "nft",
	Kind: model.KindNetfilter,
	Command: "nft list ruleset (also nft -a with handles, nft -n, nft list table), kube-proxy's " +
		"nftables mode (Kubernetes 1.29+), iptables-nft tables",
	Doc: "one Ruleset per family (`ip` is ipv4, `ip6` ipv6, `inet`); base chains keep type, hook, " +
		"priority (names such as `dstnat - 10` read as numbers) and policy; rules read into the " +
		"iptables fields (`ip daddr`, `tcp dport`, `meta l4proto`, `iifname`, `ct state`, " +
		"`jump`/`goto`, `dnat to`, `snat to`, `masquerade`, `comment`, counters, `meta mark set` " +
		"as MARK with `--set-xmark` values, mark matches, the protocol numbers of `nft -n`; " +
		"iptables-nft's `meta random & 2147483647 < N` as a statistic match of probability N/2^31" +
		" and `xt match recent` as a recent check, or a recent set in a `dnat` rule); each " +
		"element of a verdict map becomes a rule: `numgen random mod N vmap { ... }` as statistic" +
		" rules whose chances multiply out to 1/N each (1/N, 1/(N-1) ... 1, as iptables' " +
		"statistic rules), and `ip daddr . meta l4proto . th dport vmap @service-ips` as one rule" +
		" per map element (Dst, Proto, DPort and the goto), positioned at the element's line, " +
		"with the element's `comment` as the rule's; named sets keep their elements (a rule's `ip" +
		" daddr @nodeport-ips` stays `@nodeport-ips`, resolved by the trace); flowtables and " +
		"other objects are skipped. The dataplane and `netmortem trace` read kube-proxy's " +
		"nftables rules ([dataplane.md](dataplane.md))",
	Sniff: sniffNFT,
	Parse: rulesets(readNFT),
}

// nftFamilies are the families of a `table FAMILY NAME {` line, named as
// model.Ruleset names them.
var nftFamilies = map[string]string{
	"ip": "ipv4", "ip6": "ipv6", "inet": "inet", "arp": "arp", "bridge": "bridge", "netdev": "netdev",
}

// nftTableLine reads `table ip kube-proxy {` (and `table NAME {`, which
// nft reads as family ip).
func nftTableLine(t string) (family, name string, ok bool) {
	f := strings.Fields(t)
	if len(f) < 3 || f[0] != "table" || f[len(f)-1] != "{" {
		return "", "", false
	}
	switch len(f) {
	case 3:
		return "ipv4", f[1], true
	case 4:
		fam, ok := nftFamilies[f[1]]
		return fam, f[2], ok
	}
	return "", "", false
}

func sniffNFT(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	for i, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(nftStripHandle(line))
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		cmd, ok := text.HeadCommand(i, line)
		if ok {
			if strings.HasPrefix(cmd, "nft ") {
				return 90
			}
			continue
		}
		if _, ok := text.NodeMarker(line); ok {
			continue
		}
		if _, _, ok := nftTableLine(t); ok {
			return 95
		}
		return 0
	}
	return 0
}

// NFT parses `nft list ruleset` output (also with -a, whose "# handle N"
// comments are dropped, and `nft list table`). Each table becomes a
// model.Table in the Ruleset of its family (ip is ipv4, ip6 ipv6, inet
// inet); a table listed again starts the next Ruleset. Base chains keep
// their hook and policy. Rules are read into the typed fields iptables
// rules have: `ip daddr 10.96.0.10 tcp dport 53` is Dst and Proto/DPort,
// `jump`/`goto` the Target, `dnat to` ToDestination, `comment "..."`
// Comment. A verdict map becomes one Rule per element, in the chain of the
// rule that uses it: kube-proxy's `numgen random mod N vmap { 0 : goto A,
// ... }` gives rules with Statistic "random" and the chance iptables'
// statistic match would have there (1/N, 1/(N-1), ... 1: each element
// takes 1/N of the connections, as in kube-proxy's iptables mode), and
// `ip daddr . meta l4proto . th dport vmap @service-ips` gives a rule per
// element of the map service-ips, with the element's address, protocol
// and port in Dst, Proto and DPort and the position of the element's line.
// A named set's elements are kept in Table.Sets (a rule matching `ip daddr
// @nodeport-ips` keeps "@nodeport-ips" in Dst); an element's comment is
// the comment of its rule. Base chains keep their type and priority. Lines that cannot be read are
// reported with their position and the rest is read.
func NFT(r io.Reader, name string) ([]*model.Ruleset, error) {
	return format.ReadAll(r, name, readNFT)
}

type nftParser struct {
	name, node string
	errs       *model.ErrorList
	out        []*model.Ruleset
	byFamily   map[string]*model.Ruleset
	seen       map[string]bool // family/table of the current dump

	table  *model.Table
	chain  *model.Chain
	chains map[string]bool // the chains of table, to find one listed twice
	maps   map[string]*nftMap
	refs   map[*model.Rule]nftRef

	set      *nftMap // the set or map block being read, or a skipped block
	inSet    bool
	skip     int  // depth of an unknown block being skipped
	inElems  bool // inside `elements = { ... }`
	elemText string
	elemPos  model.Pos

	carry    string
	carryPos model.Pos
}

func readNFT(r io.Reader, src *format.File, errs *model.ErrorList) []*model.Ruleset {
	name := src.Name
	p := &nftParser{name: name, node: src.Node, errs: errs}
	p.newDump()
	l := text.NewLines(r, name, errs)
	for l.Next() {
		if _, ok := l.PastedCommand(); ok {
			continue // the command above its output, without a prompt
		}
		p.line(l.Text(), l.Pos())
	}
	if p.carry != "" {
		p.errs.Addf(p.carryPos, p.carry, "%w: the rule's { has no closing }", format.ErrTruncated)
		p.carry = ""
	}
	if p.table != nil {
		p.errs.Addf(model.Pos{File: name, Line: l.Line()}, "", "%w: table %s has no closing }", format.ErrTruncated, p.table.Name)
		p.endTable()
	}
	return p.out
}

func (p *nftParser) newDump() {
	p.byFamily = map[string]*model.Ruleset{}
	p.seen = map[string]bool{}
}

func (p *nftParser) errorf(pos model.Pos, raw, msg string, args ...any) {
	p.errs.Add(pos, raw, fmt.Errorf("%w: %s", format.ErrSyntax, fmt.Sprintf(msg, args...)))
}

// nftStripHandle drops the "# handle N" comment of `nft -a` (and any
// other trailing comment outside quotes).
func nftStripHandle(s string) string {
	q := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			q = !q
		case '#':
			if !q {
				return strings.TrimRight(s[:i], " \t")
			}
		}
	}
	return s
}

// nftBraces returns the braces opened minus those closed outside quotes,
// and whether a quote is left open.
func nftBraces(s string) (n int, open bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			open = !open
		case '{':
			if !open {
				n++
			}
		case '}':
			if !open {
				n--
			}
		}
	}
	return n, open
}

func (p *nftParser) line(raw string, pos model.Pos) {
	t := strings.TrimSpace(nftStripHandle(raw))
	if p.inElems {
		p.elements(t, pos)
		return
	}
	if p.carry != "" {
		t, pos = p.carry+" "+t, p.carryPos
		p.carry = ""
	}
	if t == "" {
		return
	}
	if p.skip > 0 {
		n, _ := nftBraces(t)
		p.skip += n
		return
	}
	if p.table == nil {
		p.top(raw, t, pos)
		return
	}
	if p.chain == nil && !p.inSet {
		p.inTable(t, pos)
		return
	}
	if t == "}" {
		p.chain, p.set, p.inSet = nil, nil, false
		return
	}
	if p.inSet {
		p.setLine(t, pos)
		return
	}
	p.chainLine(t, pos)
}

func (p *nftParser) top(raw, t string, pos model.Pos) {
	if strings.HasPrefix(t, "#") {
		return
	}
	if _, _, ok := text.Prompt(raw); ok {
		if len(p.seen) > 0 {
			p.newDump()
		}
		return
	}
	if _, ok := text.NodeMarker(raw); ok {
		return
	}
	family, name, ok := nftTableLine(t)
	if !ok {
		p.errorf(pos, t, "want a `table FAMILY NAME {` line")
		return
	}
	key := family + "/" + name
	if p.seen[key] {
		p.newDump()
	}
	p.seen[key] = true
	rs := p.byFamily[family]
	if rs == nil {
		rs = &model.Ruleset{Node: p.node, Family: family, Format: "nft", Pos: pos, Backend: model.BackendNFT}
		p.byFamily[family] = rs
		p.out = append(p.out, rs)
	}
	p.table = &model.Table{Name: name, Pos: pos}
	rs.Tables = append(rs.Tables, p.table)
	p.maps = map[string]*nftMap{}
	p.chains = map[string]bool{}
	p.refs = map[*model.Rule]nftRef{}
}

func (p *nftParser) inTable(t string, pos model.Pos) {
	if t == "}" {
		p.endTable()
		return
	}
	f := strings.Fields(t)
	if f[len(f)-1] == "{" && len(f) == 3 {
		switch f[0] {
		case "chain":
			if p.chains[f[1]] {
				p.errorf(pos, t, "chain %s listed twice in table %s", f[1], p.table.Name)
			}
			p.chains[f[1]] = true
			p.chain = &model.Chain{Name: f[1], Rules: []*model.Rule{}, Pos: pos}
			p.table.Chains = append(p.table.Chains, p.chain)
			return
		case "set", "map":
			p.set = &nftMap{}
			p.maps[f[1]] = p.set
			p.inSet = true
			return
		}
	}
	if n, _ := nftBraces(t); n > 0 {
		// flowtable, counter, quota, ct helper ... blocks.
		p.skip = n
		return
	}
	switch f[0] {
	case "comment", "flags":
		return
	}
	p.errorf(pos, t, "want `chain NAME {`, `set NAME {`, `map NAME {` or `}` in table %s", p.table.Name)
}

func (p *nftParser) chainLine(t string, pos model.Pos) {
	n, open := nftBraces(t)
	if open {
		p.errorf(pos, t, "quote not closed")
		return
	}
	if n > 0 {
		// A rule broken over lines: read it whole.
		p.carry, p.carryPos = t, pos
		return
	}
	f, err := nftTokens(t)
	if err != nil {
		p.errorf(pos, t, "%v", err)
		return
	}
	if f[0] == "type" {
		p.chainHeader(f, t, pos)
		return
	}
	if f[0] == "comment" && len(f) == 2 || f[0] == "policy" || f[0] == "devices" {
		return
	}
	rules, ref, err := nftRule(f, t, pos)
	if err != nil {
		p.errorf(pos, t, "%v", err)
		return
	}
	p.chain.Rules = append(p.chain.Rules, rules...)
	if ref != nil {
		p.refs[rules[0]] = *ref
	}
}

// chainHeader reads `type nat hook prerouting priority dstnat; policy
// accept;`.
func (p *nftParser) chainHeader(f []string, t string, pos model.Pos) {
	for i := 0; i+1 < len(f); i++ {
		v := strings.TrimSuffix(f[i+1], ";")
		switch f[i] {
		case "type":
			p.chain.Type = v
		case "priority":
			prio, ok := nftPriority(f[i+1:])
			if !ok {
				p.errorf(pos, t, "priority %q: want a number or a name (dstnat, srcnat, filter ...) with an offset", v)
			}
			p.chain.Priority = prio
		case "hook":
			p.chain.Hook = v
		case "policy":
			switch v {
			case "accept", "drop":
				p.chain.Policy = strings.ToUpper(v)
			default:
				p.errorf(pos, t, "policy %q: want accept or drop", v)
			}
		}
	}
	if p.chain.Hook == "" {
		p.errorf(pos, t, "want `type TYPE hook HOOK priority P;` in a base chain")
	}
}

// nftPriorityNames are the values of the priority names of the ip, ip6
// and inet families.
var nftPriorityNames = map[string]int{
	"raw": -300, "mangle": -150, "dstnat": -100, "filter": 0, "security": 50, "srcnat": 100,
}

// nftPriority reads the words after `priority`: "-110;", "dstnat;",
// "dstnat - 10;", "filter + 5;".
func nftPriority(f []string) (int, bool) {
	if len(f) == 0 {
		return 0, false
	}
	end := strings.HasSuffix(f[0], ";")
	w := strings.TrimSuffix(f[0], ";")
	n, ok := nftPriorityNames[w]
	if !ok {
		v, err := strconv.Atoi(w)
		if err != nil {
			return 0, false
		}
		n = v
	}
	if end || len(f) < 3 || (f[1] != "-" && f[1] != "+") {
		return n, true
	}
	off, err := strconv.Atoi(strings.TrimSuffix(f[2], ";"))
	if err != nil {
		return 0, false
	}
	if f[1] == "-" {
		off = -off
	}
	return n + off, true
}
