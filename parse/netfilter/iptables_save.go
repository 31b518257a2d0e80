package netfilter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// IPTablesSaveFormat reads iptables-save and ip6tables-save dumps.
var IPTablesSaveFormat = &format.Format{
	Name: "iptables-save",
	Kind: model.KindNetfilter,
	Command: "iptables-save, ip6tables-save (with -c, -t TABLE; legacy and nft, iptables-legacy-save)," +
		" kube-proxy's iptables-restore input",
	Doc: "every table of a dump (`*nat` ... `COMMIT`), chain policies and `[packets:bytes]` " +
		"counters, options in any order (quoted or bare comments, `! -s`, `-g`); iptables-nft's " +
		"\"# Warning: iptables-legacy tables present\" marks the dump nft with legacy tables beside it, also " +
		"where `2>&1` put it in the middle of a rule; `-X` of a restore input deletes the chain",
	Sniff: sniffIPTablesSave,
	Parse: rulesets(readIPTables),
}

// saveTable reads "*nat".
func (p *iptParser) saveTable(t string, pos model.Pos) {
	name := strings.TrimSpace(t[1:])
	if name == "" || strings.ContainsAny(name, " \t") {
		p.errorf(pos, t, "%w: expected \"*TABLE\"", format.ErrSyntax)
		return
	}
	if p.table != nil {
		p.errorf(pos, t, "%w: *%s before the COMMIT of *%s", format.ErrSyntax, name, p.table.t.Name)
	}
	p.want(formSave, pos)
	if _, dup := p.tables[name]; dup {
		p.newRuleset(formSave, pos)
	}
	p.table = p.tableOf(name, pos)
	p.chain = nil
}

// saveChain reads ":KUBE-SERVICES - [0:0]" and ":INPUT ACCEPT [12:744]".
// Outside a *table section (lines cut out of a dump with grep) the chain
// goes where fragmentTable puts it.
func (p *iptParser) saveChain(t string, pos model.Pos) {
	f := strings.Fields(t[1:])
	if len(f) == 0 {
		p.errorf(pos, t, "%w: expected \":CHAIN POLICY [PACKETS:BYTES]\"", format.ErrSyntax)
		return
	}
	tb := p.table
	if tb == nil {
		tb = p.fragmentTable(formSave, "-N", f[0], "", pos)
	}
	c := tb.chainOf(f[0], pos)
	c.Pos = pos
	tb.declared[f[0]] = true
	if len(f) > 1 && f[1] != "-" {
		c.Policy = f[1]
	}
	if len(f) > 2 {
		pk, by, ok := iptBracketCounters(f[2])
		if !ok {
			p.errorf(pos, t, "%w: counters %q: want [PACKETS:BYTES]", format.ErrSyntax, f[2])
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

// fragmentTable returns the table of a line outside any *table section:
// an iptables -S line, or a line cut out of an iptables-save dump with grep
// (form formSave). The table is the prompt's -t; a grep of an
// iptables-save behind a prompt has no known table (""); otherwise it is
// guessed from the chain and the rule's target (iptGuessTable). A chain
// created or given a policy again starts the next dump.
func (p *iptParser) fragmentTable(form, op, chain, target string, pos model.Pos) *iptTable {
	if p.cmd.form == "" {
		p.fragment = true
	}
	tname := p.cmd.table
	if p.cmd.form != formSave && tname == "" {
		if p.listTable == "" || (chain == "PREROUTING" && (op == "-P" || op == "--policy")) {
			p.listTable = iptGuessTable(chain, target)
		}
		tname = p.listTable
	}
	p.want(form, pos)
	if (op == "-N" || op == "--new-chain" || op == "-P" || op == "--policy") && p.tables[tname] != nil && p.tables[tname].declared[chain] {
		// the same chain again: a second dump
		p.newRuleset(form, pos)
		if p.cmd.table == "" && p.cmd.form != formSave {
			p.listTable = iptGuessTable(chain, target)
			tname = p.listTable
		}
	}
	return p.tableOf(tname, pos)
}

// iptJumpTarget returns the -j target of a rule's options, "" without.
func iptJumpTarget(opts []iptTok) string {
	for i := 0; i+1 < len(opts); i++ {
		if !opts[i].quoted && (opts[i].s == "-j" || opts[i].s == "--jump" || opts[i].s == "-g" || opts[i].s == "--goto") {
			return opts[i+1].s
		}
	}
	return ""
}

// ruleLine reads a line of iptables-save or iptables -S: "-A CHAIN ...",
// "[p:b] -A CHAIN ...", "-N CHAIN", "-P CHAIN POLICY", and the "-X" and
// "-F" of iptables-restore input.
func (p *iptParser) ruleLine(t string, pos model.Pos) {
	toks, err := iptTokenize(t, p.toks[:0])
	p.toks = toks
	if err != nil {
		p.errorf(pos, t, "%w: %v", format.ErrSyntax, err)
		return
	}
	i := 0
	var pk, by uint64
	counted := false
	if !toks[0].quoted && strings.HasPrefix(toks[0].s, "[") {
		var ok bool
		if pk, by, ok = iptBracketCounters(toks[0].s); !ok {
			p.errorf(pos, t, "%w: counters %q: want [PACKETS:BYTES]", format.ErrSyntax, toks[0].s)
			return
		}
		counted = true
		i++
	}
	if i >= len(toks) {
		p.errorf(pos, t, "%w: expected -A CHAIN after the counters", format.ErrSyntax)
		return
	}
	op := toks[i].s
	switch op {
	case "-A", "--append", "-I", "--insert", "-N", "--new-chain", "-P", "--policy", "-X", "--delete-chain", "-F", "--flush", "-Z", "--zero":
	default:
		p.errorf(pos, t, "%w: expected an iptables-save or iptables -S line (-A CHAIN ..., -N CHAIN, -P CHAIN POLICY)", format.ErrSyntax)
		return
	}
	chain := ""
	if i+1 < len(toks) && !iptIsOpt(toks[i+1]) {
		chain = toks[i+1].s
	}
	if chain == "" && op != "-X" && op != "--delete-chain" && op != "-F" && op != "--flush" && op != "-Z" && op != "--zero" {
		p.errorf(pos, t, "%w: %s needs a chain name", format.ErrSyntax, op)
		return
	}
	rest := toks[min(i+2, len(toks)):]

	tb := p.table
	if tb == nil {
		form := formRules
		if counted || p.cmd.form == formSave || (p.cmd.form == "" && p.rs != nil && p.rs.Format == formSave && p.fragment) {
			form = formSave // iptables-save -c lines, or a grep of a save
		}
		tb = p.fragmentTable(form, op, chain, iptJumpTarget(rest), pos)
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
			p.errorf(pos, t, "%w: -P %s needs a policy", format.ErrSyntax, chain)
			return
		}
		c.Policy = rest[0].s
		if len(rest) >= 4 && (rest[1].s == "-c" || rest[1].s == "--set-counters") {
			a, err1 := strconv.ParseUint(rest[2].s, 10, 64)
			b, err2 := strconv.ParseUint(rest[3].s, 10, 64)
			if err1 != nil || err2 != nil {
				p.errorf(pos, t, "%w: -c %s %s: want two numbers", format.ErrSyntax, rest[2].s, rest[3].s)
				return
			}
			c.Packets, c.Bytes = a, b
		}
		return
	case "-X", "--delete-chain":
		if chain == "" {
			p.errorf(pos, t, "%w: -X without a chain (deletes every user chain) is not read", format.ErrSyntax)
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
		if i = text.SkipBlanks(s, i); i >= len(s) {
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
			return fmt.Errorf("%w: unexpected %q where an option was expected", format.ErrSyntax, t.s)
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
			return fmt.Errorf("%w: %s needs a value", format.ErrSyntax, opt)
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
			return fmt.Errorf("%w: -c needs PACKETS BYTES", format.ErrSyntax)
		}
		a, err1 := strconv.ParseUint(vals[0].s, 10, 64)
		b, err2 := strconv.ParseUint(vals[1].s, 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%w: -c %s %s: want two numbers", format.ErrSyntax, vals[0].s, vals[1].s)
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
			return fmt.Errorf("%w: --probability %q: want a number from 0 to 1", format.ErrValue, v)
		}
		r.Probability = f
		if r.Statistic == "" {
			r.Statistic = "random"
		}
	case "--every", "--packet":
		return iptNth(r, opt, v, opt == "--every")
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
				return fmt.Errorf("%w: --seconds %q: want a number", format.ErrValue, v)
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

func sniffIPTablesSave(_ string, head []byte) int {
	c, ok := sniffIPTables(head)
	if !ok || (c.save == 0 && c.prompt[formSave] == 0 && c.counted == 0) || c.list > 0 {
		return 0
	}
	return text.RatioScore(c.save+c.rules, c.total, 100)
}

var iptMarkOps = map[string]string{"--set-xmark": "xset", "--set-mark": "set", "--or-mark": "or", "--and-mark": "and", "--xor-mark": "xor"}
