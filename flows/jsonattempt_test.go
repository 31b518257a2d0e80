package flows

import (
	"encoding/json"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/netmortem/netmortem/model"
)

// Attempts of every shape are written as json.MarshalIndent writes them,
// byte for byte, and with its error where it has one: omitted and empty
// fields, nil and empty lists, strings that encoding/json escapes (HTML,
// control characters, U+2028, invalid UTF-8), addresses with zones or
// none, times in other zones, and times RFC 3339 cannot write.
func TestJSONAttemptAsMarshalIndent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	strs := []string{"", "c.pcap", `say "hi" \ there`, "<script>&amp;", "tab\tnew\nline\r\b\f\x01\x1f\x7f", "ünï 日本",
		"\u2028\u2029", "bad\xff\xfe", "node-1", "SF", "ShADadFf", "time-wait"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	zones := []*time.Location{time.UTC, time.FixedZone("x", 2*3600+30*60), time.FixedZone("y", -11*3600), time.FixedZone("bad", 25*3600)}
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	when := func() time.Time {
		tm := base.Add(time.Duration(rng.Int64N(int64(time.Hour)))).In(zones[rng.IntN(len(zones))])
		switch rng.IntN(40) {
		case 0:
			return time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)
		case 1:
			return time.Time{}
		}
		if rng.IntN(8) > 0 && tm.Location() == zones[3] {
			return tm.UTC() // the bad zone now and then only
		}
		return tm
	}
	addrs := []netip.AddrPort{{}, netip.MustParseAddrPort("10.0.0.1:80"), netip.MustParseAddrPort("[fd00::1%eth<0>]:443"),
		netip.MustParseAddrPort("[::ffff:10.1.2.3]:8080")}
	addr := func() netip.AddrPort { return addrs[rng.IntN(len(addrs))] }
	segs := func() []model.Seg {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []model.Seg{}
		}
		var l []model.Seg
		for range 1 + rng.IntN(3) {
			g := model.Seg{Frame: rng.IntN(1000), Time: when()}
			if rng.IntN(3) == 0 {
				g.Line = rng.IntN(50)
			}
			if rng.IntN(3) == 0 {
				g.File = str()
			}
			l = append(l, g)
		}
		return l
	}
	seg := func() *model.Seg {
		if l := segs(); len(l) > 0 {
			return &l[0]
		}
		return nil
	}
	sizes := func() *model.DataSizes {
		if rng.IntN(2) == 0 {
			return nil
		}
		return &model.DataSizes{MaxSent: rng.IntN(9000), MaxAcked: rng.IntN(2) * 1448, LargeRetx: rng.IntN(2) * 3,
			LargeRetxSize: rng.IntN(2) * 8948, Retx: segs()}
	}
	var j jsonAttempt
	errs := 0
	for i := range 5000 {
		a := model.Attempt{Node: str(), Pos: model.Pos{File: str(), Line: rng.IntN(2) * 7, Col: rng.IntN(2) * 3,
			Frame: rng.IntN(2) * 12, Object: str(), Path: str()}, Client: addr(), Server: addr(),
			Outcome: model.Outcome(str()), ConnState: str(), History: str(), Start: when(), End: when(),
			SYN: segs(), SYNACK: segs(), ClientRST: segs(), ServerRST: segs(), FirstAck: seg(), ClientFIN: seg(), ServerFIN: seg(),
			ICMP: rng.IntN(2) == 0, Reused: str(), Packets: rng.IntN(100), ClientBytes: rng.Int64N(1<<40) - 5,
			ServerBytes: rng.Int64N(9), ISN: rng.Uint32(), MSS: uint16(rng.IntN(2) * 1460), ServerMSS: uint16(rng.IntN(2) * 1400),
			ClientData: sizes(), ServerData: sizes()}
		if rng.IntN(3) == 0 {
			a.Outer = &model.Tuple{Src: addr(), Dst: addr()}
		}
		want, wantErr := json.MarshalIndent(&a, "    ", "  ")
		got, err := j.appendJSONAttempt([]byte("prefix"), &a)
		if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("attempt %d: error %v, want %v", i, err, wantErr)
		}
		if err != nil {
			errs++
			continue
		}
		if string(got) != "prefix"+string(want) {
			t.Fatalf("attempt %d:\n%s\nwant\n%s", i, got, want)
		}
	}
	if errs == 0 || errs > 2500 {
		t.Errorf("%d attempts of 5000 with an error: want some, not most", errs)
	}
}
