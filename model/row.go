package model

import (
	"net/netip"
	"time"
)

// Row is what a connection table's row shows of an attempt (the CSV and
// table forms of netmortem flows): where it starts, its ends, its outcome,
// the frames of its handshake and what it carried. Attempt.Row works it
// out from an attempt; a capture's tracker works it out straight from the
// connection it followed, without building the attempt, for the
// hundreds of thousands of rows of a large capture (parse.Options'
// EachRow).
//
// A row the tracker cannot work out from nanoseconds since 1970 in UTC
// (an attempt with no time, a clock not in UTC, as pasted text without
// dates can have, a year outside 1678-2262, or times more than a century
// apart) is handed on as its attempt instead (Attempt), for the writer
// to count and clamp its times as it does an attempt's: a writer reads
// the attempt's row then (Attempt.Row).
type Row struct {
	// Attempt, when set, is the row's attempt, and the fields after it
	// are unset: the row is Attempt.Row.
	Attempt *Attempt

	Node    string
	Pos     Pos // the capture file and the attempt's first frame (or line)
	Start   time.Time
	Client  netip.AddrPort
	Server  netip.AddrPort
	Outcome Outcome
	// ConnState and History are Zeek's conn_state and history.
	ConnState string
	History   string
	// SYN, SYNACK and RST are the client's SYNs, the server's SYN/ACKs,
	// and the RSTs (the client's, then the server's).
	SYN, SYNACK, RST SegRefs
	// SYNRetransmissions is Attempt.SYNRetransmissions.
	SYNRetransmissions int
	// TimeToSYNACK is Attempt.TimeToSYNACK, when SYNACKTimed.
	TimeToSYNACK time.Duration
	SYNACKTimed  bool
	Packets      int
	ClientBytes  int64
	ServerBytes  int64
}

// MaxSegRefs is how many segments of a list SegRefs names.
const MaxSegRefs = 4

// SegRefs names the first segments of a list (up to MaxSegRefs) by their
// frames, or by their lines for pasted text, and counts the list's
// segments.
type SegRefs struct {
	N int // the segments of the list
	// Frame and Line are those of the first segments: a Seg's Frame and
	// Line.
	Frame [MaxSegRefs]int
	Line  [MaxSegRefs]int
}

// AddAt is Add for a segment at frame (or line).
func (r *SegRefs) AddAt(frame, line int) {
	if r.N < MaxSegRefs {
		r.Frame[r.N], r.Line[r.N] = frame, line
	}
	r.N++
}

// Row returns a's row.
func (a *Attempt) Row() Row {
	r := Row{Node: a.Node, Pos: a.Pos, Start: a.Start, Client: a.Client, Server: a.Server,
		Outcome: a.Outcome, ConnState: a.ConnState, History: a.History,
		SYNRetransmissions: a.SYNRetransmissions(),
		Packets:            a.Packets, ClientBytes: a.ClientBytes, ServerBytes: a.ServerBytes}
	r.TimeToSYNACK, r.SYNACKTimed = a.TimeToSYNACK()
	r.SYN.AddAll(a.SYN)
	r.SYNACK.AddAll(a.SYNACK)
	r.RST.AddAll(a.ClientRST)
	r.RST.AddAll(a.ServerRST)
	return r
}

// AddAll adds each of segs, in order.
func (r *SegRefs) AddAll(segs []Seg) {
	for i := range segs[:min(len(segs), max(MaxSegRefs-r.N, 0))] {
		r.Frame[r.N+i], r.Line[r.N+i] = segs[i].Frame, segs[i].Line
	}
	r.N += len(segs)
}
