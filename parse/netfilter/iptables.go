package netfilter

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// The three iptables formats share one reader (readIPTables): a file may
// hold several dumps one after the other, of any form, and each line is
// read for what it is. The formats differ in what they sniff.

// IPTables parses netfilter dumps: iptables-save and ip6tables-save (all
// tables or one, with or without -c counters, legacy and nft headers,
// kube-proxy's iptables-restore input), iptables -L listings (-n, -v, -x,
// --line-numbers, one chain or all, name-resolved or numeric, rows cut out
// with grep, "[...]" elisions) and iptables -S rule specifications. Each
// dump becomes one Ruleset; a file may hold several, with shell prompts
// between them ("# iptables -t nat -nvL"), which also tell the table, the
// chain and the family of what follows. Without a prompt, -S and -L output
// is read as the filter table (a listing that starts with PREROUTING,
// POSTROUTING or kube-proxy's NAT chains as nat). The "Warning:
// iptables-legacy tables present" line that iptables-nft writes to
// standard error (with "# " before it from iptables-nft-save) is noted as
// the dump's LegacyWarning, also where it landed in the middle of a line
// of standard output. Any other line is reported with its position and the
// rest is read.
func IPTables(r io.Reader, name string) ([]*model.Ruleset, error) {
	return format.ReadAll(r, name, readIPTables)
}

const (
	formSave  = "iptables-save"
	formList  = "iptables-list"
	formRules = "iptables-S"
)

// legacyWarning starts the line iptables-nft prints on standard error when
// legacy tables exist too: iptables-nft-save prints it as a comment ("# "
// before it), iptables -L and -S without.
const legacyWarning = "Warning: iptables-legacy tables present"

// iptCmd is what a prompt (or the bundle layout) says about the output
// that follows.
type iptCmd struct {
	family string // "ipv4", "ipv6", "" when unknown
	form   string // formSave, formList, formRules, "" when unknown
	table  string // -t TABLE, "" when not given
	chain  string // -L CHAIN or -S CHAIN, "" for all
	// backend is model.BackendNFT or model.BackendLegacy when the tool's
	// name (iptables-nft, iptables-legacy-save) or the dump's header
	// says which, "" otherwise.
	backend string
}

// iptCols is the layout of a listing's rows, from its column header.
type iptCols struct {
	known   bool // a header was seen
	num     bool // --line-numbers
	verbose bool // -v: pkts, bytes, in, out
}

type iptTable struct {
	t        *model.Table
	chains   map[string]*model.Chain
	declared map[string]bool
}

type iptParser struct {
	name, node string
	errs       *model.ErrorList
	out        []*model.Ruleset
	rs         *model.Ruleset
	tables     map[string]*iptTable
	table      *iptTable    // the *table section of iptables-save, nil outside
	chain      *model.Chain // the chain of the rows that follow a "Chain X" header
	cmd        iptCmd       // from the last prompt
	startPos   model.Pos    // the prompt or header line before any content
	listTable  string       // the table of the current listing, when guessed
	fragment   bool         // save lines outside any *table section, no prompt
	cols       iptCols
	toks       []iptTok
	// legacyWarn is where iptables-nft's legacy warning was read, until
	// a ruleset takes it.
	legacyWarn model.Pos
}

func readIPTables(r io.Reader, src *format.File, errs *model.ErrorList) []*model.Ruleset {
	p := &iptParser{name: src.Name, node: src.Node, errs: errs}
	if c, ok := parseIPTablesCmd(src.Command); ok {
		p.cmd = c
	}
	l := text.NewLines(r, src.Name, errs)
	var carry string
	var carryPos, last model.Pos
	for l.Next() {
		line, pos := l.Text(), l.Pos()
		last = pos
		if cmd, ok := l.PastedCommand(); ok {
			p.command(cmd, pos)
			continue
		}
		if carry != "" {
			line, pos, carry = carry+line, carryPos, ""
		}
		// iptables-nft's warning goes to standard error; captured with
		// 2>&1 it can land in the middle of a line of standard output,
		// whose rest then follows on the next line.
		if i := legacyWarningAt(line); i > 0 && strings.TrimSpace(line[:i]) != "" {
			carry, carryPos = line[:i], pos
			p.legacyWarning(pos)
			continue
		}
		p.line(line, pos)
	}
	if carry != "" {
		p.line(carry, carryPos)
	}
	if p.table != nil {
		// iptables-save ends each table with COMMIT: a dump that stops
		// inside one was cut (an upload, a pager, head), and what is
		// missing may be the rules a finding would rest on.
		p.errorf(last, "", "%w: table %s (from line %d) has no COMMIT: the dump ends inside it", format.ErrTruncated,
			p.table.t.Name, p.table.t.Pos.Line)
	}
	if !p.legacyWarn.IsZero() {
		// Printed after the output (standard error flushed last): it
		// belongs to the last dump iptables-nft made.
		for _, rs := range slices.Backward(p.out) {
			if rs.Backend != model.BackendLegacy {
				rs.Backend, rs.LegacyWarning = model.BackendNFT, p.legacyWarn
				break
			}
		}
	}
	p.nameBackend(src.Name)
	return p.out
}

func (p *iptParser) errorf(pos model.Pos, raw, msg string, args ...any) {
	p.errs.Addf(pos, raw, msg, args...)
}

func (p *iptParser) line(line string, pos model.Pos) {
	t := strings.TrimSpace(line)
	if t == "" {
		return
	}
	if n, ok := text.NodeMarker(line); ok {
		if n != p.node {
			p.node, p.rs, p.table, p.chain = n, nil, nil, nil
		}
		p.startPos = pos
		return
	}
	switch {
	case strings.HasPrefix(t, "# Generated by "):
		tool := strings.Fields(t)[3:]
		if len(tool) > 0 {
			p.cmd.form = formSave
			p.cmd.family = iptFamilyOf(tool[0])
			p.cmd.backend = iptBackendOf(t)
		}
		if p.table == nil {
			p.startPos = pos
		}
		return
	case legacyWarningAt(t) == 0:
		p.legacyWarning(pos)
		return
	case strings.HasPrefix(t, "# Completed on "), strings.HasPrefix(t, "# Warning: "), strings.HasPrefix(t, "# Table `"):
		return
	}
	if maybePrompt(t) {
		if _, cmd, ok := text.Prompt(line); ok {
			p.command(cmd, pos)
			return
		}
	}
	if t[0] == '#' {
		// A comment (iptables-restore skips them), or a root prompt the
		// prompt reader does not know ("    # iptables-save -c | grep
		// FOO" indented in a quote), which still names the command.
		p.command(strings.TrimSpace(t[1:]), pos)
		return
	}
	switch {
	case t == "[...]" || t == "..." || t == "…" || strings.HasPrefix(t, "```"):
		return // an elision or a Markdown fence of a paste
	case t[0] == '*':
		p.saveTable(t, pos)
	case t[0] == ':':
		p.saveChain(t, pos)
	case t == "COMMIT":
		if p.table == nil {
			p.errorf(pos, t, "%w: COMMIT outside a *table section", format.ErrSyntax)
		}
		p.table = nil
	case t[0] == '-' || t[0] == '[':
		p.ruleLine(t, pos)
	case strings.HasPrefix(t, "Chain "):
		p.listChain(t, pos)
	default:
		if f := strings.Fields(t); iptIsColumnHeader(t, f) {
			p.cols = iptCols{known: true, num: f[0] == "num", verbose: strings.Contains(t, " bytes ")}
			return
		}
		p.listRow(line, pos)
	}
}

// command starts the output of cmd, the command of a prompt at pos, when
// it is an iptables command.
func (p *iptParser) command(cmd string, pos model.Pos) {
	if c, ok := parseIPTablesCmd(cmd); ok {
		p.cmd, p.table, p.chain, p.cols, p.listTable = c, nil, nil, iptCols{}, ""
		p.startPos = pos
	}
}

// iptIsColumnHeader reports whether t (split into f) is the column header
// of a listing: "num pkts bytes target prot opt in out source destination".
func iptIsColumnHeader(t string, f []string) bool {
	return len(f) > 3 && (f[0] == "num" || f[0] == "pkts" || f[0] == "target") && strings.Contains(t, " prot ") && strings.Contains(t, " source ")
}

// maybePrompt tells cheaply whether t may be a shell prompt, before the
// regular expression of prompt is tried.
func maybePrompt(t string) bool {
	return t[0] == '#' || t[0] == '$' || (strings.IndexByte(t, '@') >= 0 && strings.ContainsAny(t, "#$"))
}

// want makes sure the current ruleset is of form, starting one if not.
func (p *iptParser) want(form string, pos model.Pos) {
	if p.rs != nil && p.rs.Format == form && p.rs.Node == p.node && (p.cmd.family == "" || p.cmd.family == p.rs.Family) &&
		(p.cmd.backend == "" || p.cmd.backend == p.rs.Backend) {
		return
	}
	p.newRuleset(form, pos)
}

func (p *iptParser) newRuleset(form string, pos model.Pos) {
	if !p.startPos.IsZero() {
		pos, p.startPos = p.startPos, model.Pos{}
	}
	fam := p.cmd.family
	if fam == "" {
		fam = "ipv4"
	}
	p.rs = &model.Ruleset{Node: p.node, Family: fam, Format: form, Pos: pos, Tables: []*model.Table{}, Backend: p.cmd.backend}
	if !p.legacyWarn.IsZero() && p.rs.Backend != model.BackendLegacy {
		p.rs.Backend, p.rs.LegacyWarning, p.legacyWarn = model.BackendNFT, p.legacyWarn, model.Pos{}
	}
	p.out = append(p.out, p.rs)
	p.tables = map[string]*iptTable{}
	p.table, p.chain = nil, nil
}

func (p *iptParser) tableOf(name string, pos model.Pos) *iptTable {
	if t := p.tables[name]; t != nil {
		return t
	}
	t := &iptTable{t: &model.Table{Name: name, Chains: []*model.Chain{}, Pos: pos}, chains: map[string]*model.Chain{}, declared: map[string]bool{}}
	p.tables[name] = t
	p.rs.Tables = append(p.rs.Tables, t.t)
	return t
}

func (t *iptTable) chainOf(name string, pos model.Pos) *model.Chain {
	if c := t.chains[name]; c != nil {
		return c
	}
	c := &model.Chain{Name: name, Rules: []*model.Rule{}, Pos: pos}
	t.chains[name] = c
	t.t.Chains = append(t.t.Chains, c)
	return c
}

func (t *iptTable) deleteChain(name string) {
	if t.chains[name] == nil {
		return
	}
	delete(t.chains, name)
	delete(t.declared, name)
	for i, c := range t.t.Chains {
		if c.Name == name {
			t.t.Chains = append(t.t.Chains[:i], t.t.Chains[i+1:]...)
			break
		}
	}
}

// noteFamily marks the ruleset IPv6 when a rule's addresses are, unless the
// command said otherwise.
func (p *iptParser) noteFamily(r *model.Rule) {
	if p.rs.Family != "ipv4" || p.cmd.family != "" {
		return
	}
	for _, s := range [...]string{r.Src, r.Dst} {
		if strings.Contains(s, ":") {
			if pr, ok := matchPrefixOf(s); ok && pr.Addr().Is6() {
				p.rs.Family = "ipv6"
				return
			}
		}
	}
}

func matchPrefixOf(s string) (netip.Prefix, bool) {
	r := model.Rule{Src: s}
	return r.SrcPrefix()
}

// iptMark turns the MARK target's operation into iptables-save's
// --set-xmark VALUE/MASK form: op is xset, set, or, and or xor, as
// listings print it.
func iptMark(op, v string) (string, error) {
	a, b, hasMask := strings.Cut(v, "/")
	val, err := strconv.ParseUint(a, 0, 32)
	if err != nil {
		return "", fmt.Errorf("%w: mark %q: want a number", format.ErrValue, v)
	}
	mask := uint64(0xffffffff)
	if hasMask {
		if mask, err = strconv.ParseUint(b, 0, 32); err != nil {
			return "", fmt.Errorf("%w: mark mask %q: want a number", format.ErrValue, v)
		}
	}
	switch op {
	case "xset":
	case "set":
		mask |= val
	case "or":
		mask = val
	case "and":
		val, mask = 0, ^val&0xffffffff
	case "xor":
		mask = 0
	default:
		return "", fmt.Errorf("%w: MARK %s: unknown operation", format.ErrSyntax, op)
	}
	buf := make([]byte, 0, 24)
	buf = append(buf, "0x"...)
	buf = strconv.AppendUint(buf, val, 16)
	buf = append(buf, "/0x"...)
	buf = strconv.AppendUint(buf, mask, 16)
	return string(buf), nil
}

// iptNth sets the count of the statistic match's nth mode, every (--every)
// or packet (--packet) as every says, from v; opt names it in the error.
func iptNth(r *model.Rule, opt, v string, every bool) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("%w: %s %q: want a count", format.ErrValue, opt, v)
	}
	if every {
		r.NthEvery = n
	} else {
		r.NthPacket = n
	}
	return nil
}

// iptAddr reads an address match: "" for any address.
func iptAddr(s string) string {
	switch s {
	case "0.0.0.0/0", "::/0", "anywhere", "0.0.0.0/0.0.0.0":
		return ""
	}
	return s
}

func iptIface(s string) string {
	if s == "*" || s == "any" {
		return ""
	}
	return s
}

// iptProtoNames are the /etc/protocols names iptables-save prints for the
// numbers iptables 1.8.9's -n listings show.
var iptProtoNames = map[string]string{
	"1": "icmp", "2": "igmp", "4": "ipencap", "6": "tcp", "17": "udp", "41": "ipv6",
	"47": "gre", "50": "esp", "51": "ah", "58": "ipv6-icmp", "89": "ospf", "112": "vrrp",
	"132": "sctp", "136": "udplite", "icmpv6": "ipv6-icmp", "icmp6": "ipv6-icmp",
}

// iptProto reads a protocol: "" for all.
func iptProto(s string) string {
	s = strings.ToLower(s)
	if s == "all" || s == "0" {
		return ""
	}
	if n, ok := iptProtoNames[s]; ok {
		return n
	}
	return s
}

// iptGuessTable names the table of a listing or rule lines whose command
// is unknown from the first chain and, for rule lines, its rule's target
// (a jump to KUBE-SVC-* or KUBE-MARK-MASQ, a DNAT, is in nat: KUBE-SERVICES
// is a chain of nat and of filter).
func iptGuessTable(chain, target string) string {
	switch {
	case strings.HasPrefix(target, "KUBE-SVC-"), strings.HasPrefix(target, "KUBE-SEP-"), strings.HasPrefix(target, "KUBE-EXT-"),
		strings.HasPrefix(target, "KUBE-SVL-"), strings.HasPrefix(target, "KUBE-FW-"), strings.HasPrefix(target, "KUBE-XLB-"),
		target == "KUBE-MARK-MASQ", target == "DNAT", target == "SNAT", target == "MASQUERADE", target == "REDIRECT":
		return "nat"
	case chain == "PREROUTING", chain == "POSTROUTING", chain == "KUBE-MARK-MASQ", chain == "KUBE-POSTROUTING",
		strings.HasPrefix(chain, "KUBE-SVC-"), strings.HasPrefix(chain, "KUBE-SEP-"),
		strings.HasPrefix(chain, "KUBE-EXT-"), strings.HasPrefix(chain, "KUBE-SVL-"),
		strings.HasPrefix(chain, "KUBE-FW-"), strings.HasPrefix(chain, "KUBE-XLB-"):
		return "nat"
	}
	return "filter"
}

// iptSniffCounts counts the kinds of line in a file's head.
type iptSniffCounts struct {
	save    int // *table, :CHAIN POLICY [p:b], COMMIT, "# Generated by iptables-save"
	rules   int // -A CHAIN ... lines (either form)
	counted int // of them, those led by [packets:bytes] (iptables-save -c)
	spec    int // -N CHAIN, -P CHAIN POLICY (iptables -S)
	list    int // "Chain X (...)" and column headers
	rows    int // listing rows
	total   int
	prompt  map[string]int // iptables prompts by form
}

func sniffIPTables(head []byte) (c iptSniffCounts, ok bool) {
	if !text.IsText(head) {
		return c, false
	}
	c.prompt = map[string]int{}
	var toks []iptTok
	for i, line := range text.HeadLines(head, 300) {
		t := strings.TrimSpace(line)
		if t == "" || t == "[...]" || t == "..." || t == "…" || strings.HasPrefix(t, "```") {
			continue
		}
		if _, ok := text.NodeMarker(line); ok {
			continue
		}
		if strings.HasPrefix(t, "# Generated by ") && strings.Contains(t, "tables") {
			c.save++
			c.total++
			continue
		}
		if strings.HasPrefix(t, "# Completed on ") || legacyWarningAt(t) == 0 {
			continue
		}
		cmd, ok := text.HeadCommand(i, line)
		if ok {
			if pc, ok := parseIPTablesCmd(cmd); ok {
				c.prompt[pc.form]++
			}
			continue
		}
		if t[0] == '#' { // a comment, or a root prompt (see line)
			if pc, ok := parseIPTablesCmd(strings.TrimSpace(t[1:])); ok {
				c.prompt[pc.form]++
			}
			continue
		}
		c.total++
		f := strings.Fields(t)
		switch {
		case t[0] == '*' && len(f) == 1 && len(t) > 1:
			c.save++
		case t[0] == ':' && len(f) == 3:
			if _, _, ok := iptBracketCounters(f[2]); ok {
				c.save++
			}
		case t == "COMMIT":
			c.save++
		case t[0] == '-' || t[0] == '[':
			var err error
			toks, err = iptTokenize(t, toks[:0])
			if err != nil {
				continue
			}
			i := 0
			if _, _, ok := iptBracketCounters(toks[0].s); ok {
				c.counted++
				i++
			}
			if i+1 >= len(toks) || iptIsOpt(toks[i+1]) {
				continue
			}
			switch toks[i].s {
			case "-A", "-I", "-X":
				var r model.Rule
				if iptApplyOptions(&r, toks[i+2:]) == nil {
					c.rules++
				}
			case "-N":
				if len(toks) == 2 {
					c.spec++
				}
			case "-P":
				if len(toks) == 3 || (len(toks) == 6 && toks[3].s == "-c") {
					c.spec++
				}
			}
		case strings.HasPrefix(t, "Chain ") && len(f) >= 3 && strings.HasPrefix(f[2], "("):
			c.list++
		case iptIsColumnHeader(t, f):
			c.list++
		default:
			if _, err := iptListRow(line, iptCols{}); err == nil {
				c.rows++
			}
		}
	}
	return c, true
}
