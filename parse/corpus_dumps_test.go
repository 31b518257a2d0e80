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
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if _, skip := notYetRead[filepath.ToSlash(rel)]; !skip {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 40 {
		t.Errorf("%d corpus files", len(paths))
	}
	for _, path := range testutil.RaceSample(t, 4, paths) {
		rel, _ := filepath.Rel(dir, path)
		snap, _, err := Open(context.Background(), path, nil)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
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
	}
}

// troubleshoot's k3s baseline bundle of the shared corpus, read whole: the
// apiserver's version, the DNS check, the custom resources written as YAML
// lists and the kube-system ConfigMaps (kube-proxy's, CoreDNS's) are read,
// each file with the command that made it.
func TestCorpusTroubleshootBundle(t *testing.T) {
	path := filepath.Join(testutil.CorpusDir(t, "dumps", "support-bundles"), "troubleshoot_test-baselines_supportbundle_k3s-1.31.2_baseline.tar.gz")
	snap, _, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.ServerVersions) != 1 || snap.ServerVersions[0].GitVersion != "v1.31.2+k3s1" || !strings.HasSuffix(snap.ServerVersions[0].Pos.File, "cluster-info/cluster_version.json") {
		t.Errorf("server versions %+v", snap.ServerVersions)
	}
	if len(snap.DNSChecks) != 1 || snap.DNSChecks[0].DNSService.String() != "10.43.0.10" || len(snap.DNSChecks[0].DNSEndpoints) != 1 {
		t.Errorf("DNS checks %+v", snap.DNSChecks)
	}
	commands := map[string]string{}
	for _, in := range snap.Inputs {
		if i := strings.Index(in.Path, "supportbundle/"); i >= 0 {
			commands[in.Path[i+len("supportbundle/"):]] = in.Format + " | " + in.Command
		}
	}
	for rel, want := range map[string]string{
		"cluster-resources/custom-resources/addons.k3s.cattle.io/kube-system.yaml":      "kubectl | kubectl get addons.k3s.cattle.io -n kube-system -o yaml",
		"cluster-resources/custom-resources/helmcharts.helm.cattle.io/kube-system.json": "kubectl | kubectl get helmcharts.helm.cattle.io -n kube-system -o json",
		"cluster-info/cluster_version.json":                                             "kube-version | kubectl version -o json",
		"dns/debug.json":                                                                "dns-debug | troubleshoot's dns collector (dns/debug.json)",
	} {
		if commands[rel] != want {
			t.Errorf("%s: %q, want %q", rel, commands[rel], want)
		}
	}
	cms := map[string]bool{}
	for _, cm := range snap.Kube.ConfigMaps {
		if cm.Namespace == "kube-system" {
			cms[cm.Name] = true
		}
	}
	if !cms["coredns"] || len(cms) != 8 {
		t.Errorf("kube-system ConfigMaps %v", cms)
	}
}
