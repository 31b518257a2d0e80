package track

import (
	"math/bits"
	"net/netip"
	"slices"
	"time"
	"unsafe"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// statKey names the attempts one endpointAcc counts: those to one server
// with one outcome.
type statKey struct {
	server  netip.AddrPort
	outcome model.Outcome
}

// endpointAcc accumulates the attempts folded for one server endpoint and
// outcome.
type endpointAcc struct {
	st      model.EndpointStats
	clients map[netip.Addr]struct{}
	synack  []time.Duration // a bounded sample, for the median
	// ports is the set of server ports of a host's counters (port 0),
	// which count the ports that failed after the host's sample was full.
	ports *[1 << 16 / 64]uint64
	// lastClient is the client of the last attempt counted (lastSet).
	lastClient netip.Addr
	lastSet    bool
}

// hostSampleFactor times FailedSample is how many refused, and how many
// unanswered, attempts to one host, all its ports together, a summarizing
// tracker keeps one by one: a scan of every port keeps that many, and
// counts the rest per host with the ports they went to.
const hostSampleFactor = 10

// maxSamples bounds the time-to-SYN/ACK sample kept per endpoint.
const maxSamples = 1024

// acc returns the counters of s's server and outcome, made on first use.
func (t *Tracker) acc(server netip.AddrPort, outcome model.Outcome) *endpointAcc {
	k := statKey{server, outcome}
	if t.lastAcc != nil && k == t.lastKey {
		return t.lastAcc // as the stream before: most go to few servers
	}
	acc := t.stats[k]
	if acc == nil {
		if t.stats == nil {
			t.stats = map[statKey]*endpointAcc{}
		}
		acc = &endpointAcc{st: model.EndpointStats{Node: t.node, File: t.file, Server: k.server, Outcome: outcome},
			clients: map[netip.Addr]struct{}{}}
		t.stats[k] = acc
		t.statOrder = append(t.statOrder, k)
	}
	t.lastKey, t.lastAcc = k, acc
	return acc
}

// foldInto counts the stream of v in acc.
func (t *Tracker) foldInto(acc *endpointAcc, v *streamEnd) {
	first := t.time(v.first)
	if acc.st.Server.Port() == 0 { // a host's counters: which ports
		if acc.ports == nil {
			acc.ports = new([1 << 16 / 64]uint64)
		}
		acc.ports[v.port/64] |= 1 << (v.port % 64)
	}
	st := &acc.st
	if st.Attempts == 0 {
		st.First = first
	}
	st.Attempts++
	st.Packets += v.packets
	st.ClientBytes += v.bytes[0]
	st.ServerBytes += v.bytes[1]
	st.SYNRetx += v.synRetx
	if first.Before(st.First) {
		st.First = first
	}
	if first.After(st.Last) || st.Attempts == 1 {
		st.Last = first
	}
	if v.client != acc.lastClient || !acc.lastSet {
		// The client of the stream before is counted already.
		if _, seen := acc.clients[v.client]; !seen && len(acc.clients) < 65536 {
			acc.clients[v.client] = struct{}{}
			if len(st.ClientAddrs) < model.MaxClientAddrs {
				st.ClientAddrs = append(st.ClientAddrs, v.client)
			}
		}
		acc.lastClient, acc.lastSet = v.client, true
	}
	if v.synackOK {
		if len(acc.synack) < maxSamples {
			acc.synack = append(acc.synack, v.synack)
		} else {
			acc.synack[st.Attempts%maxSamples] = v.synack
		}
	}
}

func (acc *endpointAcc) stats() model.EndpointStats {
	st := acc.st
	st.Clients = len(acc.clients)
	if acc.ports != nil {
		for w, word := range acc.ports {
			for ; word != 0; word &= word - 1 {
				st.Ports = append(st.Ports, uint16(w*64+bits.TrailingZeros64(word)))
			}
		}
	}
	if n := len(acc.synack); n > 0 {
		slices.Sort(acc.synack)
		st.MedianSYNACK = acc.synack[n/2]
	}
	return st
}

// noteSYN marks s and the live stream whose first SYN last had the same
// sequence number, less than model.MinSYNRetransmission before (at time
// pns), as copies of one connection seen before and after a node
// translated it (DNAT, SNAT): summary mode keeps their failed attempts one
// by one, so that the connection can be joined across its two tuples. A
// SYN/ACK whose SYN was not seen counts with the sequence number it
// acknowledges. The copies keep one end (the client's through a DNAT, the
// server's through a SNAT): two SYNs with nothing in common but their
// sequence number are not taken for one connection.
func (t *Tracker) noteSYN(s *stream, isn uint32, pns int64, cd int8) {
	if isn == 0 {
		return
	}
	if t.synISN == nil {
		t.synISN = new(isnTable)
	}
	cliH, srvH := s.endHash(int(cd)), s.endHash(1-int(cd))
	o := t.synISN.note(synSeen{seq: s.seq, t: pns, isn: isn, kref: t.keepKey(&s.key), cliH: cliH, srvH: srvH,
		cd: cd, aHi: s.aHi})
	if o.seq == 0 {
		return
	}
	// o is no longer in the table: its key copy goes once read. What the
	// entry holds is tested first: reading the key is a cache miss. Ends
	// whose hashes both differ differ both.
	defer t.dropKey(o.kref)
	if o.seq == s.seq || pns == noTime || o.t == noTime || (o.cliH != cliH && o.srvH != srvH) {
		return
	}
	if d := subNS(pns, o.t); d >= int64(model.MinSYNRetransmission) || d <= -int64(model.MinSYNRetransmission) {
		return
	}
	ok := t.synKeys.at(o.kref)
	oEnd := func(dir int) netip.AddrPort {
		if o.aHi {
			dir = 1 - dir
		}
		return ok.End(dir)
	}
	if cli, srv := s.end(int(cd)), s.end(1-int(cd)); !ok.Equal(&s.key) &&
		(oEnd(int(o.cd)) == cli) != (oEnd(1-int(o.cd)) == srv) {
		if t.natCopies == nil {
			t.natCopies = map[int]struct{}{}
		}
		t.natCopies[o.seq], t.natCopies[s.seq] = struct{}{}, struct{}{}
	}
}

// keepKey keeps a copy of k for an entry of t.synISN and returns its index
// in t.synKeys.
func (t *Tracker) keepKey(k *decode.Key) uint32 {
	if n := len(t.freeKeys); n > 0 {
		i := t.freeKeys[n-1]
		t.freeKeys = t.freeKeys[:n-1]
		*t.synKeys.at(i) = *k
		return i
	}
	return t.synKeys.add(k)
}

// dropKey lets go of the key copy at index i of t.synKeys.
func (t *Tracker) dropKey(i uint32) { t.freeKeys = append(t.freeKeys, i) }

// keyStore holds copies of keys, in chunks (chunked).
type keyStore struct {
	chunked[decode.Key]
}

// keyChunk is how many keys a grown chunk holds: as many as two huge
// pages hold, less one.
const keyChunk = uint32((2*hugePageSize - keySize) / keySize)

const keySize = unsafe.Sizeof(decode.Key{})

// at returns the key at index i.
func (ks *keyStore) at(i uint32) *decode.Key { return ks.chunked.at(i, keyChunk) }

// add appends a copy of k and returns its index.
func (ks *keyStore) add(k *decode.Key) uint32 {
	v, i := ks.next(keyChunk)
	*v = *k
	return i
}

// len returns how many keys ks holds, free ones included.
func (ks *keyStore) len() int { return int(ks.n) }

// natCopy reports whether summary mode's noteSYN found the stream created
// as seq to be a copy of another (a NAT's two sides), and forgets it.
func (t *Tracker) natCopy(seq int) bool {
	if _, ok := t.natCopies[seq]; ok {
		delete(t.natCopies, seq)
		return true
	}
	return false
}

// forgetSYN drops s, finalized, from the sequence numbers noteSYN keeps.
// They are those of its first SYN each way, and those a first SYN/ACK each
// way acknowledged when the SYN it answers was not seen (stream.saAck):
// every SYN of a stream in one direction has one sequence number, or it
// would have started another stream.
func (t *Tracker) forgetSYN(s *stream) {
	if t.synISN == nil {
		return
	}
	for dir := range 2 {
		if s.synSeen[dir] {
			t.forgetISN(s, s.synISN[dir])
		}
		if s.saSet[dir] {
			t.forgetISN(s, s.saAck[dir]-1)
		}
	}
}

// forgetISN drops the sequence number isn from those noteSYN keeps, if it
// keeps it for s.
func (t *Tracker) forgetISN(s *stream, isn uint32) {
	if o := t.synISN.forget(isn, s.seq); o.seq != 0 {
		t.dropKey(o.kref)
	}
}
