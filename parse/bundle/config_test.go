package bundle_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/parse/bundle"
)

// netmortem's own configuration file, found next to a bundle, is listed
// as what it is, not as unrecognized evidence, and nothing is read from
// it; a YAML file of another name is still sniffed.
func TestConfigFileNotEvidence(t *testing.T) {
	dir := t.TempDir()
	cfg := "ignore:\n  - rule: syn-unanswered\n    reason: known\n"
	for name, content := range map[string]string{
		bundle.ConfigFile: cfg,
		"other.yaml":      cfg,
		"sysctl.txt":      "net.ipv4.ip_local_port_range = 32768\t60999\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, warns := open(t, dir, nil)
	got := map[string]string{}
	for _, in := range snap.Inputs {
		got[filepath.Base(in.Path)] = in.Skipped
	}
	if got[bundle.ConfigFile] != "netmortem's configuration (docs/config.md), not evidence" {
		t.Errorf("%s: skipped %q", bundle.ConfigFile, got[bundle.ConfigFile])
	}
	if got["other.yaml"] != "unrecognized content" || got["sysctl.txt"] != "" {
		t.Errorf("inputs: %q", got)
	}
	for _, w := range warns {
		if filepath.Base(w.Pos.File) == bundle.ConfigFile {
			t.Errorf("warning about the configuration: %v", w)
		}
	}
}
