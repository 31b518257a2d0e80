package pcapfile

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// Plain hands out the buffered bytes of a little-endian pcap file from the
// next record on, with its nanosecond factor; what Skip takes, Next no
// longer returns. Other files give none.
func TestPlain(t *testing.T) {
	recs := [][]byte{[]byte("first"), []byte("second record"), []byte("third")}
	for _, nano := range []bool{false, true} {
		r, err := NewReader(bytes.NewReader(pcapFile(false, nano, 65535, recs...)))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := r.Plain(); len(b) != 0 {
			t.Fatalf("nano %v: %d bytes before the first read", nano, len(b))
		}
		var rec Record
		if err := r.Next(&rec); err != nil || string(rec.Data) != "first" {
			t.Fatalf("nano %v: first record %q, %v", nano, rec.Data, err)
		}
		b, factor := r.Plain()
		if want := 2*16 + len(recs[1]) + len(recs[2]); len(b) != want {
			t.Fatalf("nano %v: %d bytes buffered, want %d", nano, len(b), want)
		}
		if want := map[bool]uint32{false: 1000, true: 1}[nano]; factor != want {
			t.Errorf("nano %v: factor %d, want %d", nano, factor, want)
		}
		if n := binary.LittleEndian.Uint32(b[8:12]); string(b[16:16+n]) != "second record" {
			t.Fatalf("nano %v: the bytes start with %q", nano, b[:16+n])
		}
		r.Skip(16 + len(recs[1]))
		if err := r.Next(&rec); err != nil || string(rec.Data) != "third" {
			t.Fatalf("nano %v: after Skip, %q, %v", nano, rec.Data, err)
		}
		r.Close()
	}
	ng := append(ngSHB(1, 0), ngIDB(1, 0)...)
	for name, file := range map[string][]byte{"big-endian": pcapFile(true, false, 65535, recs...), "pcapng": ng} {
		r, err := NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		r.Next(&rec)
		if b, factor := r.Plain(); b != nil || factor != 0 {
			t.Errorf("%s: %d plain bytes, factor %d", name, len(b), factor)
		}
		r.Close()
	}
}
