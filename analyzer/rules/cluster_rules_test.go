package rules

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// The reason kube-proxy's lists fail is read from the messages: a refused
// connection or a timeout, credentials refused, or none.
func TestListFailureCause(t *testing.T) {
	le := func(line int, msg string) facts.ListError {
		return facts.ListError{Kind: "Service", Event: &model.LogEvent{Message: msg, Pos: model.Pos{File: "kube-proxy.log", Line: line}}}
	}
	for _, c := range []struct {
		events []facts.ListError
		why    string
		alts   int
	}{
		{[]facts.ListError{le(2, `Failed to list *v1.Service: an error on the server ("") has prevented the request from succeeding (get services)`)}, "", 3},
		{[]facts.ListError{le(2, `Failed to list *v1.Service: an error on the server ("")`),
			le(5, `Failed to list *v1.Endpoints: Get "https://10.0.0.1:6443/api/v1/endpoints": dial tcp 10.0.0.1:6443: i/o timeout`)},
			"kube-proxy.log:5: the connection to the apiserver fails (i/o timeout)", 2},
		{[]facts.ListError{le(3, `Failed to list *v1.Service: Unauthorized`)}, "kube-proxy.log:3: the apiserver answers unauthorized", 2},
	} {
		why, cause, alts := listFailureCause(c.events)
		if why != c.why || len(alts) != c.alts || (why == "") != strings.HasPrefix(cause, "Not shown") {
			t.Errorf("%s: why %q cause %q, %d alternatives", c.events[len(c.events)-1].Event.Message, why, cause, len(alts))
		}
	}
}

func TestTimeWaitChurn(t *testing.T) {
	s := &model.Snapshot{Inputs: []model.Input{{Path: "ss.txt", Kind: model.KindSockets}}}
	s.SockCounts = []model.SocketCount{
		{Proto: "tcp", State: "TIME-WAIT", Local: netip.MustParseAddr("10.23.77.129"), Count: 849, Pos: model.Pos{File: "ss.txt", Line: 3}},
		{Proto: "tcp", State: "TIME-WAIT", Local: netip.MustParseAddr("10.0.0.9"), Count: 12, Pos: model.Pos{File: "ss.txt", Line: 4}},
	}
	f := run1(t, TimeWaitChurn, s)
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["timewait_sockets"] != 849 || f[0].Facts["connections_per_s"] != "14.2" {
		t.Fatalf("sockets alone: %+v", f)
	}
	// With the range and an owned NodePort in the overlap: the churn lands on it.
	withSysctls(s, sysctl("net.ipv4.ip_local_port_range", "1024 65000", 1))
	withIPVS(s, "10.10.85.235:31080", 7)
	f = run1(t, TimeWaitChurn, s)
	// Joined with the sysctl and IPVS: the churn is shown, whether it is
	// one client or many behind one address is not (a warning).
	if len(f) != 1 || f[0].Severity != analyzer.Warning || f[0].Facts["range_cycle"] != "1h15m21s" || f[0].Facts["owned_ports_in_range"] != 1 {
		t.Fatalf("joined: %+v", f)
	}
	// Below the threshold: nothing.
	s.SockCounts[0].Count = 40
	if f := run1(t, TimeWaitChurn, s); len(f) != 0 {
		t.Errorf("40 sockets reported: %+v", f)
	}
}

// MetalLB's controller updating Services while kubespray deploys kube-vip
// with its services mode on: the controllers fight, without a Service in
// the bundle. MetalLB alone is no finding.

// Kubelets of one version, all too old for the apiserver: the finding names
// the policy broken, not nodes that differ, and is proven from the Nodes and
// the version the apiserver reported.
func TestVersionSkewPolicyOnly(t *testing.T) {
	s := &model.Snapshot{Inputs: []model.Input{{Path: "nodes.json", Kind: model.KindKube}, {Path: "version.json", Kind: model.KindKube}}}
	for i, name := range []string{"a", "b"} {
		n := model.Node{Source: model.Source{Pos: model.Pos{File: "nodes.json", Line: 10 * (i + 1)}}}
		n.Name, n.Status.NodeInfo.KubeletVersion = name, "v1.27.4"
		s.Kube.Nodes = append(s.Kube.Nodes, n)
	}
	s.ServerVersions = []model.ServerVersion{{GitVersion: "v1.31.2", Pos: model.Pos{File: "version.json", Line: 3}}}
	fs := run1(t, VersionSkew, s)
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one", fs)
	}
	f := fs[0]
	const title = "kubelets outside the version skew policy: a (v1.27.4) is more than 3 minor versions older than the " +
		"apiserver (v1.31.2); b (v1.27.4) is more than 3 minor versions older than the apiserver (v1.31.2)"
	if f.Title != title {
		t.Errorf("title %q, want %q", f.Title, title)
	}
	if !strings.HasSuffix(f.Summary, " Outside the supported skew: "+strings.TrimPrefix(title, "kubelets outside the version skew policy: ")+".") {
		t.Errorf("summary %q does not end with the policy broken", f.Summary)
	}
	// The Nodes outside the policy are cited; they and the reported
	// version are both kube: one kind of evidence, so the engine takes the
	// cause for likely.
	if got := evStrings(f.Evidence); strings.Join(got, " ") != "nodes.json:10 nodes.json:20 version.json:3" {
		t.Errorf("evidence %v, want the two Nodes and the version", got)
	}
	if f.Certainty != analyzer.Likely || f.Severity != analyzer.Warning || len(f.Sources) != 1 {
		t.Errorf("certainty %s, severity %s, sources %v: want likely, warning, [kube]", f.Certainty, f.Severity, f.Sources)
	}
}
