package scale

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// ticket is one support bundle of the simulated object store: a tar.gz of
// a committed incident bundle, under a key of its own.
type ticket struct {
	key  string
	data []byte
}

// tickets makes n bundles: the incident bundles of fixtures/incidents (real
// captures, dumps and objects), round robin, each archived as a tar.gz under
// tickets/<group>/ticket-<i>-<incident>.tar.gz.
func tickets(t testing.TB, n int) []ticket {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(testutil.Root(), "fixtures", "incidents", "*"))
	if err != nil || len(dirs) < 10 {
		t.Fatalf("incident bundles: %v (%d)", err, len(dirs))
	}
	sort.Strings(dirs)
	archives := make([][]byte, len(dirs))
	for i, d := range dirs {
		archives[i] = tarGz(t, d)
	}
	out := make([]ticket, n)
	for i := range out {
		j := i % len(dirs)
		out[i] = ticket{key: fmt.Sprintf("tickets/%02d/ticket-%05d-%s.tar.gz", i%16, i, filepath.Base(dirs[j])), data: archives[j]}
	}
	return out
}

// tarGz archives the files of dir, with a top directory named after it.
func tarGz(t testing.TB, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	base := filepath.Base(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if err := tw.WriteHeader(&tar.Header{Name: base + "/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatalf("archive %s: %v", dir, err)
	}
	return buf.Bytes()
}
