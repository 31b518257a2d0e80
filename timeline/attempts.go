package timeline

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// selector says which connection attempts a finding is about.
type selector struct {
	servers     []netip.AddrPort // port 0: any port of the address
	clients     []netip.Addr
	clientPorts []uint16
	node        string
}

func (s *selector) empty() bool {
	return len(s.servers) == 0 && len(s.clients) == 0 && len(s.clientPorts) == 0
}

// addServer adds an address, with or without a port, as a server.
func (s *selector) addServer(text string) {
	if ap, a, ok := leadingEndpoint(text); ok {
		if !ap.IsValid() {
			ap = netip.AddrPortFrom(a, 0)
		}
		if !slices.Contains(s.servers, ap) {
			s.servers = append(s.servers, ap)
		}
	}
}

// addClient adds the address text starts with as a client.
func (s *selector) addClient(text string) {
	if _, a, ok := leadingEndpoint(text); ok && !slices.Contains(s.clients, a) {
		s.clients = append(s.clients, a)
	}
}

func (s *selector) server(ap netip.AddrPort) bool {
	for _, sv := range s.servers {
		if sv.Addr() == ap.Addr() && (sv.Port() == 0 || sv.Port() == ap.Port()) {
			return true
		}
	}
	return false
}

// match reports whether the selector takes a.
func (s *selector) match(a *model.Attempt) bool {
	if s.node != "" && a.Node != "" && a.Node != s.node {
		return false
	}
	if len(s.servers) > 0 && !s.server(a.Server) {
		return false
	}
	if len(s.clients) > 0 && !slices.Contains(s.clients, a.Client.Addr()) {
		return false
	}
	if len(s.clientPorts) > 0 && !slices.Contains(s.clientPorts, a.Client.Port()) {
		return false
	}
	return true
}

// attemptSelector reads which attempts f is about from its subject and
// facts, as its rule's plot p selects them (see the package doc).
func attemptSelector(f *analyzer.Finding, p *analyzer.Plot) selector {
	var s selector
	s.node = f.Subject["node"]
	servers, clients, port := p.Servers, p.Clients, p.ServerPort
	if len(servers) == 0 && len(clients) == 0 && len(p.ClientPorts) == 0 {
		servers = []analyzer.Selector{analyzer.InSubject("address"), analyzer.InSubject("vip"), analyzer.InSubject("backend")}
		clients = []analyzer.Selector{analyzer.InSubject("client")}
		port = &analyzer.Selector{Subject: "port"}
	}
	for _, sel := range servers {
		for _, v := range values(f, sel) {
			s.addServer(v)
		}
	}
	for _, sel := range clients {
		for _, v := range values(f, sel) {
			s.addClient(v)
		}
	}
	for _, sel := range p.ClientPorts {
		for _, v := range values(f, sel) {
			if n, err := strconv.ParseUint(v, 10, 16); err == nil {
				s.clientPorts = append(s.clientPorts, uint16(n))
			}
		}
	}
	if port != nil {
		if ps := values(f, *port); len(ps) == 1 {
			if n, err := strconv.ParseUint(ps[0], 10, 16); err == nil {
				for i, sv := range s.servers {
					if sv.Port() == 0 {
						s.servers[i] = netip.AddrPortFrom(sv.Addr(), uint16(n))
					}
				}
			}
		}
	}
	return s
}

// cites reports whether any packet of a is at a position of cited.
func cites(a *model.Attempt, cited map[posKey]bool) bool {
	if len(cited) == 0 {
		return false
	}
	if cited[keyOf(a.Pos)] {
		return true
	}
	for _, segs := range [][]model.Seg{a.SYN, a.SYNACK, a.ClientRST, a.ServerRST} {
		for _, s := range segs {
			if cited[keyOf(a.SegPos(s))] {
				return true
			}
		}
	}
	for _, s := range []*model.Seg{a.FirstAck, a.ClientFIN, a.ServerFIN} {
		if s != nil && cited[keyOf(a.SegPos(*s))] {
			return true
		}
	}
	return false
}

// attempts draws the connection attempts f is about, one lane per server.
func (b *builder) attempts(f *analyzer.Finding, cited map[posKey]bool) part {
	sel := attemptSelector(f, b.plot(f.Rule))
	// Without a server, client or port in the subject or facts, the
	// servers of the attempts the evidence cites.
	if sel.empty() {
		for i := range b.snap.Attempts {
			if a := &b.snap.Attempts[i]; cites(a, cited) && !sel.server(a.Server) {
				sel.servers = append(sel.servers, a.Server)
			}
		}
		if sel.empty() {
			return part{}
		}
	}
	// The attempts of each server first, their events after: a lane
	// folded (see finishLane) needs no label per attempt.
	byServer := map[netip.AddrPort][]*model.Attempt{}
	lanes := map[netip.AddrPort]*report.Lane{}
	var order []netip.AddrPort
	lane := func(ap netip.AddrPort) *report.Lane {
		l := lanes[ap]
		if l == nil {
			l = &report.Lane{Name: laneName(ap)}
			lanes[ap] = l
			order = append(order, ap)
		}
		return l
	}
	var files []string
	for i := range b.snap.Attempts {
		if i&0xffff == 0xffff && b.ctx.Err() != nil {
			return part{}
		}
		a := &b.snap.Attempts[i]
		if !sel.match(a) && !(cites(a, cited) && sel.matchNode(a)) {
			continue
		}
		lane(a.Server)
		byServer[a.Server] = append(byServer[a.Server], a)
		if !slices.Contains(files, a.Pos.File) {
			files = append(files, a.Pos.File)
		}
	}
	for ap, as := range byServer {
		l := lanes[ap]
		labelled := len(as) <= MaxLaneEvents
		for _, a := range as {
			l.Events = append(l.Events, attemptEvent(a, labelled))
		}
	}
	if len(sel.clientPorts) == 0 {
		for _, st := range b.snap.EndpointStats {
			if !b.statsMatch(&sel, &st) {
				continue
			}
			l := lane(st.Server)
			l.Events = append(l.Events, report.Event{Time: st.First, End: st.Last, Kind: outcomeKind(st.Outcome), Count: st.Attempts,
				Label: fmt.Sprintf("%d %s attempts from %s to %s (counted, not kept one by one)", st.Attempts,
					outcomeWords(st.Outcome), st.First.UTC().Format("15:04:05.000"), st.Last.UTC().Format("15:04:05.000")),
				Pos: model.Pos{File: st.File}})
			if !slices.Contains(files, st.File) {
				files = append(files, st.File)
			}
		}
	}
	if len(order) == 0 {
		return part{}
	}
	for _, ap := range order {
		finishLane(lanes[ap])
	}
	// The lanes with the most failures first, then by address and port
	// (10.0.0.1:2 before 10.0.0.1:10).
	slices.SortStableFunc(order, func(x, y netip.AddrPort) int {
		return cmp.Or(cmp.Compare(failures(*lanes[y]), failures(*lanes[x])), x.Compare(y))
	})
	out := make([]report.Lane, 0, len(order))
	for _, ap := range order {
		out = append(out, *lanes[ap])
	}
	title := "Connection attempts to " + out[0].Name + " by outcome"
	if len(out) > MaxLanes {
		title = fmt.Sprintf("Connection attempts to the %d servers with the most failures (of %d) by outcome", MaxLanes, len(out))
		out = out[:MaxLanes]
	} else if len(out) > 1 {
		title = fmt.Sprintf("Connection attempts to %d servers by outcome", len(out))
	}
	if len(sel.clientPorts) > 0 {
		title = "Connection attempts from source ports that are allocated NodePorts, by outcome"
	}
	return part{title: title, lanes: out, files: files}
}

// matchNode reports whether a is on the selector's node (or either is
// unknown).
func (s *selector) matchNode(a *model.Attempt) bool {
	return s.node == "" || a.Node == "" || a.Node == s.node
}

// statsMatch reports whether the attempts st counts are among those sel
// takes.
func (b *builder) statsMatch(sel *selector, st *model.EndpointStats) bool {
	if sel.node != "" && st.Node != "" && st.Node != sel.node {
		return false
	}
	if len(sel.servers) == 0 || !sel.server(st.Server) && !(st.Server.Port() == 0 && sel.serverAddr(st.Server.Addr())) {
		return false
	}
	if len(sel.clients) > 0 {
		return slices.ContainsFunc(st.ClientAddrs, func(a netip.Addr) bool { return slices.Contains(sel.clients, a) })
	}
	return true
}

func (s *selector) serverAddr(a netip.Addr) bool {
	return slices.ContainsFunc(s.servers, func(sv netip.AddrPort) bool { return sv.Addr() == a })
}

// laneName names a server's lane: "10.244.1.7:8080", or the address
// alone for the attempts to many ports of it.
func laneName(ap netip.AddrPort) string {
	if ap.Port() == 0 {
		return ap.Addr().String()
	}
	return ap.String()
}

// failures counts the failed and reset attempts of a lane.
func failures(l report.Lane) int {
	n := 0
	for _, e := range l.Events {
		if e.Kind == report.EventFailed || e.Kind == report.EventReset {
			n += max(e.Count, 1)
		}
	}
	return n
}

// attemptEvent is one attempt on its server's lane; labelled says
// whether it is labelled (an event to be folded is not).
func attemptEvent(a *model.Attempt, labelled bool) report.Event {
	t := a.Start
	if len(a.SYN) > 0 && !a.SYN[0].Time.IsZero() {
		t = a.SYN[0].Time
	}
	if !labelled {
		return report.Event{Time: t, Kind: outcomeKind(a.Outcome), Count: 1, Pos: a.Pos}
	}
	label := fmt.Sprintf("%s → %s: %s", a.Client, a.Server, outcomeWords(a.Outcome))
	switch n := a.SYNRetransmissions(); {
	case n == 1:
		label += ", SYN sent 1 more time"
	case n > 1:
		label += fmt.Sprintf(", SYN sent %d more times", n)
	}
	if a.ICMP {
		label += ", answered by an ICMP error"
	}
	return report.Event{Time: t, Kind: outcomeKind(a.Outcome), Label: label, Count: 1, Pos: a.Pos}
}

// outcomeKind is the event kind of an outcome.
func outcomeKind(o model.Outcome) string {
	switch o {
	case model.OutcomeEstablished:
		return report.EventEstablished
	case model.OutcomeRefused, model.OutcomeSynAckClientRST, model.OutcomeSynAckServerRST, model.OutcomeSynClientRST:
		return report.EventReset
	case model.OutcomeUnanswered, model.OutcomeSynAckNoAck:
		return report.EventFailed
	}
	return report.EventInfo
}

// outcomeWords says an outcome in words.
func outcomeWords(o model.Outcome) string {
	switch o {
	case model.OutcomeEstablished:
		return "established"
	case model.OutcomeSynAckClientRST:
		return "SYN/ACK answered by client RST"
	case model.OutcomeSynAckServerRST:
		return "reset by the server after its SYN/ACK"
	case model.OutcomeSynAckNoAck:
		return "SYN/ACK never acknowledged"
	case model.OutcomeRefused:
		return "refused (RST)"
	case model.OutcomeSynClientRST:
		return "abandoned by the client (RST)"
	case model.OutcomeUnanswered:
		return "unanswered"
	case model.OutcomeClientOnly:
		return "only the client's packets seen"
	case model.OutcomeSynAckOnly:
		return "SYN/ACK without its SYN"
	case model.OutcomeMidstream:
		return "seen from mid-connection"
	}
	return string(o)
}
