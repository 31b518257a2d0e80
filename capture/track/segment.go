package track

import "github.com/netmortem/netmortem/capture/decode"

// tcpSeg is a TCP segment as a shard folds it, or the TCP segment an ICMP
// error quotes, for its shard to look the stream up: the segment's
// 4-tuple ordered and hashed and the header fields the tracking reads
// (decode.Segment), its time in tracker time and its place in the
// capture. The reading stage fills it straight from the frame
// (decode.HotTCP and Tracker.prepareHot), or from a decoded Packet
// (Tracker.prepare). It holds one pointer, which is nil but for overlays,
// so that windows of them are written and reused without clearing.
type tcpSeg struct {
	decode.Segment
	lookup bool   // an ICMP error's quote: only looked up
	file   uint32 // index in Tracker.files
	line   int32
	frame  int
	idx    int   // the packet's order among those the tracker was given
	ns     int64 // the packet's time, in tracker time
	now    int64 // the latest TCP time up to the packet, in tracker time
	// outer is 1 + the index, in the outer tuples its window holds
	// (shard.outers), of the overlay it came in, 0 for none: a pointer
	// here would have the garbage collector read every window.
	outer int32
	// found is set by a lookup's shard: the first frame, or line, of the
	// stream quoted, 0 when it is not tracked.
	found int
}

// mark is what a shard leaves for the Tracker to settle in capture order
// after folding a segment: a stream the segment's SYN ended by reusing
// its 4-tuple, a first SYN to note for summary mode.
type mark struct {
	idx     int     // the segment's tcpSeg.idx
	ns      int64   // its time
	retired ended   // the stream its SYN retired
	noted   *stream // the stream whose first SYN in a direction this is (summary mode)
	noteISN uint32  // that SYN's sequence number (a SYN/ACK's ack minus one)
	noteCli int8    // that stream's client direction, as the SYN shows it
}
