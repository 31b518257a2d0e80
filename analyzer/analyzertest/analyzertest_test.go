package analyzertest

import (
	"fmt"
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
	Compute: func(fs *analyzer.FactSet) int { return len(fs.Snapshot().Sysctls) }}

// portRangeRule reports each ip_local_port_range, with the number of
// sysctls read; a range starting below 2000 is an error, a range reserving
// no port is not proven.
var portRangeRule = &analyzer.Rule{
	Name: "port-range", Doc: "an ephemeral port range\n\nFor the tests.", Severity: analyzer.Warning,
	Needs: []model.Kind{model.KindSysctl}, Requires: []analyzer.FactKey{sysctlCount},
	Run: func(p *analyzer.Pass) error {
		for _, sc := range p.Snap.Sysctls {
			if sc.Name != "net.ipv4.ip_local_port_range" {
				continue
			}
			n := sysctlCount.Of(p)
			f := analyzer.Finding{Title: "range " + sc.Value,
				Summary:  fmt.Sprintf("%d sysctls read", n),
				Fix:      "sysctl -w net.ipv4.ip_local_reserved_ports=30000-32767",
				Subject:  map[string]string{"setting": sc.Name},
				Facts:    map[string]any{"range": sc.Value, "sysctls": n, "file": sc.Pos.File},
				Evidence: []analyzer.Evidence{{Pos: sc.Pos, Note: sc.Name}}}
			if strings.HasPrefix(sc.Value, "1024") {
				// The second kind of evidence a proven cause needs: the
				// NodePort range, as a Service list would give it.
				f.Severity, f.Certainty = analyzer.Error, analyzer.Proven
				f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: model.Pos{File: "services.json", Object: "NodePort range"},
					Kind: model.KindKube, Note: "30000-32767"})
			} else {
				f.Certainty, f.Decide = analyzer.Likely, "sysctl net.ipv4.ip_local_reserved_ports"
			}
			p.Report(f)
		}
		return nil
	},
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const sysctlText = "net.ipv4.ip_local_port_range = 1024\t65000\nnet.ipv4.tcp_tw_reuse = 2\n"

// wantRange is the want file of a scenario of sysctlText.
const wantRange = `# A wide range.
findings:
  - rule: port-range
    severity: error
    certainty: proven
    subject:
      setting: net.ipv4.ip_local_port_range
    says:
      - 2 sysctls read
      - ip_local_reserved_ports=30000-32767
    evidence:
      - sysctl.txt:1 (net.ipv4.ip_local_port_range)
      - services.json (NodePort range) (30000-32767)
`

// Run reads each scenario, runs the rule and holds its findings against
// want.yaml; a fact given by hand in one scenario replaces the derived one
// there only; a scenario's use.txt brings in evidence kept elsewhere.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"shared/sysctl-wide.txt":            sysctlText,
		"rule/hit-range/sysctl.txt":         sysctlText,
		"rule/hit-range/want.yaml":          wantRange,
		"rule/hit-range-used/use.txt":       "# the wide range\n../../shared/sysctl-wide.txt as sysctl.txt\n",
		"rule/hit-range-used/want.yaml":     wantRange,
		"rule/hit-range-by-hand/sysctl.txt": sysctlText,
		"rule/hit-range-by-hand/want.yaml":  strings.Replace(wantRange, "2 sysctls", "7 sysctls", 1),
		"rule/hit-narrow/sysctl.txt":        "net.ipv4.ip_local_port_range = 40000\t60999\n",
		"rule/hit-narrow/want.yaml": `findings:
  - rule: port-range
    severity: warning
    certainty: likely
    subject: {setting: net.ipv4.ip_local_port_range}
    decide: sysctl net.ipv4.ip_local_reserved_ports
    says: [40000]
    evidence: ['sysctl.txt:1 (net.ipv4.ip_local_port_range)']
`,
		"rule/miss-other-sysctl/sysctl.txt": "net.ipv4.tcp_tw_reuse = 2\n",
		"rule/miss-other-sysctl/want.yaml":  "findings: []\n",
		"rule/miss-no-sysctl/svc.json": `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},` +
			`"spec":{"clusterIP":"10.96.0.7","ports":[{"port":80}]}}` + "\n",
		"rule/miss-no-sysctl/want.yaml": "skipped:\n  missing: [sysctl]\nfindings: []\n",
	})
	Run(t, portRangeRule, filepath.Join(dir, "rule"), In("hit-range-by-hand", WithFact(sysctlCount, 7)))
}

// check runs portRangeRule on a scenario of sysctl text whose want.yaml
// is wantText, and returns what Run would report.
func check(t *testing.T, sysctl, wantText string) []string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hit-x")
	writeFiles(t, dir, map[string]string{"sysctl.txt": sysctl, WantFile: wantText})
	got, problems, err := runRule(portRangeRule, dir, t.TempDir(), &options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := readWant(filepath.Join(dir, WantFile), true)
	if err != nil {
		return append(problems, err.Error())
	}
	return append(problems, compare(got, w)...)
}

// A want file that is wrong in any part of the judgement fails, naming the
// finding, the field and both values.
func TestRunFailsOnWrongJudgement(t *testing.T) {
	if d := check(t, sysctlText, wantRange); len(d) != 0 {
		t.Fatalf("the right want file: %q", d)
	}
	const name = `finding 1 (port-range map[setting:net.ipv4.ip_local_port_range]): `
	for _, c := range []struct{ what, from, to, want string }{
		{"severity", "severity: error", "severity: warning", name + `severity: got "error", want "warning"`},
		{"certainty", "certainty: proven", "certainty: likely", name + `certainty: got "proven", want "likely"`},
		{"subject", "setting: net.ipv4.ip_local_port_range", "setting: net.ipv4.ip_local_reserved_ports",
			`finding 1 (port-range map[setting:net.ipv4.ip_local_reserved_ports]): subject: got "map[setting:net.ipv4.ip_local_port_range]", ` +
				`want "map[setting:net.ipv4.ip_local_reserved_ports]"`},
		{"evidence position", "sysctl.txt:1 (", "sysctl.txt:2 (",
			name + `evidence[0]: got "sysctl.txt:1 (net.ipv4.ip_local_port_range)", want "sysctl.txt:2 (net.ipv4.ip_local_port_range)"`},
		{"evidence note", "(net.ipv4.ip_local_port_range)", "(ip_local_port_range)",
			name + `evidence[0]: got "sysctl.txt:1 (net.ipv4.ip_local_port_range)", want "sysctl.txt:1 (ip_local_port_range)"`},
		{"evidence missing", "      - services.json (NodePort range) (30000-32767)\n",
			"      - services.json (NodePort range) (30000-32767)\n      - sysctl.txt:2\n", name + `evidence[2]: missing "sysctl.txt:2"`},
		{"phrase", "2 sysctls read", "3 sysctls read", name + `says: no "3 sysctls read" in its words:`},
		{"decide", "    says:", "    decide: sysctl -a\n    says:", name + `decide: got "", want "sysctl -a"`},
		{"rule", "rule: port-range", "rule: other", `unexpected finding port-range map[setting:net.ipv4.ip_local_port_range]`},
		{"old format", "    says:", "    title: range 1024 65000\n    says:", `field title not found`},
	} {
		wantText := strings.Replace(wantRange, c.from, c.to, 1)
		if wantText == wantRange {
			t.Fatalf("%s: %q not in the want file", c.what, c.from)
		}
		d := check(t, sysctlText, wantText)
		if !slices.ContainsFunc(d, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%s wrong: differences %q, want one containing %q", c.what, d, c.want)
		}
	}
	if d := check(t, "net.ipv4.tcp_tw_reuse = 2\n", wantRange); !slices.Contains(d, "missing finding 1: port-range map[setting:net.ipv4.ip_local_port_range]") ||
		!slices.ContainsFunc(d, func(s string) bool { return strings.Contains(s, "hit-* scenario, but port-range reports nothing") }) {
		t.Errorf("no finding: %q", d)
	}
}

func TestWantRoundTrip(t *testing.T) {
	dir := filepath.Join("testdata", "rule", "hit-x")
	res := analyzer.Result{Findings: []analyzer.Finding{{
		Rule: "r", Severity: analyzer.Error, Title: "seen in " + dir + "/a.txt", Certainty: analyzer.Proven,
		Cause: "10.0.0.1 sends to port 32080", Fix: "set net.ipv4.ip_local_reserved_ports to 30000-32767",
		Sources: []model.Kind{model.KindCapture, model.KindKube}, Subject: map[string]string{"node": "n"},
		Facts: map[string]any{"ports": []uint16{36704, 32080}, "restarts": int32(183), "drops": uint64(29728),
			"outside": true, "share": "0.0031%", "clients": []string{"10.0.0.1"}, "where": dir + "/b.txt:3"},
		Evidence: []analyzer.Evidence{{Pos: model.Pos{File: dir + "/c.pcap", Frame: 38}, Note: "SYN"},
			{Pos: model.Pos{File: dir + "/svc.json", Line: 4, Object: "Service ns/web"}}},
	}}}
	got := fromResult(res, dir)
	f := got.Findings[0]
	if f.title != "seen in a.txt" || !slices.Equal(f.Evidence, []string{"c.pcap#frame=38 (SYN)", "svc.json:4 (Service ns/web)"}) {
		t.Errorf("paths not made relative: %+v", f)
	}
	path := filepath.Join(t.TempDir(), WantFile)
	if err := os.WriteFile(path, []byte("# kept\n# also kept\nfindings: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := update(path, got); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(text), "# kept\n# also kept\nfindings:\n") {
		t.Errorf("header lost:\n%s", text)
	}
	back, err := readWant(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Findings[0].Says, []string{"10.0.0.1", "net.ipv4.ip_local_reserved_ports", "30000-32767"}) {
		t.Errorf("phrases chosen: %q\n%s", back.Findings[0].Says, text)
	}
	if d := compare(got, back); len(d) != 0 {
		t.Errorf("written and read back, it differs:\n%s\nfile:\n%s", strings.Join(d, "\n"), text)
	}
	// Phrases set by hand are kept while the words say them.
	hand := "findings:\n  - rule: r\n    subject: {node: n}\n    says: [port 32080, ports 99]\n"
	if err := os.WriteFile(path, []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	dropped, err := update(path, got)
	if err != nil {
		t.Fatal(err)
	}
	if back, _ = readWant(path, true); !slices.Equal(back.Findings[0].Says, []string{"port 32080"}) || len(dropped) != 1 || !strings.Contains(dropped[0], `"ports 99"`) {
		t.Errorf("hand-set phrases: kept %q, dropped %q", back.Findings[0].Says, dropped)
	}
	if err := os.WriteFile(path, []byte("findings: []\nnotes: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readWant(path, true); err == nil || !strings.Contains(err.Error(), "notes") {
		t.Errorf("unknown field: %v", err)
	}
}

// Every difference is named: the finding, the field, both values.
func TestCompare(t *testing.T) {
	base := func(node string) wantFinding {
		return wantFinding{Rule: "r", Severity: "error", Certainty: "proven", Subject: map[string]string{"node": node},
			Says: []string{"port 80"}, Evidence: []string{"x.txt:1", "x.txt:2"}, text: "a\nport 80 is shut"}
	}
	w := want{Findings: []wantFinding{base("n1"), base("n2")}}
	if d := compare(w, w); len(d) != 0 {
		t.Errorf("equal: %v", d)
	}
	changed := base("n1")
	changed.Severity = "warning"
	changed.text = "port 8443"
	changed.Evidence = []string{"x.txt:1", "x.txt:9", "x.txt:3"}
	got := want{Findings: []wantFinding{changed, base("n3"), {Rule: "q", Subject: map[string]string{"node": "n9"}}}}
	wantD := []string{
		`finding 1 (r map[node:n1]): severity: got "warning", want "error"`,
		"finding 1 (r map[node:n1]): says: no \"port 80\" in its words:\n\tport 8443",
		`finding 1 (r map[node:n1]): evidence[1]: got "x.txt:9", want "x.txt:2"`,
		`finding 1 (r map[node:n1]): evidence[2]: unexpected "x.txt:3"`,
		`finding 2 (r map[node:n2]): subject: got "map[node:n3]", want "map[node:n2]"`,
		`unexpected finding q map[node:n9]`,
	}
	if d := compare(got, w); !slices.Equal(d, wantD) {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(d, "\n"), strings.Join(wantD, "\n"))
	}
	if d := compare(want{Findings: []wantFinding{}}, w); len(d) != 2 || d[0] != `missing finding 1: r map[node:n1]` {
		t.Errorf("missing: %v", d)
	}
	if d := compare(want{Findings: []wantFinding{base("n2"), base("n1")}}, w); len(d) != 1 || !strings.Contains(d[0], "order") {
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

// A finding without a Subject, and two with one Subject, are named.
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
}

// A scenario's use.txt brings in files under their names; a name held
// twice, a file missing and a path that leaves the scenario are errors.
func TestEvidence(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"fixtures/a/capture.pcap": "pcap", "fixtures/a/pods.json": "pods",
		"s/hit-x/own.txt": "own", "s/hit-x/want.yaml": "findings: []\n",
		"s/hit-x/use.txt": "# shared\n\n../../fixtures/a/capture.pcap\n../../fixtures/a/pods.json as kube-system/pods.json\n",
	})
	out := EvidenceDir(t, filepath.Join(dir, "s", "hit-x"))
	if filepath.Base(out) != "hit-x" {
		t.Errorf("evidence directory %s: want the scenario's name", out)
	}
	var names []string
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(out, p)
			names = append(names, filepath.ToSlash(rel)+"="+string(b))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"capture.pcap=pcap", "kube-system/pods.json=pods", "own.txt=own"}; !slices.Equal(names, w) {
		t.Errorf("evidence %q, want %q", names, w)
	}
	plain := filepath.Join(dir, "fixtures", "a")
	if got := EvidenceDir(t, plain); got != plain {
		t.Errorf("a directory without use.txt is read in place, got %s", got)
	}
	for use, want := range map[string]string{
		"../../fixtures/a/pods.json as own.txt\n": "own.txt is both",
		"../../fixtures/a/nothing.json\n":         "nothing.json",
		"../../fixtures/a/pods.json as ../x\n":    "relative to the scenario",
		"../../fixtures/a\n":                      "not a file",
	} {
		writeFiles(t, dir, map[string]string{"s/hit-x/use.txt": use})
		if _, err := evidence(filepath.Join(dir, "s", "hit-x"), t.TempDir()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("use.txt %q: error %v, want one saying %q", use, err, want)
		}
	}
}
