package rules

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/analyzertest"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

// fingerprintsOf runs rule on the files of dir and returns the
// fingerprints of its findings.
func fingerprintsOf(t *testing.T, rule *analyzer.Rule, dir string) []string {
	t.Helper()
	snap, _, err := parse.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := analyzer.Run(context.Background(), snap, []*analyzer.Rule{rule}, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("rule errors: %+v", res.Errors)
	}
	var out []string
	for _, f := range res.Findings {
		out = append(out, f.Fingerprint)
	}
	return out
}

// copyScenario copies the files of a scenario directory into a new one,
// the file called from saved as to (a path under the new directory).
func copyScenario(t *testing.T, src, from, to string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "want.yaml" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name := e.Name()
		if name == from {
			name = to
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// The same log saved under another name (moved, rotated, named the way
// the kubelet names container logs) is the same problem: its findings
// keep their fingerprints.
func TestSubjectsWithoutLogFileNames(t *testing.T) {
	for _, c := range []struct {
		rule     *analyzer.Rule
		scenario string
		log      string
		renames  []string
	}{
		{KubeProxySyncErrors, "kube-proxy-sync-errors/hit-stale-dnat", "kube-proxy.log", []string{
			"logs/kube-proxy.log", "kube-proxy.log.1", "kube-proxy-0.log"}},
		{APIServerUnreachable, "apiserver-unreachable/hit-no-rule", "traefik.log", []string{
			"logs/traefik.log", "traefik.log.1",
			"var/log/containers/traefik-7d9f_kube-system_traefik-" + strings.Repeat("ab", 32) + ".log",
			"var/log/pods/kube-system_traefik-7d9f_0f6c/traefik/0.log"}},
	} {
		src := analyzertest.EvidenceDir(t, filepath.Join("testdata", c.scenario))
		want := fingerprintsOf(t, c.rule, src)
		if len(want) == 0 {
			t.Fatalf("%s: no finding", c.scenario)
		}
		for _, name := range c.renames {
			got := fingerprintsOf(t, c.rule, copyScenario(t, src, c.log, filepath.FromSlash(name)))
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s with %s saved as %s: fingerprints %v, want %v", c.rule.Name, c.log, name, got, want)
			}
		}
	}
}

func TestSubjectComponent(t *testing.T) {
	for _, c := range []struct{ comp, file, want string }{
		{"traefik.log", "traefik.log", "traefik"},
		{"traefik.log.1", "logs/traefik.log.1", "traefik"},
		{"0.log", "var/log/pods/ns_traefik-x_uid/traefik/0.log", "traefik"},
		{"a_b_traefik-" + strings.Repeat("0f", 32) + ".log", "a_b_traefik-" + strings.Repeat("0f", 32) + ".log", "traefik"},
		{"coredns", "logs/coredns.log", "coredns"}, // the log says which component it is
	} {
		if got := subjectComponent(c.comp, c.file); got != c.want {
			t.Errorf("subjectComponent(%q, %q) = %q, want %q", c.comp, c.file, got, c.want)
		}
	}
}

// ICMP errors about a server's packets to a client's ephemeral ports are
// one problem of that client, whatever connection (port) they quote.
func TestICMPSubjectWithoutEphemeralPort(t *testing.T) {
	fragNeeded := func(frame int, clientPort uint16) model.ICMPEvent {
		return model.ICMPEvent{Pos: model.Pos{File: "c.pcap", Frame: frame}, Time: time.Unix(1700000000, 0),
			From: netip.MustParseAddr("10.78.3.1"), To: netip.MustParseAddr("10.78.3.2"), Type: 3, Code: 4, What: "frag-needed",
			Quoted: model.Tuple{Src: netip.MustParseAddrPort("10.78.3.2:8080"),
				Dst: netip.AddrPortFrom(netip.MustParseAddr("10.78.1.2"), clientPort)}, QuotedProto: "tcp"}
	}
	one := &model.Snapshot{ICMP: []model.ICMPEvent{fragNeeded(10, 33756)}}
	one.Inputs = []model.Input{{Path: "c.pcap", Kind: model.KindCapture}}
	two := &model.Snapshot{ICMP: []model.ICMPEvent{fragNeeded(10, 41000), fragNeeded(20, 52000)}}
	two.Inputs = one.Inputs
	f1, f2 := run1(t, ICMPUnreachable, one), run1(t, ICMPUnreachable, two)
	if len(f1) != 1 || len(f2) != 1 {
		t.Fatalf("findings: %d and %d, want one each", len(f1), len(f2))
	}
	if f1[0].Subject["address"] != "10.78.1.2" || f1[0].Fingerprint != f2[0].Fingerprint {
		t.Errorf("subjects %v and %v (fingerprints %s, %s): want the client's address without its port, the same",
			f1[0].Subject, f2[0].Subject, f1[0].Fingerprint, f2[0].Fingerprint)
	}
	// A client's packet to a server's port keeps the port: another port
	// is another problem.
	unreach := func(port uint16) model.ICMPEvent {
		return model.ICMPEvent{Pos: model.Pos{File: "c.pcap", Frame: int(port)}, From: netip.MustParseAddr("10.99.0.2"),
			To: netip.MustParseAddr("10.99.0.1"), Type: 3, Code: 3, What: "port-unreachable", QuotedProto: "udp",
			Quoted: model.Tuple{Src: netip.MustParseAddrPort("10.99.0.1:45000"), Dst: netip.AddrPortFrom(netip.MustParseAddr("10.99.0.2"), port)}}
	}
	s := &model.Snapshot{ICMP: []model.ICMPEvent{unreach(53), unreach(123)}, Inputs: one.Inputs}
	f := run1(t, ICMPUnreachable, s)
	if len(f) != 2 || f[0].Subject["address"] == f[1].Subject["address"] {
		t.Errorf("port-unreachable for two server ports: %d findings, subjects %v", len(f), f)
	}
}

// A client whose SYN/ACKs from two servers it resets has two problems;
// the same client and server seen in another capture has the same one.
func TestSynAckResetSubjectNamesTheServer(t *testing.T) {
	reset := func(client, server string, frame int) model.Attempt {
		return model.Attempt{Pos: model.Pos{File: "c.pcap", Frame: frame}, Client: netip.MustParseAddrPort(client),
			Server: netip.MustParseAddrPort(server), Outcome: model.OutcomeSynAckClientRST, Start: time.Unix(1700000000, 0),
			SYN: []model.Seg{{Frame: frame}}}
	}
	f := run1(t, SynAckReset, withAttempts(&model.Snapshot{}, reset("10.0.0.5:40001", "10.0.0.9:80", 1), reset("10.0.0.5:40002", "10.0.0.10:443", 5)))
	if len(f) != 2 || f[0].Fingerprint == f[1].Fingerprint {
		t.Fatalf("two servers: %d findings %+v, want two with distinct fingerprints", len(f), f)
	}
	g := run1(t, SynAckReset, withAttempts(&model.Snapshot{}, reset("10.0.0.5:51000", "10.0.0.9:80", 7)))
	if len(g) != 1 || g[0].Fingerprint != f[0].Fingerprint && g[0].Fingerprint != f[1].Fingerprint {
		t.Errorf("the same client and server from another port: %+v, want the fingerprint of %v or %v", g, f[0].Subject, f[1].Subject)
	}
}

// ComponentStatus reporting one component or both unhealthy is the same
// false alarm.
func TestAPIServerAffinitySubjectWithoutComponentList(t *testing.T) {
	src := analyzertest.EvidenceDir(t, filepath.Join("testdata", "apiserver-affinity", "hit-symptom-componentstatus-only"))
	both := fingerprintsOf(t, APIServerAffinity, src)
	b, err := os.ReadFile(filepath.Join(src, "componentstatuses.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler healthy: only the controller-manager is reported.
	i := strings.Index(string(b), "10259")
	if i < 0 {
		t.Fatal("no scheduler condition in the scenario")
	}
	j := strings.LastIndex(string(b[:i]), `"False"`)
	one := string(b[:j]) + `"True"` + string(b[j+len(`"False"`):i]) + string(b[i:])
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "componentstatuses.json"), []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	single := fingerprintsOf(t, APIServerAffinity, dir)
	if len(both) != 1 || len(single) != 1 || both[0] != single[0] {
		t.Errorf("fingerprints with both components %v, with the controller-manager only %v: want one, the same", both, single)
	}
}

// A component's rotated logs in one bundle make one finding, with the
// fingerprint of the finding of its current log alone.
func TestAPIServerUnreachableRotatedLogs(t *testing.T) {
	src := analyzertest.EvidenceDir(t, filepath.Join("testdata", "apiserver-unreachable", "hit-no-rule"))
	want := fingerprintsOf(t, APIServerUnreachable, src)
	dir := copyScenario(t, src, "", "")
	b, err := os.ReadFile(filepath.Join(src, "traefik.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traefik.log.1"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := fingerprintsOf(t, APIServerUnreachable, dir); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("with traefik.log.1 too: fingerprints %v, want %v", got, want)
	}
}
