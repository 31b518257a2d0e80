package bundle_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// sysctlLines is n distinct sysctl lines.
func sysctlLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString("net.ipv4.conf.veth" + strconv.Itoa(i) + ".rp_filter = 1\n")
	}
	return b.Bytes()
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func warningWith(warns model.ErrorList, file, text string) bool {
	for _, w := range warns {
		if w.Pos.File == file && strings.Contains(w.Error(), text) && errors.Is(w, parse.ErrLimit) {
			return true
		}
	}
	return false
}

// A file past the input's share of the memory budget is read up to it and
// kept; once the bundle's budget is spent, the next file is not read.
func TestMemoryBudget(t *testing.T) {
	big := sysctlLines(40000) // about 1.3 MB
	dst := writeFile(t, "m.tar", writeTar(t, []member{
		{name: "b/big.txt", typ: tar.TypeReg, body: big},
		{name: "b/small.txt", typ: tar.TypeReg, body: []byte(sysctlBody)},
	}))
	t.Run("MaxInputMemory", func(t *testing.T) {
		snap, warns := open(t, dst, &parse.Options{Limits: parse.Limits{MaxInputMemory: 1 << 20}})
		got := inputs(snap, dst+"!")
		if !warningWith(warns, dst+"!b/big.txt", "Limits.MaxInputMemory") {
			t.Errorf("want a budget warning on b/big.txt, got %v", warns)
		}
		// 1 MiB at 5 bytes a byte and 32 a line, of 35-byte lines: about
		// 5000 lines, and at most one read (64 KiB) more.
		if n := got["b/big.txt"].Records; n < 4000 || n > 7500 {
			t.Errorf("b/big.txt: %d records, want what 1 MiB of budget holds", n)
		}
		for _, w := range warns {
			if errors.Is(w, parse.ErrSyntax) {
				t.Errorf("the cut left a partial line: %v", w)
			}
		}
		if got["b/small.txt"].Records != 2 {
			t.Errorf("the rest was not read: %+v", got["b/small.txt"])
		}
	})
	t.Run("MaxMemory", func(t *testing.T) {
		snap, warns := open(t, dst, &parse.Options{Limits: parse.Limits{MaxMemory: 1 << 20, MaxInputMemory: 1 << 30}})
		got := inputs(snap, dst+"!")
		if !warningWith(warns, dst+"!b/big.txt", "Limits.MaxMemory") || got["b/big.txt"].Records == 0 {
			t.Errorf("want b/big.txt cut at the bundle's budget and a warning, got %+v %v", got["b/big.txt"], warns)
		}
		if !warningWith(warns, dst+"!b/small.txt", "is spent") || got["b/small.txt"].Skipped == "" {
			t.Errorf("want b/small.txt not read once the budget is spent, got %+v %v", got["b/small.txt"], warns)
		}
	})
}

// overlapZip writes a zip whose central directory lists n entries that all
// point at one stored member holding body, after a separate one.
func overlapZip(body []byte, n int) []byte {
	var buf bytes.Buffer
	le := func(vs ...any) {
		for _, v := range vs {
			binary.Write(&buf, binary.LittleEndian, v)
		}
	}
	type cd struct {
		name   string
		data   []byte
		offset uint32
	}
	var dir []cd
	local := func(name string, data []byte) uint32 {
		off := uint32(buf.Len())
		le(uint32(0x04034b50), uint16(20), uint16(0), uint16(0), uint16(0), uint16(0),
			crc32.ChecksumIEEE(data), uint32(len(data)), uint32(len(data)), uint16(len(name)), uint16(0))
		buf.WriteString(name)
		buf.Write(data)
		return off
	}
	dir = append(dir, cd{"small.txt", []byte(sysctlBody), local("small.txt", []byte(sysctlBody))})
	off := local("one-0.txt", body)
	for i := range n {
		dir = append(dir, cd{"one-" + strconv.Itoa(i) + ".txt", body, off})
	}
	start := uint32(buf.Len())
	for _, d := range dir {
		le(uint32(0x02014b50), uint16(20), uint16(20), uint16(0), uint16(0), uint16(0), uint16(0),
			crc32.ChecksumIEEE(d.data), uint32(len(d.data)), uint32(len(d.data)), uint16(len(d.name)),
			uint16(0), uint16(0), uint16(0), uint16(0), uint32(0o644<<16), d.offset)
		buf.WriteString(d.name)
	}
	size := uint32(buf.Len()) - start
	le(uint32(0x06054b50), uint16(0), uint16(0), uint16(len(dir)), uint16(len(dir)), size, start, uint16(0))
	return buf.Bytes()
}

// Zip entries that point at the data of another, and entries named like
// an earlier one, are refused with one warning; the others are read.
func TestZipOverlapAndDuplicates(t *testing.T) {
	dst := writeFile(t, "o.zip", overlapZip([]byte("net.core.somaxconn = 4096\n"), 50))
	snap, warns := open(t, dst, nil)
	got := inputs(snap, dst+"!")
	if !warningWith(warns, dst, "49 members whose data overlaps another's") {
		t.Errorf("want one warning on the overlapping members, got %v", warns)
	}
	if len(got) != 2 || got["small.txt"].Records != 2 || got["one-0.txt"].Records != 1 {
		t.Errorf("want small.txt and the first of the overlapping members read, got %v", got)
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, body := range []string{sysctlBody, "net.core.somaxconn = 1\n"} {
		w, _ := zw.Create("b/sysctl.txt")
		w.Write([]byte(body))
	}
	zw.Close()
	dst = writeFile(t, "d.zip", buf.Bytes())
	snap, warns = open(t, dst, nil)
	if !warningWith(warns, dst, `1 members named like an earlier one ("b/sysctl.txt")`) {
		t.Errorf("want a warning on the duplicate member, got %v", warns)
	}
	if len(snap.Sysctls) != 2 {
		t.Errorf("want the first b/sysctl.txt read (2 sysctls), got %+v", snap.Sysctls)
	}
}

// Limits.MaxEntries counts the members of every archive, nested ones
// included.
func TestEntriesAcrossNesting(t *testing.T) {
	var members []member
	for i := range 4 {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for j := range 5 {
			w, _ := zw.Create("n" + strconv.Itoa(j) + ".txt")
			w.Write([]byte(sysctlBody))
		}
		zw.Close()
		members = append(members, member{name: "z" + strconv.Itoa(i) + ".zip", typ: tar.TypeReg, body: buf.Bytes()})
	}
	dst := writeFile(t, "e.tar", writeTar(t, members))
	snap, warns := open(t, dst, &parse.Options{Limits: parse.Limits{MaxEntries: 12}})
	// z0.zip and its 5 members, z1.zip and its 5: 12 entries.
	if n := len(snap.Sysctls) / 2; n != 10 {
		t.Errorf("%d nested members read, want 10 (MaxEntries 12 less the 2 archives they are in)", n)
	}
	if !hasWarning(warns, parse.ErrLimit, dst) {
		t.Errorf("want the walk stopped at the limit, got %v", warns)
	}
	// A zip past the limit is refused from its end record, before its
	// central directory is read.
	zdst := writeFile(t, "z.zip", members[0].body)
	snap, warns = open(t, zdst, &parse.Options{Limits: parse.Limits{MaxEntries: 4}})
	if len(snap.Sysctls) != 0 || !warningWith(warns, zdst, "archive has 5 members, more than the 4 left") {
		t.Errorf("zip of 5 members, MaxEntries 4: %d sysctls, warnings %v", len(snap.Sysctls), warns)
	}
	// More than 65535 entries: the count is in the zip64 record.
	var big bytes.Buffer
	zw := zip.NewWriter(&big)
	for i := range 70000 {
		zw.CreateHeader(&zip.FileHeader{Name: strconv.Itoa(i), Method: zip.Store})
	}
	zw.Close()
	zdst = writeFile(t, "big.zip", big.Bytes())
	_, warns = open(t, zdst, &parse.Options{Limits: parse.Limits{MaxEntries: 1000}})
	if !warningWith(warns, zdst, "archive has 70000 members") {
		t.Errorf("zip64 of 70000 members, MaxEntries 1000: warnings %v", warns)
	}
	snap, _ = open(t, dst, nil)
	if len(snap.Sysctls) != 4*5*2 {
		t.Errorf("default limits: %d sysctls, want every member read", len(snap.Sysctls))
	}
}

// The ratio limit is judged on the product of the levels: a gzip'd member
// of a tar.gz, each under Limits.MaxRatio, whose product is above it.
func TestRatioAcrossLevels(t *testing.T) {
	body := bytes.Repeat([]byte("net.core.somaxconn = 4096\n"), 16<<20/26)
	inner := gz(body)
	tarball := writeTar(t, []member{
		{name: "b/small.txt", typ: tar.TypeReg, body: []byte(sysctlBody)},
		{name: "b/bomb.txt.gz", typ: tar.TypeReg, body: inner},
	})
	outer := gz(tarball)
	r1, r2 := len(body)/len(inner), len(tarball)/len(outer)
	lim := int64(max(r1, r2) + 1)
	if int64(r1*r2) <= lim {
		t.Fatalf("levels of %d and %d times do not multiply past %d", r1, r2, lim)
	}
	dst := writeFile(t, "r.tar.gz", outer)
	lims := parse.Limits{MaxRatio: lim, MaxInputMemory: 1 << 30, MaxMemory: 1 << 30}
	snap, warns := open(t, dst, &parse.Options{Limits: lims})
	got := inputs(snap, dst+"!")
	if !warningWith(warns, dst+"!b/bomb.txt.gz", "counting the archives and compressed files around it") {
		t.Errorf("want a ratio warning on the inner member (levels %d and %d, limit %d), got %v", r1, r2, lim, warns)
	}
	if got["b/small.txt"].Records != 2 {
		t.Errorf("the rest was not read: %+v", got["b/small.txt"])
	}
	// Each level alone passes: the gzip'd member read by itself.
	snap, warns = open(t, writeFile(t, "bomb.txt.gz", inner), &parse.Options{Limits: lims})
	if len(warns) != 0 || len(snap.Sysctls) != len(body)/26 {
		t.Errorf("one level under the limit: %d sysctls, warnings %v", len(snap.Sysctls), warns)
	}
}

// noise is n bytes that do not compress.
func noise(n int) []byte {
	b := make([]byte, n)
	var x uint32 = 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// A zip larger than the 64 KiB head, inside a zip (stored or deflated) or
// a tar.gz, is read as a zip.
func TestNestedZipOverHead(t *testing.T) {
	var in bytes.Buffer
	zw := zip.NewWriter(&in)
	w, _ := zw.Create("node1/sysctl.txt")
	w.Write([]byte(sysctlBody))
	w, _ = zw.CreateHeader(&zip.FileHeader{Name: "node1/noise.bin", Method: zip.Store})
	w.Write(noise(200 << 10))
	zw.Close()
	inner := in.Bytes()
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		var out bytes.Buffer
		zw := zip.NewWriter(&out)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "inner.zip", Method: method})
		w.Write(inner)
		zw.Close()
		dst := writeFile(t, "outer.zip", out.Bytes())
		snap, warns := open(t, dst, nil)
		if got := inputs(snap, dst+"!")["inner.zip!node1/sysctl.txt"]; got.Records != 2 {
			t.Errorf("zip in zip (method %d): inner member %+v; warnings %v", method, got, warns)
		}
	}
	dst := writeFile(t, "outer.tar.gz", gz(writeTar(t, []member{{name: "inner.zip", typ: tar.TypeReg, body: inner}})))
	snap, warns := open(t, dst, nil)
	if got := inputs(snap, dst+"!")["inner.zip!node1/sysctl.txt"]; got.Records != 2 {
		t.Errorf("zip in tar.gz: inner member %+v; warnings %v", got, warns)
	}
}

// Byte order marks are dropped and UTF-16 text is decoded before sniffing.
func TestEncodings(t *testing.T) {
	u16 := func(s string, big bool) []byte {
		var b []byte
		for _, r := range "\ufeff" + s {
			if big {
				b = append(b, byte(r>>8), byte(r))
			} else {
				b = append(b, byte(r), byte(r>>8))
			}
		}
		return b
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bom.txt"), append([]byte("\ufeff"), sysctlBody...), 0o644)
	os.WriteFile(filepath.Join(dir, "le.txt"), u16(sysctlBody, false), 0o644)
	os.WriteFile(filepath.Join(dir, "be.txt"), u16(sysctlBody, true), 0o644)
	os.WriteFile(filepath.Join(dir, "bom.txt.gz"), gz(append([]byte("\ufeff"), sysctlBody...)), 0o644)
	snap, warns := open(t, dir, nil)
	got := inputs(snap, dir+string(filepath.Separator))
	for _, name := range []string{"bom.txt", "le.txt", "be.txt", "bom.txt.gz"} {
		if got[name].Records != 2 {
			t.Errorf("%s: %+v", name, got[name])
		}
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	for _, s := range snap.Sysctls {
		if !strings.HasPrefix(s.Name, "net.") {
			t.Errorf("sysctl %q at %s: the byte order mark was kept", s.Name, s.Pos)
		}
	}
}

// A corrupt gzip trailer (the CRC) is a warning naming the file, past the
// head as within it.
func TestGzipTrailer(t *testing.T) {
	for _, n := range []int{2, 40000} {
		b := gz(sysctlLines(n))
		b[len(b)-8] ^= 0xff
		dst := writeFile(t, "s.txt.gz", b)
		snap, warns := open(t, dst, nil)
		found := false
		for _, w := range warns {
			found = found || (w.Pos.File == dst && errors.Is(w, gzip.ErrChecksum))
		}
		if !found {
			t.Errorf("%d lines: want a checksum warning on %s, got %v", n, dst, warns)
		}
		if len(snap.Sysctls) != n {
			t.Errorf("%d lines: %d read", n, len(snap.Sysctls))
		}
	}
}

// A bundle given as a link to a directory is read there; links inside it
// are still not followed.
func TestSymlinkRoot(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sysctl.txt"), []byte(sysctlBody), 0o644)
	os.Symlink(filepath.Join(dir, "sysctl.txt"), filepath.Join(dir, "link.txt"))
	link := filepath.Join(t.TempDir(), "bundle")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	snap, _ := open(t, link, nil)
	got := inputs(snap, link+string(filepath.Separator))
	if got["sysctl.txt"].Records != 2 {
		t.Errorf("the linked directory was not read: %+v", snap.Inputs)
	}
	if in, ok := got["link.txt"]; !ok || in.Skipped == "" || in.Records != 0 {
		t.Errorf("a link inside the bundle was followed: %+v", in)
	}
}

// A nested archive is held in memory only when it fits in a quarter of
// what is left of the memory budget; else it is spilled to TempDir.
func TestNestedArchiveMemory(t *testing.T) {
	var in bytes.Buffer
	zw := zip.NewWriter(&in)
	w, _ := zw.Create("node1/sysctl.txt")
	w.Write([]byte(sysctlBody))
	w, _ = zw.CreateHeader(&zip.FileHeader{Name: "node1/noise.bin", Method: zip.Store})
	w.Write(noise(300 << 10))
	zw.Close()
	dst := writeFile(t, "outer.tar", writeTar(t, []member{{name: "inner.zip", typ: tar.TypeReg, body: in.Bytes()}}))
	for _, c := range []struct {
		mem   int64
		spill bool
	}{{1 << 20, true}, {4 << 20, false}} {
		spill := t.TempDir()
		spilled := false
		opts := &parse.Options{TempDir: spill, Limits: parse.Limits{MaxMemory: c.mem}}
		opts.Progress = func(model.Input) {
			ents, _ := os.ReadDir(spill)
			spilled = spilled || len(ents) > 0
		}
		snap, warns := open(t, dst, opts)
		if got := inputs(snap, dst+"!")["inner.zip!node1/sysctl.txt"]; got.Records != 2 || len(warns) != 0 {
			t.Errorf("MaxMemory %d: inner member %+v; warnings %v", c.mem, got, warns)
		}
		if spilled != c.spill {
			t.Errorf("MaxMemory %d: spilled %v, want %v", c.mem, spilled, c.spill)
		}
	}
}
