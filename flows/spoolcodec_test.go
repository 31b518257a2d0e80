package flows

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/netmortem/netmortem/model"
)

// Any bytes read as a spooled record give an error or an attempt, never
// a panic; an attempt read is written again as the same record.
func FuzzSpoolRecord(f *testing.F) {
	t0 := time.Unix(1_764_460_800, 5).UTC()
	for _, a := range []model.Attempt{
		{},
		{Node: "n", Pos: model.Pos{File: "a.pcap", Frame: 9}, Client: netip.MustParseAddrPort("10.0.0.1:4000"),
			Server: netip.MustParseAddrPort("[fe80::1%eth0]:80"), Outcome: model.Outcome("refused"), History: "Sr",
			Start: t0, End: t0, SYN: []model.Seg{{Frame: 9, Time: t0}}, ServerRST: []model.Seg{},
			FirstAck: &model.Seg{Line: 3}, Outer: &model.Tuple{}, ClientData: &model.DataSizes{MaxSent: 1448, Retx: []model.Seg{{}}},
			ICMP: true, Reused: "open", Packets: 2, ISN: 1 << 31, MSS: 1460},
	} {
		e := spoolEncoder{idx: map[string]uint32{}}
		rec, err := e.attempt(nil, &a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		d := spoolDecoder{rec: rec, b: &spoolBatch{}}
		if d.attempt() != nil {
			return
		}
		a := d.b.a[0]
		e := spoolEncoder{idx: map[string]uint32{}}
		again, err := e.attempt(nil, &a)
		if err != nil {
			t.Fatalf("%+v: %v", a, err)
		}
		d2 := spoolDecoder{rec: again, b: &spoolBatch{}}
		if err := d2.attempt(); err != nil || !reflect.DeepEqual(a, d2.b.a[0]) {
			t.Fatalf("read %+v, written and read again %+v, %v", a, d2.b.a, err)
		}
	})
}
