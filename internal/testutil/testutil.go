// Package testutil holds helpers shared by netmortem's tests: locating the
// shared corpus of public evidence, golden files, and validating JSON
// documents against the JSON Schemas in the repository.
package testutil

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Update makes golden tests rewrite their .golden files: go test ./parse -update.
var Update = flag.Bool("update", false, "rewrite golden files")

// Root returns the repository root (the directory holding go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CorpusDir returns the path of a folder of the shared corpus of public
// captures and dumps (../shared/corpus beside the repository, or
// $NETMORTEM_CORPUS), joined with elem. It skips the test when the corpus is
// absent, as it is in a user's clone.
func CorpusDir(t testing.TB, elem ...string) string {
	t.Helper()
	base := os.Getenv("NETMORTEM_CORPUS")
	if base == "" {
		base = filepath.Join(Root(), "..", "shared", "corpus")
	}
	p := filepath.Join(append([]string{base}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared corpus not present (%s): skipping", p)
	}
	return p
}

// Golden compares got with the golden file at path, or rewrites the file
// when -update is set.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the output (run go test -update to accept):\n%s", path, DiffLines(string(want), string(got)))
	}
}

// GoldenJSON marshals v as indented JSON and compares it with path.
func GoldenJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	Golden(t, path, append(b, '\n'))
}

// DiffLines shows the first lines (up to ten) where want and got differ.
func DiffLines(want, got string) string {
	w := bytes.Split([]byte(want), []byte("\n"))
	g := bytes.Split([]byte(got), []byte("\n"))
	var out bytes.Buffer
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b []byte
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if bytes.Equal(a, b) {
			continue
		}
		out.WriteString("line ")
		out.WriteString(itoa(i + 1))
		out.WriteString(":\n  want: ")
		out.Write(a)
		out.WriteString("\n  got:  ")
		out.Write(b)
		out.WriteByte('\n')
		if shown++; shown == 10 {
			out.WriteString("...\n")
			break
		}
	}
	return out.String()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// FilesByHead lists the files under roots, in walk order, for which
// keep, given a file's path and its first four bytes, reports true. Files
// shorter than four bytes are left out.
func FilesByHead(t testing.TB, keep func(path string, head []byte) bool, roots ...string) []string {
	t.Helper()
	var out []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			head := make([]byte, 4)
			if _, err := io.ReadFull(f, head); err != nil {
				return nil
			}
			if keep(p, head) {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// NgRecord is a record of a pcapng that Pcapng writes: the interface it
// came in on, its time in microseconds since 1970 (the interface's
// default resolution) as written, so that a stamp centuries away can be,
// and its Ethernet frame.
type NgRecord struct {
	Iface  int
	Micros uint64
	Data   []byte
}

// Pcapng is a little-endian pcapng of one section, one Ethernet
// interface for each of offsets (its if_tsoffset in seconds, none when
// 0), and records: a writer's own, where pcapgo's writes times as
// nanoseconds it cannot hold past 2262.
func Pcapng(offsets []int64, records []NgRecord) []byte {
	var b []byte
	le := binary.LittleEndian
	block := func(typ uint32, body []byte) {
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		n := uint32(12 + len(body))
		b = le.AppendUint32(b, typ)
		b = le.AppendUint32(b, n)
		b = append(b, body...)
		b = le.AppendUint32(b, n)
	}
	shb := le.AppendUint32(nil, 0x1a2b3c4d)
	shb = le.AppendUint16(shb, 1)
	shb = le.AppendUint16(shb, 0)
	block(0x0a0d0d0a, le.AppendUint64(shb, ^uint64(0)))
	for _, off := range offsets {
		idb := le.AppendUint16(nil, 1) // Ethernet
		idb = le.AppendUint16(idb, 0)
		idb = le.AppendUint32(idb, 65535)
		if off != 0 {
			idb = le.AppendUint16(idb, 14) // if_tsoffset
			idb = le.AppendUint16(idb, 8)
			idb = le.AppendUint64(idb, uint64(off))
			idb = le.AppendUint32(idb, 0) // opt_endofopt
		}
		block(1, idb)
	}
	for _, r := range records {
		epb := le.AppendUint32(nil, uint32(r.Iface))
		epb = le.AppendUint32(epb, uint32(r.Micros>>32))
		epb = le.AppendUint32(epb, uint32(r.Micros))
		epb = le.AppendUint32(epb, uint32(len(r.Data)))
		epb = le.AppendUint32(epb, uint32(len(r.Data)))
		block(6, append(epb, r.Data...))
	}
	return b
}

// PcapRecord is a record of a classic pcap that Pcap writes: its time,
// its frame as captured, and its original length (Orig 0: the frame's).
type PcapRecord struct {
	Time time.Time
	Data []byte
	Orig uint32
}

// Pcap is a little-endian, microsecond pcap of Ethernet records, with a
// snap length of 65535.
func Pcap(records []PcapRecord) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, 0xa1b2c3d4)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = le.AppendUint32(b, 65535)
	b = le.AppendUint32(b, 1)
	for _, r := range records {
		orig := r.Orig
		if orig == 0 {
			orig = uint32(len(r.Data))
		}
		b = le.AppendUint32(b, uint32(r.Time.Unix()))
		b = le.AppendUint32(b, uint32(r.Time.Nanosecond()/1000))
		b = le.AppendUint32(b, uint32(len(r.Data)))
		b = le.AppendUint32(b, orig)
		b = append(b, r.Data...)
	}
	return b
}

// RaceSample returns items, or under the race detector one in every of
// them (the first, then every every-th), and logs how many. It is for
// tests that repeat one check over many inputs, on one goroutine or on
// code that a few of the inputs run as the others do: the race detector
// needs only some of them to see the code run, and make test runs those
// tests again without -race over every input (the Makefile's
// NORACE_TESTS or WHOLE_PKGS, held by TestSampledTestsRunWhole).
func RaceSample[T any](t testing.TB, every int, items []T) []T {
	t.Helper()
	if !Race || every <= 1 {
		return items
	}
	var out []T
	for i, it := range items {
		if i%every == 0 {
			out = append(out, it)
		}
	}
	t.Logf("race detector: %d of %d (make test runs them all without -race)", len(out), len(items))
	return out
}
