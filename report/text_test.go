package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// problemMatcher is the regexp of a typical GitHub Actions problem matcher
// for compiler-style output (file, line, column, severity, code, message),
// which is also what Vim's "%f:%l:%c: %m" and Emacs's compilation-mode
// read.
var problemMatcher = regexp.MustCompile(`^([^\s].*?):(\d+):(\d+):\s+(error|warning|info):\s+([\w.-]+):\s+(.*)$`)

// CheckTextLines checks every line of a text report: the lines that are not
// indented are matched by problemMatcher, the others continue the finding
// above them. It returns the matches of the finding lines.
func checkTextLines(t *testing.T, out string) [][]string {
	t.Helper()
	var found [][]string
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(line, "\t") {
			if i == 0 {
				t.Errorf("line 1 is a continuation line: %q", line)
			}
			continue
		}
		m := problemMatcher.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("line %d is not read by a problem matcher: %q", i+1, line)
			continue
		}
		found = append(found, m)
	}
	return found
}

func TestTextProblemMatcher(t *testing.T) {
	r := fixedReport()
	r.Findings = append(r.Findings,
		analyzer.Finding{Rule: "no-evidence", Severity: analyzer.Info, Certainty: analyzer.Unknown, Title: "something: with colons"},
		analyzer.Finding{Rule: "object-only", Severity: analyzer.Warning, Title: "an object without a file",
			Evidence: []analyzer.Evidence{{Pos: model.Pos{Object: "Service ns/web", Path: "spec.ports[0]"}}, {Pos: model.Pos{File: "b.txt", Line: 3, Col: 9}}}},
		analyzer.Finding{Rule: "odd-name", Severity: analyzer.Warning, Title: "title\nwith a line break",
			Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "dir/a\nb.txt", Line: 7, Col: 2}, Note: "note\n-:1:1: error: x: forged"}}},
	)
	var buf bytes.Buffer
	if err := report.Write(&buf, "text", r); err != nil {
		t.Fatal(err)
	}
	found := checkTextLines(t, buf.String())
	if len(found) != len(r.Findings) {
		t.Fatalf("%d finding lines for %d findings:\n%s", len(found), len(r.Findings), buf.String())
	}
	want := [][]string{
		{"bundle/node1/capture.pcap", "0", "0", "error", "synack-reset", "kubelet probes reset: client port 31380 is an IPVS NodePort [#frame=812: SYN]"},
		{"/abs/path with space/sysctl.txt", "241", "0", "warning", "ephemeral-nodeport-overlap", "ip_local_port_range overlaps the NodePort range (cause likely)"},
		{"-", "0", "0", "info", "no-evidence", "something: with colons (cause unknown)"},
		{"-", "0", "0", "warning", "object-only", "an object without a file [Service ns/web spec.ports[0]]"},
		{`dir/a\nb.txt`, "7", "2", "warning", "odd-name", `title\nwith a line break [note\n-:1:1: error: x: forged]`},
	}
	for i, w := range want {
		if got := found[i][1:]; strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("finding %d: matched %q, want %q", i+1, got, w)
		}
	}
	// The evidence beyond the first is on continuation lines.
	if !strings.Contains(buf.String(), "\n\tbundle/node1/capture.pcap#frame=815 (client RST)\n") ||
		!strings.Contains(buf.String(), "\n\tb.txt:3:9\n") {
		t.Errorf("continuation lines missing:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "\tbundle/node1/capture.pcap#frame=812") {
		t.Errorf("the first evidence is repeated on a continuation line:\n%s", buf.String())
	}
}
