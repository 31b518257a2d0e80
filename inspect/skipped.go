package inspect

import (
	"fmt"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// maxSkippedNames is how many skipped files SkippedSummary names; past
// it, it only counts them.
const maxSkippedNames = 3

// SkippedSummary sums up in one line (without a newline) the inputs of
// snap that were skipped, and the inspect command that lists them all
// (SkippedParts, joined). It is "" when no input was skipped.
func SkippedSummary(snap *model.Snapshot, paths []string) string {
	line, cmd := SkippedParts(snap, paths)
	if line == "" {
		return ""
	}
	return fmt.Sprintf("%s; %s lists what was read and skipped, file by file", line, cmd)
}

// SkippedParts sums up the inputs of snap that were skipped: how many,
// why (each reason with its count), the files' names when there are few;
// and gives the inspect command, on paths, that lists them all. Both are
// "" when no input was skipped. Markdown files in a bundle
// (model.SkippedDocumentation) are documentation: inspect lists them,
// this leaves them out.
func SkippedParts(snap *model.Snapshot, paths []string) (summary, command string) {
	var names []string
	reasons := map[string]int{}
	for _, in := range snap.Inputs {
		if in.Skipped != "" && in.Skipped != model.SkippedDocumentation {
			names = append(names, in.Path)
			reasons[in.Skipped]++
		}
	}
	if len(names) == 0 {
		return "", ""
	}
	why := make([]string, 0, len(reasons))
	for r := range reasons {
		why = append(why, r)
	}
	sort.Slice(why, func(a, b int) bool {
		if reasons[why[a]] != reasons[why[b]] {
			return reasons[why[a]] > reasons[why[b]]
		}
		return why[a] < why[b]
	})
	for i, r := range why {
		if len(reasons) > 1 {
			why[i] = fmt.Sprintf("%s: %d", r, reasons[r])
		}
	}
	line := fmt.Sprintf("skipped %s (%s)", countSkipped(names), strings.Join(why, "; "))
	if len(names) <= maxSkippedNames {
		line += ": " + strings.Join(names, ", ")
	}
	return line, "netmortem inspect " + shq.Command(paths...)
}

// countSkipped counts the files and the directories (model.IsDirPath)
// of names.
func countSkipped(names []string) string {
	dirs := 0
	for _, n := range names {
		if model.IsDirPath(n) {
			dirs++
		}
	}
	files := len(names) - dirs
	switch {
	case dirs == 0:
		return count(files, "file")
	case dirs == 1 && files == 0:
		return "1 directory"
	case files == 0:
		return fmt.Sprintf("%d directories", dirs)
	case dirs == 1:
		return count(files, "file") + " and 1 directory"
	}
	return fmt.Sprintf("%s and %d directories", count(files, "file"), dirs)
}
