package netfilter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

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
