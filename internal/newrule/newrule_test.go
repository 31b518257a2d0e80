package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
	"github.com/netmortem/netmortem/timeline"
)

// root is the module's root, from this package's directory.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGoName(t *testing.T) {
	for name, want := range map[string]string{
		"arp-flap": "ARPFlap", "nat-reply-untranslated": "NATReplyUntranslated", "synack-reset": "SynackReset",
		"vip-unannounced": "VIPUnannounced", "x": "X", "dns-timeout2": "DNSTimeout2",
	} {
		if got := GoName(name); got != want {
			t.Errorf("GoName(%q) = %q, want %q", name, got, want)
		}
	}
	if got := FileName("my-rule"); got != "my_rule.go" {
		t.Errorf("FileName = %q", got)
	}
}

func TestGenerateRefuses(t *testing.T) {
	allGo, err := os.ReadFile(filepath.Join(root(t), rulesDir, "all.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "My-Rule", "my_rule", "1-rule", "-rule", "rule-", "arp-flap"} {
		if _, err := Generate(name, allGo); err == nil {
			t.Errorf("Generate(%q): no error", name)
		}
	}
	if _, err := Generate("my-rule", []byte("package rules\n")); err == nil {
		t.Error("Generate without the list of All: no error")
	}
}

// TestWriteRefusesToOverwrite: the files of an existing rule are kept.
func TestWriteRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	allGo, err := os.ReadFile(filepath.Join(root(t), rulesDir, "all.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, rulesDir, "testdata", "my-rule"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rulesDir, "all.go"), allGo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, "my-rule"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("Write over a scenario directory: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, rulesDir, "all.go")); !bytes.Equal(got, allGo) {
		t.Error("all.go changed")
	}
	files, err := Write(dir, "other-rule")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{rulesDir + "/other_rule.go", rulesDir + "/other_rule_test.go", rulesDir + "/testdata/other-rule/README.md", rulesDir + "/all.go"}
	if !slices.Equal(files, want) {
		t.Errorf("wrote %q, want %q", files, want)
	}
}

// TestScaffoldedRuleBuilds builds netmortem with a rule the scaffold
// wrote (go build -overlay: the tree is not changed) and finds it in the
// rule list and the rules' docs, with no other file edited.
func TestScaffoldedRuleBuilds(t *testing.T) {
	r := root(t)
	allGo, err := os.ReadFile(filepath.Join(r, rulesDir, "all.go"))
	if err != nil {
		t.Fatal(err)
	}
	const name = "scaffold-probe"
	files, err := Generate(name, allGo)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	for path, src := range files {
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			continue
		}
		f := filepath.Join(tmp, strings.ReplaceAll(path, "/", "_"))
		if err := os.WriteFile(f, src, 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(r, filepath.FromSlash(path))] = f
	}
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(tmp, "netmortem")
	// With cgo off, as make build, lint and vet build: the packages this
	// build does not change come from their compile.
	nocgo := append(os.Environ(), "CGO_ENABLED=0")
	build := exec.Command(goCmd, "build", "-overlay", ovFile, "-o", bin, "./cmd/netmortem")
	build.Dir, build.Env = r, nocgo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build with the scaffolded rule: %v\n%s", err, out)
	}
	vet := exec.Command(goCmd, "vet", "-overlay", ovFile, "./analyzer/rules")
	vet.Dir, vet.Env = r, nocgo
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet with the scaffolded rule: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "rules", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var listed []struct{ Name, Title string }
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) == 0 || listed[len(listed)-1].Name != name {
		t.Errorf("netmortem rules does not list %s last: %+v", name, listed)
	}
	md, err := exec.Command(bin, "rules", "-o", "markdown").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte("\n## "+name+"\n")) {
		t.Errorf("docs/rules.md would have no section for %s", name)
	}
}

// TestNewRuleNeedsNoOtherEdit: a rule that exists only as a value (as a
// scaffolded rule does, or a library user's) appears in the verdict, the
// timeline, SARIF, next_evidence and docs/collect.md, from its fields
// alone.
func TestNewRuleNeedsNoOtherEdit(t *testing.T) {
	ctx := context.Background()
	vip := "10.0.0.9"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pcap := "node1/capture.pcap"
	snap := &model.Snapshot{
		Inputs: []model.Input{{Path: pcap, Format: "pcap", Kind: model.KindCapture, Node: "node1"}},
		ARP: []model.ARPEvent{
			{Node: "node1", Pos: model.Pos{File: pcap, Frame: 1}, Time: t0, Op: "reply", IP: netip.MustParseAddr(vip), MAC: "aa:aa:aa:aa:aa:01"},
			{Node: "node1", Pos: model.Pos{File: pcap, Frame: 2}, Time: t0.Add(time.Second), Op: "reply", IP: netip.MustParseAddr(vip), MAC: "aa:aa:aa:aa:aa:02"},
		},
	}
	newSymptom := &analyzer.Symptom{Name: "a VIP answers from nowhere", Doc: "clients of a LoadBalancer address get no answer", Rank: 1000}
	rule := &analyzer.Rule{
		Name:        "test-vip-unannounced",
		Doc:         "no node announces a LoadBalancer address\n\nThe explanation of the test rule.",
		Severity:    analyzer.Error,
		Needs:       []model.Kind{model.KindCapture},
		Uses:        []model.Kind{model.KindNeighbors},
		SubjectKeys: []string{"node", "address"},
		FollowsFrom: []*analyzer.Rule{rules.LBControllerConflict},
		Explains:    []*analyzer.Rule{rules.ICMPUnreachable},
		Symptoms:    []analyzer.SymptomRef{rules.LoadBalancer502.At(35), newSymptom.At(1)},
		Plot: analyzer.Plot{
			Parts:    []analyzer.PlotPart{analyzer.PlotARP},
			ARPAddrs: []analyzer.Selector{analyzer.InSubject("address")},
		},
		Run: func(p *analyzer.Pass) error {
			p.Report(analyzer.Finding{
				Title: "nobody announces " + vip, Summary: "s", Certainty: analyzer.Likely,
				Subject:  map[string]string{"node": "node1", "address": vip},
				Sources:  []model.Kind{model.KindCapture},
				Evidence: []analyzer.Evidence{{Pos: model.Pos{File: pcap, Frame: 99}}}, // no ARP packet: the plot selects the address
			})
			return nil
		},
	}
	all := append(rules.All(), rule)
	if err := analyzer.Validate(all); err != nil {
		t.Fatal(err)
	}
	res := analyzer.Run(ctx, snap, all, nil)
	i := slices.IndexFunc(res.Findings, func(f analyzer.Finding) bool { return f.Rule == rule.Name })
	if i < 0 {
		t.Fatalf("no finding of %s: %+v", rule.Name, res)
	}
	mine := res.Findings[i]
	// A symptom of a rule the new one explains, on the same node: the
	// verdict puts it under the new rule's finding.
	res.Findings = append(res.Findings, analyzer.Finding{
		Rule: rules.ICMPUnreachable.Name, Severity: analyzer.Warning, Certainty: analyzer.Unknown, Title: "icmp",
		Fingerprint: "icmp-fp", Subject: map[string]string{"node": "node1", "address": "10.9.9.9"},
	})
	rep := report.New(snap, nil, res)
	found := false
	for _, c := range rep.Verdict.Causes {
		if c.Rule == rule.Name {
			found = slices.ContainsFunc(c.Related, func(l report.VerdictLink) bool {
				return l.Rule == rules.ICMPUnreachable.Name && l.Link == report.LinkCauseFamily
			})
		}
	}
	if !found {
		t.Errorf("the verdict does not lead with %s, icmp-unreachable under it: %+v", rule.Name, rep.Verdict)
	}

	tl := timeline.Build(ctx, snap, res.Rules, res.Findings)[mine.Fingerprint]
	if tl == nil || len(tl.Lanes) != 1 || tl.Lanes[0].Name != "IP "+vip {
		t.Errorf("timeline of %s: %+v, want the ARP owners of %s", rule.Name, tl, vip)
	}

	var sarif bytes.Buffer
	if err := report.Write(&sarif, "sarif", rep); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID               string
						ShortDescription struct{ Text string }
						FullDescription  struct{ Text string }
						Properties       map[string]any
					}
				}
			}
		}
	}
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	descriptor := false
	for _, d := range log.Runs[0].Tool.Driver.Rules {
		if d.ID == rule.Name {
			descriptor = d.ShortDescription.Text == rule.Title() && d.FullDescription.Text == rule.Explanation() && d.Properties["needs"] != nil
		}
	}
	if !descriptor {
		t.Errorf("SARIF has no full descriptor of %s:\n%s", rule.Name, sarif.String())
	}

	joins := false
	for _, e := range report.NextEvidenceFor(snap, res.Rules, res) {
		if e.Kind == model.KindNeighbors && slices.Contains(e.Joins, rule.Name) {
			joins = true
		}
	}
	if !joins {
		t.Errorf("next_evidence does not ask for the neighbors %s uses", rule.Name)
	}

	var doc bytes.Buffer
	if err := collect.WriteDoc(&doc, all); err != nil {
		t.Fatal(err)
	}
	row := "| [`" + rule.Name + "`](rules/" + rule.Name + ".md) | " + rule.Title()
	sections := strings.Split(doc.String(), "\n## ")
	for _, want := range []string{rules.LoadBalancer502.Name, newSymptom.Name} {
		j := slices.IndexFunc(sections, func(s string) bool { return strings.HasPrefix(s, want+"\n") })
		if j < 0 || !strings.Contains(sections[j], row) {
			t.Errorf("docs/collect.md: %s not listed under %q", rule.Name, want)
			continue
		}
		if want == rules.LoadBalancer502.Name {
			// Rank 35: after arp-flap (30), before arp-unanswered (40).
			s := sections[j]
			if a, b, c := strings.Index(s, "[`arp-flap`]"), strings.Index(s, row), strings.Index(s, "[`arp-unanswered`]"); a >= b || b >= c {
				t.Errorf("docs/collect.md, %s: %s not between arp-flap and arp-unanswered", want, rule.Name)
			}
		}
	}
	if j := slices.IndexFunc(sections, func(s string) bool { return strings.HasPrefix(s, newSymptom.Name+"\n") }); j >= 0 {
		if !strings.Contains(sections[j], "tcpdump -i any") || !strings.Contains(sections[j], "`ip neigh`") {
			t.Errorf("docs/collect.md, %s: the capture and neighbor commands are not listed", newSymptom.Name)
		}
	}
}
