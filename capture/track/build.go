package track

import (
	"encoding/binary"
	"time"

	"github.com/netmortem/netmortem/model"
)

// builder builds the attempts of finalized streams: the Tracker's own
// (Tracker.attempt), and, at the end of a capture whose attempts are not
// summarized, one for each shard's endFeed, which builds the attempts of
// the shard's live streams on its goroutine while the Tracker hands on
// those before them, and one for the streams whose attempts waited for
// older ones (startWaitFeed). A builder reads nothing the Tracker changes
// once the capture is read.
type builder struct {
	node, file string   // the evidence's node and file, as the Tracker names them
	files      []string // Tracker.files
	clock      clock    // the Tracker's
	// lend makes each attempt built take the memory of the one before
	// (Options.LendAttempts): segs and sizes are reused, each value
	// written whole when it is taken again.
	lend  bool
	segs  *slab[model.Seg]       // the attempts' segments
	sizes *slab[model.DataSizes] // the attempts' data sizes
	// histories holds the history strings of the attempts built, each
	// once, so that attempts share them (at most maxHistories).
	histories map[string]string
	recent    [1 << recentBits]recentHistory // the histories last looked up, by their bytes
}

// attempt builds the attempt of the stream finalized as e, with the
// Tracker's node and file as they are now.
func (t *Tracker) attempt(e ended) model.Attempt { return t.attemptAt(e, t.node, t.file) }

// attemptAt builds the attempt of the stream finalized as e, with the
// node and file the Tracker named when it was finalized.
func (t *Tracker) attemptAt(e ended, node, file string) model.Attempt {
	return t.builderAt(node, file).attempt(e)
}

// builderAt returns the Tracker's builder, set to build with node and
// file.
func (t *Tracker) builderAt(node, file string) *builder {
	b := &t.build
	b.node, b.file, b.files, b.clock = node, file, t.files, t.clock()
	return b
}

// attemptOf returns the attempt of e: built, when e's endFeed built it,
// or one built now.
func (t *Tracker) attemptOf(e ended, built *model.Attempt) model.Attempt {
	if built != nil {
		return *built
	}
	return t.attempt(e)
}

// endBuilder returns a builder for the end of the capture, with the
// Tracker's node and file as they are now and memory of its own.
func (t *Tracker) endBuilder() *builder {
	return &builder{node: t.node, file: t.file, files: t.files, clock: t.clock()}
}

// clock converts tracker times back to times: base plus the tracker time,
// from base's Unix nanoseconds when base is in UTC and they are known.
type clock struct {
	base     time.Time
	baseUnix int64
	unixUTC  bool // base is in UTC and baseUnix holds it
}

// clock returns the Tracker's clock.
func (t *Tracker) clock() clock {
	return clock{t.base, t.baseUnix, t.baseUnixOK && t.base.Location() == time.UTC}
}

// time converts a tracker time back. In UTC, time.Unix builds the same
// time as base.Add in fewer instructions, for the times of every segment
// of hundreds of thousands of attempts.
func (c *clock) time(ns int64) time.Time {
	if ns == noTime {
		return time.Time{}
	}
	if u := c.baseUnix + ns; c.unixUTC && (u >= c.baseUnix) == (ns >= 0) {
		return time.Unix(u/1e9, u%1e9).UTC()
	}
	return c.base.Add(time.Duration(ns))
}

// time converts a tracker time back.
func (b *builder) time(ns int64) time.Time { return b.clock.time(ns) }

func (b *builder) attempt(e ended) model.Attempt {
	var a model.Attempt
	b.attemptInto(&a, e)
	return a
}

// attemptInto builds the attempt of e into a, which must be zero: where
// it is to go, rather than to be copied there, 450 bytes an attempt.
func (b *builder) attemptInto(a *model.Attempt, e ended) {
	s := e.stream
	cd := s.clientDir()
	sd := 1 - cd
	if b.lend {
		// The last attempt lent is EachAttempt's no longer.
		b.segs.reuse()
		b.sizes.reuse()
	}
	first := e.where(s.first)
	file := b.file
	if first.file != 0 {
		file = b.files[first.file]
	}
	segPtr := func(g seg, ok bool) *model.Seg {
		if !ok {
			return nil
		}
		m := &b.segs.take(1)[0]
		*m = b.modelSeg(e, g)
		return m
	}
	a.Node = b.node
	a.Pos = model.Pos{File: file, Frame: first.frame, Line: int(first.line)}
	a.Client, a.Server = s.end(cd), s.end(sd)
	a.Outcome = s.outcome()
	a.Start, a.End = b.time(s.first.ns), b.time(s.last)
	a.FirstAck = segPtr(s.firstAck, s.ackSeen)
	a.ClientFIN, a.ServerFIN = segPtr(s.fin[cd], s.finSeen[cd]), segPtr(s.fin[sd], s.finSeen[sd])
	a.Packets, a.ClientBytes, a.ServerBytes = s.packets, s.bytes[cd], s.bytes[sd]
	a.ISN = s.isn(cd)
	a.ClientData, a.ServerData = b.dataSizes(e, cd), b.dataSizes(e, sd)
	a.Reused, a.ICMP = reuseNames[s.reused], s.icmp
	a.MSS, a.ServerMSS = s.mss[cd], s.mss[sd]
	a.SYN, a.SYNACK, a.ClientRST, a.ServerRST = b.segLists(e, cd)
	if o := e.outer(); o != nil {
		c := *o
		a.Outer = &c
	}
	if first.file != 0 {
		for _, l := range [][]model.Seg{a.SYN, a.SYNACK, a.ClientRST, a.ServerRST} {
			for i := range l {
				if l[i].File == file {
					l[i].File = ""
				}
			}
		}
		for _, sp := range []*model.Seg{a.FirstAck, a.ClientFIN, a.ServerFIN} {
			if sp != nil && sp.File == file {
				sp.File = ""
			}
		}
	}
	a.History = b.history(s, cd)
	a.ConnState = s.connState(cd)
}

// history returns s's history string, as historyLetters writes it, shared
// with the attempts built before that had the same: a capture's
// attempts have few distinct ones. It looks the letters up by the
// stream's own history bytes first, in a small cache, without writing
// them out.
func (b *builder) history(s *stream, cd int) string {
	k := historyKey{n: s.nHist, cd: uint8(cd)}
	lo := binary.LittleEndian.Uint64(s.history[:8])
	hi := uint64(binary.LittleEndian.Uint32(s.history[8:]))
	if n := uint(s.nHist); n < 8 {
		k.lo = lo & (1<<(8*n) - 1)
	} else {
		k.lo, k.hi = lo, uint32(hi&(1<<(8*(n-8))-1))
	}
	e := &b.recent[(k.lo*0x9e3779b97f4a7c15^uint64(k.hi)*0xc2b2ae3d27d4eb4f^uint64(k.n)<<1^uint64(k.cd))>>(64-recentBits)]
	if e.ok && e.k == k {
		return e.h
	}
	var buf [len(stream{}.history)]byte
	l := s.historyLetters(buf[:0], cd)
	h, ok := b.histories[string(l)]
	if !ok {
		h = string(l)
		if b.histories == nil {
			b.histories = map[string]string{}
		}
		if len(b.histories) < maxHistories {
			b.histories[h] = h
		}
	}
	*e = recentHistory{k, h, true}
	return h
}

// historyKey is a stream's history bytes (stream.history, those in use),
// and the direction of its client.
type historyKey struct {
	lo uint64
	hi uint32
	n  uint8
	cd uint8
}

// recentHistory is an entry of builder.recent.
type recentHistory struct {
	k  historyKey
	h  string
	ok bool
}

// recentBits sets the size of builder.recent: 2^recentBits entries.
const recentBits = 6

// maxHistories bounds how many distinct history strings a builder keeps
// to share.
const maxHistories = 4096

func (b *builder) modelSeg(e ended, g seg) model.Seg {
	w := e.where(g)
	return model.Seg{Frame: w.frame, Line: int(w.line), Time: b.time(g.ns), File: b.files[w.file]}
}

// segLists returns the client's SYNs, the server's SYN/ACKs, the
// client's RSTs and the server's RSTs among e's segments, each nil when
// there are none, in one slice of b.segs and two passes over the
// segments, for all four.
func (b *builder) segLists(e ended, cd int) (syn, synack, cliRST, srvRST []model.Seg) {
	segs := e.segList()
	var n [8]int // segments of each tag
	for _, g := range segs {
		n[g.tag()]++
	}
	tags := [4]uint32{segSYN<<1 | uint32(cd), segSYNACK<<1 | uint32(1-cd), segRST<<1 | uint32(cd), segRST<<1 | uint32(1-cd)}
	total := n[tags[0]] + n[tags[1]] + n[tags[2]] + n[tags[3]]
	if total == 0 {
		return nil, nil, nil, nil
	}
	out := b.segs.take(total)
	var lists [4][]model.Seg
	var at [8]int // where the next segment of each tag goes, for the four
	for k, off := 0, 0; k < len(tags); k++ {
		c := n[tags[k]]
		if c > 0 {
			lists[k] = out[off : off+c : off+c]
		}
		at[tags[k]] = off
		off += c
	}
	for _, g := range segs {
		t := g.tag()
		if t != tags[0] && t != tags[1] && t != tags[2] && t != tags[3] {
			continue // a SYN from the server, a SYN/ACK from the client
		}
		out[at[t]] = b.modelSeg(e, g)
		at[t]++
	}
	return lists[0], lists[1], lists[2], lists[3]
}

// dataSizes returns the model's view of e's data in direction dir, nil
// when it sent none.
func (b *builder) dataSizes(e ended, dir int) *model.DataSizes {
	d := &e.data[dir]
	if e.hasData&(1<<dir) == 0 || d.unreliable {
		return nil
	}
	out := &b.sizes.take(1)[0]
	*out = model.DataSizes{MaxSent: int(d.maxSent), MaxAcked: int(d.maxAcked)}
	for _, r := range e.retx(dir) {
		if r.len <= d.maxAcked {
			continue
		}
		if out.LargeRetx == 0 {
			out.LargeRetxSize = int(r.len)
		}
		out.LargeRetx++
		if len(out.Retx) < 5 {
			out.Retx = append(out.Retx, b.modelSeg(e, r.at))
		}
	}
	return out
}
