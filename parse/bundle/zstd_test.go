package bundle_test

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
)

// A .pcap.zst and a .tar.zst bundle are read like their gzip'd forms.
func TestZstd(t *testing.T) {
	capBytes, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/incidents/ephemeral-nodeport/capture.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	sysctlBytes, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures/incidents/ephemeral-nodeport/sysctl.txt"))
	if err != nil {
		t.Fatal(err)
	}
	zst := func(b []byte) []byte {
		var out bytes.Buffer
		w, err := zstd.NewWriter(&out)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "capture.pcap.zst"), zst(capBytes), 0o644); err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for name, b := range map[string][]byte{"bundle/capture.pcap": capBytes, "bundle/sysctl.txt": sysctlBytes} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	}
	tw.Close()
	if err := os.WriteFile(filepath.Join(dir, "bundle.tar.zst"), zst(tb.Bytes()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file            string
		attempts, sysct int
	}{{"capture.pcap.zst", 8, 0}, {"bundle.tar.zst", 8, 2}} {
		snap, warns, err := parse.Open(context.Background(), filepath.Join(dir, c.file), &parse.Options{KeepAttempts: true})
		if err != nil || len(warns) > 0 {
			t.Fatalf("%s: %v %v", c.file, err, warns)
		}
		if len(snap.Attempts) != c.attempts || len(snap.Sysctls) != c.sysct {
			t.Errorf("%s: %d attempts, %d sysctls; want %d, %d", c.file, len(snap.Attempts), len(snap.Sysctls), c.attempts, c.sysct)
		}
	}
}
