package bundle_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse/bundle"
)

// MayHoldBundles says no only where the survey finds less than two
// bundles and no folder around them: a directory of loose files, with at
// most one archive among them. Folders and archives are told by their
// kind and first bytes, not by their names.
func TestMayHoldBundles(t *testing.T) {
	trees := filepath.Join(testutil.Root(), "parse", "testdata", "bundles")
	dir := t.TempDir()
	write := func(rel string, body []byte) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sysctl.txt", []byte(sysctlBody))
	write("conntrack.tar.gz.txt", []byte("tcp 6 86399 ESTABLISHED src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2\n"))
	write(".hidden.tar", writeTar(t, []member{{name: "a", typ: '0', body: []byte("x")}}))
	write(".git/x", nil)
	check := func(step string, want bool) {
		t.Helper()
		s := survey(t, dir)
		if got := bundle.MayHoldBundles(dir); got != want {
			t.Errorf("%s: MayHoldBundles %v, want %v (the survey: %d bundles)", step, got, want, len(s.Bundles))
		}
		if !want && len(s.Bundles) > 1 {
			t.Errorf("%s: the survey finds %d bundles, where MayHoldBundles says none", step, len(s.Bundles))
		}
	}
	check("loose files", false)
	archiveTree(t, trees, filepath.Join(dir, "one.bin"), "zip")
	check("one archive among them", false)
	write("sysctl.txt.gz", gz([]byte(sysctlBody))) // compressed: it may be an archive
	check("two packed files", true)
	os.Remove(filepath.Join(dir, "sysctl.txt.gz"))
	check("one archive again", false)
	os.Mkdir(filepath.Join(dir, "node1"), 0o755)
	check("a folder", true)
	if !bundle.MayHoldBundles(filepath.Join(dir, "missing")) {
		t.Error("a directory that cannot be read: MayHoldBundles says no, where the survey says why")
	}
}
