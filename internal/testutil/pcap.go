package testutil

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
)

// CutPcap writes to out the packets of the pcap file in from the one at
// 10% of it to the one at 60%: the same traffic seen by a capture started
// later and stopped earlier. It fails t when nothing, or everything, is
// kept.
func CutPcap(t testing.TB, in, out string) {
	t.Helper()
	open := func() (*pcapgo.Reader, *os.File) {
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		r, err := pcapgo.NewReader(f)
		if err != nil {
			f.Close()
			t.Fatal(err)
		}
		return r, f
	}
	r, f := open()
	n := 0
	for {
		if _, _, err := r.ReadPacketData(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	f.Close()
	o, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	r, f = open()
	defer f.Close()
	w := pcapgo.NewWriter(o)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for i := 0; ; i++ {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if i >= n/10 && i < n*6/10 {
			if err := w.WritePacket(ci, data); err != nil {
				t.Fatal(err)
			}
			kept++
		}
	}
	if kept == 0 || kept >= n {
		t.Fatalf("cut %s to %d of %d packets", in, kept, n)
	}
}
