package capture_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

func micros(t time.Time) uint64 { return uint64(t.UnixMicro()) }

// keepRows returns an EachRow that appends each row to rows, a row that
// holds its attempt as that attempt's row.
func keepRows(rows *[]model.Row) func(*model.Row) {
	return func(r *model.Row) {
		if r.Attempt != nil {
			*rows = append(*rows, r.Attempt.Row())
		} else {
			*rows = append(*rows, *r)
		}
	}
}

// A handshake whose SYN/ACK is stamped in the year 3000, in a capture of
// 2026: more than the 292 years tracker times span from the first packet.
// The SYN/ACK is read without its time, and left out of the capture's
// first and last times, and one error says so at its frame, where the time once saturated and the row said the SYN/ACK came
// in 2318, 292 years after the SYN.
func TestFarTimeReadWithoutIt(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	file := testutil.Pcapng([]int64{0}, []testutil.NgRecord{
		{Iface: 0, Micros: micros(t0), Data: tcpFrame(c, s, 0x02, 1000, 0, 0)},
		{Iface: 0, Micros: micros(far), Data: tcpFrame(s, c, 0x12, 5000, 1001, 0)},
		{Iface: 0, Micros: micros(t0.Add(2 * time.Millisecond)), Data: tcpFrame(c, s, 0x10, 1001, 5001, 0)},
		{Iface: 0, Micros: micros(t0.Add(3 * time.Millisecond)), Data: tcpFrame(c, s, 0x18, 1001, 5001, 100)},
	})
	for _, shards := range []int{1, 3} {
		var rows []model.Row
		for _, each := range []bool{false, true} {
			opts := capture.Options{Shards: shards}
			if each {
				opts.EachRow = keepRows(&rows)
			}
			res, err := capture.Read(context.Background(), bytes.NewReader(file), "far.pcapng", opts)
			var list model.ErrorList
			if !errors.As(err, &list) || len(list) != 1 || list[0].Pos != (model.Pos{File: "far.pcapng", Frame: 2}) ||
				!strings.Contains(list[0].Error(), "time 3000-01-01T00:00:00Z lies more than 292 years from the first packet's, 2026-01-02T03:04:05Z, so one of them") ||
				strings.Contains(list[0].Error(), "more packets") {
				t.Fatalf("%d shards: want one error at frame 2, got %v", shards, err)
			}
			if each {
				continue
			}
			if len(res.Attempts) != 1 {
				t.Fatalf("%d shards: %d attempts", shards, len(res.Attempts))
			}
			a := res.Attempts[0]
			if a.Outcome != model.OutcomeEstablished || !a.Start.Equal(t0) || len(a.SYNACK) != 1 || !a.SYNACK[0].Time.IsZero() ||
				a.FirstAck == nil || !a.FirstAck.Time.Equal(t0.Add(2*time.Millisecond)) ||
				!res.Info.First.Equal(t0) || !res.Info.Last.Equal(t0.Add(3*time.Millisecond)) {
				t.Errorf("%d shards: %+v, last %s", shards, a, res.Info.Last)
			}
			if _, timed := a.TimeToSYNACK(); timed {
				t.Errorf("%d shards: a time to the SYN/ACK read without its time", shards)
			}
			rows = append(rows, a.Row())
		}
		if len(rows) != 2 || rows[0] != rows[1] || rows[1].SYNACKTimed || !rows[1].Start.Equal(t0) {
			t.Errorf("%d shards: rows %+v", shards, rows)
		}
	}
}

// A first packet stamped in a year no capture is stamped in (3000 or
// 2300, or 1710 or 1800 through an interface's if_tsoffset), where the
// next is stamped in them, is the one read without its time: the others
// count from the next, where each of them was read without its time (or,
// within 292 years, at a time of centuries before or after), and the one
// error names the first. Where neither the first nor the next is stamped in a capture's
// years (3000, then 2400), the first sets the time the others count
// from, as when the next is the stray one. The year 3000 is read through
// the general path; 1710 and 2026 through the fast path, which holds
// times of 1700 to 2200 in nanoseconds since 1970.
func TestFarFirstTime(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stray := tcpFrame(netip.MustParseAddrPort("10.0.0.9:1"), s, 0x10, 1, 1, 0)
	y3000 := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	back := time.Date(1710, 1, 2, 3, 4, 5, 0, time.UTC).Unix() - t0.Unix() // seconds
	back1800 := time.Date(1800, 1, 2, 3, 4, 5, 0, time.UTC).Unix() - t0.Unix()
	for _, tc := range []struct {
		name    string
		offsets []int64
		first   testutil.NgRecord
		then    time.Time // the handshake's time
		rebased bool
		want    string
	}{
		{"year 3000", []int64{0}, testutil.NgRecord{Iface: 0, Micros: micros(y3000), Data: stray}, t0, true,
			"time 3000-01-01T00:00:00Z, the first packet's, lies outside the years captures are stamped in (1970 to 2199), where a later packet's, 2026-01-02T03:04:05Z, lies"},
		{"year 1710", []int64{0, back}, testutil.NgRecord{Iface: 1, Micros: micros(t0), Data: stray}, t0, true,
			"time 1710-01-02T03:04:05Z, the first packet's, lies outside the years captures are stamped in (1970 to 2199), where a later packet's, 2026-01-02T03:04:05Z, lies"},
		{"year 2300", []int64{0}, testutil.NgRecord{Iface: 0, Micros: micros(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)), Data: stray}, t0, true,
			"time 2300-01-01T00:00:00Z, the first packet's, lies outside the years captures are stamped in (1970 to 2199), where a later packet's, 2026-01-02T03:04:05Z, lies"},
		{"year 1800", []int64{0, back1800}, testutil.NgRecord{Iface: 1, Micros: micros(t0), Data: stray}, t0, true,
			"time 1800-01-02T03:04:05Z, the first packet's, lies outside the years captures are stamped in"},
		{"year 3000, then 2400", []int64{0}, testutil.NgRecord{Iface: 0, Micros: micros(y3000), Data: stray}, time.Date(2400, 1, 2, 3, 4, 5, 0, time.UTC), false,
			"time 2400-01-02T03:04:05Z lies more than 292 years from the first packet's, 3000-01-01T00:00:00Z, so one of them"},
	} {
		file := testutil.Pcapng(tc.offsets, []testutil.NgRecord{tc.first,
			{Iface: 0, Micros: micros(tc.then), Data: tcpFrame(c, s, 0x02, 1000, 0, 0)},
			{Iface: 0, Micros: micros(tc.then.Add(time.Millisecond)), Data: tcpFrame(s, c, 0x12, 5000, 1001, 0)}})
		for _, shards := range []int{1, 2} {
			res, err := capture.Read(context.Background(), bytes.NewReader(file), "far.pcapng", capture.Options{Shards: shards})
			frame, more := 2, true
			if tc.rebased {
				frame, more = 1, false
			}
			var list model.ErrorList
			if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Frame != frame || !strings.Contains(list[0].Error(), tc.want) ||
				strings.HasSuffix(list[0].Error(), "(and 1 more packet)") != more {
				t.Fatalf("%s, %d shards: want one error at frame %d, counting one more %v, got %v", tc.name, shards, frame, more, err)
			}
			if len(res.Attempts) != 2 {
				t.Fatalf("%s, %d shards: %+v", tc.name, shards, res.Attempts)
			}
			timed, untimed := res.Attempts[0], res.Attempts[1] // the stray's, the handshake's
			if tc.rebased {
				timed, untimed = untimed, timed
				if !timed.Start.Equal(tc.then) || !timed.SYNACK[0].Time.Equal(tc.then.Add(time.Millisecond)) {
					t.Errorf("%s, %d shards: the handshake is not read with its times: %+v", tc.name, shards, timed)
				}
			}
			if !untimed.Start.IsZero() || res.Attempts[1].Outcome != model.OutcomeSynAckNoAck ||
				!res.Info.First.Equal(timed.Start) || !res.Info.Last.Equal(timed.End) {
				t.Errorf("%s, %d shards: %+v, first %s, last %s", tc.name, shards, res.Attempts, res.Info.First, res.Info.Last)
			}
		}
	}
}

// A first packet of the year 3000, then another stray of 2400, then the
// capture's own packets: the others count from the first of 2026, the
// two strays are read without their times, and the warning names the
// first packet, before the stray it noted first, and counts the other.
func TestFarFirstTimeThenStray(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stray := func(port uint16) []byte { return tcpFrame(netip.AddrPortFrom(c.Addr(), port), s, 0x10, 1, 1, 0) }
	file := testutil.Pcapng([]int64{0}, []testutil.NgRecord{
		{Iface: 0, Micros: micros(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)), Data: stray(1)},
		{Iface: 0, Micros: micros(time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC)), Data: stray(2)},
		{Iface: 0, Micros: micros(t0), Data: tcpFrame(c, s, 0x02, 1000, 0, 0)},
		{Iface: 0, Micros: micros(t0.Add(time.Millisecond)), Data: tcpFrame(s, c, 0x12, 5000, 1001, 0)}})
	res, err := capture.Read(context.Background(), bytes.NewReader(file), "far.pcapng", capture.Options{})
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Frame != 1 ||
		!strings.Contains(list[0].Error(), "time 3000-01-01T00:00:00Z, the first packet's, lies outside the years captures are stamped in (1970 to 2199), where a later packet's, 2026-01-02T03:04:05Z, lies") ||
		!strings.HasSuffix(list[0].Error(), "(and 1 more packet)") {
		t.Fatalf("want one error at frame 1 counting one more, got %v", err)
	}
	if len(res.Attempts) != 3 || !res.Attempts[0].Start.IsZero() || !res.Attempts[1].Start.IsZero() ||
		!res.Attempts[2].Start.Equal(t0) || !res.Info.First.Equal(t0) || !res.Info.Last.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("%+v, first %s, last %s", res.Attempts, res.Info.First, res.Info.Last)
	}
}

// In a series, a pcapng stamped in 1710 sets the time a classic pcap of
// 2026 after it counts from: the pcap's records, which the fast path
// takes a run at a time from the read buffer, are each read without
// their time, as the pcapng's would be: the pcapng's packet, folded with
// its file, can no longer be the one read without its time instead.
func TestFarTimeSeries(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	back := time.Date(1710, 1, 2, 3, 4, 5, 0, time.UTC).Unix() - t0.Unix()
	ng := testutil.Pcapng([]int64{back}, []testutil.NgRecord{{Iface: 0, Micros: micros(t0), Data: tcpFrame(netip.MustParseAddrPort("10.0.0.9:1"), s, 0x10, 1, 1, 0)}})
	var recs []testutil.PcapRecord
	for i := range 100 {
		cl := netip.AddrPortFrom(c.Addr(), uint16(40000+i))
		recs = append(recs, testutil.PcapRecord{Time: t0.Add(time.Duration(i) * time.Millisecond), Data: tcpFrame(cl, s, 0x02, 1000, 0, 0)})
	}
	pcap := testutil.Pcap(recs)
	open := func(b []byte) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	res, _, err := capture.ReadSeries(context.Background(), []capture.SeriesFile{{Name: "a.pcapng", Open: open(ng)}, {Name: "b.pcap", Open: open(pcap)}}, capture.Options{})
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos != (model.Pos{File: "b.pcap", Frame: 1}) ||
		!strings.HasSuffix(list[0].Error(), "(and 99 more packets)") {
		t.Fatalf("want one error at b.pcap's first frame counting 99 more, got %v", err)
	}
	if len(res.Attempts) != 101 {
		t.Fatalf("%d attempts", len(res.Attempts))
	}
	for _, a := range res.Attempts[1:] {
		if !a.Start.IsZero() {
			t.Fatalf("%s: read with a time, %s", a.Pos, a.Start)
		}
	}
}

// The time to SYN/ACK is left unknown, in attempts, rows and summary
// mode's medians alike, where the SYN/ACK was read without its time (the
// year 3000, more than 292 years from the first packet's; 2250 and 2300,
// outside the years captures are stamped in, where the first packet's is
// not; 2300 lies past what nanoseconds since 1970 hold),
// and where the SYN's and SYN/ACK's times, each within 292 years of the
// first packet's, lie further apart than a time.Duration holds (1700 and
// 2150, after a first packet of 1900, where the difference once
// saturated or wrapped).
func TestFarTimeToSYNACK(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stray := tcpFrame(netip.MustParseAddrPort("10.0.0.9:1"), s, 0x10, 1, 1, 0)
	// Interface 1 is stamped back to 1700, interface 2 to 1900.
	offsets := []int64{0, time.Date(1700, 1, 2, 3, 4, 5, 0, time.UTC).Unix() - t0.Unix(), time.Date(1900, 1, 2, 3, 4, 5, 0, time.UTC).Unix() - t0.Unix()}
	handshake := func(first, synAt, saAt testutil.NgRecord) []testutil.NgRecord {
		first.Data = stray
		synAt.Data, saAt.Data = tcpFrame(c, s, 0x02, 1000, 0, 0), tcpFrame(s, c, 0x12, 5000, 1001, 0)
		return []testutil.NgRecord{first, synAt, saAt,
			{Iface: 0, Micros: micros(t0.Add(2 * time.Millisecond)), Data: tcpFrame(c, s, 0x10, 1001, 5001, 0)}}
	}
	at := func(iface int, tm time.Time) testutil.NgRecord {
		return testutil.NgRecord{Iface: iface, Micros: micros(tm)}
	}
	for _, tc := range []struct {
		name    string
		records []testutil.NgRecord
		warned  bool
	}{
		{"SYN/ACK in 3000", handshake(at(0, t0), at(0, t0), at(0, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))), true},
		{"SYN/ACK in 2250", handshake(at(0, t0), at(0, t0), at(0, time.Date(2250, 1, 1, 0, 0, 0, 0, time.UTC))), true},
		{"SYN/ACK in 2300", handshake(at(0, t0), at(0, t0), at(0, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC))), true},
		{"1900, then a SYN in 1700, a SYN/ACK in 2150", handshake(at(2, t0), at(1, t0), at(0, time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC))), false},
	} {
		file := testutil.Pcapng(offsets, tc.records)
		for _, summary := range []bool{false, true} {
			var rows []model.Row
			opts := capture.Options{Summary: capture.Summary{Enabled: summary}}
			if !summary {
				opts.EachRow = keepRows(&rows)
			}
			res, err := capture.Read(context.Background(), bytes.NewReader(file), "far.pcapng", opts)
			if (err != nil) != tc.warned {
				t.Errorf("%s: %v", tc.name, err)
			}
			if summary {
				for _, e := range res.Endpoints {
					if e.MedianSYNACK != 0 {
						t.Errorf("%s: summary: %s's median time to SYN/ACK is %s", tc.name, e.Server, e.MedianSYNACK)
					}
				}
				continue
			}
			if len(rows) != 2 || rows[1].SYNACKTimed || rows[1].SYNACK.N != 1 {
				t.Errorf("%s: rows %+v", tc.name, rows)
			}
		}
	}
}

// A file whose first record is stamped outside the years captures are
// has no first time to be placed among the files of a series by (the
// bundle reader orders them by it, and the year 3000 would put the
// first file last): its Head leaves it zero, as for a file of no record,
// and the file is read alone.
func TestFarFirstTimeHead(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	back := time.Date(1710, 1, 2, 3, 4, 5, 0, time.UTC).Unix() - t0.Unix()
	syn := tcpFrame(c, s, 0x02, 1000, 0, 0)
	for _, tc := range []struct {
		name  string
		first testutil.NgRecord
		want  time.Time
	}{
		{"year 3000", testutil.NgRecord{Iface: 0, Micros: micros(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)), Data: syn}, time.Time{}},
		{"year 1710", testutil.NgRecord{Iface: 1, Micros: micros(t0), Data: syn}, time.Time{}},
		{"year 2026", testutil.NgRecord{Iface: 0, Micros: micros(t0), Data: syn}, t0},
	} {
		file := testutil.Pcapng([]int64{0, back}, []testutil.NgRecord{tc.first, {Iface: 0, Micros: micros(t0.Add(time.Second)), Data: syn}})
		h, err := capture.ReadHead(bytes.NewReader(file))
		if err != nil || h.Format != "pcapng" || !h.First.Equal(tc.want) {
			t.Errorf("%s: head %+v, %v; want first %s", tc.name, h, err, tc.want)
		}
	}
}

// An attempt whose last packet is read without its time (stamped in
// 2250, or in 3000, in a capture of 2026) ends at its last packet with
// one, rather than having no end.
func TestFarLastTime(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, stray := range []time.Time{time.Date(2250, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		file := testutil.Pcapng([]int64{0}, []testutil.NgRecord{
			{Iface: 0, Micros: micros(t0), Data: tcpFrame(c, s, 0x02, 1000, 0, 0)},
			{Iface: 0, Micros: micros(t0.Add(time.Millisecond)), Data: tcpFrame(s, c, 0x12, 5000, 1001, 0)},
			{Iface: 0, Micros: micros(t0.Add(2 * time.Millisecond)), Data: tcpFrame(c, s, 0x10, 1001, 5001, 0)},
			{Iface: 0, Micros: micros(stray), Data: tcpFrame(c, s, 0x18, 1001, 5001, 100)},
		})
		for _, shards := range []int{1, 2} {
			res, err := capture.Read(context.Background(), bytes.NewReader(file), "far.pcapng", capture.Options{Shards: shards})
			var list model.ErrorList
			if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Frame != 4 {
				t.Fatalf("%d, %d shards: want one error at frame 4, got %v", stray.Year(), shards, err)
			}
			if len(res.Attempts) != 1 || !res.Attempts[0].Start.Equal(t0) || !res.Attempts[0].End.Equal(t0.Add(2*time.Millisecond)) {
				t.Errorf("%d, %d shards: %+v", stray.Year(), shards, res.Attempts)
			}
		}
	}
}

// Packets a day apart or less, on either side of the capture years' ends
// (1969-12-31T23:59:59, then 1970-01-01T00:00:01, as a device's clock at
// boot may stamp them), are read with their times: the stamp outside the
// years is no stray, and neither is read without its time.
func TestNearYearsEnd(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80")
	epoch := time.Unix(0, 0).UTC()
	for _, tc := range []struct {
		name    string
		offsets []int64
		recs    []testutil.NgRecord
		times   []time.Time
	}{
		{"before, then after 1970", []int64{-1, 0},
			[]testutil.NgRecord{{Iface: 0, Micros: 0}, {Iface: 1, Micros: 1e6}},
			[]time.Time{epoch.Add(-time.Second), epoch.Add(time.Second)}},
		{"after, then before 1970", []int64{0, -1},
			[]testutil.NgRecord{{Iface: 0, Micros: 1e6}, {Iface: 1, Micros: 0}},
			[]time.Time{epoch.Add(time.Second), epoch.Add(-time.Second)}},
		{"before, then after 2200", []int64{0},
			[]testutil.NgRecord{{Iface: 0, Micros: micros(time.Date(2199, 12, 31, 23, 59, 59, 0, time.UTC))}, {Iface: 0, Micros: micros(time.Date(2200, 1, 1, 0, 0, 1, 0, time.UTC))}},
			[]time.Time{time.Date(2199, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 1, 0, time.UTC)}},
	} {
		tc.recs[0].Data = tcpFrame(c, s, 0x02, 1000, 0, 0)
		tc.recs[1].Data = tcpFrame(s, c, 0x12, 5000, 1001, 0)
		res, err := capture.Read(context.Background(), bytes.NewReader(testutil.Pcapng(tc.offsets, tc.recs)), "near.pcapng", capture.Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if len(res.Attempts) != 1 || len(res.Attempts[0].SYNACK) != 1 ||
			!res.Attempts[0].SYN[0].Time.Equal(tc.times[0]) || !res.Attempts[0].SYNACK[0].Time.Equal(tc.times[1]) {
			t.Errorf("%s: %+v", tc.name, res.Attempts)
		}
	}
}

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
