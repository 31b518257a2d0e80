package netfilter

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/model"
)

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
