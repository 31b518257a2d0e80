// Package track folds decoded packets, in capture order, into the
// evidence netmortem reasons about: TCP connection attempts with their
// handshake outcome (streams as Wireshark's tcp.stream numbers them, the
// outcomes counted as docs/capture.md says), the ICMP errors that answer
// them and the ARP and IPv6 neighbor claims of the capture, each with the
// frame or line that proves it. In summary mode the attempts that ended
// normally, and the failed ones past a sample, are counted per server
// instead.
//
// A Tracker is fed one packet at a time (Tracker.Add), or, for a capture
// file, through Tracker.Feed: a reading goroutine hands packets, or TCP
// segments read straight from their frames, to a Stage in windows; shards,
// one goroutine each, fold the streams whose 4-tuples hash to them; and
// the Tracker settles what they leave in capture order, so that the Result
// is the same for any number of shards. Streams live in stores of huge
// pages that hold no pointer, and are finalized as they close or go idle,
// so that memory follows the live connections, not the capture's size.
package track
