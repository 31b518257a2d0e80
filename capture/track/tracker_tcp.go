package track

import "github.com/netmortem/netmortem/capture/decode"

import "time"

// addTCP folds one TCP segment, prepared by the Tracker, into the shard's
// streams. What concerns other streams (a 4-tuple reused, a first SYN for
// summary mode's copies) is left in m for the Tracker to settle, and then
// addTCP reports true.
func (sh *shard) addTCP(p *tcpSeg, m *mark) bool {
	sh.flags[p.Flags]++
	m.retired, m.noted = ended{}, nil
	syn, ack, rst, fin := p.Flags&decode.SYN != 0, p.Flags&decode.ACK != 0, p.Flags&decode.RST != 0, p.Flags&decode.FIN != 0
	synOnly := syn && !ack

	pns := p.ns
	k, h, srcHi := &p.Key, p.Hash, p.SrcHi
	s := sh.get(k, h)
	var old *stream // the stream of the 4-tuple, when s is a new one
	dir := 0
	if s != nil {
		if srcHi != s.aHi {
			dir = 1
		}
		// Wireshark: a SYN with a new sequence number reuses the ports
		// for a new conversation.
		if synOnly && s.baseSet[dir] && p.Seq != s.base[dir] {
			old, s = s, nil
		}
	}
	if s == nil {
		reused := reuseNone
		if old != nil {
			reused = reuseOpen
			if old.closed() {
				reused = reuseClosed
				if sub(pns, old.last) < timeWait {
					reused = reuseTimeWait
				}
			}
			m.retired = sh.retire(old) // the tuple is reused: the old attempt is over
		}
		s = sh.alloc()
		s.seq, s.key, s.aHi, s.reused = p.idx, *k, srcHi, reused
		s.mruSYN, s.last, s.cliDir, s.satoDir = noTime, noTime, -1, -1
		s.first = sh.seg(s, p)
		if p.outer != 0 {
			sh.extraOf(s).outer = sh.outers[p.outer-1]
		}
		s.hash = h
		sh.streams.put(s, h)
		sh.created++
		if sh.noteBorn {
			sh.born = append(sh.born, p.idx)
		}
		dir = 0
	}
	od := 1 - dir
	sg := segAt{sh: sh, s: s, p: p}
	s.packets++
	if pns != noTime { // a packet read without its time leaves the last one's
		s.last = pns
	}
	s.lastNow, s.lastIdx = p.now, p.idx
	if !s.baseSet[dir] {
		s.baseSet[dir], s.base[dir] = true, p.Seq
		if !syn {
			s.base[dir] = p.Seq - 1
		}
	}
	if p.Payload > 0 {
		s.bytes[dir] += int64(p.Payload)
	}

	if synOnly {
		if s.cliDir < 0 {
			s.cliDir = int8(dir)
			if s.satoDir == int8(dir) {
				s.gotSA = true
			}
		}
		if !p.Short && s.retransmitted(dir, p, pns) {
			sh.counts.SYNRetx++
		}
		if sh.summarize && !s.synSeen[dir] {
			m.noted, m.noteISN, m.noteCli = s, p.Seq, int8(dir)
		}
		s.synSeen[dir], s.synISN[dir] = true, p.Seq
		s.mruSYN = pns
		s.nSYN[dir]++
		sh.addSeg(s, segSYN, dir, s.nSYN[dir], sg.get())
		if s.mss[dir] == 0 {
			s.mss[dir] = p.MSS
		}
	}
	if syn && ack {
		if s.cliDir < 0 && s.satoDir < 0 {
			s.satoDir = int8(od)
		}
		if !s.synSeen[od] && s.nSYNACK[dir] == 0 {
			s.saAck[dir], s.saSet[dir] = p.Ack, true // the SYN it answers, unseen: the client's ISN plus one
			if sh.summarize {
				m.noted, m.noteISN, m.noteCli = s, p.Ack-1, int8(od)
			}
		}
		if s.cliDir >= 0 && dir != int(s.cliDir) {
			s.gotSA = true
		}
		s.nSYNACK[dir]++
		sh.addSeg(s, segSYNACK, dir, s.nSYNACK[dir], sg.get())
		if s.mss[dir] == 0 {
			s.mss[dir] = p.MSS
		}
	}
	if rst {
		s.nRST[dir]++
		sh.addSeg(s, segRST, dir, s.nRST[dir], sg.get())
		if s.cliDir >= 0 {
			s.cliRST[dir]++
		}
		if s.cliDir >= 0 && s.gotSA && s.cFirst == 0 {
			if dir == int(s.cliDir) {
				s.cFirst = 2
			} else {
				s.sFirstRST = true
			}
		}
	}
	if p.Flags&(decode.SYN|decode.ACK) == decode.ACK && s.mruSYN != noTime && !s.rttSet {
		s.firstRTT, s.rttSet = sub(pns, s.mruSYN), true
	}
	sh.noteData(s, dir, p, &sg)
	if !rst && !p.Short {
		nxt := p.Seq + uint32(p.Payload)
		if syn || fin {
			nxt++
		}
		if !s.nextSet[dir] || int32(nxt-s.nextSeq[dir]) > 0 {
			s.nextSeq[dir], s.nextSet[dir], s.nextTime[dir] = nxt, true, pns
		}
	}
	if fin && !s.finSeen[dir] {
		s.fin[dir], s.finSeen[dir] = sg.get(), true
	}
	if s.cliDir >= 0 {
		fromCli := dir == int(s.cliDir)
		if fromCli && s.gotSA && ack && !syn && !rst && s.cFirst == 0 {
			s.cFirst = 1
			s.firstAck, s.ackSeen = sg.get(), true
		}
		if fromCli && ack && !syn && !rst {
			s.cliAck = true
		}
		if !fromCli && !(syn && ack) && !rst {
			s.srvOther = true
		}
	}
	s.addHistory(dir, p)
	sh.touch(s)
	if m.retired.stream == nil && m.noted == nil {
		return false
	}
	m.idx, m.ns = p.idx, pns
	return true
}

// retransmitted tells whether a SYN repeats one already sent in its
// direction, as Wireshark's tcp.analysis.retransmission does: its sequence
// number does not advance the direction's next expected one, and it is not
// an out-of-order segment (one arriving within a round trip of the segment
// that advanced it, 3 ms before the first round trip is known).
func (s *stream) retransmitted(dir int, p *tcpSeg, pns int64) bool {
	if !s.nextSet[dir] || int32(p.Seq-s.nextSeq[dir]) >= 0 {
		return false
	}
	thres := 3 * time.Millisecond
	if s.rttSet {
		thres = s.firstRTT
	}
	if sub(pns, s.nextTime[dir]) < thres && s.nextSeq[dir] != p.Seq+1 {
		return false // out of order
	}
	return true
}
