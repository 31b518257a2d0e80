package track

import (
	"fmt"
	"net/netip"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/model"
)

// The Feeds after the first, of the files of a series or of another
// Tracker's capture, go round the windows the first one made rather than
// making their own. The collector is off, so that windowPool keeps what
// it is given, and there are two Ps: sync.Pool keeps a value aside for
// each P, which only a Get on that P takes, so that a Feed may find a
// window or two fewer than the last one left, and make them (two in 3
// runs of 100 as 386); without the pool, each Feed makes six or seven.
func TestFeedReusesWindows(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector, sync.Pool drops a share of what it is given")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := netip.MustParseAddrPort("10.1.0.1:80")
	n := 0
	for _, shards := range []int{1, 2} {
		seen := map[*window]bool{}
		feed := func(tr *Tracker, what string) {
			t.Helper()
			made := 0
			err := tr.Feed(func(s *Stage) error {
				for range 6 * batchSize {
					n++
					p := decode.Packet{Pos: posFrame(n), Time: at.Add(time.Duration(n) * time.Millisecond), Proto: "tcp",
						Src: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 1}), uint16(30000+n%64)), Dst: srv,
						Flags: decode.SYN, Seq: uint32(n)}
					s.Add(&p)
					if !seen[s.w] {
						seen[s.w] = true
						made++
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if what != "" && made > 2 {
				t.Errorf("%d shards: %s made %d windows, %d in all", shards, what, made, len(seen))
			}
		}
		tr := NewTracker("c0.pcap", Options{Summary: Summary{Enabled: true}})
		tr.SetShards(shards)
		feed(tr, "")
		if len(seen) < 4 {
			t.Fatalf("%d shards: the first file went round %d windows", shards, len(seen))
		}
		for file := 1; file < 4; file++ {
			tr.StartFile(fmt.Sprintf("c%d.pcap", file))
			feed(tr, fmt.Sprintf("file %d", file))
		}
		tr.Finish()
		other := NewTracker("d.pcap", Options{})
		other.SetShards(shards)
		feed(other, "another Tracker")
		other.Finish()
	}
}

// A window given to windowPool holds no pointer any longer, up to the
// capacity of its slices: the streams, packets and tuples of a Tracker
// done with are not kept alive by it.
func TestPutWindowLetsGo(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	w := newWindow(2)
	s := &stream{}
	tuple := &model.Tuple{}
	for i := range 2 {
		w.marks[i] = append(w.marks[i], mark{noted: s, retired: ended{stream: s}})
		w.swept[i].ends[1] = append(w.swept[i].ends[1], streamEnd{e: ended{stream: s}})
		w.swept[i].parked = append(w.swept[i].parked, 7)
		w.recycled[i] = append(w.recycled[i], 9)
		w.born[i] = append(w.born[i], 3)
	}
	w.full = append(w.full, fullPacket{Packet: decode.Packet{ICMP: &model.ICMPEvent{}}})
	w.outers = append(w.outers, tuple)
	putWindow(w)
	for i := range 2 {
		if m := w.marks[i][:cap(w.marks[i])]; len(w.marks[i]) > 0 || m[0].noted != nil || m[0].retired.stream != nil {
			t.Errorf("shard %d: marks %+v", i, m)
		}
		if e := w.swept[i].ends[1][:cap(w.swept[i].ends[1])]; len(w.swept[i].ends[1]) > 0 || e[0].e.stream != nil {
			t.Errorf("shard %d: swept ends %+v", i, e)
		}
		if len(w.swept[i].parked)+len(w.recycled[i])+len(w.born[i]) > 0 {
			t.Errorf("shard %d: parked %v, recycled %v, born %v", i, w.swept[i].parked, w.recycled[i], w.born[i])
		}
	}
	if f := w.full[:cap(w.full)]; len(w.full) > 0 || f[0].ICMP != nil {
		t.Errorf("full %+v", f)
	}
	if o := w.outers[:cap(w.outers)]; len(w.outers) > 0 || o[0] != nil {
		t.Errorf("outers %v", o)
	}
}
