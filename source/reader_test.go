//go:build fleet

package source

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// TestReaderReadAt reads an object at random offsets and lengths and
// compares with the bytes themselves.
func TestReaderReadAt(t *testing.T) {
	data := make([]byte, 3*ChunkSize+12345)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "obj"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := New()
	defer s.Close()
	r, err := s.Open(t.Context(), "file://"+dir+"/obj")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", r.Size(), len(data))
	}
	for range 300 {
		off := rng.Int64N(int64(len(data)) + 10)
		p := make([]byte, rng.IntN(2*ChunkSize))
		n, err := r.ReadAt(p, off)
		want := max(min(int64(len(p)), int64(len(data))-off), 0)
		if int64(n) != want || !bytes.Equal(p[:n], data[min(off, int64(len(data))):min(off, int64(len(data)))+int64(n)]) {
			t.Fatalf("ReadAt(%d bytes, %d) = %d, %v; want %d bytes of the object", len(p), off, n, err, want)
		}
		if (err == io.EOF) != (int(want) < len(p)) {
			t.Fatalf("ReadAt(%d bytes, %d): err %v", len(p), off, err)
		}
	}
}

// TestReaderRequests counts the range requests of reads in order, of a
// read in the last chunk, of a small skip forward and of a read back.
func TestReaderRequests(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 5*ChunkSize/16)
	os.WriteFile(filepath.Join(dir, "obj"), data, 0o644)
	s := New()
	defer s.Close()
	r, err := s.Open(t.Context(), "file://"+dir+"/obj")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.Copy(io.Discard, io.NewSectionReader(r, 0, r.Size())); err != nil {
		t.Fatal(err)
	}
	if n := r.Requests(); n != 1 {
		t.Errorf("a read from start to end: %d requests, want 1", n)
	}
	p := make([]byte, 100)
	r.ReadAt(p, 0)
	r.ReadAt(p, 1000)        // in the chunk read
	r.ReadAt(p, ChunkSize+5) // past it, continuing the request
	r.ReadAt(p, 3*ChunkSize) // a skip forward within SkipSize
	if n := r.Requests(); n != 2 {
		t.Errorf("read again from the start, with a skip: %d requests, want 2", n)
	}
	r.ReadAt(p, 10) // back: a new request
	if n := r.Requests(); n != 3 {
		t.Errorf("a read back: %d requests, want 3", n)
	}
}

// bundleFiles reads the files of an incident fixture, with a large member
// of random bytes (incompressible) that makes the archive span several
// chunks.
func bundleFiles(t *testing.T, incident string) map[string][]byte {
	t.Helper()
	root := filepath.Join("..", "fixtures", "incidents", incident)
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(filepath.Dir(root), p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	filler := make([]byte, 3*ChunkSize)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range filler {
		filler[i] = byte(rng.Uint32())
	}
	files[incident+"/filler.bin"] = filler
	return files
}

func tarGz(t *testing.T, files map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range sortedKeys(files) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg})
		tw.Write(files[name])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, _ := zw.Create(name)
		w.Write(files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// findingsOf runs every rule on snap and returns its findings' rules and
// subjects, in order.
func findingsOf(t *testing.T, snap *model.Snapshot) []string {
	t.Helper()
	res := analyzer.Run(t.Context(), snap, rules.All(), nil)
	var out []string
	for _, f := range res.Findings {
		out = append(out, f.Rule+" "+f.Title)
	}
	return out
}

// TestOpenReaderAtLikeDisk reads a tar.gz and a zip through a Reader and
// from disk: the same inputs (by name) and findings; the tar.gz costs two
// requests (one per pass over it), the zip a few.
func TestOpenReaderAtLikeDisk(t *testing.T) {
	files := bundleFiles(t, "connection-skew")
	dir := t.TempDir()
	for _, c := range []struct {
		name     string
		data     []byte
		requests int
	}{
		{"bundle.tar.gz", tarGz(t, files), 2},
		{"bundle.zip", zipOf(t, files), 4},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, c.data, 0o644)
		local, lw, err := parse.Open(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := New()
		r, err := s.Open(t.Context(), "file://"+p)
		if err != nil {
			t.Fatal(err)
		}
		remote, rw, err := parse.OpenReaderAt(t.Context(), "file://"+p, r, r.Size(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Requests(); n > c.requests {
			t.Errorf("%s: %d requests, want at most %d", c.name, n, c.requests)
		}
		r.Close()
		s.Close()
		want, got := findingsOf(t, local), findingsOf(t, remote)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: findings\n%v\nwant (read from disk)\n%v", c.name, got, want)
		}
		if len(remote.Inputs) != len(local.Inputs) || len(rw) != len(lw) {
			t.Errorf("%s: %d inputs, %d warnings; from disk %d, %d", c.name, len(remote.Inputs), len(rw), len(local.Inputs), len(lw))
		}
		for i, in := range remote.Inputs {
			if i < len(local.Inputs) && in.Path != "file://"+local.Inputs[i].Path {
				t.Errorf("%s: input %q, want %q", c.name, in.Path, "file://"+local.Inputs[i].Path)
			}
		}
	}
}
