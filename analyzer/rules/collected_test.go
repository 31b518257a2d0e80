package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/netmortem/netmortem/collect"
)

// TestCollectedNames holds that every command a rule's Decide names
// through collected is in the collector's catalog, so that the Decide is
// the catalog's command line and not the bare name.
func TestCollectedNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`collected\("([^"]*)"`)
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(data), -1) {
			n++
			if _, ok := collect.Lookup(m[1]); !ok {
				t.Errorf("%s: collected(%q): no such command in collect.Commands", f, m[1])
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d calls of collected, want the rules' Decides (at least 10)", n)
	}
	if got, want := collected("ipvsadm", "on the node"), "# on the node\nipvsadm -Ln"; got != want {
		t.Errorf("collected = %q, want %q", got, want)
	}
}
