package facts

import (
	"net/netip"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// frameKey locates a packet: its capture file and its frame (or, for
// pasted text, its line).
type frameKey struct {
	file string
	n    int
}

// AttemptIndex indexes the captures' connection attempts.
type AttemptIndex struct {
	at       map[frameKey]*model.Attempt
	answered map[frameKey]bool // attempts an ICMP error quotes
	synOnly  map[string]bool   // captures that keep only some TCP flags
	failedTo map[netip.AddrPort][]*model.Attempt
	counted  map[netip.AddrPort]int // failed attempts counted, not kept (summary mode)
}

// Attempts indexes the captures' connection attempts: by first frame, by
// server for the failed ones, and those an ICMP error answers.
var Attempts = &analyzer.Fact[*AttemptIndex]{
	Name: "attempts",
	Doc: "the captures' connection attempts by first frame, the failed ones by server, those an ICMP error answers, " +
		"and the captures filtered on TCP flags",
	Compute: func(fs *analyzer.FactSet) *AttemptIndex {
		s := fs.Snapshot()
		x := &AttemptIndex{at: map[frameKey]*model.Attempt{}, answered: map[frameKey]bool{}, synOnly: map[string]bool{},
			failedTo: map[netip.AddrPort][]*model.Attempt{}, counted: map[netip.AddrPort]int{}}
		for _, c := range s.Captures {
			if strings.Contains(c.Command, "tcpflags") {
				x.synOnly[c.File] = true
			}
		}
		for _, ev := range s.ICMP {
			if ev.AttemptFrame != 0 {
				x.answered[frameKey{ev.Pos.File, ev.AttemptFrame}] = true
			}
		}
		for i := range s.Attempts {
			a := &s.Attempts[i]
			x.at[frameKey{a.Pos.File, a.Pos.Frame + a.Pos.Line}] = a
			if a.Outcome.Failed() {
				x.failedTo[a.Server] = append(x.failedTo[a.Server], a)
			}
		}
		for _, st := range s.EndpointStats {
			if st.Outcome.Failed() {
				x.counted[st.Server] += st.Attempts
			}
		}
		return x
	},
}

// At returns the attempt whose first packet is frame (or line) n of file,
// nil when none is.
func (x *AttemptIndex) At(file string, n int) *model.Attempt { return x.at[frameKey{file, n}] }

// AnsweredByICMP reports whether an ICMP error quotes the attempt: it was
// answered, if not by the server.
func (x *AttemptIndex) AnsweredByICMP(a *model.Attempt) bool {
	return a.ICMP || x.answered[frameKey{a.Pos.File, a.Pos.Frame + a.Pos.Line}]
}

// SYNOnly reports whether the capture's command or filter keeps only some
// TCP flags ('tcp[tcpflags] ...'), so that missing replies prove nothing.
func (x *AttemptIndex) SYNOnly(file string) bool { return x.synOnly[file] }

// FailedTo returns the failed attempts to server kept one by one, and how
// many more a capture read in summary mode counted.
func (x *AttemptIndex) FailedTo(server netip.AddrPort) ([]*model.Attempt, int) {
	return x.failedTo[server], x.counted[server]
}

// FailGroup gathers the failed attempts of one outcome to one server
// endpoint seen on one node.
type FailGroup struct {
	Node     string
	Server   netip.AddrPort
	Attempts []*model.Attempt // kept one by one
	N        int              // with those counted only (summary mode)
	Clients  []string         // client addresses, in order of appearance
	More     bool             // clients beyond those listed
	Retx     int              // SYN retransmissions
	// First and Last are the times of the first and last attempt, zero
	// when none has times.
	First, Last time.Time
	// HostPorts are the ports of a host's counters (Server's port is 0): a
	// capture read in summary mode counted a scan's later ports together.
	HostPorts []uint16

	seen    map[string]bool
	spanned bool // First and Last are set
}

func newFailGroup(node string, srv netip.AddrPort) *FailGroup {
	return &FailGroup{Node: node, Server: srv, seen: map[string]bool{}}
}

func (g *FailGroup) addClient(c string) {
	if !g.seen[c] {
		g.seen[c] = true
		g.Clients = append(g.Clients, c)
	}
}

func (g *FailGroup) span(first, last time.Time) {
	// Evidence without times (tcpdump -t) leaves them zero: such an
	// attempt spans nothing. Times of pasted text without dates count
	// from year 0, before the zero Time: the first span sets both ends.
	if first.IsZero() || last.IsZero() {
		return
	}
	if !g.spanned || first.Before(g.First) {
		g.First = first
	}
	if !g.spanned || last.After(g.Last) {
		g.Last = last
	}
	g.spanned = true
}

// MergeFailGroups returns one group of the attempts of gs (a host's many
// ports, a port's many hosts), for node and srv.
func MergeFailGroups(node string, srv netip.AddrPort, gs []*FailGroup) *FailGroup {
	m := newFailGroup(node, srv)
	for _, g := range gs {
		m.N += g.N
		m.Retx += g.Retx
		m.More = m.More || g.More
		for _, c := range g.Clients {
			m.addClient(c)
		}
		m.span(g.First, g.Last)
	}
	return m
}

// FailGroups are the failed attempts grouped per node and server
// endpoint, by outcome.
type FailGroups struct {
	byOutcome map[model.Outcome][]*FailGroup
}

// Of returns the groups of outcome, in order of their first attempt (the
// attempts kept, then those counted).
func (f *FailGroups) Of(outcome model.Outcome) []*FailGroup { return f.byOutcome[outcome] }

// answeredAfterNAT reports whether a is a connection as the client sent it
// whose translated copy the server answered (see NATPairs): its SYN was not
// lost, its reply went elsewhere.
func answeredAfterNAT(nat *NATPairIndex, a *model.Attempt) bool {
	p, ok := nat.Before(a)
	return ok && (len(p.After.SYNACK) > 0 || len(p.After.ServerRST) > 0)
}

// FailedAttempts groups the unanswered and the refused attempts per node
// and server endpoint, leaving out the attempts an ICMP error answers, those
// whose translated copy was answered (NATPairs), the captures that keep
// only some TCP flags, and the unanswered attempts a cut capture ends
// before a reply was due (NotYetDue).
var FailedAttempts = &analyzer.Fact[*FailGroups]{
	Name: "failed-attempts",
	Doc: "the captures' unanswered and refused connection attempts grouped per node and server endpoint, " +
		"those an ICMP error answers or whose translated copy was answered left out, and those a cut capture ends before a reply was due; " +
		"the attempts counted in summary mode included",
	Compute: func(fs *analyzer.FactSet) *FailGroups {
		s := fs.Snapshot()
		idx := Attempts.Get(fs)
		out := &FailGroups{byOutcome: map[model.Outcome][]*FailGroup{}}
		type key struct {
			outcome model.Outcome
			node    string
			srv     netip.AddrPort
		}
		byKey := map[key]*FailGroup{}
		groupOf := func(outcome model.Outcome, node string, srv netip.AddrPort) *FailGroup {
			k := key{outcome, node, srv}
			g := byKey[k]
			if g == nil {
				g = newFailGroup(node, srv)
				byKey[k] = g
				out.byOutcome[outcome] = append(out.byOutcome[outcome], g)
			}
			return g
		}
		grouped := func(o model.Outcome) bool { return o == model.OutcomeUnanswered || o == model.OutcomeRefused }
		nat := NATPairs.Get(fs)
		for i := range s.Attempts {
			a := &s.Attempts[i]
			if !grouped(a.Outcome) || idx.SYNOnly(a.Pos.File) || idx.AnsweredByICMP(a) || answeredAfterNAT(nat, a) {
				continue
			}
			if a.Outcome == model.OutcomeUnanswered && NotYetDue(s, a.Pos.File, a.Start) {
				continue // the capture was cut before a reply was due
			}
			g := groupOf(a.Outcome, a.Node, a.Server)
			g.Attempts = append(g.Attempts, a)
			g.N++
			g.addClient(a.Client.Addr().String())
			g.Retx += a.SYNRetransmissions()
			g.span(a.Start, a.Start)
		}
		// Attempts a capture read in summary mode counted without keeping
		// them (never those an ICMP error answers).
		for i := range s.EndpointStats {
			st := &s.EndpointStats[i]
			if !grouped(st.Outcome) || st.Attempts == 0 || idx.SYNOnly(st.File) {
				continue
			}
			g := groupOf(st.Outcome, st.Node, st.Server)
			g.HostPorts = append(g.HostPorts, st.Ports...)
			g.N += st.Attempts
			for _, c := range st.ClientAddrs {
				g.addClient(c.String())
			}
			g.More = g.More || st.Clients > len(st.ClientAddrs)
			g.Retx += st.SYNRetx
			g.span(st.First, st.Last)
		}
		return out
	},
}
