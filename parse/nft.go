package parse

import (
	"github.com/netmortem/netmortem/parse/internal/text"

	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// nftFormat reads `nft list ruleset` output.
var nftFormat = &Format{
	Name:    "nft",
	Kind:    model.KindNetfilter,
	Command: "nft list ruleset (also -a handles, -n, list table), kube-proxy's nftables mode",
	Sniff:   sniffNFT,
	Parse: func(_ context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
		var errs model.ErrorList
		sets := readNFT(r, src.Name, src.Node, &errs)
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
	},
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
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(nftStripHandle(line))
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if _, cmd, ok := text.Prompt(line); ok {
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
	var errs model.ErrorList
	out := readNFT(r, name, "", &errs)
	return out, errs.Err()
}

// nftElem is one element of a set or map: key, and verdict for a verdict
// map.
type nftElem struct {
	key, verdict, raw, comment string
	pos                        model.Pos
}

type nftMap struct {
	verdict bool
	elems   []nftElem
}

// nftRef is a rule that looks its verdict up in a named map, expanded when
// the table ends.
type nftRef struct {
	name string
	keys []string // the key expressions: "ip daddr", "meta l4proto", "th dport"
	pos  model.Pos
	text string
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

func readNFT(r io.Reader, name, node string, errs *model.ErrorList) []*model.Ruleset {
	p := &nftParser{name: name, node: node, errs: errs}
	p.newDump()
	l := text.NewLines(r, name, errs)
	for l.Next() {
		p.line(l.Text(), l.Pos())
	}
	if p.carry != "" {
		p.errs.Addf(p.carryPos, p.carry, "%w: the rule's { has no closing }", ErrTruncated)
		p.carry = ""
	}
	if p.table != nil {
		p.errs.Addf(model.Pos{File: name, Line: l.Line()}, "", "%w: table %s has no closing }", ErrTruncated, p.table.Name)
		p.endTable()
	}
	return p.out
}

func (p *nftParser) newDump() {
	p.byFamily = map[string]*model.Ruleset{}
	p.seen = map[string]bool{}
}

func (p *nftParser) errorf(pos model.Pos, text, format string, args ...any) {
	p.errs.Add(pos, text, fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(format, args...)))
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
		rs = &model.Ruleset{Node: p.node, Family: family, Format: "nft", Pos: pos}
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

func (p *nftParser) endTable() {
	for _, c := range p.table.Chains {
		var rules []*model.Rule
		for _, r := range c.Rules {
			ref, ok := p.refs[r]
			if !ok {
				rules = append(rules, r)
				continue
			}
			m := p.maps[ref.name]
			if m == nil {
				p.errorf(ref.pos, ref.text, "map %s is not in table %s", ref.name, p.table.Name)
				rules = append(rules, r)
				continue
			}
			if !m.verdict || len(m.elems) == 0 {
				rules = append(rules, r)
				continue
			}
			for _, e := range m.elems {
				er := *r
				er.Raw, er.Pos = e.raw, e.pos
				if err := nftElemRule(&er, ref.keys, e); err != nil {
					p.errorf(e.pos, e.raw, "%v", err)
					continue
				}
				rules = append(rules, &er)
			}
		}
		if rules == nil {
			rules = []*model.Rule{}
		}
		c.Rules = rules
	}
	for name, m := range p.maps {
		if m.verdict {
			continue
		}
		if p.table.Sets == nil {
			p.table.Sets = map[string][]string{}
		}
		keys := []string{}
		for _, e := range m.elems {
			keys = append(keys, e.key)
		}
		p.table.Sets[name] = keys
	}
	p.table, p.chain, p.set, p.inSet, p.maps, p.refs = nil, nil, nil, false, nil, nil
}

func (p *nftParser) setLine(t string, pos model.Pos) {
	if rest, ok := strings.CutPrefix(t, "elements = {"); ok {
		p.inElems, p.elemText, p.elemPos = true, "", pos
		p.elements(rest, pos)
		return
	}
	f := strings.Fields(t)
	switch f[0] {
	case "type", "typeof":
		p.set.verdict = strings.HasSuffix(t, ": verdict")
	case "flags", "comment", "size", "timeout", "gc-interval", "policy", "auto-merge", "counter":
	default:
		if n, _ := nftBraces(t); n > 0 {
			p.skip = n
			return
		}
		p.errorf(pos, t, "want type, flags, comment or elements in a set or map")
	}
}

// elements reads the element list of a set or map, which nft breaks over
// several lines: "a : goto X," on each.
func (p *nftParser) elements(t string, pos model.Pos) {
	for {
		if p.elemText == "" {
			p.elemPos = pos
		}
		i := strings.IndexAny(t, ",}")
		if i < 0 {
			p.elemText = strings.TrimSpace(p.elemText + " " + t)
			return
		}
		e := strings.TrimSpace(p.elemText + " " + t[:i])
		if e != "" {
			p.addElem(e, p.elemPos)
		}
		p.elemText = ""
		if t[i] == '}' {
			p.inElems = false
			if rest := strings.TrimSpace(t[i+1:]); rest != "" {
				p.errorf(pos, rest, "unexpected text after the elements")
			}
			return
		}
		t = t[i+1:]
	}
}

func (p *nftParser) addElem(e string, pos model.Pos) {
	el := nftElem{raw: e, pos: pos}
	if k, v, ok := strings.Cut(e, " : "); ok {
		el.key, el.verdict = strings.TrimSpace(k), strings.TrimSpace(v)
		el.key, el.comment = nftElemComment(el.key)
	} else {
		el.key, el.comment = nftElemComment(e)
		if p.set.verdict {
			p.errorf(pos, e, "want KEY : VERDICT in a verdict map")
			return
		}
	}
	p.set.elems = append(p.set.elems, el)
}

// nftElemComment splits an element's `comment "..."` (kube-proxy names
// the Service port of a no-endpoint-services element in it) from its key.
func nftElemComment(key string) (string, string) {
	k, c, ok := strings.Cut(key, ` comment "`)
	if !ok {
		return key, ""
	}
	return strings.TrimSpace(k), strings.TrimSuffix(strings.TrimSpace(c), `"`)
}

// nftInlineElem is the element KEY : VERDICT of an inline verdict map.
func nftInlineElem(k, v string) nftElem {
	k, c := nftElemComment(k)
	return nftElem{key: k, verdict: v, comment: c}
}

// nftElemRule sets the matches of a map element's key and its verdict.
func nftElemRule(r *model.Rule, keys []string, e nftElem) error {
	parts := strings.Split(e.key, " . ")
	if len(parts) != len(keys) {
		return fmt.Errorf("element has %d key fields, the rule looks up %d", len(parts), len(keys))
	}
	if e.comment != "" {
		r.Comment = e.comment
	}
	for i, k := range keys {
		v := strings.TrimSpace(parts[i])
		switch k {
		case "ip daddr", "ip6 daddr":
			r.Dst = v
		case "ip saddr", "ip6 saddr":
			r.Src = v
		case "meta l4proto", "ip protocol", "ip6 nexthdr":
			r.Proto = nftProto(v)
		case "th dport", "tcp dport", "udp dport", "sctp dport":
			r.DPort = nftPort(v)
		case "th sport", "tcp sport", "udp sport", "sctp sport":
			r.SPort = nftPort(v)
		case "iifname", "meta iifname":
			r.InIface = nftIface(v)
		case "oifname", "meta oifname":
			r.OutIface = nftIface(v)
		}
	}
	return nftVerdict(r, strings.Fields(e.verdict))
}

// nftVerdict reads "goto X", "jump X", "accept", "drop" ...
func nftVerdict(r *model.Rule, f []string) error {
	if len(f) == 0 {
		return fmt.Errorf("want a verdict")
	}
	switch f[0] {
	case "jump", "goto":
		if len(f) < 2 {
			return fmt.Errorf("%s without a chain", f[0])
		}
		r.Target, r.Goto = f[1], f[0] == "goto"
		return nil
	case "accept", "drop", "return", "continue", "reject", "queue":
		r.Target = strings.ToUpper(f[0])
		return nil
	}
	return fmt.Errorf("want a verdict, not %q", strings.Join(f, " "))
}

func nftPort(s string) string {
	s = strings.ReplaceAll(s, "-", ":")
	return s
}

func nftIface(s string) string {
	s = strings.Trim(s, `"`)
	if strings.HasSuffix(s, "*") {
		s = strings.TrimSuffix(s, "*") + "+"
	}
	return s
}

// nftTokens splits a rule into words, keeping quoted strings whole and
// making each of { } and (inside braces) , a word of its own.
func nftTokens(s string) ([]string, error) {
	var out []string
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '{' || c == '}':
			if c == '{' {
				depth++
			} else {
				depth--
			}
			out = append(out, string(c))
			i++
		case c == ',' && depth > 0:
			out = append(out, ",")
			i++
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return out, fmt.Errorf("quote not closed")
			}
			out = append(out, s[i:i+j+2])
			i += j + 2
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '{' && s[j] != '}' && !(s[j] == ',' && depth > 0) && s[j] != '"' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}

// nftBlock returns the words between the { at f[i] and its }, split at
// commas, and the index after the }.
func nftBlock(f []string, i int) (elems [][]string, next int, ok bool) {
	if i >= len(f) || f[i] != "{" {
		return nil, i, false
	}
	var cur []string
	for j := i + 1; j < len(f); j++ {
		switch f[j] {
		case "}":
			if len(cur) > 0 {
				elems = append(elems, cur)
			}
			return elems, j + 1, true
		case ",":
			elems = append(elems, cur)
			cur = nil
		case "{":
			return nil, j, false
		default:
			cur = append(cur, f[j])
		}
	}
	return nil, len(f), false
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

// nftKeyExpr are the expressions a rule matches on, with how many words
// each has.
var nftKeyExpr = map[string]int{
	"ip": 2, "ip6": 2, "th": 2, "tcp": 2, "udp": 2, "sctp": 2, "meta": 2, "ct": 2, "fib": 3,
	"iifname": 1, "oifname": 1, "iif": 1, "oif": 1, "mark": 1,
}

// nftRule reads one rule. It returns the rules it makes (several for an
// inline verdict map) and, for a lookup in a named verdict map, the
// reference to expand when the table ends.
func nftRule(f []string, raw string, pos model.Pos) ([]*model.Rule, *nftRef, error) {
	r := &model.Rule{Raw: raw, Pos: pos}
	var keys []string // the expressions before a vmap
	numgen := 0

	for i := 0; i < len(f); {
		w := f[i]
		switch w {
		case "comment":
			if i+1 >= len(f) {
				return nil, nil, fmt.Errorf("comment without text")
			}
			r.Comment = strings.Trim(f[i+1], `"`)
			i += 2
			continue
		case "counter":
			r.Counted = true
			i++
			for i+1 < len(f) && (f[i] == "packets" || f[i] == "bytes") {
				n, err := strconv.ParseUint(f[i+1], 10, 64)
				if err != nil {
					return nil, nil, fmt.Errorf("counter %s %q: want a number", f[i], f[i+1])
				}
				if f[i] == "packets" {
					r.Packets = n
				} else {
					r.Bytes = n
				}
				i += 2
			}
			continue
		case "jump", "goto", "accept", "drop", "return", "continue", "queue":
			n := 1
			if w == "jump" || w == "goto" {
				n = 2
			}
			if err := nftVerdict(r, f[i:min(i+n, len(f))]); err != nil {
				return nil, nil, err
			}
			i += n
			continue
		case "reject":
			r.Target = "REJECT"
			i++
			continue
		case "masquerade":
			r.Target = "MASQUERADE"
			i++
			continue
		case "notrack":
			r.Target = "NOTRACK"
			i++
			continue
		case "dnat", "snat":
			j := i + 1
			if j < len(f) && (f[j] == "ip" || f[j] == "ip6") {
				j++
			}
			if j+1 >= len(f) || f[j] != "to" {
				return nil, nil, fmt.Errorf("%s: want `to ADDRESS`", w)
			}
			if w == "dnat" {
				r.Target, r.ToDestination = "DNAT", f[j+1]
			} else {
				r.Target, r.ToSource = "SNAT", f[j+1]
			}
			i = j + 2
			continue
		case "numgen":
			// numgen random mod N [offset O]
			if i+3 >= len(f) || f[i+2] != "mod" {
				return nil, nil, fmt.Errorf("numgen: want `numgen random mod N`")
			}
			n, err := strconv.Atoi(f[i+3])
			if err != nil || n <= 0 {
				return nil, nil, fmt.Errorf("numgen mod %q: want a positive number", f[i+3])
			}
			if f[i+1] == "random" {
				numgen = n
			}
			keys = []string{"numgen"}
			i += 4
			continue
		case ".":
			i++
			continue
		case "vmap":
			if i+1 < len(f) && strings.HasPrefix(f[i+1], "@") {
				ref := &nftRef{name: f[i+1][1:], keys: keys, pos: pos, text: raw}
				return []*model.Rule{r}, ref, nftRest(r, f[i+2:])
			}
			elems, next, ok := nftBlock(f, i+1)
			if !ok {
				return nil, nil, fmt.Errorf("vmap: want @MAP or { KEY : VERDICT, ... }")
			}
			if err := nftRest(r, f[next:]); err != nil {
				return nil, nil, err
			}
			return nftInlineVmap(r, keys, elems, numgen)
		}
		if w == "meta" && i+5 < len(f) && f[i+1] == "random" && f[i+2] == "&" && f[i+4] == "<" {
			// iptables-nft's `-m statistic --mode random --probability
			// P`: meta random & 2147483647 < P*2^31.
			m, err1 := strconv.ParseUint(f[i+3], 0, 32)
			n, err2 := strconv.ParseUint(f[i+5], 0, 32)
			if err1 != nil || err2 != nil || n > m+1 {
				return nil, nil, fmt.Errorf("meta random & %s < %s: want numbers", f[i+3], f[i+5])
			}
			r.Statistic, r.Probability = "random", float64(n)/float64(m+1)
			i += 6
			continue
		}
		if w == "xt" && i+2 < len(f) && f[i+1] == "match" && f[i+2] == "recent" {
			// iptables-nft's -m recent, which nft cannot show: kube-proxy
			// checks it (--rcheck) in Service chains and sets it in the
			// endpoint chain's DNAT rule.
			r.Recent = &model.RecentMatch{}
			i += 3
			continue
		}
		if next, ok, err := nftMark(r, f, i); ok || err != nil {
			if err != nil {
				return nil, nil, err
			}
			i = next
			continue
		}
		n, ok := nftKeyExpr[w]
		if !ok || i+n > len(f) {
			// Expressions netmortem does not read stay in Raw.
			i++
			continue
		}
		expr := strings.Join(f[i:i+n], " ")
		i += n
		// The expression is part of a vmap key when a "." or vmap follows.
		if i < len(f) && (f[i] == "." || f[i] == "vmap") {
			keys = append(keys, expr)
			continue
		}
		keys = nil
		neg := false
		if i < len(f) && f[i] == "!=" {
			neg = true
			i++
		} else if i < len(f) && f[i] == "==" {
			i++
		}
		if i >= len(f) {
			break
		}
		val := f[i]
		if val == "{" {
			elems, next, ok := nftBlock(f, i)
			if !ok {
				return nil, nil, fmt.Errorf("%s: set not closed", expr)
			}
			var vs []string
			for _, e := range elems {
				vs = append(vs, strings.Join(e, " "))
			}
			val = strings.Join(vs, ",")
			i = next
		} else {
			i++
		}
		nftMatch(r, expr, val, neg)
	}
	if r.Recent != nil && r.Target == "DNAT" {
		r.Recent.Set = true
	}
	return []*model.Rule{r}, nil, nil
}

// nftRest reads what follows a vmap (a comment, counters).
func nftRest(r *model.Rule, f []string) error {
	rs, _, err := nftRule(f, r.Raw, r.Pos)
	if err != nil {
		return err
	}
	if len(rs) == 1 {
		if rs[0].Comment != "" {
			r.Comment = rs[0].Comment
		}
		if rs[0].Counted {
			r.Counted, r.Packets, r.Bytes = true, rs[0].Packets, rs[0].Bytes
		}
	}
	return nil
}

// nftInlineVmap makes one rule per element of `vmap { K : VERDICT, ... }`.
// For numgen random, element i of n gets the chance an iptables statistic
// rule in its place has: 1/(n-i) of what reaches it, so 1/n of all.
func nftInlineVmap(r *model.Rule, keys []string, elems [][]string, numgen int) ([]*model.Rule, *nftRef, error) {
	var out []*model.Rule
	for i, e := range elems {
		k, v, ok := strings.Cut(strings.Join(e, " "), " : ")
		if !ok {
			return nil, nil, fmt.Errorf("vmap element %q: want KEY : VERDICT", strings.Join(e, " "))
		}
		er := *r
		if numgen > 0 {
			if len(elems) > numgen {
				return nil, nil, fmt.Errorf("vmap has %d elements for numgen mod %d", len(elems), numgen)
			}
			er.Statistic = "random"
			er.Probability = 1 / float64(numgen-i)
			if err := nftVerdict(&er, strings.Fields(v)); err != nil {
				return nil, nil, err
			}
		} else if err := nftElemRule(&er, keys, nftInlineElem(k, v)); err != nil {
			return nil, nil, err
		}
		out = append(out, &er)
	}
	if len(out) == 0 {
		out = append(out, r)
	}
	return out, nil, nil
}

// nftMatch sets the typed field of one `EXPR [!=] VALUE` match.
func nftMatch(r *model.Rule, expr, val string, neg bool) {
	switch expr {
	case "ip saddr", "ip6 saddr":
		r.Src, r.NotSrc = val, neg
	case "ip daddr", "ip6 daddr":
		r.Dst, r.NotDst = val, neg
	case "meta l4proto", "ip protocol", "ip6 nexthdr":
		r.Proto, r.NotProto = nftProto(val), neg
	case "tcp dport", "udp dport", "sctp dport", "th dport":
		r.DPort, r.NotDPort = nftPort(val), neg
		if p := strings.Fields(expr)[0]; p != "th" {
			r.Proto = p
		}
	case "tcp sport", "udp sport", "sctp sport", "th sport":
		r.SPort, r.NotSPort = nftPort(val), neg
		if p := strings.Fields(expr)[0]; p != "th" {
			r.Proto = p
		}
	case "iifname", "meta iifname":
		r.InIface, r.NotInIface = nftIface(val), neg
	case "oifname", "meta oifname":
		r.OutIface, r.NotOutIface = nftIface(val), neg
	case "ct state":
		r.CTState, r.NotCTState = strings.ToUpper(val), neg
	case "fib daddr type":
		r.DstType = strings.ToUpper(val)
	}
}

// nftProto names the protocol numbers of `nft -n` as iptables does.
func nftProto(s string) string {
	switch s {
	case "6":
		return "tcp"
	case "17":
		return "udp"
	case "132":
		return "sctp"
	case "1":
		return "icmp"
	case "58":
		return "ipv6-icmp"
	}
	return s
}

// nftHex reads a mark value (0x00004000, 16384) as iptables prints it:
// 0x4000.
func nftHex(s string) (string, error) {
	n, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return "", fmt.Errorf("mark %q: want a number", s)
	}
	return fmt.Sprintf("%#x", n), nil
}

// nftMark reads the mark statements and matches at f[i]: `meta mark set
// meta mark | 0x4000` (kube-proxy's mark-for-masquerade; `^` to clear
// it, or a plain value) sets SetMark in iptables' --set-xmark form with
// Target MARK, and `meta mark & 0x4000 == 0x4000` (or `meta mark 0x4000`)
// sets MarkMatch. Older nft prints `mark set mark or 0x4000`.
func nftMark(r *model.Rule, f []string, i int) (next int, ok bool, err error) {
	j := i
	if f[j] == "meta" {
		j++
	}
	if j >= len(f) || f[j] != "mark" || j+1 >= len(f) {
		return i, false, nil
	}
	j++
	if f[j] == "set" {
		k := j + 1
		if k < len(f) && f[k] == "meta" {
			k++
		}
		var op, val string
		switch {
		case k+2 < len(f) && f[k] == "mark":
			op, val, j = f[k+1], f[k+2], k+3
		case k < len(f):
			val, j = f[k], k+1
		default:
			return i, false, fmt.Errorf("mark set: want a value")
		}
		v, err := nftHex(val)
		if err != nil {
			return i, false, err
		}
		switch op {
		case "|", "or":
			r.SetMark = v + "/" + v
		case "^", "xor":
			r.SetMark = v + "/0x0"
		case "":
			r.SetMark = v + "/0xffffffff"
		default:
			return i, false, fmt.Errorf("mark set: operator %q", op)
		}
		r.Target = "MARK"
		return j, true, nil
	}
	if (f[j] == "&" || f[j] == "and") && j+3 < len(f) && (f[j+2] == "==" || f[j+2] == "!=") {
		m, err1 := nftHex(f[j+1])
		v, err2 := nftHex(f[j+3])
		if err := errors.Join(err1, err2); err != nil {
			return i, false, err
		}
		r.MarkMatch, r.NotMark = v+"/"+m, f[j+2] == "!="
		return j + 4, true, nil
	}
	neg := false
	if f[j] == "!=" && j+1 < len(f) {
		neg = true
		j++
	}
	if v, err := nftHex(f[j]); err == nil {
		r.MarkMatch, r.NotMark = v, neg
		return j + 1, true, nil
	}
	return i, false, nil
}
