package parse

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// TestSharedHeadScores checks that every format scores the head of every
// fixture file the same while the formats share what they work out from
// it (text.ShareHead, as a bundle's files are sniffed) as when each works
// it out alone, whichever format is tried first.
func TestSharedHeadScores(t *testing.T) {
	formats := Formats()
	reversed := slices.Clone(formats)
	slices.Reverse(reversed)
	var paths []string
	err := filepath.WalkDir("../fixtures", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 500 {
		t.Fatalf("%d fixture files, want the whole tree", len(paths))
	}
	// Every file's head is sniffed by every format three times: under the
	// race detector, a sample (make test runs them all without it).
	for _, path := range testutil.RaceSample(t, 16, paths) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		heads := [][]byte{b[:min(len(b), text.HeadSize)]}
		if strings.Contains(filepath.ToSlash(path), "/real/") && len(b) > 0 && text.IsText(b) {
			// Its lines repeated to a whole head: more lines than any
			// sniffer reads.
			long := slices.Repeat(append(slices.Clip(b), '\n'), text.HeadSize/(len(b)+1)+1)
			heads = append(heads, long[:text.HeadSize])
		}
		for _, head := range heads {
			alone := make(map[string]int, len(formats))
			for _, f := range formats {
				alone[f.Name] = f.Sniff(path, head)
			}
			for _, order := range [][]*Format{formats, reversed} {
				done := text.ShareHead(head)
				for _, f := range order {
					if got := f.Sniff(path, head); got != alone[f.Name] {
						t.Errorf("%s (%d bytes): %s scores %d shared, %d alone", path, len(head), f.Name, got, alone[f.Name])
					}
				}
				done()
			}
		}
	}
}
