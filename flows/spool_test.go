package flows_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
	"github.com/netmortem/netmortem/flows"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// spoolFile returns an empty file for a Spool, removed after the test.
func spoolFile(t testing.TB) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "spool-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// roundTrip spools every attempt of all and checks that Each gives each
// back equal, in order.
func roundTrip(t *testing.T, all []model.Attempt) {
	t.Helper()
	s := flows.NewSpool(spoolFile(t))
	for i := range all {
		if !s.Add(&all[i]) {
			t.Fatalf("attempt %d not kept: %v", i+1, s.Err())
		}
	}
	if s.Len() != len(all) {
		t.Fatalf("Len %d, want %d", s.Len(), len(all))
	}
	i := 0
	err := s.Each(context.Background(), func(a *model.Attempt) {
		if i < len(all) && !reflect.DeepEqual(*a, all[i]) {
			t.Errorf("attempt %d:\n got %+v\nwant %+v", i+1, *a, all[i])
		}
		i++
	})
	if err != nil || i != len(all) {
		t.Fatalf("Each: %d attempts, want %d, error %v", i, len(all), err)
	}
}

// The spool keeps every field of an attempt: adding one to the model
// without keeping it fails here first.
func TestSpoolFields(t *testing.T) {
	want := map[reflect.Type][]string{
		reflect.TypeFor[model.Attempt](): {"Node", "Pos", "Client", "Server", "Outer", "Outcome", "ConnState", "History",
			"Start", "End", "SYN", "SYNACK", "ClientRST", "ServerRST", "FirstAck", "ClientFIN", "ServerFIN", "ICMP",
			"Reused", "Packets", "ClientBytes", "ServerBytes", "ISN", "MSS", "ServerMSS", "ClientData", "ServerData"},
		reflect.TypeFor[model.Pos]():       {"File", "Line", "Col", "Frame", "Object", "Path"},
		reflect.TypeFor[model.Seg]():       {"Frame", "Time", "Line", "File"},
		reflect.TypeFor[model.Tuple]():     {"Src", "Dst"},
		reflect.TypeFor[model.DataSizes](): {"MaxSent", "MaxAcked", "LargeRetx", "LargeRetxSize", "Retx"},
	}
	for typ, fields := range want {
		var got []string
		for f := range typ.Fields() {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, fields) {
			t.Errorf("%v has fields %v; the spool keeps %v", typ, got, fields)
		}
	}
	// Every field set, each to its own value, comes back.
	var a model.Attempt
	n := 0
	fill(reflect.ValueOf(&a).Elem(), &n)
	if a.Outer == nil || a.ClientData == nil || len(a.ServerData.Retx) == 0 || a.Pos.Path == "" || !a.ICMP {
		t.Fatalf("fill left fields unset: %+v", a)
	}
	roundTrip(t, []model.Attempt{a, {}, a})
}

// fill sets every field of v, each to a value of its own (n counts them).
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(1_700_000_000+int64(*n), int64(*n)).UTC()))
		return
	case reflect.TypeFor[netip.AddrPort]():
		ip := netip.AddrFrom4([4]byte{10, 0, 0, byte(*n)})
		switch *n % 3 {
		case 1:
			ip = netip.MustParseAddr(fmt.Sprintf("fe80::%d%%eth%d", *n, *n))
		case 2:
			ip = netip.MustParseAddr(fmt.Sprintf("::ffff:10.0.0.%d", *n))
		}
		v.Set(reflect.ValueOf(netip.AddrPortFrom(ip, uint16(1000+*n))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n) * 1000003)
	case reflect.Uint16, reflect.Uint32:
		v.SetUint(uint64(*n) * 7)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), n)
		fill(v.Index(1), n)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	default:
		panic("fill: no value for " + v.Type().String())
	}
}

// Attempts of every shape come back as they were: nil lists and empty
// ones, pointers set or not, strings that repeat and strings that do not
// (more than the spool refers to by index), times far from now.
func TestSpoolExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	names := []string{"", "a.pcap", "node-1", "ünï", "bad\xff", "SF", "ShADadfF"}
	pick := func(i int) string {
		if rng.IntN(3) == 0 {
			return fmt.Sprintf("unique-%d", i) // past the strings kept by index
		}
		return names[rng.IntN(len(names))]
	}
	segs := func(i int) []model.Seg {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []model.Seg{}
		}
		var l []model.Seg
		for range 1 + rng.IntN(5) {
			l = append(l, model.Seg{Frame: rng.IntN(1 << min(40, strconv.IntSize-2)), Line: rng.IntN(3), File: pick(i),
				Time: t0.Add(time.Duration(rng.Int64N(1 << 50)))})
		}
		return l
	}
	seg := func(i int) *model.Seg {
		if rng.IntN(2) == 0 {
			return nil
		}
		return &model.Seg{Frame: rng.IntN(1 << 20), Time: t0.Add(time.Duration(rng.Int64N(1 << 30))), File: pick(i)}
	}
	addr := func() netip.AddrPort {
		switch rng.IntN(4) {
		case 0:
			return netip.AddrPort{}
		case 1:
			return netip.AddrPortFrom(netip.MustParseAddr("2001:db8::1"), uint16(rng.IntN(65536)))
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(rng.IntN(256)), 0, 1}), uint16(rng.IntN(65536)))
	}
	var all []model.Attempt
	for i := range 70_000 {
		a := model.Attempt{Node: pick(i), Pos: model.Pos{File: pick(i), Frame: rng.IntN(1 << min(40, strconv.IntSize-2)), Line: rng.IntN(2)},
			Client: addr(), Server: addr(), Outcome: model.Outcome(pick(i)), ConnState: pick(i), History: pick(i),
			Start: t0.Add(time.Duration(rng.Int64N(1 << 62))), End: time.Unix(-rng.Int64N(1<<40), rng.Int64N(1e9)).UTC(),
			SYN: segs(i), SYNACK: segs(i), ClientRST: segs(i), ServerRST: segs(i), FirstAck: seg(i), ClientFIN: seg(i),
			ServerFIN: seg(i), ICMP: rng.IntN(2) == 0, Reused: pick(i), Packets: rng.IntN(1 << 20),
			ClientBytes: rng.Int64N(1 << 40), ServerBytes: -rng.Int64N(1 << 3), ISN: rng.Uint32(),
			MSS: uint16(rng.IntN(65536)), ServerMSS: uint16(rng.IntN(65536))}
		if rng.IntN(5) == 0 {
			a.Outer = &model.Tuple{Src: addr(), Dst: addr()}
		}
		if rng.IntN(3) == 0 {
			a.ClientData = &model.DataSizes{MaxSent: rng.IntN(9000), MaxAcked: rng.IntN(9000), LargeRetx: rng.IntN(9),
				LargeRetxSize: rng.IntN(9000), Retx: segs(i)}
		}
		if rng.IntN(3) == 0 {
			a.ServerData = &model.DataSizes{Retx: segs(i)}
		}
		all = append(all, a)
	}
	roundTrip(t, all)
}

// Every attempt of every fixture capture, and of the shared corpus's,
// comes back from the spool as the reader gave it.
func TestSpoolKeepsCaptures(t *testing.T) {
	files := testutil.FilesByHead(t, func(path string, head []byte) bool {
		_, ok := capture.Sniff(head)
		return ok || strings.HasSuffix(path, ".pcap.gz") || strings.Contains(path, "/captures/text/")
	}, filepath.Join(testutil.Root(), "fixtures"), testutil.CorpusDir(t, "pcap"))
	kept := 0
	for _, f := range files {
		snap, _, err := parse.Open(context.Background(), f, &parse.Options{Formats: captureFormats(), KeepAttempts: true})
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, snap.Attempts)
		kept += len(snap.Attempts)
	}
	if kept < 1000 {
		t.Errorf("only %d attempts kept", kept)
	}
}

// An attempt whose times are not in UTC is refused, and nothing after it
// is kept: Each says why rather than give part of the attempts.
func TestSpoolRefusesOtherLocations(t *testing.T) {
	s := flows.NewSpool(spoolFile(t))
	a := model.Attempt{Start: time.Unix(1, 0).UTC()}
	if !s.Add(&a) {
		t.Fatal(s.Err())
	}
	local := a
	local.SYN = []model.Seg{{Time: time.Unix(2, 0).In(time.FixedZone("X", 3600))}}
	if s.Add(&local) || s.Add(&a) || s.Len() != 1 {
		t.Fatalf("kept after a time in another location: Len %d", s.Len())
	}
	called := false
	err := s.Each(context.Background(), func(*model.Attempt) { called = true })
	if called || err == nil || !strings.Contains(err.Error(), "spool: attempt 2: a time not in UTC") {
		t.Errorf("Each: called %v, error %v", called, err)
	}
}

// A spool file cut short, or changed, is an error naming the attempt,
// not a panic or an attempt made up.
func TestSpoolFileDamaged(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(f *os.File, size int64) error
		want string
	}{
		{"cut", func(f *os.File, size int64) error { return f.Truncate(size - 3) }, "spool: attempt 3: unexpected EOF"},
		{"overwritten", func(f *os.File, size int64) error {
			_, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 8), size-8)
			return err
		}, "spool: attempt 3: "},
		{"a length of 1 GiB", func(f *os.File, size int64) error {
			_, err := f.WriteAt([]byte{0x80, 0x80, 0x80, 0x80, 0x04}, 0)
			return err
		}, "spool: attempt 1: record longer than the file"},
		{"a length past 64 bits", func(f *os.File, size int64) error {
			_, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 10), 0)
			return err
		}, "spool: attempt 1: binary: varint overflows a 64-bit integer"},
	} {
		f := &damaged{File: spoolFile(t), do: damage.do}
		s := flows.NewSpool(f)
		var a model.Attempt
		n := 0
		fill(reflect.ValueOf(&a).Elem(), &n)
		for range 3 {
			s.Add(&a)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := 0
		err := s.Each(context.Background(), func(*model.Attempt) { got++ })
		runtime.ReadMemStats(&after)
		want := 2 // the attempts before the one damaged
		if strings.Contains(damage.want, "attempt 1:") {
			want = 0
		}
		if err == nil || !strings.HasPrefix(err.Error(), damage.want) || got != want {
			t.Errorf("%s: %d attempts, error %v, want %d and %q", damage.name, got, err, want, damage.want)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
			t.Errorf("%s: %d bytes allocated to read three attempts", damage.name, n)
		}
	}
}

// damaged is a spool's file, damaged when Each goes back to its start
// to read it.
type damaged struct {
	*os.File
	do func(f *os.File, size int64) error
}

func (d *damaged) Seek(off int64, whence int) (int64, error) {
	st, err := d.File.Stat()
	if err == nil {
		err = d.do(d.File, st.Size())
	}
	if err != nil {
		return 0, err
	}
	return d.File.Seek(off, whence)
}

// Each stops when its context ends: the attempts of the batch being
// written, and no more.
func TestSpoolEachStops(t *testing.T) {
	s := flows.NewSpool(spoolFile(t))
	a := model.Attempt{Start: time.Unix(1, 0).UTC()}
	for range 5000 {
		s.Add(&a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := 0
	err := s.Each(ctx, func(*model.Attempt) {
		got++
		cancel()
	})
	if err != context.Canceled || got == 0 || got > 256 {
		t.Errorf("Each after its context ended: %d attempts, error %v", got, err)
	}
}

// An error writing the file is reported by Flush, before Each, however
// few attempts the spool buffers.
func TestSpoolFlushReportsWriteError(t *testing.T) {
	s := flows.NewSpool(failing{spoolFile(t)})
	a := model.Attempt{Start: time.Unix(1, 0).UTC()}
	if !s.Add(&a) || s.Err() != nil {
		t.Fatalf("a buffered attempt: %v", s.Err())
	}
	if err := s.Flush(); err == nil || !strings.Contains(err.Error(), "no space left") || s.Err() != err || s.Add(&a) {
		t.Errorf("Flush: %v, Err %v", err, s.Err())
	}
	if err := s.Each(context.Background(), func(*model.Attempt) { t.Error("an attempt listed") }); err == nil {
		t.Error("Each after a write failed: no error")
	}
}

// failing is a file whose writes fail, as on a full disk.
type failing struct{ *os.File }

func (failing) Write([]byte) (int, error) { return 0, syscall.ENOSPC }
