package timeline

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// arpAddrs are the addresses whose ARP owners f is about: those its
// rule's Plot.ARPAddrs select (its subject's address, its facts'
// LoadBalancer or flapping addresses), and the addresses of the ARP
// packets its evidence cites.
func (b *builder) arpAddrs(f *analyzer.Finding, cited map[posKey]bool) []netip.Addr {
	var out []netip.Addr
	add := func(s string) {
		if _, a, ok := leadingEndpoint(s); ok && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	for _, sel := range b.plot(f.Rule).ARPAddrs {
		for _, v := range values(f, sel) {
			add(v)
		}
	}
	for i := range b.snap.ARP {
		e := &b.snap.ARP[i]
		if cited[keyOf(e.Pos)] {
			if e.Unanswered {
				add(e.Target.String())
			} else {
				add(e.IP.String())
			}
		}
	}
	return out
}

// arp draws, per address, which MAC claimed it over time (a span per
// owner) and the requests for it nobody answered.
func (b *builder) arp(f *analyzer.Finding, cited map[posKey]bool) part {
	addrs := b.arpAddrs(f, cited)
	if len(addrs) == 0 {
		return part{}
	}
	node := f.Subject["node"]
	var lanes []report.Lane
	var files []string
	for _, ip := range addrs {
		l := report.Lane{Name: "IP " + ip.String()}
		owner := -1 // the index in l.Spans of the current owner's span
		for i := range b.snap.ARP {
			e := &b.snap.ARP[i]
			if e.Copy || node != "" && e.Node != "" && e.Node != node || e.Time.IsZero() {
				continue
			}
			switch {
			case e.Unanswered && e.Target == ip:
				l.Events = append(l.Events, report.Event{Time: e.Time, Kind: report.EventFailed, Count: 1 + e.Repeats, Pos: e.Pos,
					Label: fmt.Sprintf("%s asks who has %s: no answer", e.IP, ip)})
			case e.IP == ip && e.Op != "request" && e.Op != "ns" || e.IP == ip && e.Gratuitous:
				how := e.Op
				if e.Gratuitous {
					how = "gratuitous " + e.Op
				}
				l.Events = append(l.Events, report.Event{Time: e.Time, Kind: report.EventARP, Count: 1 + e.Repeats, Pos: e.Pos,
					Label: fmt.Sprintf("%s is at %s (%s)", ip, e.MAC, how)})
				last := e.Time
				if e.LastRepeat.After(last) {
					last = e.LastRepeat
				}
				mac := strings.ToLower(e.MAC)
				if owner >= 0 && l.Spans[owner].Label == mac {
					l.Spans[owner].End = maxTime(l.Spans[owner].End, last)
					break
				}
				if owner >= 0 {
					l.Spans[owner].End = e.Time // the next owner takes over
				}
				l.Spans = append(l.Spans, report.Span{Start: e.Time, End: last, Kind: report.SpanOwner, Label: mac, Pos: e.Pos})
				owner = len(l.Spans) - 1
			default:
				continue
			}
			if !slices.Contains(files, e.Pos.File) {
				files = append(files, e.Pos.File)
			}
		}
		if len(l.Events) == 0 {
			continue
		}
		if owner >= 0 {
			// The last owner holds the address, as far as the capture
			// shows, until it ends.
			last := &l.Spans[owner]
			for _, c := range b.snap.Captures {
				if c.File == last.Pos.File && c.Last.After(last.End) {
					last.End = c.Last
				}
			}
		}
		finishLane(&l)
		lanes = append(lanes, l)
	}
	if len(lanes) == 0 {
		return part{}
	}
	title := "ARP owner of " + strings.TrimPrefix(lanes[0].Name, "IP ") + " over time"
	if len(lanes) > 1 {
		title = fmt.Sprintf("ARP owners of %d addresses over time", len(lanes))
	}
	return part{title: title, lanes: lanes, files: files}
}

// icmp draws the ICMP errors f is about, one lane per sender: those its
// evidence cites, and those its rule's Plot.ICMP selects (for
// icmp-unreachable those of its sender and kind about its destination,
// for mtu-blackhole the frag-needed errors about its flow).
func (b *builder) icmp(f *analyzer.Finding, cited map[posKey]bool) part {
	node := f.Subject["node"]
	var from, dst netip.Addr
	var what string
	var src, to netip.Addr
	how := b.plot(f.Rule).ICMP
	switch how {
	case analyzer.ICMPSenderKind:
		_, from, _ = leadingEndpoint(f.Subject["from"])
		_, dst, _ = leadingEndpoint(f.Subject["address"])
		what = f.Subject["icmp"]
	case analyzer.ICMPTooBig:
		_, src, _ = leadingEndpoint(f.Subject["source"])
		_, to, _ = leadingEndpoint(f.Subject["destination"])
	}
	match := func(e *model.ICMPEvent) bool {
		if cited[keyOf(e.Pos)] {
			return true
		}
		switch how {
		case analyzer.ICMPSenderKind:
			return e.From == from && e.What == what && (e.Quoted.Dst.Addr() == dst || e.Quoted.Src.Addr() == dst)
		case analyzer.ICMPTooBig:
			return (e.What == "frag-needed" || e.What == "packet-too-big") &&
				(e.Quoted.Src.Addr() == src && e.Quoted.Dst.Addr() == to || e.To == src)
		}
		return false
	}
	byFrom := map[netip.Addr]*report.Lane{}
	var order []netip.Addr
	var files []string
	for i := range b.snap.ICMP {
		e := &b.snap.ICMP[i]
		if e.Copy || e.Time.IsZero() || node != "" && e.Node != "" && e.Node != node || !match(e) {
			continue
		}
		l := byFrom[e.From]
		if l == nil {
			l = &report.Lane{Name: "ICMP from " + e.From.String()}
			byFrom[e.From] = l
			order = append(order, e.From)
		}
		about := e.Quoted.Dst.String()
		if !e.Quoted.Dst.IsValid() {
			about = e.To.String()
		}
		l.Events = append(l.Events, report.Event{Time: e.Time, Kind: report.EventICMP, Count: 1 + e.Repeats, Pos: e.Pos,
			Label: fmt.Sprintf("ICMP %s from %s for %s", e.What, e.From, about)})
		if !slices.Contains(files, e.Pos.File) {
			files = append(files, e.Pos.File)
		}
	}
	if len(order) == 0 {
		return part{}
	}
	var lanes []report.Lane
	for _, a := range order {
		finishLane(byFrom[a])
		lanes = append(lanes, *byFrom[a])
	}
	return part{title: "ICMP errors", lanes: lanes, files: files}
}
