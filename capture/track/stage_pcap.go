package track

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"

	"github.com/netmortem/netmortem/capture/decode"
)

// maxPlainRecord is libpcap's largest snap length: HotPcap leaves longer
// records to the reader, which checks them against the file's.
const maxPlainRecord = 262144

// HotPcap is Hot for the records at the start of b, the bytes of a classic
// little-endian pcap file of frames of link type link
// (pcapfile.Reader.Plain), the first of them frame number frame, whose
// fractions of a second nanoFactor makes nanoseconds. It takes the records
// in turn while each is whole in b, no longer than it says the frame was,
// and holds a frame decode.HotTCP reads (an Ethernet frame of an IPv4
// segment through decode.HotEthIPv4, the commonest, first), up to the end
// of the window being filled, and
// returns how many bytes and records it took: the next record is to be
// read and given to Hot or Add as any other. The first segment Hot
// would take after the Tracker's times are synced (at the start of each
// file) goes through Hot, which starts them again and sets the base time
// the others are counted from when the Tracker has none yet.
//
// A record whose seconds are those a count left zero or all ones gives
// (unsetSeconds) is left to Hot too, and so are all but the first when
// the first packet's are (CaptureStamp), since either may be read
// without its time.
//
// It does what a loop of pcapfile.Reader.Next and Hot does, without a
// record copied out, the checks for other formats and link types, or the
// Tracker's times read and written back for every packet: a quarter of
// the reading stage's instructions on a capture of plain TCP segments.
func (s *Stage) HotPcap(link layers.LinkType, b []byte, nanoFactor uint32, frame int) (used, took int) {
	t := s.t
	if !t.hotTimes() || t.baseSet && !t.baseYears {
		// A base whose stamp CaptureStamp does not take (a pcapng's,
		// earlier in a series, or a corrupt one) may be too far from the
		// later times for the loop's nanoseconds, and is one a later
		// packet may rebase from: Hot checks each.
		return 0, 0
	}
	if !t.hotSeen {
		// The first since the times were synced goes through Hot.
		data, cut, unix, ok := plainRecord(b, 0, nanoFactor)
		if !ok || !s.Hot(link, data, cut, frame, unix) {
			return 0, 0
		}
		used, took = 16+len(data), 1
		if t.packets%batchSize == 0 {
			return used, took // Hot sent the window
		}
	}
	if !t.baseYears {
		// Hot just took the first packet, stamped so: as above.
		return used, took
	}
	w := s.w
	// The window's segments and owners are filled by index, and their
	// lengths set once the run is over.
	n := len(w.segs)
	segs, owner := w.segs[:cap(w.segs)], w.owner[:cap(w.owner)]
	room := took + min(batchSize-t.packets%batchSize, len(segs)-n, len(owner)-n)
	eth := link == layers.LinkTypeEthernet
	packets, now, first, last, base, file := t.packets, t.now, t.hotFirst, t.hotLast, t.baseUnix, t.curFile
	start := took
	for took < room {
		data, cut, unix, ok := plainRecord(b, used, nanoFactor)
		if !ok || unsetSeconds(unix) {
			// A stamp of unset seconds may be a stray, which Hot
			// reads without its time.
			break
		}
		g := &segs[n]
		if !(eth && decode.HotEthIPv4(data, cut, &g.Segment)) && !decode.HotTCP(link, data, cut, &g.Segment) {
			break
		}
		// As prepareHot, with the Tracker's times in locals.
		packets++
		if unix < first {
			first = unix
		} else if unix > last {
			last = unix
		}
		ns := subNS(unix, base)
		now = max(now, ns)
		g.idx, g.ns, g.now = packets, ns, now
		g.frame, g.line, g.file = frame+took, 0, file
		g.lookup, g.outer, g.found = false, 0, 0
		owner[n] = uint8(t.shardOf(g.Hash)) // as Tracker.own
		n++
		used, took = used+16+len(data), took+1
	}
	w.segs, w.owner = segs[:n], owner[:n]
	t.packets, t.now, t.hotFirst, t.hotLast = packets, now, first, last
	if took > start && packets%batchSize == 0 {
		s.send()
	}
	return used, took
}

// plainRecord returns the frame of the little-endian pcap record at
// b[off:], how many bytes it had on the wire past those captured, and its
// time in nanoseconds since 1970, as pcapfile reads them, when the record
// is whole in b, no longer than libpcap's largest snap length and no
// longer than it says the frame was: a record that is not is left to the
// reader, which reads it whole, checks it against the file's snap length
// or counts it.
func plainRecord(b []byte, off int, nanoFactor uint32) (data []byte, cut int, unix int64, ok bool) {
	if len(b)-off < 16 {
		return nil, 0, 0, false
	}
	h := (*[16]byte)(b[off:])
	le := binary.LittleEndian
	caplen, orig := le.Uint32(h[8:12]), le.Uint32(h[12:16])
	if caplen > maxPlainRecord || int(caplen) > len(b)-off-16 || orig < caplen {
		return nil, 0, 0, false
	}
	end := off + 16 + int(caplen)
	unix = int64(le.Uint32(h[0:4]))*1e9 + int64(le.Uint32(h[4:8])*nanoFactor)
	// As pcapfile.Record.Cut: an IP length never reaches 1 MiB past the
	// bytes captured. The frame is sliced as Go slices it: cut with
	// unsafe.Slice, an empty frame ending b would point past b's memory,
	// a pointer the garbage collector rejects (TestPlainRecordEmptyAtEnd).
	return b[off+16 : end : end], int(min(orig-caplen, 1<<20)), unix, true
}
