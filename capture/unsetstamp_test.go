package capture_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// The two seconds a damaged record's 32-bit count of seconds gives, zero
// (1970-01-01T00:00:00) and all ones (2106-02-07T06:28:15), lie in the
// years captures are stamped in; as one packet's stamp in a capture of
// 2026 they gave a time to the SYN/ACK of 56 years, or minus 80, and
// moved the capture's clock. More than a day from the first packet, such
// a packet is now read without its time and warned of at its frame, in
// a classic pcap (its runs of plain records, and the general path) as
// in a pcapng; as the first packet's, the others count from the next
// one.
var unsetSeconds = []time.Time{time.Unix(0, 291004000).UTC(), time.Unix(1<<32-1, 291004000).UTC()}

// handshakeAt returns a handshake's four packets at t0 and the 3 ms after
// it, the n-th of them (from 0) stamped at stray instead.
func handshakeAt(t0, stray time.Time, n int) (times []time.Time, frames [][]byte) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	frames = [][]byte{tcpFrame(c, s, 0x02, 1000, 0, 0), tcpFrame(s, c, 0x12, 5000, 1001, 0),
		tcpFrame(c, s, 0x10, 1001, 5001, 0), tcpFrame(c, s, 0x18, 1001, 5001, 100)}
	for i := range frames {
		times = append(times, t0.Add(time.Duration(i)*time.Millisecond))
	}
	times[n] = stray
	return times, frames
}

// asFiles returns the packets as a classic pcap and as a pcapng.
func asFiles(times []time.Time, frames [][]byte) map[string][]byte {
	var recs []testutil.PcapRecord
	var ng []testutil.NgRecord
	for i := range frames {
		recs = append(recs, testutil.PcapRecord{Time: times[i], Data: frames[i]})
		ng = append(ng, testutil.NgRecord{Iface: 0, Micros: micros(times[i]), Data: frames[i]})
	}
	return map[string][]byte{"unset.pcap": testutil.Pcap(recs), "unset.pcapng": testutil.Pcapng([]int64{0}, ng)}
}

func TestUnsetSecondsStray(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, stray := range unsetSeconds {
		for name, file := range asFiles(handshakeAt(t0, stray, 1)) {
			for _, shards := range []int{1, 3} {
				where := stray.Format(time.RFC3339) + ", " + name
				var rows []model.Row
				res, err := capture.Read(context.Background(), bytes.NewReader(file), name, capture.Options{Shards: shards, EachRow: keepRows(&rows)})
				var list model.ErrorList
				if !errors.As(err, &list) || len(list) != 1 || list[0].Pos != (model.Pos{File: name, Frame: 2}) ||
					!strings.Contains(list[0].Error(), "is in the second a 32-bit count of seconds left zero or all ones gives, so it is corrupt, and lies more than a day from the first packet's, 2026-01-02T03:04:05Z: the packet is read without its time") {
					t.Fatalf("%s, %d shards: want one error at frame 2, got %v", where, shards, err)
				}
				if len(rows) != 1 || rows[0].SYNACKTimed || rows[0].SYNACK.N != 1 || !rows[0].Start.Equal(t0) {
					t.Errorf("%s, %d shards: rows %+v", where, shards, rows)
				}
				if !res.Info.First.Equal(t0) || !res.Info.Last.Equal(t0.Add(3*time.Millisecond)) {
					t.Errorf("%s, %d shards: first %s, last %s", where, shards, res.Info.First, res.Info.Last)
				}
			}
		}
	}
}

func TestUnsetSecondsFirst(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, stray := range unsetSeconds {
		for name, file := range asFiles(handshakeAt(t0, stray, 0)) {
			where := stray.Format(time.RFC3339) + ", " + name
			res, err := capture.Read(context.Background(), bytes.NewReader(file), name, capture.Options{})
			var list model.ErrorList
			if !errors.As(err, &list) || len(list) != 1 || list[0].Pos != (model.Pos{File: name, Frame: 1}) ||
				!strings.Contains(list[0].Error(), "the first packet's, is in the second a 32-bit count of seconds left zero or all ones gives, so it is corrupt, and lies more than a day from a later packet's, 2026-01-02T03:04:05.001Z") {
				t.Fatalf("%s: want one error at frame 1, got %v", where, err)
			}
			if len(res.Attempts) != 1 || !res.Attempts[0].SYN[0].Time.IsZero() || !res.Attempts[0].SYNACK[0].Time.Equal(t0.Add(time.Millisecond)) ||
				!res.Info.First.Equal(t0.Add(time.Millisecond)) || !res.Info.Last.Equal(t0.Add(3*time.Millisecond)) {
				t.Errorf("%s: %+v, first %s, last %s", where, res.Attempts, res.Info.First, res.Info.Last)
			}
		}
	}
}

// A device whose clock starts at 1970 when it boots stamps its first
// second with seconds zero: its packets, a few seconds apart, keep their
// times, and a file whose first record is stamped so is not placed in a
// series by it.
func TestUnsetSecondsAtBoot(t *testing.T) {
	boot := time.Unix(0, 500000000).UTC()
	times, frames := handshakeAt(boot, boot, 0)
	for i := range times {
		times[i] = boot.Add(time.Duration(i) * time.Second)
	}
	for name, file := range asFiles(times, frames) {
		res, err := capture.Read(context.Background(), bytes.NewReader(file), name, capture.Options{})
		if err != nil || len(res.Attempts) != 1 || !res.Attempts[0].SYN[0].Time.Equal(boot) ||
			!res.Attempts[0].SYNACK[0].Time.Equal(boot.Add(time.Second)) || !res.Info.Last.Equal(boot.Add(3*time.Second)) {
			t.Errorf("%s: %v, %+v", name, err, res.Attempts)
		}
		h, err := capture.ReadHead(bytes.NewReader(file))
		if err != nil || !h.First.IsZero() {
			t.Errorf("%s: head %+v, %v", name, h, err)
		}
	}
}
