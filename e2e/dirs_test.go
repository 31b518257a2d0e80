package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// bundleDirs returns the directories globs match, and fails the test when
// there are fewer than least of them: what names the bundles wanted.
func bundleDirs(t *testing.T, least int, what string, globs ...string) []string {
	t.Helper()
	var dirs []string
	for _, glob := range globs {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) < least {
		t.Fatalf("found %d fixture bundles, want %s (at least %d)", len(dirs), what, least)
	}
	return dirs
}
