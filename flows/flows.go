// Package flows turns the TCP connection attempts netmortem reads from
// captures into a Zeek-like connection table, filtered by host, port, state
// and time, with a summary per server endpoint: how many attempts it got,
// how many were established, refused, unanswered or reset, and its median
// time to SYN/ACK.
package flows

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
)

// Filter selects attempts. The zero Filter selects all of them.
type Filter struct {
	// Hosts keeps attempts with one of these addresses as client or server.
	Hosts []netip.Addr
	// Ports keeps attempts with one of these ports as client or server port.
	Ports []uint16
	// States keeps attempts whose outcome (established, refused, ...) or
	// Zeek conn_state (S0, REJ, RSTO ...) is one of these.
	States []string
	// Since and Until keep attempts that started in [Since, Until). An
	// attempt without a time (text pasted from tcpdump -t) is in no
	// such window: either of them leaves it out. So is an attempt timed
	// in year 0 (text with times of day, as tcpdump prints them by
	// default, or with times counted from its first packet), where a
	// bound has a date, and the other way round.
	Since, Until time.Time
}

// ParseFilter builds a Filter from the command line's text values: hosts
// as IP addresses, ports as numbers, states as outcome names or Zeek
// states, times as RFC 3339 or as an offset from the capture's start
// ("+1m30s"), resolved later by Table.
func ParseFilter(hosts, ports, states []string) (Filter, error) {
	var f Filter
	for _, h := range hosts {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return f, fmt.Errorf("--host %q: %w", h, err)
		}
		f.Hosts = append(f.Hosts, a.Unmap())
	}
	for _, p := range ports {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return f, fmt.Errorf("--port %q: not a port number", p)
		}
		f.Ports = append(f.Ports, uint16(n))
	}
	for _, s := range states {
		if !knownState(s) {
			return f, fmt.Errorf("--state %q: not an outcome (%s) or a Zeek state (%s)", s,
				strings.Join(outcomeNames(), ", "), strings.Join(zeekStates, ", "))
		}
		f.States = append(f.States, s)
	}
	return f, nil
}

var zeekStates = []string{"S0", "S1", "SF", "REJ", "S2", "S3", "RSTO", "RSTR", "RSTOS0", "RSTRH", "SH", "SHR", "OTH"}

// Outcomes lists every outcome in the order the tables use.
var Outcomes = []model.Outcome{
	model.OutcomeEstablished, model.OutcomeRefused, model.OutcomeUnanswered,
	model.OutcomeSynAckClientRST, model.OutcomeSynAckServerRST, model.OutcomeSynAckNoAck,
	model.OutcomeSynClientRST, model.OutcomeClientOnly, model.OutcomeSynAckOnly,
	model.OutcomeMidstream, model.OutcomeOther,
}

func outcomeNames() []string {
	out := make([]string, len(Outcomes))
	for i, o := range Outcomes {
		out[i] = string(o)
	}
	return out
}

func knownState(s string) bool {
	return slices.Contains(outcomeNames(), s) || slices.Contains(zeekStates, s)
}

// Match reports whether a passes the filter (a nil a does not).
func (f *Filter) Match(a *model.Attempt) bool {
	return a != nil && f.match(a.Client, a.Server, a.Outcome, a.ConnState, a.Start)
}

// MatchRow reports whether the attempt whose row is r passes the filter
// (r.Attempt, when it is set).
func (f *Filter) MatchRow(r *model.Row) bool {
	if r.Attempt != nil {
		return f.Match(r.Attempt)
	}
	return f.match(r.Client, r.Server, r.Outcome, r.ConnState, r.Start)
}

// none reports whether f has no test: every attempt passes it, with
// or without a time (windowMiss places every one).
func (f *Filter) none() bool {
	return len(f.Hosts) == 0 && len(f.Ports) == 0 && len(f.States) == 0 && f.Since.IsZero() && f.Until.IsZero()
}

// match reports whether an attempt from client to server, of outcome and
// Zeek state state, that started at start, passes the filter.
func (f *Filter) match(client, server netip.AddrPort, outcome model.Outcome, state string, start time.Time) bool {
	if len(f.Hosts) > 0 && !slices.Contains(f.Hosts, client.Addr().Unmap()) && !slices.Contains(f.Hosts, server.Addr().Unmap()) {
		return false
	}
	if len(f.Ports) > 0 && !slices.Contains(f.Ports, client.Port()) && !slices.Contains(f.Ports, server.Port()) {
		return false
	}
	if len(f.States) > 0 && !slices.Contains(f.States, string(outcome)) && !slices.Contains(f.States, state) {
		return false
	}
	if f.windowMiss(start) != placed {
		return false
	}
	if !f.Since.IsZero() && start.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !start.Before(f.Until) {
		return false
	}
	return true
}

// Endpoint summarizes the attempts to one server address and port.
type Endpoint struct {
	Node        string         `json:"node,omitempty"`
	Server      netip.AddrPort `json:"server"`
	Attempts    int            `json:"attempts"`
	Clients     int            `json:"clients"` // distinct client addresses
	Established int            `json:"established"`
	Refused     int            `json:"refused"`
	Unanswered  int            `json:"unanswered"`
	// Reset counts attempts reset during the handshake (by the client after
	// the SYN/ACK, by the server after its SYN/ACK, or by the client before
	// any answer).
	Reset int `json:"reset"`
	// ResetEstablished counts established connections that ended with an RST.
	ResetEstablished int `json:"reset_established"`
	// SYNRetx counts SYN retransmissions, leaving out copies of a SYN:
	// one sent or seen again within model.MinSYNRetransmission, as on
	// another interface (see model.Attempt.SYNRetransmissions).
	SYNRetx int `json:"syn_retx"`
	// SYNACKTimed counts the attempts whose time from first SYN to first
	// SYN/ACK is known: both were seen, with their times.
	SYNACKTimed int `json:"synack_timed"`
	// MedianSYNACK is the median time from first SYN to first SYN/ACK over
	// the SYNACKTimed attempts; 0 when there are none.
	MedianSYNACK time.Duration `json:"-"`
	// MedianSYNACKMillis is MedianSYNACK in milliseconds, for JSON, which
	// leaves it out when SYNACKTimed is 0: no median, rather than one of 0.
	MedianSYNACKMillis float64 `json:"median_synack_ms"`
}

// MarshalJSON encodes e with its fields' names, leaving median_synack_ms
// out when no attempt's time to SYN/ACK is known.
func (e Endpoint) MarshalJSON() ([]byte, error) {
	type fields Endpoint // without the method
	v := struct {
		fields
		MedianSYNACKMillis *float64 `json:"median_synack_ms,omitempty"`
	}{fields: fields(e)}
	if e.SYNACKTimed > 0 {
		v.MedianSYNACKMillis = &e.MedianSYNACKMillis
	}
	return json.Marshal(v)
}

// Table is the connection table of a snapshot's captures.
type Table struct {
	// Summary adds up the counters of every capture read, with the names
	// and counting rules of the tshark truth files (see docs/capture.md).
	// It is not filtered.
	Summary model.Counts `json:"summary"`
	// Captures lists each capture with its own counters.
	Captures []model.CaptureInfo `json:"captures"`
	// Endpoints summarizes the selected attempts per server endpoint,
	// busiest first.
	Endpoints []Endpoint `json:"endpoints"`
	// Attempts are the selected attempts in capture order. When every
	// attempt is selected this is the snapshot's own slice, not a copy.
	Attempts []model.Attempt `json:"attempts"`
	// synCopies counts the SYN copies of the attempts selected
	// (Attempt.SYNCopies), for a table built by a Builder, which does not
	// keep them.
	synCopies int
	unplaced  unplacedCount
}

// Untimed counts the attempts the filter's time window (Since, Until)
// left out of the table for having no time (text pasted without times,
// as tcpdump -t prints it, or a first packet read without its corrupt
// time) though they pass its other tests, and returns
// where the first one is: an attempt without a time is in no window. A
// caller says so in one warning.
func (t *Table) Untimed() (n int, first model.Pos) {
	if t == nil {
		return 0, first
	}
	return t.unplaced.count(missTime)
}

// Undated is Untimed for the attempts left out because their times and
// the window's differ in having a date: times in year 0 (of day, or
// counted from a text's first packet) against a bound with a date, or
// the other way round (dated says which). Neither can be placed in the
// other's days.
func (t *Table) Undated() (n int, first model.Pos, dated bool) {
	if t == nil {
		return 0, first, false
	}
	return t.unplaced.undated()
}

// Build makes the table of snap's attempts that pass f. It lists the
// attempts kept one by one: a snapshot read with
// parse.Options.Summary enabled counts most of them in
// Snapshot.EndpointStats instead, so read captures without it (as
// `netmortem flows` does) to list every attempt. A nil snap gives an
// empty table.
func Build(snap *model.Snapshot, f Filter) *Table {
	if snap == nil {
		return NewBuilder(f).Table(nil)
	}
	b := NewBuilder(f)
	// Attempts are large and a capture holds many: the table shares the
	// snapshot's slice when every attempt passes, and is allocated once
	// otherwise.
	n := 0
	for i := range snap.Attempts {
		if f.Match(&snap.Attempts[i]) {
			n++
		}
	}
	b.keep = n != len(snap.Attempts)
	if b.keep && n > 0 {
		b.attempts = make([]model.Attempt, 0, n)
	}
	for i := range snap.Attempts {
		b.Add(&snap.Attempts[i])
	}
	if n == len(snap.Attempts) && n > 0 {
		b.attempts = snap.Attempts
	}
	return b.Table(snap.Captures)
}

// A Builder makes a Table from attempts given one at a time, as they
// are read (parse.Options.EachAttempt), without keeping them: its Table
// has the summary, the captures and the endpoints of Build's, and no
// attempts. It holds, per server endpoint, its counters, its clients'
// addresses and its times to SYN/ACK.
type Builder struct {
	filter   Filter
	keep     bool // the attempts added are kept (Build)
	attempts []model.Attempt
	eps      []Endpoint
	idx      map[endpointKey]int
	seen     []endpointSeen // per endpoint, as eps
	last     endpointKey    // the endpoint counted last, eps[lastIdx], when len(eps) > 0
	lastIdx  int
	copies   int // SYN copies of the attempts added (Attempt.SYNCopies)
	ranges   rangeCount
	unplaced unplacedCount
}

type endpointKey struct {
	node   string
	server netip.AddrPort
}

// endpointSeen is what a Builder holds of an endpoint's attempts besides
// its counters: its clients' addresses, the last one counted apart, and
// its times to SYN/ACK.
type endpointSeen struct {
	clients    map[netip.Addr]bool
	lastClient netip.Addr
	rtts       []time.Duration
}

// NewBuilder returns a Builder of the table of the attempts that pass f,
// whose times must be absolute (Since and Until resolved).
func NewBuilder(f Filter) *Builder {
	return &Builder{filter: f, eps: []Endpoint{}, idx: map[endpointKey]int{}}
}

// Add counts a, if it passes the filter, and reports whether it does.
func (b *Builder) Add(a *model.Attempt) bool {
	if !b.filter.Match(a) {
		b.unplaced.note(&b.filter, a.Pos, a.Client, a.Server, a.Outcome, a.ConnState, a.Start)
		return false
	}
	if b.keep {
		b.attempts = append(b.attempts, *a)
	}
	b.ranges.note(a)
	rtt, timed := a.TimeToSYNACK()
	b.count(a.Node, a.Server, a.Client.Addr(), a.Outcome, a.SYNRetransmissions(), a.SYNCopies(),
		len(a.ClientRST) > 0 || len(a.ServerRST) > 0, rtt, timed)
	return true
}

// AddRow adds the attempt whose row is r, as Add adds it (r.Attempt,
// when it is set), and reports whether it passes the filter: a Builder
// takes the rows a capture's tracker hands on (parse.Options.EachRow) as
// it takes their attempts. A row made without its attempt has its start
// counted by OutOfRange, the only time it holds.
func (b *Builder) AddRow(r *model.Row) bool {
	if r.Attempt != nil {
		return b.Add(r.Attempt)
	}
	if !b.filter.MatchRow(r) {
		b.unplaced.note(&b.filter, r.Pos, r.Client, r.Server, r.Outcome, r.ConnState, r.Start)
		return false
	}
	b.ranges.noteRow(r)
	copies := 0
	if r.SYN.N > 0 {
		copies = r.SYN.N - 1 - r.SYNRetransmissions
	}
	b.count(r.Node, r.Server, r.Client.Addr(), r.Outcome, r.SYNRetransmissions, copies, r.RST.N > 0,
		r.TimeToSYNACK, r.SYNACKTimed)
	return true
}

// count counts an attempt added in its endpoint: on node, from client to
// server, of outcome, with synRetx SYN retransmissions and copies SYN
// copies, reset when it holds an RST, and its time to SYN/ACK rtt when
// timed.
func (b *Builder) count(node string, server netip.AddrPort, client netip.Addr, outcome model.Outcome,
	synRetx, copies int, reset bool, rtt time.Duration, timed bool) {
	b.copies += copies
	// A capture's attempts come in runs to one endpoint, from one
	// client: the last ones are counted without a lookup.
	k := endpointKey{node, server}
	j := b.lastIdx
	if len(b.eps) == 0 || k != b.last {
		var ok bool
		if j, ok = b.idx[k]; !ok {
			j = len(b.eps)
			b.idx[k] = j
			b.eps = append(b.eps, Endpoint{Node: node, Server: server})
			b.seen = append(b.seen, endpointSeen{clients: map[netip.Addr]bool{client: true}, lastClient: client})
		}
		b.last, b.lastIdx = k, j
	}
	e, seen := &b.eps[j], &b.seen[j]
	e.Attempts++
	if client != seen.lastClient {
		seen.clients[client] = true
		seen.lastClient = client
	}
	e.SYNRetx += synRetx
	switch outcome {
	case model.OutcomeEstablished:
		e.Established++
		if reset {
			e.ResetEstablished++
		}
	case model.OutcomeRefused:
		e.Refused++
	case model.OutcomeUnanswered:
		e.Unanswered++
	case model.OutcomeSynAckClientRST, model.OutcomeSynAckServerRST, model.OutcomeSynClientRST:
		e.Reset++
	}
	if timed {
		e.SYNACKTimed++
		seen.rtts = append(seen.rtts, rtt)
	}
}

// Table returns the table of the attempts added from captures: their
// summary and endpoints, and the attempts when Build keeps them.
func (b *Builder) Table(captures []model.CaptureInfo) *Table {
	t := &Table{Captures: []model.CaptureInfo{}, Endpoints: slices.Clone(b.eps), Attempts: []model.Attempt{}, synCopies: b.copies,
		unplaced: b.unplaced}
	if b.attempts != nil {
		t.Attempts = b.attempts
	}
	for _, c := range captures {
		t.Captures = append(t.Captures, c)
		t.Summary = addCounts(t.Summary, c.Counts)
	}
	for j := range t.Endpoints {
		e := &t.Endpoints[j]
		e.Clients = len(b.seen[j].clients)
		if ds := b.seen[j].rtts; len(ds) > 0 {
			slices.Sort(ds)
			e.MedianSYNACK = median(ds)
			e.MedianSYNACKMillis = float64(e.MedianSYNACK.Microseconds()) / 1000
		}
	}
	slices.SortStableFunc(t.Endpoints, func(a, b Endpoint) int {
		if c := cmp.Compare(b.Attempts, a.Attempts); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Node, b.Node); c != 0 {
			return c
		}
		return a.Server.Compare(b.Server)
	})
	return t
}

func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func addCounts(a, b model.Counts) model.Counts {
	a.Packets += b.Packets
	a.TCPPackets += b.TCPPackets
	a.SYNOnly += b.SYNOnly
	a.SYNACK += b.SYNACK
	a.RST += b.RST
	a.TCPStreams += b.TCPStreams
	a.Established += b.Established
	a.Refused += b.Refused
	a.Unanswered += b.Unanswered
	a.SYNACKClientRST += b.SYNACKClientRST
	a.SYNRetx += b.SYNRetx
	a.ICMPUnreach += b.ICMPUnreach
	a.ICMPRedirect += b.ICMPRedirect
	a.ICMP6Unreach += b.ICMP6Unreach
	a.ICMP6Redirect += b.ICMP6Redirect
	a.ARP += b.ARP
	a.ARPGratuitous += b.ARPGratuitous
	return a
}
