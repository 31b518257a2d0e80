package rules_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/parse"
)

// runOnFiles writes files (name to content) into a new directory, reads it
// as a bundle, which must give no warning, and runs rule on it. Evidence
// positions are made relative to the directory.
func runOnFiles(t *testing.T, rule *analyzer.Rule, files map[string]string) analyzer.Result {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, warns, err := parse.Open(context.Background(), dir, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	res := analyzer.Run(context.Background(), snap, []*analyzer.Rule{rule}, nil)
	if len(res.Errors) != 0 {
		t.Fatalf("rule errors: %v", res.Errors)
	}
	for i := range res.Findings {
		for j := range res.Findings[i].Evidence {
			e := &res.Findings[i].Evidence[j]
			e.Pos.File = strings.TrimPrefix(e.Pos.File, dir+string(filepath.Separator))
		}
	}
	return res
}
