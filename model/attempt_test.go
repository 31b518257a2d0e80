package model

import (
	"net/netip"
	"reflect"
	"testing"
	"time"
)

// fullAttempt returns an attempt whose every slice and pointer is set.
func fullAttempt() Attempt {
	t0 := time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC)
	seg := func(frame int) Seg {
		return Seg{Frame: frame, Time: t0.Add(time.Duration(frame) * time.Millisecond), File: "a.pcap"}
	}
	segp := func(frame int) *Seg { g := seg(frame); return &g }
	return Attempt{
		Node: "node-1", Pos: Pos{File: "a.pcap", Frame: 1},
		Client: netip.MustParseAddrPort("10.0.0.1:40000"), Server: netip.MustParseAddrPort("10.0.0.2:80"),
		Outer:   &Tuple{Src: netip.MustParseAddrPort("192.168.0.1:4789"), Dst: netip.MustParseAddrPort("192.168.0.2:4789")},
		Outcome: OutcomeEstablished, ConnState: "SF", History: "ShADadFf", Start: t0, End: t0.Add(time.Second),
		SYN: []Seg{seg(1), seg(5)}, SYNACK: []Seg{seg(2)}, ClientRST: []Seg{seg(9)}, ServerRST: []Seg{seg(10)},
		FirstAck: segp(3), ClientFIN: segp(7), ServerFIN: segp(8),
		Packets: 10, ClientBytes: 100, ServerBytes: 200, ISN: 7,
		ClientData: &DataSizes{MaxSent: 100, MaxAcked: 50, LargeRetx: 1, LargeRetxSize: 100, Retx: []Seg{seg(6)}},
		ServerData: &DataSizes{MaxSent: 200, MaxAcked: 200, Retx: []Seg{seg(11)}},
	}
}

// A clone equals its attempt and shares no memory with it: writing
// through every slice and pointer of the attempt leaves the clone as it
// was. A slice or pointer field added to Attempt and not copied by Clone
// fails here.
func TestAttemptClone(t *testing.T) {
	a := fullAttempt()
	want := fullAttempt()
	c := a.Clone()
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("clone %+v, want %+v", c, want)
	}
	v := reflect.ValueOf(&a).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Slice:
			if f.Len() == 0 {
				t.Fatalf("%s: empty in the test's attempt", v.Type().Field(i).Name)
			}
			f.Index(0).Set(reflect.Zero(f.Type().Elem()))
		case reflect.Pointer:
			if f.IsNil() {
				t.Fatalf("%s: nil in the test's attempt", v.Type().Field(i).Name)
			}
			f.Elem().Set(reflect.Zero(f.Type().Elem()))
		}
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("writing through the attempt changed its clone: %+v", c)
	}
	// The data sizes' retransmissions are copied too.
	b := fullAttempt()
	c = b.Clone()
	b.ClientData.Retx[0].Frame = 99
	if c.ClientData.Retx[0].Frame != 6 {
		t.Error("the clone shares its data sizes' retransmissions")
	}
}

// Nil slices and pointers stay nil.
func TestAttemptCloneEmpty(t *testing.T) {
	var a Attempt
	if c := a.Clone(); !reflect.DeepEqual(c, a) {
		t.Errorf("clone of an empty attempt: %+v", c)
	}
}

// CloneInto allocates nothing of its own: all the memory of the copy
// comes from its callers, which a program copying hundreds of thousands
// of attempts into memory it reuses relies on.
func TestAttemptCloneIntoAllocs(t *testing.T) {
	a := fullAttempt()
	var (
		dst   Attempt
		segs  = make([]Seg, 0, 64)
		sizes = make([]DataSizes, 0, 4)
	)
	keepSegs := func(n int) []Seg {
		k := len(segs)
		segs = segs[:k+n]
		return segs[k : k+n : k+n]
	}
	keepSizes := func(n int) []DataSizes {
		k := len(sizes)
		sizes = sizes[:k+n]
		return sizes[k : k+n : k+n]
	}
	a.Outer = nil // the one pointer CloneInto copies into memory of its own
	n := testing.AllocsPerRun(100, func() {
		segs, sizes = segs[:0], sizes[:0]
		a.CloneInto(&dst, keepSegs, keepSizes)
	})
	if n != 0 {
		t.Errorf("CloneInto allocates %v times a copy, want 0", n)
	}
	if !reflect.DeepEqual(dst, a) || dst.FirstAck == a.FirstAck || dst.ServerFIN == a.ServerFIN {
		t.Errorf("CloneInto: copy %+v, want an equal attempt in other memory", dst)
	}
}
