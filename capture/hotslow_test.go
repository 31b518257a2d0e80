package capture

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// Every capture of the fixtures gives the same Result read through the
// hand-decoded headers as through gopacket's layers alone.
func TestHotPathSameResultFixtures(t *testing.T) {
	sameHotAndSlow(t, 20, filepath.Join(testutil.Root(), "fixtures"))
}

// So does every capture of the shared corpus.
func TestHotPathSameResultCorpus(t *testing.T) {
	sameHotAndSlow(t, 100, testutil.CorpusDir(t, "pcap"))
}

// sameHotAndSlow reads every capture under dirs (at least least of them)
// through each decoding path (the plain records of a pcap file taken a
// run at a time, the hand-decoded headers of each record, gopacket's
// layers alone), with and without summary mode, and fails unless all give
// the same Result and error.
func sameHotAndSlow(t *testing.T, least int, dirs ...string) {
	t.Helper()
	files := captureFiles(t, dirs...)
	if len(files) < least {
		t.Fatalf("only %d captures under %v", len(files), dirs)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, summary := range []bool{false, true} {
			if err := samePaths(b, Options{Shards: 2, Summary: Summary{Enabled: summary}}); err != nil {
				t.Errorf("%s, summary %v: %v", path, summary, err)
			}
		}
	}
}

// samePaths reads the capture b through each decoding path and says how
// the results differ from gopacket's layers'.
func samePaths(b []byte, opts Options) error {
	slow, serr := read(context.Background(), bytes.NewReader(b), "c.pcap", opts, decodeLayers)
	for _, mode := range []decoding{decodeAll, decodeRecords} {
		fast, ferr := read(context.Background(), bytes.NewReader(b), "c.pcap", opts, mode)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) {
			return fmt.Errorf("decoding %d: error %v, through gopacket's layers %v", mode, ferr, serr)
		}
		if !reflect.DeepEqual(fast, slow) {
			return fmt.Errorf("decoding %d: the result differs from gopacket's layers'", mode)
		}
	}
	return nil
}

// captureFiles lists the packet captures (pcap or pcapng, gzip'd or not)
// under roots.
func captureFiles(t testing.TB, roots ...string) []string {
	t.Helper()
	return testutil.FilesByHead(t, isCapture, roots...)
}

// isCapture reports whether a file, by its path and first bytes, is a
// packet capture.
func isCapture(path string, head []byte) bool {
	_, ok := Sniff(head)
	return ok || head[0] == 0x1f && head[1] == 0x8b && strings.Contains(path, ".pcap")
}
