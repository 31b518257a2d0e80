package track

import (
	"math"
	"net/netip"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// addICMP adds an ICMP error; attemptFrame is the first frame (or line)
// of the stream it quotes, as the stream's shard found it, 0 when the
// stream is not tracked.
func (t *Tracker) addICMP(p *decode.Packet, attemptFrame int) {
	ev := *p.ICMP
	ev.Node, ev.Pos, ev.Time = t.node, t.pos(p), p.Time
	switch {
	case !ev.V6 && ev.Type == 3:
		t.counts.ICMPUnreach++
	case !ev.V6 && ev.Type == 5:
		t.counts.ICMPRedirect++
	case ev.V6 && ev.Type == 1:
		t.counts.ICMP6Unreach++
	case ev.V6 && ev.Type == 137:
		t.counts.ICMP6Redirect++
	}
	if attemptFrame != 0 {
		ev.AttemptFrame = attemptFrame // the quoted stream's, looked up by its shard
	}
	if n := len(t.icmp); n > 0 {
		prev := t.icmp[n-1]
		ev.Copy = isCopy(prev.Time, ev.Time) && prev.From == ev.From && prev.To == ev.To && prev.Type == ev.Type &&
			prev.Code == ev.Code && prev.Quoted == ev.Quoted && prev.QuotedProto == ev.QuotedProto
	}
	if t.summarize {
		k := icmpKey{ev.From, ev.To, ev.Type, ev.Code, ev.Quoted.Dst, ev.QuotedProto, ev.V6, ev.Copy, netip.AddrPort{}}
		if ev.QuotedProto == "tcp" {
			k.src = ev.Quoted.Src // each attempt's errors apart: the rules cite the attempts they answer
		}
		if last, ok := t.icmpLast[k]; ok && t.icmpKept[k] >= t.keepFailed {
			t.icmp[last].Repeats++
			return
		}
		if t.icmpKept == nil {
			t.icmpKept, t.icmpLast = map[icmpKey]int{}, map[icmpKey]int{}
		}
		t.icmpKept[k]++
		t.icmpLast[k] = len(t.icmp)
	}
	t.icmp = append(t.icmp, ev)
}

// portlessTooBig reports whether e is a fragmentation-needed (Packet Too
// Big) error whose quote names its hosts and no ports: tcpdump's text
// without -v prints the quoted destination alone ("ICMP 10.61.1.35
// unreachable - need to frag (mtu 1440)"), the error's destination
// standing for the quoted source.
func portlessTooBig(e *model.ICMPEvent) bool {
	q := e.Quoted
	return (e.What == "frag-needed" || e.What == "packet-too-big") && e.QuotedProto == "" &&
		q.Src.Port() == 0 && q.Dst.Port() == 0 && q.Src.Addr().IsValid() && q.Dst.Addr().IsValid()
}

// quotedHosts marks the live TCP streams between the two hosts of q, a
// quote without ports (portlessTooBig), as quoted by an ICMP error, as
// the shards' lookup does for a whole quote, so that summary mode keeps
// their attempts; it returns the first frame (or line) of the stream
// that began last, 0 when there is none. It walks every live stream:
// such quotes come only from pasted text.
func (t *Tracker) quotedHosts(q model.Tuple) int {
	a, b := q.Src.Addr(), q.Dst.Addr()
	found, latest := 0, int64(math.MinInt64)
	for _, sh := range t.shards {
		tb := &sh.streams
		for i := range tb.slots {
			ref := tb.slots[i].ref
			if ref == 0 {
				continue
			}
			k := tb.keyAt(ref)
			lo, hi := k.End(0).Addr(), k.End(1).Addr()
			if !(lo == a && hi == b || lo == b && hi == a) {
				continue
			}
			if s := sh.quoted(ref); s.first.ns >= latest {
				latest, found = s.first.ns, sh.firstPlace(s)
			}
		}
	}
	return found
}

func (t *Tracker) addARP(p *decode.Packet) {
	ev := *p.ARP
	ev.Node, ev.Pos, ev.Time = t.node, t.pos(p), p.Time
	// tcpdump's text of a reply ("Reply X is-at MAC") does not name whom
	// it answers: the last host that asked for X.
	switch {
	case ev.Op == "request" && !ev.Gratuitous && ev.Target.IsValid():
		if t.askers == nil {
			t.askers = map[netip.Addr]netip.Addr{}
		}
		t.askers[ev.Target] = ev.IP
	case ev.Op == "reply" && !ev.Target.IsValid():
		ev.Target = t.askers[ev.IP]
	}
	if ev.Gratuitous && (ev.Op == "request" || ev.Op == "reply") {
		t.counts.ARPGratuitous++
	}
	if n := len(t.arp); n > 0 {
		prev := t.arp[n-1]
		ev.Copy = isCopy(prev.Time, ev.Time) && prev.Op == ev.Op && prev.IP == ev.IP && prev.MAC == ev.MAC &&
			prev.Target == ev.Target && prev.Gratuitous == ev.Gratuitous
	}
	t.arpAnswers.claim(t.arp, ev.IP, ev.Time)
	if t.summarize {
		k := arpKey{ev.Op, ev.IP, ev.Target, ev.MAC, ev.Gratuitous, ev.Copy}
		changes := ev.MAC != "" && t.lastMAC[ev.IP] != ev.MAC
		if last, ok := t.arpLast[k]; ok && !changes && t.arpKept[k] >= t.keepFailed {
			t.arp[last].Repeats++
			t.arp[last].LastRepeat = ev.Time
			return
		}
		if t.arpKept == nil {
			t.arpKept, t.arpLast, t.lastMAC = map[arpKey]int{}, map[arpKey]int{}, map[netip.Addr]string{}
		}
		t.arpKept[k]++
		t.arpLast[k] = len(t.arp)
		if ev.MAC != "" {
			t.lastMAC[ev.IP] = ev.MAC
		}
	}
	t.arp = append(t.arp, ev)
	t.arpAnswers.ask(t.arp, len(t.arp)-1)
}

// isCopy reports whether an event at t, identical to one at prev, is that
// packet seen again on another interface (model.CopyWindow).
func isCopy(prev, t time.Time) bool {
	if prev.IsZero() || t.IsZero() {
		return false
	}
	d := t.Sub(prev)
	return d >= 0 && d < model.CopyWindow
}

// arpAnswers matches ARP requests and neighbor solicitations with the
// claims of their targets (a reply, an announcement, or any packet the
// target sent) as the events come: a request is pending until a claim of
// its target arrives, and unanswered if that is later than
// model.ARPAnswerWindow. Requests closer than that to the capture's end are
// left unflagged: their answer may just be missing from the capture.
// Gratuitous requests, copies and probes from an unset address ask nobody.
type arpAnswers struct {
	pending map[netip.Addr][]int // requests (indices) waiting for each target
}

// claim notes that ip showed itself at t (a reply, an announcement, any
// packet it sent), answering the requests for it.
func (a *arpAnswers) claim(evs []model.ARPEvent, ip netip.Addr, t time.Time) {
	if list := a.pending[ip]; len(list) > 0 {
		for _, j := range list {
			evs[j].Unanswered = t.Sub(evs[j].Time) > model.ARPAnswerWindow
		}
		delete(a.pending, ip)
	}
}

// ask notes evs[i] as a request waiting for its answer, if it asks anyone.
func (a *arpAnswers) ask(evs []model.ARPEvent, i int) {
	e := &evs[i]
	if (e.Op == "request" || e.Op == "ns") && !e.Gratuitous && !e.Copy && e.Target.IsValid() && !e.Target.IsUnspecified() &&
		e.IP.IsValid() && !e.IP.IsUnspecified() && e.Target != e.IP && !e.Time.IsZero() {
		if a.pending == nil {
			a.pending = map[netip.Addr][]int{}
		}
		a.pending[e.Target] = append(a.pending[e.Target], i)
	}
}

// finish judges the requests still pending at the capture's end.
func (a *arpAnswers) finish(evs []model.ARPEvent, end time.Time) {
	for _, list := range a.pending {
		for _, j := range list {
			evs[j].Unanswered = !end.IsZero() && end.Sub(evs[j].Time) >= model.ARPAnswerWindow
		}
	}
	a.pending = nil
}

// A summarizing tracker keeps as many identical ICMP errors (same sender,
// type, code and quoted destination) or identical ARP packets one by one
// as failed attempts to one server (Summary.FailedSample);
// the next ones add to the last kept one's Repeats, so that a flood keeps
// memory bounded. An ARP packet that changes the MAC claiming an address
// is always kept.

type arpKey struct {
	op         string
	ip, target netip.Addr
	mac        string
	grat, copy bool
}

type icmpKey struct {
	from, to  netip.Addr
	typ, code int
	dst       netip.AddrPort
	proto     string
	v6, copy  bool
	src       netip.AddrPort
}
