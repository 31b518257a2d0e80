package parse_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/parse"
)

// FuzzOpen runs the whole Open path (archive walk, decompression, layout,
// sniffing, every parser) over an archive or compressed file, seeded with
// the small hostile archives of fixtures/hostile and archives of a sysctl
// dump. Open must return within its limits, without a parser's panic, and
// every warning must name a file of the archive.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"tar-sparse.tar.gz", "encodings.zip", "gzip-trailer.tar"} {
		b, err := os.ReadFile(filepath.Join("..", "fixtures", "hostile", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	body := []byte("net.ipv4.ip_forward = 1\nnet.core.somaxconn = 4096\n")
	var t bytes.Buffer
	tw := tar.NewWriter(&t)
	tw.WriteHeader(&tar.Header{Name: "b/sysctl.txt", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write(body)
	tw.Close()
	f.Add(t.Bytes())
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(t.Bytes())
	zw.Close()
	f.Add(z.Bytes())
	var zz bytes.Buffer
	w := zip.NewWriter(&zz)
	m, _ := w.Create("b/sysctl.txt")
	m.Write(body)
	m, _ = w.Create("b/inner.tar.gz")
	m.Write(z.Bytes())
	w.Close()
	f.Add(zz.Bytes())

	lim := parse.Limits{MaxFileBytes: 16 << 20, MaxTotalBytes: 64 << 20, MaxEntries: 1000, MaxDepth: 3,
		MaxMemoryBuffer: 1 << 20, MaxMemory: 16 << 20, MaxInputMemory: 8 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "bundle")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, warns, err := parse.Open(ctx, path, &parse.Options{Limits: lim, TempDir: t.TempDir()})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		for _, w := range warns {
			if w.Pos.File != path && !strings.HasPrefix(w.Pos.File, path+"!") {
				t.Errorf("warning on no file of the archive: %v", w)
			}
			if strings.Contains(w.Error(), "parser ") && strings.Contains(w.Error(), " failed: ") {
				t.Errorf("a parser panicked: %v", w)
			}
		}
	})
}
