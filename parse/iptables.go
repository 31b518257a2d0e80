package parse

import (
	"github.com/netmortem/netmortem/parse/internal/text"

	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// The three iptables formats share one reader (readIPTables): a file may
// hold several dumps one after the other, of any form, and each line is
// read for what it is. The formats differ in what they sniff.
var (
	// iptablesSaveFormat reads iptables-save and ip6tables-save dumps.
	iptablesSaveFormat = &Format{
		Name:    "iptables-save",
		Kind:    model.KindNetfilter,
		Command: "iptables-save, ip6tables-save (-c, -t TABLE; legacy and nft), kube-proxy's iptables-restore input",
		Sniff:   sniffIPTablesSave,
		Parse:   parseIPTablesFormat,
	}
	// iptablesListFormat reads iptables -L listings.
	iptablesListFormat = &Format{
		Name:    "iptables-list",
		Kind:    model.KindNetfilter,
		Command: "iptables -L (-n, -v, -x, --line-numbers, -t TABLE, CHAIN), ip6tables -L, and rows cut out with grep",
		Sniff:   sniffIPTablesList,
		Parse:   parseIPTablesFormat,
	}
	// iptablesRulesFormat reads iptables -S rule specifications.
	iptablesRulesFormat = &Format{
		Name:    "iptables-S",
		Kind:    model.KindNetfilter,
		Command: "iptables -S (-t TABLE, CHAIN, -v), ip6tables -S",
		Sniff:   sniffIPTablesRules,
		Parse:   parseIPTablesFormat,
	}
)

func parseIPTablesFormat(_ context.Context, r io.Reader, src *Source, snap *model.Snapshot) (int, error) {
	var errs model.ErrorList
	sets := readIPTables(r, src.Name, src.Node, src.Command, &errs)
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

// IPTables parses netfilter dumps: iptables-save and ip6tables-save (all
// tables or one, with or without -c counters, legacy and nft headers,
// kube-proxy's iptables-restore input), iptables -L listings (-n, -v, -x,
// --line-numbers, one chain or all, name-resolved or numeric, rows cut out
// with grep, "[...]" elisions) and iptables -S rule specifications. Each
// dump becomes one Ruleset; a file may hold several, with shell prompts
// between them ("# iptables -t nat -nvL"), which also tell the table, the
// chain and the family of what follows. Without a prompt, -S and -L output
// is read as the filter table (a listing that starts with PREROUTING,
// POSTROUTING or kube-proxy's NAT chains as nat). The "# Warning:
// iptables-legacy tables present" line that iptables-nft writes to
// standard error is skipped, also where it landed in the middle of a line
// of standard output. Any other line is reported with its position and the
// rest is read.
func IPTables(r io.Reader, name string) ([]*model.Ruleset, error) {
	var errs model.ErrorList
	out := readIPTables(r, name, "", "", &errs)
	return out, errs.Err()
}

const (
	formSave  = "iptables-save"
	formList  = "iptables-list"
	formRules = "iptables-S"
)

// legacyWarning starts the line iptables-nft prints on standard error when
// legacy tables exist too.
const legacyWarning = "# Warning: iptables-legacy tables present"

// iptCmd is what a prompt (or the bundle layout) says about the output
// that follows.
type iptCmd struct {
	family string // "ipv4", "ipv6", "" when unknown
	form   string // formSave, formList, formRules, "" when unknown
	table  string // -t TABLE, "" when not given
	chain  string // -L CHAIN or -S CHAIN, "" for all
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
	cols       iptCols
	toks       []iptTok
}

func readIPTables(r io.Reader, name, node, command string, errs *model.ErrorList) []*model.Ruleset {
	p := &iptParser{name: name, node: node, errs: errs}
	if c, ok := parseIPTablesCmd(command); ok {
		p.cmd = c
	}
	l := text.NewLines(r, name, errs)
	var carry string
	var carryPos model.Pos
	for l.Next() {
		line, pos := l.Text(), l.Pos()
		if carry != "" {
			line, pos, carry = carry+line, carryPos, ""
		}
		// iptables-nft's warning goes to standard error; captured with
		// 2>&1 it can land in the middle of a line of standard output,
		// whose rest then follows on the next line.
		if i := strings.Index(line, legacyWarning); i > 0 {
			carry, carryPos = line[:i], pos
			continue
		}
		p.line(line, pos)
	}
	if carry != "" {
		p.line(carry, carryPos)
	}
	return p.out
}

func (p *iptParser) errorf(pos model.Pos, text, format string, args ...any) {
	p.errs.Addf(pos, text, format, args...)
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
		}
		if p.table == nil {
			p.startPos = pos
		}
		return
	case strings.HasPrefix(t, "# Completed on "), strings.HasPrefix(t, "# Warning: "), strings.HasPrefix(t, "# Table `"):
		return
	}
	if maybePrompt(t) {
		if _, cmd, ok := text.Prompt(line); ok {
			if c, ok := parseIPTablesCmd(cmd); ok {
				p.cmd, p.table, p.chain, p.cols, p.listTable = c, nil, nil, iptCols{}, ""
				p.startPos = pos
			}
			return
		}
	}
	switch {
	case t == "[...]" || t == "..." || t == "…":
		return
	case t[0] == '*':
		p.saveTable(t, pos)
	case t[0] == ':':
		p.saveChain(t, pos)
	case t == "COMMIT":
		if p.table == nil {
			p.errorf(pos, t, "%w: COMMIT outside a *table section", ErrSyntax)
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
	if p.rs != nil && p.rs.Format == form && p.rs.Node == p.node && (p.cmd.family == "" || p.cmd.family == p.rs.Family) {
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
	p.rs = &model.Ruleset{Node: p.node, Family: fam, Format: form, Pos: pos, Tables: []*model.Table{}}
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

// saveTable reads "*nat".
func (p *iptParser) saveTable(t string, pos model.Pos) {
	name := strings.TrimSpace(t[1:])
	if name == "" || strings.ContainsAny(name, " \t") {
		p.errorf(pos, t, "%w: expected \"*TABLE\"", ErrSyntax)
		return
	}
	if p.table != nil {
		p.errorf(pos, t, "%w: *%s before the COMMIT of *%s", ErrSyntax, name, p.table.t.Name)
	}
	p.want(formSave, pos)
	if _, dup := p.tables[name]; dup {
		p.newRuleset(formSave, pos)
	}
	p.table = p.tableOf(name, pos)
	p.chain = nil
}

// saveChain reads ":KUBE-SERVICES - [0:0]" and ":INPUT ACCEPT [12:744]".
func (p *iptParser) saveChain(t string, pos model.Pos) {
	if p.table == nil {
		p.errorf(pos, t, "%w: chain declaration outside a *table section", ErrSyntax)
		return
	}
	f := strings.Fields(t[1:])
	if len(f) == 0 {
		p.errorf(pos, t, "%w: expected \":CHAIN POLICY [PACKETS:BYTES]\"", ErrSyntax)
		return
	}
	c := p.table.chainOf(f[0], pos)
	c.Pos = pos
	p.table.declared[f[0]] = true
	if len(f) > 1 && f[1] != "-" {
		c.Policy = f[1]
	}
	if len(f) > 2 {
		pk, by, ok := iptBracketCounters(f[2])
		if !ok {
			p.errorf(pos, t, "%w: counters %q: want [PACKETS:BYTES]", ErrSyntax, f[2])
			return
		}
		c.Packets, c.Bytes = pk, by
	}
}

// iptBracketCounters reads "[12:744]".
func iptBracketCounters(s string) (pk, by uint64, ok bool) {
	if len(s) < 5 || s[0] != '[' || s[len(s)-1] != ']' {
		return 0, 0, false
	}
	a, b, found := strings.Cut(s[1:len(s)-1], ":")
	if !found {
		return 0, 0, false
	}
	pk, err1 := strconv.ParseUint(a, 10, 64)
	by, err2 := strconv.ParseUint(b, 10, 64)
	return pk, by, err1 == nil && err2 == nil
}

// ruleLine reads a line of iptables-save or iptables -S: "-A CHAIN ...",
// "[p:b] -A CHAIN ...", "-N CHAIN", "-P CHAIN POLICY", and the "-X" and
// "-F" of iptables-restore input.
func (p *iptParser) ruleLine(t string, pos model.Pos) {
	toks, err := iptTokenize(t, p.toks[:0])
	p.toks = toks
	if err != nil {
		p.errorf(pos, t, "%w: %v", ErrSyntax, err)
		return
	}
	i := 0
	var pk, by uint64
	counted := false
	if !toks[0].quoted && strings.HasPrefix(toks[0].s, "[") {
		var ok bool
		if pk, by, ok = iptBracketCounters(toks[0].s); !ok {
			p.errorf(pos, t, "%w: counters %q: want [PACKETS:BYTES]", ErrSyntax, toks[0].s)
			return
		}
		counted = true
		i++
	}
	if i >= len(toks) {
		p.errorf(pos, t, "%w: expected -A CHAIN after the counters", ErrSyntax)
		return
	}
	op := toks[i].s
	switch op {
	case "-A", "--append", "-I", "--insert", "-N", "--new-chain", "-P", "--policy", "-X", "--delete-chain", "-F", "--flush", "-Z", "--zero":
	default:
		p.errorf(pos, t, "%w: expected an iptables-save or iptables -S line (-A CHAIN ..., -N CHAIN, -P CHAIN POLICY)", ErrSyntax)
		return
	}
	chain := ""
	if i+1 < len(toks) && !iptIsOpt(toks[i+1]) {
		chain = toks[i+1].s
	}
	if chain == "" && op != "-X" && op != "--delete-chain" && op != "-F" && op != "--flush" && op != "-Z" && op != "--zero" {
		p.errorf(pos, t, "%w: %s needs a chain name", ErrSyntax, op)
		return
	}
	rest := toks[min(i+2, len(toks)):]

	// Which table: the *table section of iptables-save; otherwise the
	// table the prompt named (iptables -S defaults to filter, and lines cut
	// out of a whole iptables-save with grep have no known table).
	tb := p.table
	if tb == nil {
		form, tname := formRules, p.cmd.table
		if p.cmd.form == formSave {
			form = formSave
		} else if tname == "" {
			if p.listTable == "" || (chain == "PREROUTING" && (op == "-P" || op == "--policy")) {
				p.listTable = iptGuessTable(chain)
			}
			tname = p.listTable
		}
		p.want(form, pos)
		if (op == "-N" || op == "--new-chain" || op == "-P" || op == "--policy") && p.tables[tname] != nil && p.tables[tname].declared[chain] {
			// the same chain again: a second dump
			p.newRuleset(form, pos)
			if p.cmd.table == "" && form == formRules {
				p.listTable = iptGuessTable(chain)
				tname = p.listTable
			}
		}
		tb = p.tableOf(tname, pos)
	}

	switch op {
	case "-N", "--new-chain":
		c := tb.chainOf(chain, pos)
		c.Pos = pos
		tb.declared[chain] = true
		return
	case "-P", "--policy":
		c := tb.chainOf(chain, pos)
		c.Pos = pos
		tb.declared[chain] = true
		if len(rest) == 0 {
			p.errorf(pos, t, "%w: -P %s needs a policy", ErrSyntax, chain)
			return
		}
		c.Policy = rest[0].s
		if len(rest) >= 4 && (rest[1].s == "-c" || rest[1].s == "--set-counters") {
			a, err1 := strconv.ParseUint(rest[2].s, 10, 64)
			b, err2 := strconv.ParseUint(rest[3].s, 10, 64)
			if err1 != nil || err2 != nil {
				p.errorf(pos, t, "%w: -c %s %s: want two numbers", ErrSyntax, rest[2].s, rest[3].s)
				return
			}
			c.Packets, c.Bytes = a, b
		}
		return
	case "-X", "--delete-chain":
		if chain == "" {
			p.errorf(pos, t, "%w: -X without a chain (deletes every user chain) is not read", ErrSyntax)
			return
		}
		tb.deleteChain(chain)
		return
	case "-F", "--flush":
		if chain == "" {
			for _, c := range tb.t.Chains {
				c.Rules = c.Rules[:0]
			}
		} else if c := tb.chains[chain]; c != nil {
			c.Rules = c.Rules[:0]
		}
		return
	case "-Z", "--zero":
		return
	}

	insertAt := -1
	if (op == "-I" || op == "--insert") && len(rest) > 0 && !rest[0].quoted {
		if n, err := strconv.Atoi(rest[0].s); err == nil {
			insertAt, rest = n-1, rest[1:]
		} else {
			insertAt = 0
		}
	} else if op == "-I" || op == "--insert" {
		insertAt = 0
	}
	r := &model.Rule{Raw: t, Pos: pos, Packets: pk, Bytes: by, Counted: counted}
	if err := iptApplyOptions(r, rest); err != nil {
		p.errorf(pos, t, "%w", err)
		return
	}
	c := tb.chainOf(chain, pos)
	if insertAt >= 0 && insertAt < len(c.Rules) {
		c.Rules = append(c.Rules, nil)
		copy(c.Rules[insertAt+1:], c.Rules[insertAt:])
		c.Rules[insertAt] = r
	} else {
		c.Rules = append(c.Rules, r)
	}
	p.noteFamily(r)
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

// iptTok is one word of an iptables-save line; quoted words are values,
// never options.
type iptTok struct {
	s      string
	quoted bool
}

// iptTokenize splits an iptables-save line into words, reading the double
// quotes iptables-save puts around comments (with \" and \\ inside).
func iptTokenize(s string, buf []iptTok) ([]iptTok, error) {
	out := buf
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '"' {
			j := i + 1
			esc := false
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					esc = true
					j++
				}
				j++
			}
			if j >= len(s) {
				return out, fmt.Errorf("unterminated quote at column %d", i+1)
			}
			v := s[i+1 : j]
			if esc {
				var b strings.Builder
				for k := 0; k < len(v); k++ {
					if v[k] == '\\' && k+1 < len(v) {
						k++
					}
					b.WriteByte(v[k])
				}
				v = b.String()
			}
			out = append(out, iptTok{s: v, quoted: true})
			i = j + 1
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, iptTok{s: s[i:j]})
		i = j
	}
	if len(out) == 0 {
		return out, fmt.Errorf("empty line")
	}
	return out, nil
}

// iptIsOpt reports whether t is an option (-p, --dport), not a value.
func iptIsOpt(t iptTok) bool {
	return !t.quoted && len(t.s) > 1 && t.s[0] == '-' && (t.s[1] < '0' || t.s[1] > '9')
}

// iptApplyOptions reads the options of one rule (after "-A CHAIN") into r.
func iptApplyOptions(r *model.Rule, toks []iptTok) error {
	module := ""
	neg := false
	for i := 0; i < len(toks); {
		t := toks[i]
		if !t.quoted && t.s == "!" {
			neg = true
			i++
			continue
		}
		if !iptIsOpt(t) {
			return fmt.Errorf("%w: unexpected %q where an option was expected", ErrSyntax, t.s)
		}
		j := i + 1
		for j < len(toks) && !iptIsOpt(toks[j]) && (toks[j].quoted || toks[j].s != "!") {
			j++
		}
		if err := iptOption(r, t.s, toks[i+1:j], neg, &module); err != nil {
			return err
		}
		neg = false
		i = j
	}
	return nil
}

func iptOption(r *model.Rule, opt string, vals []iptTok, neg bool, module *string) error {
	v := ""
	if len(vals) > 0 {
		v = vals[0].s
	}
	need := func() error {
		if v == "" && len(vals) == 0 {
			return fmt.Errorf("%w: %s needs a value", ErrSyntax, opt)
		}
		return nil
	}
	switch opt {
	case "-s", "--source", "--src":
		r.Src, r.NotSrc = iptAddr(v), neg
		return need()
	case "-d", "--destination", "--dst":
		r.Dst, r.NotDst = iptAddr(v), neg
		return need()
	case "-p", "--protocol":
		r.Proto, r.NotProto = iptProto(v), neg
		return need()
	case "-i", "--in-interface":
		r.InIface, r.NotInIface = iptIface(v), neg
		return need()
	case "-o", "--out-interface":
		r.OutIface, r.NotOutIface = iptIface(v), neg
		return need()
	case "-j", "--jump":
		r.Target = v
		return need()
	case "-g", "--goto":
		r.Target, r.Goto = v, true
		return need()
	case "-m", "--match":
		*module = v
		return need()
	case "-c", "--set-counters":
		if len(vals) < 2 {
			return fmt.Errorf("%w: -c needs PACKETS BYTES", ErrSyntax)
		}
		a, err1 := strconv.ParseUint(vals[0].s, 10, 64)
		b, err2 := strconv.ParseUint(vals[1].s, 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%w: -c %s %s: want two numbers", ErrSyntax, vals[0].s, vals[1].s)
		}
		r.Packets, r.Bytes, r.Counted = a, b, true
	case "--dport", "--destination-port", "--dports", "--destination-ports":
		r.DPort, r.NotDPort = v, neg
		return need()
	case "--sport", "--source-port", "--sports", "--source-ports":
		r.SPort, r.NotSPort = v, neg
		return need()
	case "--comment":
		if r.Comment == "" {
			r.Comment = v
		}
		return need()
	case "--mode":
		if *module == "statistic" {
			r.Statistic = v
		}
	case "--probability":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return fmt.Errorf("%w: --probability %q: want a number from 0 to 1", ErrValue, v)
		}
		r.Probability = f
		if r.Statistic == "" {
			r.Statistic = "random"
		}
	case "--every", "--packet":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %s %q: want a count", ErrValue, opt, v)
		}
		if opt == "--every" {
			r.NthEvery = n
		} else {
			r.NthPacket = n
		}
	case "--mark":
		if *module == "mark" {
			r.MarkMatch, r.NotMark = v, neg
			return need()
		}
	case "--ctstate", "--state":
		r.CTState, r.NotCTState = v, neg
		return need()
	case "--dst-type":
		r.DstType = v
		if neg {
			r.DstType = "!" + v
		}
	case "--name", "--set", "--rcheck", "--update", "--seconds":
		if *module != "recent" {
			return nil
		}
		if r.Recent == nil {
			r.Recent = &model.RecentMatch{}
		}
		switch opt {
		case "--name":
			r.Recent.Name = v
		case "--set":
			r.Recent.Set = true
		case "--seconds":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%w: --seconds %q: want a number", ErrValue, v)
			}
			r.Recent.Seconds = n
		}
	case "--set-xmark", "--set-mark", "--or-mark", "--and-mark", "--xor-mark":
		if r.Target != "MARK" {
			return nil
		}
		m, err := iptMark(iptMarkOps[opt], v)
		if err != nil {
			return err
		}
		r.SetMark = m
	case "--to-destination":
		r.ToDestination = v
		return need()
	case "--to-source":
		r.ToSource = v
		return need()
	}
	return nil
}

var iptMarkOps = map[string]string{"--set-xmark": "xset", "--set-mark": "set", "--or-mark": "or", "--and-mark": "and", "--xor-mark": "xor"}

// iptMark turns the MARK target's operation into iptables-save's
// --set-xmark VALUE/MASK form: op is xset, set, or, and or xor, as
// listings print it.
func iptMark(op, v string) (string, error) {
	a, b, hasMask := strings.Cut(v, "/")
	val, err := strconv.ParseUint(a, 0, 32)
	if err != nil {
		return "", fmt.Errorf("%w: mark %q: want a number", ErrValue, v)
	}
	mask := uint64(0xffffffff)
	if hasMask {
		if mask, err = strconv.ParseUint(b, 0, 32); err != nil {
			return "", fmt.Errorf("%w: mark mask %q: want a number", ErrValue, v)
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
		return "", fmt.Errorf("%w: MARK %s: unknown operation", ErrSyntax, op)
	}
	buf := make([]byte, 0, 24)
	buf = append(buf, "0x"...)
	buf = strconv.AppendUint(buf, val, 16)
	buf = append(buf, "/0x"...)
	buf = strconv.AppendUint(buf, mask, 16)
	return string(buf), nil
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

// parseIPTablesCmd reads an iptables command line of a prompt: the family,
// the form of its output, the table and the chain. ok is false for other
// commands.
func parseIPTablesCmd(cmd string) (iptCmd, bool) {
	if i := strings.IndexByte(cmd, '|'); i >= 0 {
		cmd = cmd[:i]
	}
	f := strings.Fields(cmd)
	at := -1
	for i, w := range f {
		base := w[strings.LastIndexByte(w, '/')+1:]
		if strings.HasPrefix(base, "iptables") || strings.HasPrefix(base, "ip6tables") {
			at = i
			break
		}
	}
	if at < 0 {
		return iptCmd{}, false
	}
	tool := f[at][strings.LastIndexByte(f[at], '/')+1:]
	c := iptCmd{family: iptFamilyOf(tool)}
	if strings.HasSuffix(tool, "-save") {
		c.form = formSave
	} else if strings.Contains(tool, "restore") {
		return iptCmd{}, false
	}
	args := f[at+1:]
	listing := func(form string, i int) int {
		if c.form == "" {
			c.form = form
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			c.chain = args[i+1]
			return i + 1
		}
		return i
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-t" || a == "--table":
			if i+1 < len(args) {
				c.table = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--table="):
			c.table = a[len("--table="):]
		case a == "--list" || a == "-L":
			i = listing(formList, i)
		case a == "--list-rules" || a == "-S":
			i = listing(formRules, i)
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// clustered short options: -nvL, -vnxL, -tnat
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 't':
					if k+1 < len(a) {
						c.table = a[k+1:]
					} else if i+1 < len(args) {
						c.table = args[i+1]
						i++
					}
					k = len(a)
				case 'L':
					if k == len(a)-1 {
						i = listing(formList, i)
					} else if c.form == "" {
						c.form = formList
					}
				case 'S':
					if k == len(a)-1 {
						i = listing(formRules, i)
					} else if c.form == "" {
						c.form = formRules
					}
				}
			}
		default:
			// "iptables -L -n KUBE-SERVICES": a chain after other options
			if (c.form == formList || c.form == formRules) && c.chain == "" {
				if _, err := strconv.Atoi(a); err != nil {
					c.chain = a
				}
			}
		}
	}
	return c, true
}

func iptFamilyOf(tool string) string {
	if strings.HasPrefix(tool, "ip6tables") {
		return "ipv6"
	}
	if strings.HasPrefix(tool, "iptables") {
		return "ipv4"
	}
	return ""
}

// listChain reads "Chain KUBE-SERVICES (2 references)" and "Chain INPUT
// (policy ACCEPT 12 packets, 744 bytes)".
func (p *iptParser) listChain(t string, pos model.Pos) {
	f := strings.Fields(t)
	if len(f) < 2 {
		p.errorf(pos, t, "%w: expected \"Chain NAME (...)\"", ErrSyntax)
		return
	}
	name := f[1]
	p.want(formList, pos)
	tname := p.cmd.table
	if tname == "" {
		if p.listTable == "" || name == "PREROUTING" {
			p.listTable = iptGuessTable(name)
		}
		tname = p.listTable
	}
	if tb := p.tables[tname]; tb != nil && (tb.declared[name] || (tb.chains[name] != nil && len(tb.chains[name].Rules) > 0)) {
		// the same chain again: a second dump
		if p.cmd.table == "" {
			p.listTable = iptGuessTable(name)
			tname = p.listTable
		}
		p.newRuleset(formList, pos)
	}
	tb := p.tableOf(tname, pos)
	c := tb.chainOf(name, pos)
	c.Pos = pos
	tb.declared[name] = true
	p.chain = c
	p.cols = iptCols{}

	paren := strings.Join(f[2:], " ")
	if paren == "" {
		return
	}
	if !strings.HasPrefix(paren, "(") || !strings.HasSuffix(paren, ")") {
		p.errorf(pos, t, "%w: expected \"(policy ...)\" or \"(N references)\" after the chain name", ErrSyntax)
		return
	}
	in := strings.Fields(paren[1 : len(paren)-1])
	switch {
	case len(in) >= 2 && in[0] == "policy":
		c.Policy = in[1]
		if len(in) >= 6 {
			pk, err1 := iptCount(in[2])
			by, err2 := iptCount(in[4])
			if err1 != nil || err2 != nil {
				p.errorf(pos, t, "%w: policy counters: want \"N packets, M bytes\"", ErrSyntax)
				return
			}
			c.Packets, c.Bytes = pk, by
		}
	case len(in) == 2 && (in[1] == "references" || in[1] == "reference"):
		n, err := strconv.Atoi(in[0])
		if err != nil {
			p.errorf(pos, t, "%w: references %q: want a number", ErrSyntax, in[0])
			return
		}
		c.References = n
	}
}

// iptGuessTable names the table of a listing whose command is unknown from
// its first chain.
func iptGuessTable(chain string) string {
	switch {
	case chain == "PREROUTING", chain == "POSTROUTING", chain == "KUBE-MARK-MASQ", chain == "KUBE-POSTROUTING",
		strings.HasPrefix(chain, "KUBE-SVC-"), strings.HasPrefix(chain, "KUBE-SEP-"),
		strings.HasPrefix(chain, "KUBE-EXT-"), strings.HasPrefix(chain, "KUBE-SVL-"),
		strings.HasPrefix(chain, "KUBE-FW-"), strings.HasPrefix(chain, "KUBE-XLB-"):
		return "nat"
	}
	return "filter"
}

// iptCount reads a counter of a listing: exact with -x, else with a K, M,
// G or T suffix meaning multiples of 1000 (iptables rounds to them).
func iptCount(s string) (uint64, error) {
	mult := uint64(1)
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 'K':
			mult, s = 1000, s[:n-1]
		case 'M':
			mult, s = 1000*1000, s[:n-1]
		case 'G':
			mult, s = 1000*1000*1000, s[:n-1]
		case 'T':
			mult, s = 1000*1000*1000*1000, s[:n-1]
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, err
	}
	return v * mult, nil
}

func iptIsCount(s string) bool {
	_, err := iptCount(s)
	return err == nil
}

// listRow reads one row of an iptables -L listing into the current chain,
// or, for rows cut out with grep, the chain the prompt listed.
func (p *iptParser) listRow(line string, pos model.Pos) {
	r, err := iptListRow(line, p.cols)
	if err != nil {
		if !errors.Is(err, ErrValue) && !errors.Is(err, ErrSyntax) {
			err = fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		p.errorf(pos, line, "%w", err)
		return
	}
	r.Pos = pos
	p.want(formList, pos)
	if p.chain == nil {
		tname := p.cmd.table
		if tname == "" {
			if p.listTable == "" {
				p.listTable = iptGuessTable(p.cmd.chain)
			}
			tname = p.listTable
		}
		p.chain = p.tableOf(tname, pos).chainOf(p.cmd.chain, pos)
	}
	p.chain.Rules = append(p.chain.Rules, r)
	p.noteFamily(r)
}

// iptIsOptCol reports whether s is the opt column of a listing: "--", or
// "-f" / "!f" for fragment matches.
func iptIsOptCol(s string) bool {
	return s == "--" || s == "-f" || s == "!f"
}

func iptIsProto(s string) bool {
	s = strings.TrimPrefix(s, "!")
	if s == "all" {
		return true
	}
	if _, err := strconv.Atoi(s); err == nil {
		return true
	}
	if _, ok := iptProtoNames[s]; ok {
		return true
	}
	switch s {
	case "tcp", "udp", "icmp", "sctp", "udplite", "esp", "ah", "gre", "ipv6-icmp", "icmpv6", "igmp", "ipip", "ipencap", "dccp", "mh", "ospf", "vrrp":
		return true
	}
	return false
}

func iptLooksAddr(s string) bool {
	s = strings.TrimPrefix(s, "!")
	return s == "anywhere" || strings.ContainsAny(s, "/:.")
}

const iptRowWant = `expected an iptables -L row ("target prot opt source destination ..."), a "Chain NAME (...)" header, or an iptables-save line`

// iptListRow parses one row of an iptables -L listing: [num] [pkts bytes]
// [target] prot [opt] [in out] source destination [matches and target
// options]. The target is blank for rules without one; old ip6tables
// leave the opt column blank.
func iptListRow(line string, cols iptCols) (*model.Rule, error) {
	var (
		f   [12]string
		end [12]int
		n   int
	)
	for i := 0; n < len(f); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		f[n], end[n] = line[i:j], j
		n++
		i = j
	}
	opt := -1
	for k := 1; k < n && k <= 5; k++ {
		if iptIsOptCol(f[k]) {
			opt = k
			break
		}
	}
	var (
		lead   []string // num, pkts, bytes
		target string
		proto  string
		idx    int // the first column after prot and opt
	)
	if opt >= 1 {
		proto = f[opt-1]
		before := f[:opt-1]
		if len(before) > 0 && !iptIsCount(before[len(before)-1]) {
			target, before = before[len(before)-1], before[:len(before)-1]
		}
		lead, idx = before, opt+1
	} else {
		m := 0
		for m < n && m < 3 && iptIsCount(f[m]) {
			m++
		}
		if m >= n {
			return nil, fmt.Errorf("%s", iptRowWant)
		}
		if iptIsProto(f[m]) {
			proto, idx = f[m], m+1
		} else if m+1 < n && iptIsProto(f[m+1]) {
			target, proto, idx = f[m], f[m+1], m+2
		} else {
			return nil, fmt.Errorf("%s", iptRowWant)
		}
		lead = f[:m]
	}
	num, verbose := false, false
	switch len(lead) {
	case 0:
	case 1:
		num = true
	case 2:
		verbose = true
	case 3:
		num, verbose = true, true
	default:
		return nil, fmt.Errorf("%s", iptRowWant)
	}
	if cols.known && (cols.num != num || cols.verbose != verbose) {
		return nil, fmt.Errorf("columns do not match the header (line numbers %v, counters %v)", cols.num, cols.verbose)
	}
	need := idx + 2
	if verbose {
		need += 2
	}
	if n < need {
		return nil, fmt.Errorf("%s: %d columns", iptRowWant, n)
	}
	r := &model.Rule{Raw: line, Target: target}
	if num {
		v, err := strconv.Atoi(lead[0])
		if err != nil {
			return nil, fmt.Errorf("line number %q: want a number", lead[0])
		}
		r.LineNumber, lead = v, lead[1:]
	}
	if verbose {
		pk, err1 := iptCount(lead[0])
		by, err2 := iptCount(lead[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("counters %q %q: want numbers", lead[0], lead[1])
		}
		r.Packets, r.Bytes, r.Counted = pk, by, true
	}
	r.Proto, r.NotProto = iptNeg(proto)
	r.Proto = iptProto(r.Proto)
	if verbose {
		in, inNeg := iptNeg(f[idx])
		out, outNeg := iptNeg(f[idx+1])
		r.InIface, r.NotInIface = iptIface(in), inNeg
		r.OutIface, r.NotOutIface = iptIface(out), outNeg
		idx += 2
	}
	if opt < 0 && (!iptLooksAddr(f[idx]) || !iptLooksAddr(f[idx+1])) {
		return nil, fmt.Errorf("%s", iptRowWant)
	}
	src, srcNeg := iptNeg(f[idx])
	dst, dstNeg := iptNeg(f[idx+1])
	r.Src, r.NotSrc = iptAddr(src), srcNeg
	r.Dst, r.NotDst = iptAddr(dst), dstNeg
	if err := iptListExtras(r, line[end[idx+1]:]); err != nil {
		return nil, err
	}
	return r, nil
}

func iptNeg(s string) (string, bool) {
	if v, ok := strings.CutPrefix(s, "!"); ok {
		return v, true
	}
	return s, false
}

// nextWord returns the first space-separated word of s and the rest.
func nextWord(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// iptListExtras reads what a listing prints after the destination: the
// matches and the target's options, as each extension prints them.
func iptListExtras(r *model.Rule, s string) error {
	neg := false
	peek := func() string { w, _ := nextWord(s); return w }
	take := func() string { var w string; w, s = nextWord(s); return w }
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil
		}
		if strings.HasPrefix(s, "/* ") || s == "/*" {
			body := s[2:]
			c := body
			if e := strings.Index(body, "*/"); e >= 0 {
				c, s = body[:e], body[e+2:]
			} else {
				s = ""
			}
			if r.Comment == "" {
				r.Comment = strings.TrimSpace(c)
			}
			neg = false
			continue
		}
		w := take()
		if w == "!" {
			neg = true
			continue
		}
		switch {
		case w == "[goto]":
			r.Goto = true
		case strings.HasPrefix(w, "dpt:"), strings.HasPrefix(w, "dpts:"):
			v, vneg := iptNeg(w[strings.IndexByte(w, ':')+1:])
			r.DPort, r.NotDPort = v, vneg || neg
		case strings.HasPrefix(w, "spt:"), strings.HasPrefix(w, "spts:"):
			v, vneg := iptNeg(w[strings.IndexByte(w, ':')+1:])
			r.SPort, r.NotSPort = v, vneg || neg
		case w == "multiport":
			kind := take()
			vneg := false
			if peek() == "!" {
				take()
				vneg = true
			}
			v, vn := iptNeg(take())
			switch kind {
			case "dports":
				r.DPort, r.NotDPort = v, vneg || vn
			case "sports":
				r.SPort, r.NotSPort = v, vneg || vn
			}
		case w == "statistic":
			for {
				switch peek() {
				case "!":
					take()
				case "mode":
					take()
					r.Statistic = take()
				case "probability":
					take()
					v := take()
					p, err := strconv.ParseFloat(v, 64)
					if err != nil || p < 0 || p > 1 {
						return fmt.Errorf("%w: probability %q: want a number from 0 to 1", ErrValue, v)
					}
					r.Probability = p
				case "every", "packet":
					k := take()
					v := take()
					c, err := strconv.Atoi(v)
					if err != nil || c < 0 {
						return fmt.Errorf("%w: %s %q: want a count", ErrValue, k, v)
					}
					if k == "every" {
						r.NthEvery = c
					} else {
						r.NthPacket = c
					}
				default:
					goto next
				}
			}
		case w == "mark" && peek() == "match":
			take()
			vneg := neg
			if peek() == "!" {
				take()
				vneg = true
			}
			r.MarkMatch, r.NotMark = take(), vneg
		case w == "MARK":
			op := take()
			m, err := iptMark(op, take())
			if err != nil {
				return err
			}
			r.SetMark = m
		case strings.HasPrefix(w, "to:"):
			if r.Target == "SNAT" {
				r.ToSource = w[3:]
			} else {
				r.ToDestination = w[3:]
			}
		case w == "ctstate" || w == "state":
			r.CTState, r.NotCTState = take(), neg
		case w == "ADDRTYPE" && peek() == "match":
			take()
			for {
				switch peek() {
				case "!":
					take()
					neg = true
				case "dst-type":
					take()
					v, vn := iptNeg(take())
					if vn || neg {
						v = "!" + v
					}
					r.DstType = v
					neg = false
				case "src-type":
					take()
					take()
					neg = false
				case "limit-in", "limit-out":
					take()
				default:
					goto next
				}
			}
		case w == "recent:":
			rm := &model.RecentMatch{}
			for {
				switch peek() {
				case "SET":
					take()
					rm.Set = true
				case "CHECK", "UPDATE", "REMOVE", "reap", "TTL-Match", "rttl":
					take()
				case "seconds:":
					take()
					v := take()
					c, err := strconv.Atoi(v)
					if err != nil {
						return fmt.Errorf("%w: recent seconds %q: want a number", ErrValue, v)
					}
					rm.Seconds = c
				case "name:":
					take()
					rm.Name = take()
				case "hit_count:", "side:", "mask:":
					take()
					take()
				default:
					r.Recent = rm
					goto next
				}
			}
		}
	next:
		neg = false
	}
}

// iptSniffCounts counts the kinds of line in a file's head.
type iptSniffCounts struct {
	save   int // *table, :CHAIN POLICY [p:b], COMMIT, "# Generated by iptables-save"
	rules  int // -A CHAIN ... lines (either form)
	spec   int // -N CHAIN, -P CHAIN POLICY (iptables -S)
	list   int // "Chain X (...)" and column headers
	rows   int // listing rows
	total  int
	prompt map[string]int // iptables prompts by form
}

func sniffIPTables(head []byte) (c iptSniffCounts, ok bool) {
	if !text.IsText(head) {
		return c, false
	}
	c.prompt = map[string]int{}
	var toks []iptTok
	for _, line := range text.HeadLines(head, 300) {
		t := strings.TrimSpace(line)
		if t == "" || t == "[...]" || t == "..." || t == "…" {
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
		if strings.HasPrefix(t, "# Completed on ") || strings.HasPrefix(t, legacyWarning) {
			continue
		}
		if _, cmd, ok := text.Prompt(line); ok {
			if pc, ok := parseIPTablesCmd(cmd); ok {
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

func sniffIPTablesSave(_ string, head []byte) int {
	c, ok := sniffIPTables(head)
	if !ok || (c.save == 0 && c.prompt[formSave] == 0) || c.list > 0 {
		return 0
	}
	return text.RatioScore(c.save+c.rules, c.total, 100)
}

func sniffIPTablesList(_ string, head []byte) int {
	c, ok := sniffIPTables(head)
	if !ok || (c.list == 0 && c.prompt[formList] == 0) || c.save > 0 {
		return 0
	}
	return text.RatioScore(c.list+c.rows, c.total, 100)
}

func sniffIPTablesRules(_ string, head []byte) int {
	c, ok := sniffIPTables(head)
	if !ok || c.save > 0 || c.list > 0 || c.prompt[formSave] > 0 || (c.spec == 0 && c.prompt[formRules] == 0) {
		return 0
	}
	return text.RatioScore(c.rules+c.spec, c.total, 98)
}
