package netfilter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// IPTablesListFormat reads iptables -L listings.
var IPTablesListFormat = &format.Format{
	Name: "iptables-list",
	Kind: model.KindNetfilter,
	Command: "iptables -L with -n, -v, -x, --line-numbers, -t TABLE, one CHAIN or all; ip6tables -L; " +
		"rows cut out with grep",
	Doc: "name-resolved (`anywhere`, `dpt:domain`) and numeric listings, K/M/G counters read as " +
		"multiples of 1000; prompts (`# iptables -t nat -nvL`, `root@node:~# iptables -L " +
		"KUBE-SERVICES -t nat | grep dns`) name the table and chain of what follows; several " +
		"listings in one file are one ruleset until a chain is listed again; without a prompt or " +
		"bundle command the table is filter (nat for a listing that starts with PREROUTING, " +
		"POSTROUTING or kube-proxy's NAT chains); `[...]` elisions are skipped; " +
		"iptables-nft's \"Warning: iptables-legacy tables present\" (on standard error, no `# `) marks " +
		"the listing nft with legacy tables beside it",
	Sniff: sniffIPTablesList,
	Parse: rulesets(readIPTables),
}

// listChain reads "Chain KUBE-SERVICES (2 references)" and "Chain INPUT
// (policy ACCEPT 12 packets, 744 bytes)".
func (p *iptParser) listChain(t string, pos model.Pos) {
	f := strings.Fields(t)
	if len(f) < 2 {
		p.errorf(pos, t, "%w: expected \"Chain NAME (...)\"", format.ErrSyntax)
		return
	}
	name := f[1]
	p.want(formList, pos)
	tname := p.cmd.table
	if tname == "" {
		if p.listTable == "" || name == "PREROUTING" {
			p.listTable = iptGuessTable(name, "")
		}
		tname = p.listTable
	}
	if tb := p.tables[tname]; tb != nil && (tb.declared[name] || (tb.chains[name] != nil && len(tb.chains[name].Rules) > 0)) {
		// the same chain again: a second dump
		if p.cmd.table == "" {
			p.listTable = iptGuessTable(name, "")
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
		p.errorf(pos, t, "%w: expected \"(policy ...)\" or \"(N references)\" after the chain name", format.ErrSyntax)
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
				p.errorf(pos, t, "%w: policy counters: want \"N packets, M bytes\"", format.ErrSyntax)
				return
			}
			c.Packets, c.Bytes = pk, by
		}
	case len(in) == 2 && (in[1] == "references" || in[1] == "reference"):
		n, err := strconv.Atoi(in[0])
		if err != nil {
			p.errorf(pos, t, "%w: references %q: want a number", format.ErrSyntax, in[0])
			return
		}
		c.References = n
	}
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
		if !errors.Is(err, format.ErrValue) && !errors.Is(err, format.ErrSyntax) {
			err = fmt.Errorf("%w: %v", format.ErrSyntax, err)
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
				p.listTable = iptGuessTable(p.cmd.chain, "")
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
						return fmt.Errorf("%w: probability %q: want a number from 0 to 1", format.ErrValue, v)
					}
					r.Probability = p
				case "every", "packet":
					k := take()
					if err := iptNth(r, k, take(), k == "every"); err != nil {
						return err
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
						return fmt.Errorf("%w: recent seconds %q: want a number", format.ErrValue, v)
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

func sniffIPTablesList(_ string, head []byte) int {
	c, ok := sniffIPTables(head)
	if !ok || (c.list == 0 && c.prompt[formList] == 0) || c.save > 0 {
		return 0
	}
	return text.RatioScore(c.list+c.rows, c.total, 100)
}

func iptNeg(s string) (string, bool) {
	if v, ok := strings.CutPrefix(s, "!"); ok {
		return v, true
	}
	return s, false
}
