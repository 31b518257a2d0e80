package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// fixedReport is a hand-built Report exercising every part a writer
// renders: findings with line, frame and object evidence, facts, input
// warnings, inputs (read and skipped), skipped rules and a failed rule.
func fixedReport() *report.Report {
	snap := &model.Snapshot{Inputs: []model.Input{
		{Path: "bundle/node1/sysctl.txt", Format: "sysctl", Kind: model.KindSysctl, Node: "node1", Layout: "sosreport", Command: "sysctl -a", Records: 812},
		{Path: "bundle/node1/capture.pcap", Format: "pcap", Kind: model.KindCapture, Node: "node1", Records: 1204},
		{Path: "bundle/services.json", Format: "kubectl-json", Kind: model.KindKube, Records: 3, Details: map[string]int{"Service": 3}},
		{Path: "bundle/notes (1).txt", Skipped: "unrecognized content"},
	}, Captures: []model.CaptureInfo{{Node: "node1", File: "bundle/node1/capture.pcap", Format: "pcap", LinkType: "Ethernet", Packets: 1204}}}
	warns := model.ErrorList{
		{Pos: model.Pos{File: "bundle/node1/sysctl.txt", Line: 14}, Text: "net.ipv4.tcp_fin_timeout", Err: errString(`syntax error: expected "name = value"`)},
		{Pos: model.Pos{File: "bundle/node1/capture.pcap", Frame: 1205}, Err: errString("truncated: record cut short")},
	}
	res := analyzer.Result{
		Findings: []analyzer.Finding{
			{
				Rule: "synack-reset", Severity: analyzer.Error, Certainty: analyzer.Proven,
				Fingerprint: "9c1e5a0b7d3f4e21",
				Subject:     map[string]string{"node": "node1", "address": "10.0.0.5", "port": "31380"},
				Title:       "kubelet probes reset: client port 31380 is an IPVS NodePort",
				Summary:     "3 connection attempts from 10.0.0.5 got a SYN/ACK answered by an RST from the client.",
				Cause:       "IPVS owns port 31380 (Service istio-system/ingress NodePort) and resets the SYN/ACK.",
				Fix:         "sysctl -w net.ipv4.ip_local_reserved_ports=30000-32767",
				Facts:       map[string]any{"client": "10.0.0.5", "ports": []int{31380, 31390}, "attempts": 3},
				Sources:     []model.Kind{model.KindCapture, model.KindIPVS, model.KindSysctl},
				Evidence: []analyzer.Evidence{
					{Pos: model.Pos{File: "bundle/node1/capture.pcap", Frame: 812}, Note: "SYN"},
					{Pos: model.Pos{File: "bundle/node1/capture.pcap", Frame: 815}, Note: "client RST"},
					{Pos: model.Pos{File: "bundle/node1/sysctl.txt", Line: 241, Col: 1}, Note: "ip_local_port_range"},
					{Pos: model.Pos{File: "bundle/services.json", Line: 118, Object: "Service istio-system/ingress", Path: "spec.ports[0].nodePort"}, Note: "NodePort | 31380"},
				},
			},
			{
				Rule: "ephemeral-nodeport-overlap", Severity: analyzer.Warning, Certainty: analyzer.Likely,
				Title:    "ip_local_port_range overlaps the NodePort range",
				Summary:  "Ports 30000-32767 are both ephemeral and NodePorts on node1.",
				Facts:    map[string]any{"overlap": "30000-32767"},
				Sources:  []model.Kind{model.KindSysctl},
				Evidence: []analyzer.Evidence{{Pos: model.Pos{File: "/abs/path with space/sysctl.txt", Line: 241}}},
			},
		},
		Skipped: []analyzer.Skipped{{Rule: "stale-dnat-target", Missing: []model.Kind{model.KindNetfilter}}},
		Errors:  []analyzer.RuleError{{Rule: "timewait-churn", Err: "index out of range"}},
		// The rules that ran: the verdict's chains and SARIF's
		// descriptors are theirs.
		Rules: rules.All(),
	}
	r := report.New(snap, warns, res)
	r.Tool = fixedTool
	return r
}

// fixedTool stands for buildinfo.Get(), which changes with the commit and
// the Go toolchain, in the goldens.
var fixedTool = buildinfo.Info{Name: "netmortem", Version: "v1.2.3", Commit: "0123456789abcdef0123456789abcdef01234567",
	Date: "2026-11-24T10:00:00Z", Go: "go1.26.8"}

type errString string

func (e errString) Error() string { return string(e) }

func TestGolden(t *testing.T) {
	for _, format := range report.Formats() {
		t.Run(format, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := report.Write(&a, format, fixedReport()); err != nil {
				t.Fatal(err)
			}
			if err := report.Write(&b, format, fixedReport()); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("two renderings of the same report differ: output order is not stable")
			}
			testutil.Golden(t, filepath.Join("testdata", "golden-"+format+".txt"), a.Bytes())
		})
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	err := report.Write(&bytes.Buffer{}, "xml", fixedReport())
	if err == nil || !strings.Contains(err.Error(), "sarif") {
		t.Errorf("unknown format: error %v should list the formats", err)
	}
}

// TestSARIFStructure checks the parts of SARIF 2.1.0 that consumers rely on.
func TestSARIFStructure(t *testing.T) {
	var buf bytes.Buffer
	if err := report.Write(&buf, "sarif", fixedReport()); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name            string `json:"name"`
					Version         string `json:"version"`
					SemanticVersion string `json:"semanticVersion"`
					Rules           []struct {
						ID   string `json:"id"`
						Help struct {
							Text string `json:"text"`
						} `json:"help"`
						ShortDescription struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
					LogicalLocations []struct {
						Name string `json:"name"`
						Kind string `json:"kind"`
					} `json:"logicalLocations"`
					Properties map[string]any `json:"properties"`
				} `json:"locations"`
				RelatedLocations    []json.RawMessage `json:"relatedLocations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
			OriginalURIBaseIDs map[string]struct {
				URI string `json:"uri"`
			} `json:"originalUriBaseIds"`
			Properties  map[string]any `json:"properties"`
			Invocations []struct {
				ExecutionSuccessful bool              `json:"executionSuccessful"`
				Notifications       []json.RawMessage `json:"toolExecutionNotifications"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif-2.1.0") || len(log.Runs) != 1 {
		t.Fatalf("header: version %q schema %q runs %d", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	driverRules := run.Tool.Driver.Rules
	if run.Tool.Driver.Name != "netmortem" || len(driverRules) != 2 {
		t.Fatalf("driver %q with %d rules", run.Tool.Driver.Name, len(driverRules))
	}
	for _, r := range driverRules {
		rule := rules.Lookup(r.ID)
		if rule == nil || r.Help.Text != rule.Explanation() || r.ShortDescription.Text != rule.Title() {
			t.Errorf("rule %s: help and description must come from the rule's Doc", r.ID)
		}
	}
	if len(run.Results) != 2 {
		t.Fatalf("%d results", len(run.Results))
	}
	for _, res := range run.Results {
		if driverRules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %s: ruleIndex %d points at %s", res.RuleID, res.RuleIndex, driverRules[res.RuleIndex].ID)
		}
	}
	first := run.Results[0]
	if first.Level != "error" || len(first.Locations) != 1 || len(first.RelatedLocations) != 3 {
		t.Errorf("first result: level %s, %d locations, %d related", first.Level, len(first.Locations), len(first.RelatedLocations))
	}
	loc := first.Locations[0]
	if loc.PhysicalLocation == nil || loc.PhysicalLocation.ArtifactLocation.URI != "bundle/node1/capture.pcap" ||
		loc.PhysicalLocation.ArtifactLocation.URIBaseID != "BUNDLE" || loc.PhysicalLocation.Region != nil {
		t.Errorf("frame evidence: physical location %+v", loc.PhysicalLocation)
	}
	if len(loc.LogicalLocations) != 1 || loc.LogicalLocations[0].Name != "frame=812" || loc.LogicalLocations[0].Kind != "packet" || loc.Properties["frame"] != float64(812) {
		t.Errorf("frame evidence: logical %+v properties %v", loc.LogicalLocations, loc.Properties)
	}
	second := run.Results[1].Locations[0]
	// An absolute path is relative to ROOT, which is file:///.
	if al := second.PhysicalLocation.ArtifactLocation; al.URIBaseID != "ROOT" || run.OriginalURIBaseIDs[al.URIBaseID].URI+al.URI != "file:///abs/path%20with%20space/sysctl.txt" ||
		second.PhysicalLocation.Region.StartLine != 241 {
		t.Errorf("line evidence: %+v %+v, bases %+v", al, second.PhysicalLocation.Region, run.OriginalURIBaseIDs)
	}
	if _, ok := run.OriginalURIBaseIDs["BUNDLE"]; !ok {
		t.Errorf("originalUriBaseIds lack BUNDLE: %+v", run.OriginalURIBaseIDs)
	}
	if fp := first.PartialFingerprints["netmortem/v1"]; fp != "9c1e5a0b7d3f4e21" || run.Results[1].PartialFingerprints != nil {
		t.Errorf("partialFingerprints %v and %v, want the first finding's fingerprint and none for the second (it has none)",
			first.PartialFingerprints, run.Results[1].PartialFingerprints)
	}
	if d := run.Tool.Driver; d.Version != "v1.2.3" || d.SemanticVersion != "1.2.3" || run.Properties["schema_version"] != report.SchemaVersion {
		t.Errorf("driver version %q semanticVersion %q, run properties %v", d.Version, d.SemanticVersion, run.Properties)
	}
	inv := run.Invocations[0]
	if inv.ExecutionSuccessful || len(inv.Notifications) != 4 {
		t.Errorf("invocation: successful %v with %d notifications (want false, 1 rule error + 1 skipped + 2 warnings)", inv.ExecutionSuccessful, len(inv.Notifications))
	}
}
