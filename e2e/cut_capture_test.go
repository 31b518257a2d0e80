package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
)

// When a rule finds as many problems in a capture cut at both ends as in
// the whole one, it finds them under the same fingerprints: subjects hold
// no counts, times or frames.
func TestFingerprintsOfCutCaptures(t *testing.T) {
	dirs, err := filepath.Glob("../fixtures/incidents/*")
	if err != nil {
		t.Fatal(err)
	}
	byRule := func(dir string) map[string][]string {
		_, _, res := analyzeShared(t, dir, nil)
		out := map[string][]string{}
		for _, f := range res.Findings {
			out[f.Rule] = append(out[f.Rule], f.Fingerprint)
		}
		for _, fps := range out {
			slices.Sort(fps)
		}
		return out
	}
	compared := 0
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "capture.pcap")); err != nil {
			continue
		}
		cut := filepath.Join(t.TempDir(), filepath.Base(dir))
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			target := filepath.Join(cut, rel)
			switch {
			case d.IsDir():
				return os.MkdirAll(target, 0o755)
			case filepath.Ext(p) == ".pcap":
				testutil.CutPcap(t, p, target)
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		full, short := byRule(dir), byRule(cut)
		for rule, fps := range full {
			if len(short[rule]) != len(fps) {
				continue // the cut capture shows the rule more or fewer problems
			}
			compared++
			if !slices.Equal(fps, short[rule]) {
				t.Errorf("%s: %s: fingerprints %v in the whole capture, %v in the cut one", filepath.Base(dir), rule, fps, short[rule])
			}
		}
	}
	if compared < 15 {
		t.Errorf("only %d rules' findings compared", compared)
	}
}
