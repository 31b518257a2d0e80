package model

import (
	"math"
	"net/netip"
	"time"
)

// Outcome is how a TCP connection attempt ended. The names and the rules
// that decide them follow the counting rules of the tshark truth files used
// to cross-check netmortem (see docs/capture.md); Zeek's conn_state is given
// for each.
type Outcome string

// The outcomes of a connection attempt.
const (
	// OutcomeEstablished: SYN, SYN/ACK, then an ACK from the client (Zeek S1/SF/RSTO/RSTR...).
	OutcomeEstablished Outcome = "established"
	// OutcomeSynAckClientRST: SYN, SYN/ACK, and the client's next packet is an RST (Zeek RSTO, history ShR).
	OutcomeSynAckClientRST Outcome = "synack_client_rst"
	// OutcomeSynAckServerRST: SYN, SYN/ACK, then an RST from the server, no client ACK (Zeek RSTR).
	OutcomeSynAckServerRST Outcome = "synack_server_rst"
	// OutcomeSynAckNoAck: SYN, SYN/ACK, then nothing from the client (Zeek SH... / S1 without ACK).
	OutcomeSynAckNoAck Outcome = "synack_no_ack"
	// OutcomeRefused: SYN answered by an RST from the server (Zeek REJ).
	OutcomeRefused Outcome = "refused"
	// OutcomeSynClientRST: SYN, then an RST from the client, nothing from the server (Zeek RSTOS0).
	OutcomeSynClientRST Outcome = "syn_client_rst"
	// OutcomeUnanswered: SYN (possibly retransmitted), nothing back (Zeek S0).
	OutcomeUnanswered Outcome = "unanswered"
	// OutcomeClientOnly: SYN then client ACK/data but nothing from the server: a one-sided capture.
	OutcomeClientOnly Outcome = "client_only"
	// OutcomeSynAckOnly: a SYN/ACK without its SYN (capture started late, or backscatter; Zeek SHR).
	OutcomeSynAckOnly Outcome = "synack_only"
	// OutcomeMidstream: no SYN and no SYN/ACK: the capture started mid-connection (Zeek OTH).
	OutcomeMidstream Outcome = "midstream"
	// OutcomeOther: anything else.
	OutcomeOther Outcome = "other"
)

// Failed reports whether the outcome means the connection did not get
// established although the client tried.
func (o Outcome) Failed() bool {
	switch o {
	case OutcomeSynAckClientRST, OutcomeSynAckServerRST, OutcomeSynAckNoAck,
		OutcomeRefused, OutcomeSynClientRST, OutcomeUnanswered:
		return true
	}
	return false
}

// Answered reports whether the server answered the client's SYN, with a
// SYN/ACK or an RST.
func (o Outcome) Answered() bool {
	switch o {
	case OutcomeEstablished, OutcomeSynAckClientRST, OutcomeSynAckServerRST, OutcomeSynAckNoAck, OutcomeRefused:
		return true
	}
	return false
}

// Seg is one packet of interest within an attempt: its frame and time.
type Seg struct {
	Frame int       `json:"frame,omitempty"` // 0 for a line of pasted text (Line)
	Time  time.Time `json:"time,omitzero"`   // zero when the evidence has no times (tcpdump -t)
	// Line is set instead of Frame for packets read from pasted text
	// (tcpdump or tshark output).
	Line int `json:"line,omitempty"`
	// File is set when the packet is in another file than the attempt's
	// first packet: the next file of a rotated capture series.
	File string `json:"file,omitempty"`
}

// Attempt is one TCP connection attempt: a 4-tuple from its first SYN (or
// first packet) until the tuple is reused with a new initial sequence number
// or the capture ends. SYN retransmissions with the same ISN belong to the
// same attempt.
type Attempt struct {
	Node   string         `json:"node,omitempty"`
	Pos    Pos            `json:"pos"` // the capture file and the attempt's first frame
	Client netip.AddrPort `json:"client"`
	Server netip.AddrPort `json:"server"`
	// Outer holds the outer (node) addresses when the flow was seen
	// inside an overlay encapsulation (VXLAN, Geneve, IP-in-IP).
	Outer   *Tuple  `json:"outer,omitempty"`
	Outcome Outcome `json:"outcome"`
	// ConnState is Zeek's conn_state (S0, S1, SF, REJ, RSTO, RSTOS0 ...).
	ConnState string `json:"conn_state,omitempty"`
	// History is Zeek's history string (ShADadFf ...).
	History string `json:"history,omitempty"`

	// Start is the time of the attempt's first packet, End that of its
	// last packet with a time. They are zero when the evidence has no
	// times (text pasted from tcpdump -t), or Start when its first packet
	// was read without its corrupt time, and then left out of JSON.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`

	SYN       []Seg `json:"syn"`                 // SYN-only packets from the client, first then retransmissions
	SYNACK    []Seg `json:"synack"`              // SYN/ACK packets from the server
	ClientRST []Seg `json:"client_rst"`          // RSTs sent by the client
	ServerRST []Seg `json:"server_rst"`          // RSTs sent by the server
	FirstAck  *Seg  `json:"first_ack,omitempty"` // the client's first ACK after the SYN/ACK
	ClientFIN *Seg  `json:"client_fin,omitempty"`
	ServerFIN *Seg  `json:"server_fin,omitempty"`

	// ICMP says an ICMP error (unreachable, redirect, time exceeded ...)
	// quotes the attempt: it was answered, if not by the server.
	ICMP bool `json:"icmp,omitempty"`

	// Reused says the 4-tuple carried an earlier attempt in the same
	// capture: "time-wait" when that one closed less than 60 s before (the
	// side that closed first still holds it in TIME-WAIT), "closed" when
	// longer ago, "open" when it never closed. "" for a first use.
	Reused string `json:"reused,omitempty"`

	Packets     int    `json:"packets"`
	ClientBytes int64  `json:"client_bytes"` // TCP payload bytes
	ServerBytes int64  `json:"server_bytes"`
	ISN         uint32 `json:"isn"` // the client's initial sequence number (from the SYN/ACK's ack when the SYN was not seen)
	// MSS and ServerMSS are the maximum segment size options of the
	// client's SYN and the server's SYN/ACK, 0 when not shown (no option,
	// or a text capture that does not print it).
	MSS       uint16 `json:"mss,omitempty"`
	ServerMSS uint16 `json:"server_mss,omitempty"`

	// ClientData and ServerData size each side's data segments, nil for a
	// side that sent none (see DataSizes).
	ClientData *DataSizes `json:"client_data,omitempty"`
	ServerData *DataSizes `json:"server_data,omitempty"`
}

// DataSizes sizes one side's TCP data segments, for what a path does with
// large packets: segments larger than any the peer acknowledged, sent again
// and again, are what a path that drops large packets (an MTU blackhole)
// shows. Sizes are TCP payload bytes as captured: a capture on the sending
// host sees the segments before segmentation offload splits them.
type DataSizes struct {
	MaxSent  int `json:"max_sent"`  // the largest payload sent
	MaxAcked int `json:"max_acked"` // the largest payload the peer acknowledged whole
	// LargeRetx counts the retransmissions of payloads larger than
	// MaxAcked: never acknowledged at that size. LargeRetxSize is the
	// payload of the first, Retx the first of them (up to 5).
	LargeRetx     int   `json:"large_retx,omitempty"`
	LargeRetxSize int   `json:"large_retx_size,omitempty"`
	Retx          []Seg `json:"retx,omitempty"`
}

// SYNRetransmissions returns how many times the first SYN was retransmitted.
// Copies of one SYN seen on several interfaces of a capture (tcpdump -i any
// on a node whose bridge forwards it: once as it enters, once as it
// leaves) are not retransmissions: a SYN less than MinSYNRetransmission
// after the one before it is such a copy. Without times (tcpdump -t text)
// every repeated SYN counts. The capture's Counts.SYNRetx count copies too,
// as tshark does.
func (a *Attempt) SYNRetransmissions() int {
	if len(a.SYN) == 0 {
		return 0
	}
	return DistinctSegs(a.SYN) - 1
}

// SYNCopies returns how many of the SYNs after the first are copies of the
// one before them seen on another interface (see SYNRetransmissions).
func (a *Attempt) SYNCopies() int {
	if len(a.SYN) == 0 {
		return 0
	}
	return len(a.SYN) - 1 - a.SYNRetransmissions()
}

// DistinctSegs returns how many of segs (one kind, in time order) are not
// copies of the one before them seen on another interface (see
// IsSegmentCopy): the packets sent, not the times a capture saw them.
func DistinctSegs(segs []Seg) int {
	n := 0
	for i := range segs {
		if i == 0 || !IsSegmentCopy(segs[i-1].Time, segs[i].Time) {
			n++
		}
	}
	return n
}

// MinSYNRetransmission is the shortest time between a SYN and its
// retransmission: Linux waits its initial retransmission timeout, a second,
// and no stack retransmits a SYN within this.
const MinSYNRetransmission = 100 * time.Millisecond

// IsSegmentCopy reports whether a SYN seen at t, after one at prev, is a
// copy of it rather than a retransmission: seen on another interface, or
// sent twice, within MinSYNRetransmission.
func IsSegmentCopy(prev, t time.Time) bool {
	if prev.IsZero() || t.IsZero() {
		return false
	}
	return t.Sub(prev) < MinSYNRetransmission
}

// TimeToSYNACK returns the time from the first SYN to the first SYN/ACK, and
// false when either is missing or has no time (pasted text without
// times, a packet read without its corrupt one), or when the time between
// them is past what a time.Duration holds.
func (a *Attempt) TimeToSYNACK() (time.Duration, bool) {
	if len(a.SYN) == 0 || len(a.SYNACK) == 0 {
		return 0, false
	}
	syn, synack := a.SYN[0].Time, a.SYNACK[0].Time
	if syn.IsZero() || synack.IsZero() {
		return 0, false
	}
	d := synack.Sub(syn)
	return d, d != math.MaxInt64 && d != math.MinInt64
}

// Clone returns a copy of a that shares no memory with it: its segments,
// its data sizes (their retransmissions too) and its overlay's outer
// tuple are copied. A function handed lent attempts (parse.Options'
// LendAttempts) keeps one by keeping its Clone.
func (a *Attempt) Clone() Attempt {
	var c Attempt
	a.CloneInto(&c, func(n int) []Seg { return make([]Seg, n) }, func(n int) []DataSizes { return make([]DataSizes, n) })
	return c
}

// CloneInto writes a copy of a into dst, as Clone makes it, taking the
// copies' memory from the caller, once for each kind: segs returns n
// segments, for the copies of a's segments and of its data sizes'
// retransmissions, and sizes n data sizes, for ClientData and ServerData.
// Neither is called for none. Only an overlay's outer tuple (Outer) is
// copied into memory of CloneInto's own.
func (a *Attempt) CloneInto(dst *Attempt, segs func(n int) []Seg, sizes func(n int) []DataSizes) {
	*dst = *a
	n := len(a.SYN) + len(a.SYNACK) + len(a.ClientRST) + len(a.ServerRST)
	for _, g := range [...]*Seg{a.FirstAck, a.ClientFIN, a.ServerFIN} {
		if g != nil {
			n++
		}
	}
	nd := 0
	for _, d := range [...]*DataSizes{a.ClientData, a.ServerData} {
		if d != nil {
			n += len(d.Retx)
			nd++
		}
	}
	var mem []Seg
	if n > 0 {
		mem = segs(n)
	}
	list := func(l []Seg) []Seg {
		if len(l) == 0 {
			return l[:0:0] // nil stays nil; an empty list, empty
		}
		c := mem[:len(l):len(l)]
		copy(c, l)
		mem = mem[len(l):]
		return c
	}
	one := func(g *Seg) *Seg {
		if g == nil {
			return nil
		}
		c := &mem[0]
		*c = *g
		mem = mem[1:]
		return c
	}
	dst.SYN, dst.SYNACK = list(a.SYN), list(a.SYNACK)
	dst.ClientRST, dst.ServerRST = list(a.ClientRST), list(a.ServerRST)
	dst.FirstAck, dst.ClientFIN, dst.ServerFIN = one(a.FirstAck), one(a.ClientFIN), one(a.ServerFIN)
	if a.Outer != nil {
		o := *a.Outer
		dst.Outer = &o
	}
	if nd > 0 {
		ds := sizes(nd)
		for _, d := range [...]**DataSizes{&dst.ClientData, &dst.ServerData} {
			if *d != nil {
				ds[0] = **d
				ds[0].Retx = list(ds[0].Retx)
				*d, ds = &ds[0], ds[1:]
			}
		}
	}
}

// SegPos returns the Pos of a segment of this attempt: the attempt's file
// with the segment's frame (or line, for text captures).
func (a *Attempt) SegPos(s Seg) Pos {
	file := a.Pos.File
	if s.File != "" {
		file = s.File
	}
	return Pos{File: file, Frame: s.Frame, Line: s.Line}
}

// CaptureInfo summarizes one packet capture (or pasted packet text).
type CaptureInfo struct {
	Node     string `json:"node,omitempty"`
	File     string `json:"file"`
	Format   string `json:"format"`    // pcap, pcapng, tcpdump-text, tshark-text
	LinkType string `json:"link_type"` // Ethernet, Linux SLL2 ... (several, comma separated, for pcapng)
	// Command is the capture command or filter when the evidence names it:
	// the tcpdump command line of pasted text, a pcapng interface's filter.
	// A capture filter limits what outcomes can be seen (a SYN-only filter
	// makes every handshake look unacknowledged).
	Command string    `json:"command,omitempty"`
	Packets int       `json:"packets"`
	First   time.Time `json:"first,omitzero"`
	Last    time.Time `json:"last,omitzero"`
	Counts  Counts    `json:"counts"`
}

// Counts are the per-capture counters cross-checked against tshark. The names
// and counting rules are those of the truth files (see docs/capture.md).
type Counts struct {
	Packets         int `json:"packets"`
	TCPPackets      int `json:"tcp_packets"`
	SYNOnly         int `json:"syn_only"`
	SYNACK          int `json:"synack"`
	RST             int `json:"rst"`
	TCPStreams      int `json:"tcp_streams"`
	Established     int `json:"established"`
	Refused         int `json:"refused"`
	Unanswered      int `json:"unanswered"`
	SYNACKClientRST int `json:"synack_client_rst"`
	SYNRetx         int `json:"syn_retx"`
	ICMPUnreach     int `json:"icmp_unreach"`
	ICMPRedirect    int `json:"icmp_redirect"`
	ICMP6Unreach    int `json:"icmp6_unreach"`
	ICMP6Redirect   int `json:"icmp6_redirect"`
	ARP             int `json:"arp"`
	ARPGratuitous   int `json:"arp_gratuitous"`
}

// Sub returns c minus o, counter by counter: what a part of a capture
// added.
func (c Counts) Sub(o Counts) Counts {
	return Counts{
		Packets: c.Packets - o.Packets, TCPPackets: c.TCPPackets - o.TCPPackets, SYNOnly: c.SYNOnly - o.SYNOnly,
		SYNACK: c.SYNACK - o.SYNACK, RST: c.RST - o.RST, TCPStreams: c.TCPStreams - o.TCPStreams,
		Established: c.Established - o.Established, Refused: c.Refused - o.Refused, Unanswered: c.Unanswered - o.Unanswered,
		SYNACKClientRST: c.SYNACKClientRST - o.SYNACKClientRST, SYNRetx: c.SYNRetx - o.SYNRetx,
		ICMPUnreach: c.ICMPUnreach - o.ICMPUnreach, ICMPRedirect: c.ICMPRedirect - o.ICMPRedirect,
		ICMP6Unreach: c.ICMP6Unreach - o.ICMP6Unreach, ICMP6Redirect: c.ICMP6Redirect - o.ICMP6Redirect,
		ARP: c.ARP - o.ARP, ARPGratuitous: c.ARPGratuitous - o.ARPGratuitous,
	}
}

// ICMPEvent is an ICMP or ICMPv6 error (unreachable, redirect, time
// exceeded), with the connection it quotes.
type ICMPEvent struct {
	Node string     `json:"node,omitempty"`
	Pos  Pos        `json:"pos"`
	Time time.Time  `json:"time,omitzero"`
	From netip.Addr `json:"from"` // the router or host that sent the error
	To   netip.Addr `json:"to"`
	V6   bool       `json:"v6,omitempty"`
	Type int        `json:"type"`
	Code int        `json:"code"`
	What string     `json:"what"` // host-unreachable, port-unreachable, admin-prohibited, frag-needed, redirect-host, ttl-exceeded ...
	// Quoted is the header the error quotes: the packet that triggered it.
	Quoted      Tuple  `json:"quoted"`
	QuotedProto string `json:"quoted_proto,omitempty"` // tcp, udp, icmp
	// Gateway is the new next hop of a redirect.
	Gateway netip.Addr `json:"gateway,omitzero"`
	// MTU is the next hop's MTU a fragmentation-needed (Packet Too Big)
	// error gives, 0 when it gives none.
	MTU int `json:"mtu,omitempty"`
	// AttemptFrame is the first frame of the attempt the error answers, 0 if none matched.
	AttemptFrame int `json:"attempt_frame,omitempty"`
	// Copy says the event is the one before it seen again on another
	// interface of the capture, less than CopyWindow later (tcpdump -i any
	// on a node whose bridge forwards it). Counts count it, as tshark
	// does; the rules leave it out.
	Copy bool `json:"copy,omitempty"`
	// Repeats counts the identical errors (same sender, type, code and
	// quoted destination, and for TCP the same quoted source: the same
	// attempt) after this one that a capture read in summary mode did not
	// keep: the event stands for 1+Repeats errors.
	Repeats int `json:"repeats,omitempty"`
}

// CopyWindow is how close two identical ICMP errors or ARP packets of one
// capture must be to be copies of one packet seen on two interfaces: a
// bridge forwards a packet within microseconds, and no host repeats one
// that soon.
const CopyWindow = time.Millisecond

// ARPEvent is one ARP packet (or IPv6 neighbor advertisement) claiming that
// an IP is at a MAC.
type ARPEvent struct {
	Node string     `json:"node,omitempty"`
	Pos  Pos        `json:"pos"`
	Time time.Time  `json:"time,omitzero"`
	Op   string     `json:"op"`  // request, reply, na, ns
	IP   netip.Addr `json:"ip"`  // sender protocol address: the IP being claimed
	MAC  string     `json:"mac"` // sender hardware address
	// Target is the address asked for (request, ns), or the host a reply
	// or a solicited advertisement answers.
	Target     netip.Addr `json:"target,omitzero"`
	Gratuitous bool       `json:"gratuitous,omitempty"`
	// Unanswered is set on a request (or neighbor solicitation) that no
	// host answered: nothing claimed its Target within ARPAnswerWindow,
	// and the capture went on at least that long.
	Unanswered bool `json:"unanswered,omitempty"`
	// Copy says the packet is the one before it seen again on another
	// interface (see ICMPEvent.Copy).
	Copy bool `json:"copy,omitempty"`
	// Repeats counts the identical packets after this one that a capture
	// read in summary mode did not keep (a request repeated shares its
	// Unanswered); packets that change the MAC claiming an address are
	// always kept. LastRepeat is the time of the last of them.
	Repeats    int       `json:"repeats,omitempty"`
	LastRepeat time.Time `json:"last_repeat,omitzero"`
}

// ARPAnswerWindow is how long after an ARP request (or neighbor
// solicitation) a claim of its target counts as the answer: the three
// probes Linux sends a second apart before it gives up on a neighbor.
const ARPAnswerWindow = 3 * time.Second

// MaxClientAddrs bounds EndpointStats.ClientAddrs.
const MaxClientAddrs = 64

// EndpointStats sums up the connection attempts to one server endpoint,
// with one outcome, that a capture read in summary mode did not keep one by
// one: established ones that ended normally (Zeek SF, S1, S2, S3), and
// refused and unanswered ones beyond a sample kept in full as evidence (the
// first 100 to each endpoint, 1,000 to each host). The attempts to an
// endpoint are the kept ones plus these. Other outcomes, attempts an ICMP
// error answers and overlay flows are always kept in full.
type EndpointStats struct {
	Node    string         `json:"node,omitempty"`
	File    string         `json:"file"`
	Server  netip.AddrPort `json:"server"`
	Outcome Outcome        `json:"outcome"`
	// Ports, for a Server whose port is 0, are the ports the attempts
	// went to: a host failing on so many ports (a scan) that the attempts
	// to ports first seen after its sample are counted together.
	Ports    []uint16 `json:"ports,omitempty"`
	Attempts int      `json:"attempts"`
	Clients  int      `json:"clients"` // distinct client addresses (counted up to 65536)
	// ClientAddrs are the first distinct client addresses, up to
	// MaxClientAddrs.
	ClientAddrs []netip.Addr `json:"client_addrs,omitempty"`
	Packets     int          `json:"packets"`
	ClientBytes int64        `json:"client_bytes"`
	ServerBytes int64        `json:"server_bytes"`
	SYNRetx     int          `json:"syn_retx"`
	// MedianSYNACK is the median time from SYN to SYN/ACK, over a sample
	// of at most 1024 attempts.
	MedianSYNACK time.Duration `json:"median_synack_ns"`
	First        time.Time     `json:"first,omitzero"`
	Last         time.Time     `json:"last,omitzero"`
}
