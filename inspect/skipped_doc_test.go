package inspect

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
)

// The note of skipped files leaves out a bundle's documentation: a bundle
// whose only skipped file is its README has no note; with another skipped
// file, only that one is named.
func TestSkippedSummaryLeavesDocumentationOut(t *testing.T) {
	doc := model.Input{Path: "b/EXPECTED.md", Skipped: model.SkippedDocumentation}
	if got := SkippedSummary(&model.Snapshot{Inputs: []model.Input{{Path: "b/capture.pcap"}, doc}}, []string{"b"}); got != "" {
		t.Errorf("documentation only: %q, want no note", got)
	}
	snap := &model.Snapshot{Inputs: []model.Input{doc, {Path: "b/x.bin", Skipped: "unrecognized content"}}}
	got := SkippedSummary(snap, []string{"b"})
	if !strings.HasPrefix(got, "skipped 1 file (unrecognized content): b/x.bin;") || strings.Contains(got, "EXPECTED") {
		t.Errorf("got %q, want the unrecognized file alone", got)
	}
}
