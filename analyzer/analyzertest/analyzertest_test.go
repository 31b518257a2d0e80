package analyzertest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// sysctlCount counts the sysctls of the snapshot.
var sysctlCount = &analyzer.Fact[int]{Name: "sysctl-count", Doc: "how many sysctls the snapshot holds",
	Compute: func(fs *analyzer.Facts) int { return len(fs.Snapshot().Sysctls) }}

// portRangeRule reports each ip_local_port_range, with the number of
// sysctls read.
var portRangeRule = &analyzer.Rule{
	Name: "port-range", Doc: "an ephemeral port range\n\nFor the tests.", Severity: analyzer.Warning,
	Needs: []model.Kind{model.KindSysctl}, Requires: []analyzer.FactKey{sysctlCount},
	Run: func(p *analyzer.Pass) error {
		for _, sc := range p.Snap.Sysctls {
			if sc.Name == "net.ipv4.ip_local_port_range" {
				p.Report(analyzer.Finding{Title: "range " + sc.Value, Sources: []model.Kind{model.KindSysctl},
					Subject:  map[string]string{"setting": sc.Name},
					Facts:    map[string]any{"range": sc.Value, "sysctls": sysctlCount.Of(p), "file": sc.Pos.File},
					Evidence: []analyzer.Evidence{{Pos: sc.Pos, Note: sc.Name}}})
			}
		}
		return nil
	},
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Run reads each scenario, runs the rule and holds its findings against
// want.yaml; a fact given by hand in one scenario replaces the derived one
// there only.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	sysctl := "net.ipv4.ip_local_port_range = 1024\t65000\nnet.ipv4.tcp_tw_reuse = 2\n"
	writeFiles(t, filepath.Join(dir, "hit-range"), map[string]string{"sysctl.txt": sysctl, WantFile: `# A wide range.
findings:
- rule: port-range
  severity: warning
  certainty: likely
  title: range 1024 65000
  subject:
    setting: net.ipv4.ip_local_port_range
  sources: [sysctl]
  facts:
    range: 1024 65000
    sysctls: 2
    file: sysctl.txt
  evidence:
  - sysctl.txt:1 (net.ipv4.ip_local_port_range)
`})
	writeFiles(t, filepath.Join(dir, "hit-range-by-hand"), map[string]string{"sysctl.txt": sysctl, WantFile: `findings:
- rule: port-range
  severity: warning
  certainty: likely
  title: range 1024 65000
  subject: {setting: net.ipv4.ip_local_port_range}
  sources: [sysctl]
  facts: {range: 1024 65000, sysctls: 7, file: sysctl.txt}
  evidence: ['sysctl.txt:1 (net.ipv4.ip_local_port_range)']
`})
	writeFiles(t, filepath.Join(dir, "miss-other-sysctl"), map[string]string{"sysctl.txt": "net.ipv4.tcp_tw_reuse = 2\n",
		WantFile: "findings: []\n"})
	writeFiles(t, filepath.Join(dir, "miss-no-sysctl"), map[string]string{
		"svc.json": `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},"spec":{"clusterIP":"10.96.0.7","ports":[{"port":80}]}}` + "\n",
		WantFile:   "skipped:\n  missing: [sysctl]\nfindings: []\n"})
	Run(t, portRangeRule, dir, In("hit-range-by-hand", WithFact(sysctlCount, 7)))
}

func TestWantRoundTrip(t *testing.T) {
	dir := filepath.Join("testdata", "rule", "hit-x")
	res := analyzer.Result{Findings: []analyzer.Finding{{
		Rule: "r", Severity: analyzer.Error, Title: "seen in " + dir + "/a.txt",
		Sources: []model.Kind{model.KindCapture, model.KindKube},
		Facts: map[string]any{"ports": []uint16{36704, 32080}, "restarts": int32(183), "drops": uint64(29728),
			"outside": true, "share": "0.0031%", "clients": []string{"10.0.0.1"}, "where": dir + "/b.txt:3"},
		Evidence: []analyzer.Evidence{{Pos: model.Pos{File: dir + "/c.pcap", Frame: 38}, Note: "SYN"},
			{Pos: model.Pos{File: dir + "/svc.json", Line: 4, Object: "Service ns/web"}}},
	}}}
	got := fromResult(res, dir)
	f := got.Findings[0]
	if f.Title != "seen in a.txt" || f.Facts["where"] != "b.txt:3" ||
		!slices.Equal(f.Evidence, []string{"c.pcap#frame=38 (SYN)", "svc.json:4 (Service ns/web)"}) {
		t.Errorf("paths not made relative: %+v", f)
	}
	path := filepath.Join(t.TempDir(), WantFile)
	if err := os.WriteFile(path, []byte("# kept\n# also kept\nfindings: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeWant(path, got); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(text), "# kept\n# also kept\nfindings:\n") {
		t.Errorf("header lost:\n%s", text)
	}
	back, err := readWant(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := compare(got, back); len(d) != 0 {
		t.Errorf("written and read back, it differs:\n%s\nfile:\n%s", strings.Join(d, "\n"), text)
	}
	if err := os.WriteFile(path, []byte("findings: []\nnotes: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readWant(path); err == nil || !strings.Contains(err.Error(), "notes") {
		t.Errorf("unknown field: %v", err)
	}
}

// Every difference is named: the finding, the field, both values.
func TestCompare(t *testing.T) {
	base := func() wantFinding {
		return wantFinding{Rule: "r", Severity: "error", Title: "t1", Sources: []model.Kind{model.KindCapture},
			Facts: map[string]any{"a": 1, "b": []any{1, 2}}, Evidence: []string{"x.txt:1", "x.txt:2"}}
	}
	other := func(title string) wantFinding {
		f := base()
		f.Title = title
		return f
	}
	w := want{Findings: []wantFinding{base(), other("t2")}}
	if d := compare(w, w); len(d) != 0 {
		t.Errorf("equal: %v", d)
	}
	changed := base()
	changed.Severity = "warning"
	changed.Facts = map[string]any{"a": 2, "c": "new"}
	changed.Evidence = []string{"x.txt:1", "x.txt:9", "x.txt:3"}
	got := want{Findings: []wantFinding{changed, other("t3"), {Rule: "q", Title: "other rule"}}}
	wantD := []string{
		`finding 1 (r "t1"): severity: got "warning", want "error"`,
		`finding 1 (r "t1"): facts.a: got 2, want 1`,
		`finding 1 (r "t1"): facts.b: missing, want - 1 - 2`,
		`finding 1 (r "t1"): facts.c: unexpected, got "new"`,
		`finding 1 (r "t1"): evidence[1]: got "x.txt:9", want "x.txt:2"`,
		`finding 1 (r "t1"): evidence[2]: unexpected "x.txt:3"`,
		`finding 2 (r "t2"): title: got "t3", want "t2"`,
		`unexpected finding q "other rule"`,
	}
	if d := compare(got, w); !slices.Equal(d, wantD) {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(d, "\n"), strings.Join(wantD, "\n"))
	}
	if d := compare(want{Findings: []wantFinding{}}, w); len(d) != 2 || d[0] != `missing finding 1: r "t1"` {
		t.Errorf("missing: %v", d)
	}
	if d := compare(want{Findings: []wantFinding{other("t2"), base()}}, w); len(d) != 1 || !strings.Contains(d[0], "order") {
		t.Errorf("order: %v", d)
	}
	skipped := want{Skipped: &wantSkipped{Missing: []model.Kind{model.KindCapture}}, Findings: []wantFinding{}}
	if d := compare(skipped, want{Findings: []wantFinding{}}); len(d) != 1 || !strings.Contains(d[0], "was skipped (missing [capture]") {
		t.Errorf("skipped: %v", d)
	}
	if d := compare(want{Findings: []wantFinding{}}, skipped); len(d) != 1 || d[0] != "the rule ran, want.yaml expects it skipped" {
		t.Errorf("ran: %v", d)
	}
}

// A finding without a Subject, and two with one Subject, are named; a
// Subject that differs from want.yaml's is a difference.
func TestSubjects(t *testing.T) {
	fs := []analyzer.Finding{
		{Rule: "r", Title: "none", Fingerprint: "0123456789abcdef"},
		{Rule: "r", Title: "one", Subject: map[string]string{"node": "n"}, Fingerprint: "1123456789abcdef"},
		{Rule: "r", Title: "two", Subject: map[string]string{"node": "n"}, Fingerprint: "1123456789abcdef-2"},
	}
	got := checkSubjects(&analyzer.Rule{Name: "r"}, fs)
	if len(got) != 2 || !strings.Contains(got[0], `"none" has no Subject`) || !strings.Contains(got[1], `"two" has the Subject map[node:n] of another`) {
		t.Errorf("checkSubjects: %q", got)
	}
	got = checkSubjects(&analyzer.Rule{Name: "r", SubjectKeys: []string{"client"}}, fs[1:2])
	if len(got) != 1 || !strings.Contains(got[0], `the subject key "node", which the rule's SubjectKeys [client] do not list`) {
		t.Errorf("checkSubjects with SubjectKeys: %q", got)
	}
	g := wantFinding{Rule: "r", Title: "t", Subject: map[string]string{"node": "n1"}, Facts: map[string]any{}}
	w := g
	w.Subject = map[string]string{"node": "n2"}
	if d := compareFinding(g, w); len(d) != 1 || !strings.HasPrefix(d[0], "subject: got") {
		t.Errorf("compareFinding: %q", d)
	}
}
