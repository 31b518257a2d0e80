package parse

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
)

// The golden tests pin what Open makes of every real input netmortem has:
// each file of the shared corpus of public dumps (../shared/corpus/dumps,
// see its PROVENANCE.md; skipped when the corpus is absent) and each seed
// snippet (fixtures/seeds). Each file is opened on its own and its parsed
// model is compared with testdata/golden/<root>/<path>.json, where root is
// "dumps" or "seeds". Rewrite them after a deliberate change with
//
//	go test ./parse -run Golden -update
//
// and review the diff. Paths in the goldens are relative to the corpus
// (dumps/...) or to fixtures (seeds/...), so they do not depend on where
// the checkout is. Files are opened in parallel subtests.
//
// A file must read without a warning unless it is listed in
// goldenWarnings with the reason its warnings are a property of the input;
// the warnings themselves, with their positions, are pinned in the golden.

// goldenWarnings are the files whose warnings are expected, and why. Keys
// are golden-relative paths; a directory key (ending in "/") covers every
// file under it.
var goldenWarnings = map[string]string{
	// Documentation beside the evidence: not a format netmortem reads.
	"dumps/PROVENANCE.md": "the corpus's provenance notes: skipped as unrecognized",
	"seeds/README.md":     "the seeds' README: skipped as unrecognized",
	// Hand-edited or cut-short public snippets.
	"dumps/ipvsadm/woodnie_kubeadm_ipvsadm-Ln_hand-annotated.txt": "the author's inline comment (// IPVS 转发规则) and a real server row cut short in the post",
	"seeds/003-lb-controller-conflict/nginx-error.log":            "the write-up's scraping artifact (\"33\" before the first timestamp); the line is still read",
	// Support bundles: the errors troubleshoot's collectors recorded in
	// the bundle (collector-errors/, */errors.json) are reported as
	// warnings at their lines.
	"dumps/support-bundles/troubleshoot_test-baselines_supportbundle_k3s-1.31.2_baseline.tar.gz": "the collector errors troubleshoot recorded in the bundle",
}

func TestGoldenSeeds(t *testing.T) {
	goldenTree(t, filepath.Join(testutil.Root(), "fixtures"), "seeds")
}

func TestGoldenCorpus(t *testing.T) {
	goldenTree(t, filepath.Dir(testutil.CorpusDir(t, "dumps")), "dumps")
}

// goldenTree opens every file under base/root and compares each with its
// golden, in parallel.
func goldenTree(t *testing.T, base, root string) {
	var files []string
	err := filepath.WalkDir(filepath.Join(base, root), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(base, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no files under %s", filepath.Join(base, root))
	}
	goldenDir := filepath.Join(testutil.Root(), "parse", "testdata", "golden")
	want := map[string]bool{}
	for _, f := range files {
		gp := filepath.Join(goldenDir, filepath.FromSlash(f)+".json")
		want[gp] = true
		t.Run(strings.TrimPrefix(f, root+"/"), func(t *testing.T) {
			t.Parallel()
			g := goldenOpen(t, base, f)
			reason := goldenReason(f)
			switch {
			case len(g.Warnings) > 0 && reason == "":
				t.Errorf("%s: %d warnings, first %s (fix the parser, or list the file in goldenWarnings with the reason)", f, len(g.Warnings), g.Warnings[0])
			case len(g.Warnings) == 0 && reason != "":
				t.Errorf("%s reads without a warning now: remove it from goldenWarnings", f)
			}
			testutil.GoldenJSON(t, gp, g.rooted(t, base))
		})
	}
	// A golden whose input is gone is stale. (Cleanup: after the parallel
	// subtests.)
	t.Cleanup(func() { goldenStale(t, goldenDir, root, want) })
	for k := range goldenWarnings {
		if !strings.HasPrefix(k, root+"/") {
			continue
		}
		found := false
		for _, f := range files {
			found = found || f == k || strings.HasSuffix(k, "/") && strings.HasPrefix(f, k)
		}
		if !found {
			t.Errorf("goldenWarnings names %s, which is not an input", k)
		}
	}
}

func goldenStale(t *testing.T, goldenDir, root string, want map[string]bool) {
	_ = filepath.WalkDir(filepath.Join(goldenDir, root), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || want[p] {
			return nil
		}
		if *testutil.Update {
			return os.Remove(p)
		}
		t.Errorf("%s has no input any more (go test -run Golden -update removes it)", p)
		return nil
	})
}

func goldenReason(f string) string {
	if r, ok := goldenWarnings[f]; ok {
		return r
	}
	for k, r := range goldenWarnings {
		if strings.HasSuffix(k, "/") && strings.HasPrefix(f, k) {
			return r
		}
	}
	return ""
}

// golden is what a golden file pins for one input file.
type golden struct {
	// Inputs are the files read: the file itself, or an archive's members.
	Inputs []model.Input `json:"inputs"`
	// Warnings are Open's warnings, each with its position.
	Warnings []string `json:"warnings,omitempty"`
	// Records counts the records of each kind (for archives, where the
	// model itself is not pinned).
	Records map[string]int `json:"records,omitempty"`
	// Snapshot is the whole parsed model, without Inputs (above); nil for
	// archives, whose members are listed in Inputs with their counts.
	Snapshot *model.Snapshot `json:"snapshot,omitempty"`
}

// rooted returns g as JSON with base/ cut from every path in it, so that
// paths are relative to the corpus or to fixtures.
func (g golden) rooted(t *testing.T, base string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatalf("the model does not marshal: %v", err)
	}
	prefix, _ := json.Marshal(filepath.ToSlash(base) + "/")
	return bytes.ReplaceAll(b, prefix[1:len(prefix)-1], nil)
}

func goldenOpen(t *testing.T, base, name string) golden {
	t.Helper()
	// Every attempt, as flows lists them, so that the golden files pin each.
	snap, warns, err := Open(t.Context(), filepath.Join(base, filepath.FromSlash(name)), &Options{KeepAttempts: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	g := golden{Inputs: snap.Inputs}
	for _, w := range warns {
		g.Warnings = append(g.Warnings, w.Error())
	}
	if isArchiveName(name) {
		g.Records = recordCounts(snap)
		// Member order follows the archive; sort for a stable listing.
		sort.SliceStable(g.Inputs, func(i, j int) bool { return g.Inputs[i].Path < g.Inputs[j].Path })
		return g
	}
	s := *snap
	s.Inputs = nil
	g.Snapshot = &s
	return g
}

func isArchiveName(name string) bool {
	for _, ext := range []string{".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".tar.zst", ".zip"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// recordCounts counts the records of each slice of the snapshot (and of its
// Kube), by JSON name.
func recordCounts(snap *model.Snapshot) map[string]int {
	out := map[string]int{}
	count := func(v reflect.Value, prefix string) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "inputs" {
				continue
			}
			if fv := v.Field(i); fv.Kind() == reflect.Slice && fv.Len() > 0 {
				out[prefix+name] = fv.Len()
			}
		}
	}
	count(reflect.ValueOf(*snap), "")
	count(reflect.ValueOf(snap.Kube), "kube.")
	return out
}
