package facts

import (
	"slices"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// NATPair is one connection a capture saw both before and after a node
// translated it: the same SYN (the client's initial sequence number, sent
// once) with another destination (DNAT: a Service address turned into an
// endpoint's) or another source (SNAT, masquerade). A capture of `-i any` on
// the node that translates sees both, as does a pair of captures of its
// two interfaces; a capture on the client sees its SYN to the Service and
// a SYN/ACK from the endpoint's address that acknowledges it.
type NATPair struct {
	// Before is the attempt as the client sent it, After as the node
	// forwarded it.
	Before, After *model.Attempt
	// DNAT says the destination changed, SNAT the source.
	DNAT, SNAT bool
}

// ReplyUntranslated reports whether the server answered the translated
// connection (a SYN/ACK After) while no answer came back with the
// addresses the client used (no SYN/ACK Before): the reply was not
// translated back on its way to the client.
func (p NATPair) ReplyUntranslated() bool {
	return len(p.After.SYNACK) > 0 && len(p.Before.SYNACK) == 0
}

// NATPairIndex holds the snapshot's NAT pairs.
type NATPairIndex struct {
	pairs  []NATPair
	before map[*model.Attempt]int
	after  map[*model.Attempt]int
}

// Pairs returns the pairs, in the order of their first SYN.
func (x *NATPairIndex) Pairs() []NATPair { return slices.Clone(x.pairs) }

// Before returns the pair whose Before is a, if any.
func (x *NATPairIndex) Before(a *model.Attempt) (NATPair, bool) {
	if i, ok := x.before[a]; ok {
		return x.pairs[i], true
	}
	return NATPair{}, false
}

// After returns the pair whose After is a, if any.
func (x *NATPairIndex) After(a *model.Attempt) (NATPair, bool) {
	if i, ok := x.after[a]; ok {
		return x.pairs[i], true
	}
	return NATPair{}, false
}

// NATPairs joins the attempts of each node's captures that are one
// connection seen before and after NAT: the same initial sequence number,
// first SYNs less than model.MinSYNRetransmission apart (a copy, not a
// retransmission), and another client or another server but not both (a
// DNAT keeps the client, a SNAT the server; two SYNs with nothing in common
// but their sequence number are not taken for one).
var NATPairs = &analyzer.Fact[*NATPairIndex]{
	Name: "nat-pairs",
	Doc: "connections a capture saw before and after a node translated them (DNAT, SNAT): attempts of one node " +
		"with the same initial sequence number and SYNs copies of each other, one end kept and the other translated",
	Compute: func(fs *analyzer.FactSet) *NATPairIndex { return natPairs(fs.Snapshot()) },
}

// firstSeen returns the time of an attempt's first SYN, or of its first
// SYN/ACK when its SYN was not seen (a capture on the client of a reply
// that comes back from the endpoint's address); zero without either.
func firstSeen(a *model.Attempt) time.Time {
	switch {
	case len(a.SYN) > 0:
		return a.SYN[0].Time
	case len(a.SYNACK) > 0:
		return a.SYNACK[0].Time
	}
	return time.Time{}
}

func natPairs(s *model.Snapshot) *NATPairIndex {
	x := &NATPairIndex{before: map[*model.Attempt]int{}, after: map[*model.Attempt]int{}}
	type key struct {
		node string
		isn  uint32
	}
	var keys []key
	byISN := map[key][]*model.Attempt{}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.ISN == 0 || firstSeen(a).IsZero() {
			continue
		}
		k := key{a.Node, a.ISN}
		if byISN[k] == nil {
			keys = append(keys, k)
		}
		byISN[k] = append(byISN[k], a)
	}
	for _, k := range keys {
		as := byISN[k]
		if len(as) < 2 {
			continue
		}
		slices.SortStableFunc(as, func(a, b *model.Attempt) int { return firstSeen(a).Compare(firstSeen(b)) })
		for i := 1; i < len(as); i++ {
			b, a := as[i-1], as[i]
			if _, used := x.before[b]; used {
				continue
			}
			if _, used := x.after[b]; used {
				continue
			}
			if len(b.SYN) == 0 {
				continue // the connection as the client sent it starts with its SYN
			}
			if !model.IsSegmentCopy(firstSeen(b), firstSeen(a)) && !firstSeen(b).Equal(firstSeen(a)) {
				continue
			}
			p := NATPair{Before: b, After: a, DNAT: b.Server != a.Server, SNAT: b.Client != a.Client}
			if p.DNAT == p.SNAT {
				// The same tuple; or both ends changed, which nothing
				// tells from two connections whose sequence numbers
				// happen to agree.
				continue
			}
			x.before[b] = len(x.pairs)
			x.after[a] = len(x.pairs)
			x.pairs = append(x.pairs, p)
		}
	}
	slices.SortStableFunc(x.pairs, func(p, q NATPair) int { return firstSeen(p.Before).Compare(firstSeen(q.Before)) })
	for i, p := range x.pairs {
		x.before[p.Before] = i
		x.after[p.After] = i
	}
	return x
}
