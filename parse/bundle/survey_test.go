package bundle_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/netmortem/netmortem/internal/testformats"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/bundle"
)

func survey(t *testing.T, dir string) *bundle.Survey {
	t.Helper()
	s, err := bundle.SurveyDir(t.Context(), dir, &parse.Options{Formats: testformats.All()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// entries lists a survey's entries as "name kind" (loose ones "name -"),
// names relative to dir, directories with a slash.
func entries(dir string, es []bundle.SurveyEntry) []string {
	var out []string
	for _, e := range es {
		n, _ := filepath.Rel(dir, e.Path)
		n = filepath.ToSlash(n)
		if e.Dir {
			n += "/"
		}
		k := e.Kind
		if k == "" {
			k = "-"
		}
		out = append(out, n+" "+k)
	}
	return out
}

// TestSurveyLayoutTrees: the committed trees are three node collectors
// side by side with a kubectl dump beside them; each collector's own
// directory is one bundle by its layout.
func TestSurveyLayoutTrees(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "parse", "testdata", "bundles")
	s := survey(t, dir)
	want := []string{
		"eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3/ eks",
		"node-b-2026-11-22_10_11_12/ rancher",
		"sosreport-node-a-2026-11-22-nmbdlaa/ sosreport",
	}
	if got := entries(dir, s.Bundles); s.Layout != "" || !slices.Equal(got, want) {
		t.Errorf("layout %q, bundles %q, want none and %q", s.Layout, got, want)
	}
	// make-trees.sh is no evidence: not counted.
	if got := entries(dir, s.Loose); !slices.Equal(got, []string{"kubectl-services.json -"}) {
		t.Errorf("loose %q, want the kubectl dump alone", got)
	}
	for _, b := range s.Bundles {
		if sub := survey(t, b.Path); sub.Layout != b.Kind || len(sub.Bundles)+len(sub.Loose) != 0 {
			t.Errorf("%s surveyed on its own: %+v, want its layout %s and nothing else", b.Path, sub, b.Kind)
		}
		// Given as a link, a directory is surveyed where it points.
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(b.Path, link); err != nil {
			t.Fatal(err)
		}
		if sub := survey(t, link); sub.Layout != b.Kind {
			t.Errorf("a link to %s: layout %q, want %s", b.Path, sub.Layout, b.Kind)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	if got := entries(link, survey(t, link).Bundles); !slices.Equal(got, want) {
		t.Errorf("a link to the trees: bundles %q, want %q", got, want)
	}
}

// TestSurveyDirectoryOfBundles: archives (by content, whatever their
// name), a folder holding an archive, a folder of loose files, and what is
// not counted: a file no format reads, hidden entries, a symbolic link.
func TestSurveyDirectoryOfBundles(t *testing.T) {
	trees := filepath.Join(testutil.Root(), "parse", "testdata", "bundles")
	dir := t.TempDir()
	archiveTree(t, trees, filepath.Join(dir, "one.tar.gz"), "tar.gz")
	archiveTree(t, trees, filepath.Join(dir, "two.bin"), "zip")
	os.MkdirAll(filepath.Join(dir, "ticket-3", "notes"), 0o755)
	archiveTree(t, trees, filepath.Join(dir, "ticket-3", "notes", "three.tar.xz"), "tar.xz")
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("node1/sysctl.txt", sysctlBody)
	write("node1/README", "hello\n")
	write("docs/README", "hello\n")
	write("sysctl.txt.gz", string(gz([]byte(sysctlBody))))
	write("README", "hello\n")
	write(".netmortem.yaml", "ignore: []\n")
	write(".git/x.tar", "")
	os.Symlink(filepath.Join(dir, "node1"), filepath.Join(dir, "link"))
	s := survey(t, dir)
	if want := []string{"one.tar.gz archive", "ticket-3/ holds", "two.bin archive"}; !slices.Equal(entries(dir, s.Bundles), want) {
		t.Errorf("bundles %q, want %q", entries(dir, s.Bundles), want)
	}
	if want := []string{"node1/ -", "sysctl.txt.gz -"}; !slices.Equal(entries(dir, s.Loose), want) {
		t.Errorf("loose %q, want %q", entries(dir, s.Loose), want)
	}
	// A ticket folder holding one archive is that one bundle.
	if s := survey(t, filepath.Join(dir, "ticket-3")); len(s.Bundles) != 1 || s.Bundles[0].Kind != bundle.SurveyHolds {
		t.Errorf("ticket-3: %+v", s)
	}
}

func TestSurveyMissing(t *testing.T) {
	if _, err := bundle.SurveyDir(t.Context(), filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("no error for a missing directory")
	}
}

// TestSurveyMustGather: the image directories of one must-gather run are
// one bundle; two runs side by side are two.
func TestSurveyMustGather(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range []string{"must-gather.local.1", "must-gather.local.2"} {
		write(run+"/timestamp", "2026-11-22 10:11:12\n")
		for _, image := range []string{"quay-io-openshift-must-gather-sha256-1", "quay-io-openshift-network-tools-sha256-2"} {
			write(run+"/"+image+"/cluster-scoped-resources/core/nodes/master-0.yaml", "kind: Node\n")
			write(run+"/"+image+"/timestamp", "2026-11-22 10:11:12\n")
		}
	}
	run := filepath.Join(dir, "must-gather.local.1")
	if s := survey(t, run); s.Layout != bundle.LayoutMustGather || len(s.Bundles) != 0 {
		t.Errorf("one run: %+v, want one must-gather", s)
	}
	if s := survey(t, dir); len(s.Bundles) != 2 || s.Bundles[0].Kind != bundle.SurveyHolds {
		t.Errorf("two runs: %+v, want two folders holding bundles", s)
	}
	// Without the run's timestamp, two must-gather directories are two.
	os.Remove(filepath.Join(run, "timestamp"))
	if s := survey(t, run); s.Layout != "" || len(s.Bundles) != 2 {
		t.Errorf("no timestamp: %+v, want two bundles", s)
	}
}

// TestSurveyEvidenceKinds: a loose entry says whose evidence it holds:
// the cluster's (Kubernetes objects), a host's (rules, kernel
// parameters), both (a ticket's folder), or neither.
func TestSurveyEvidenceKinds(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kube := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},"spec":{"clusterIP":"10.96.0.10"}}`
	write("ticket/sysctl.txt", sysctlBody)
	write("ticket/service.json", kube)
	write("node1/sysctl.txt", sysctlBody)
	write("node1/README", "hello\n")
	write("kubectl/service.json", kube)
	write("service.json", kube)
	write("sysctl.txt.gz", string(gz([]byte(sysctlBody))))
	s := survey(t, dir)
	var got []string
	for _, e := range s.Loose {
		n, _ := filepath.Rel(dir, e.Path)
		got = append(got, fmt.Sprintf("%s cluster=%v host=%v", filepath.ToSlash(n), e.Cluster, e.Host))
	}
	want := []string{"kubectl cluster=true host=false", "node1 cluster=false host=true", "service.json cluster=true host=false",
		"sysctl.txt.gz cluster=false host=true", "ticket cluster=true host=true"}
	if !slices.Equal(got, want) {
		t.Errorf("loose entries\n %q\nwant %q", got, want)
	}
}
