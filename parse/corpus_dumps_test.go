package parse

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// notYetRead are the files of the shared corpus's dumps that netmortem
// does not read, with the reason.
var notYetRead = map[string]string{
	"PROVENANCE.md": "the corpus's provenance notes",
	"kubectl-json/troubleshoot-baseline-k3s_goldpinger-check_all.json": "goldpinger's check results: no format reads them yet",
}

// Every file of the shared corpus's dumps is recognized, read in place:
// each input of it has a format and none is skipped as unrecognized.
func TestCorpusDumpsRecognized(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps")
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if _, skip := notYetRead[filepath.ToSlash(rel)]; skip {
			return nil
		}
		n++
		snap, _, err := Open(context.Background(), path, nil)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		if len(snap.Inputs) == 0 {
			t.Errorf("%s: no input", rel)
		}
		read := 0
		for _, in := range snap.Inputs {
			switch {
			case in.Skipped == "unrecognized content" && !strings.Contains(in.Path, "!"):
				t.Errorf("%s: unrecognized", rel)
			case in.Format != "":
				read++
			}
		}
		if read == 0 {
			t.Errorf("%s: nothing read", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Errorf("%d corpus files", n)
	}
}
