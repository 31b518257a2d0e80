package kube

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// troubleshoot's cluster-info/cluster_version.json, as the k3s baseline
// bundle of the shared corpus holds it.
const clusterVersionJSON = `{
  "info": {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.2+k3s1",
    "gitCommit": "6da204241bfd40220cb1af4cde35609e0c58df72",
    "gitTreeState": "clean",
    "buildDate": "2024-10-26T04:07:15Z",
    "goVersion": "go1.22.8",
    "compiler": "gc",
    "platform": "linux/amd64"
  },
  "string": "v1.31.2+k3s1"
}
`

func TestVersion(t *testing.T) {
	out, err := Version(strings.NewReader(clusterVersionJSON), "cluster_version.json")
	if err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}
	v := out[0]
	if v.GitVersion != "v1.31.2+k3s1" || v.Major != "1" || v.Minor != "31" || v.Platform != "linux/amd64" || v.BuildDate != "2024-10-26T04:07:15Z" || v.Pos.Line != 5 {
		t.Errorf("version %+v", v)
	}
	// kubectl version -o json: the server's, not kubectl's own.
	kv := `{"clientVersion":{"major":"1","minor":"33","gitVersion":"v1.33.1","platform":"darwin/arm64"},"kustomizeVersion":"v5.6.0",` +
		`"serverVersion":{"major":"1","minor":"30+","gitVersion":"v1.30.4-eks-a737599","platform":"linux/amd64"}}`
	out, err = Version(strings.NewReader(kv), "v.json")
	if err != nil || len(out) != 1 || out[0].GitVersion != "v1.30.4-eks-a737599" || out[0].Minor != "30+" {
		t.Errorf("kubectl version: %+v %v", out, err)
	}
	for _, in := range []string{clusterVersionJSON, kv} {
		if sc := sniffVersion("x", []byte(in)); sc < 80 {
			t.Errorf("sniff %d", sc)
		}
	}
	if sc := sniffVersion("x", []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}`)); sc != 0 {
		t.Errorf("a Service sniffed %d", sc)
	}
	// Bad input: positioned errors, never a panic.
	_, err = Version(strings.NewReader("{\n \"info\": {\"major\": \"1\"}\n}\n"), "bad.json")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "bad.json:2" {
		t.Errorf("errors at %q", at)
	}
	_, err = Version(strings.NewReader("{\n \"info\": [\n"), "cut.json")
	if at := parsetest.SyntaxErrorsAt(t, err); !strings.HasPrefix(at, "cut.json:") || at == "cut.json:0" {
		t.Errorf("errors at %q", at)
	}
}

// troubleshoot's dns/debug.json of the shared corpus, read in place.
func TestDNSDebugCorpus(t *testing.T) {
	path := filepath.Join(testutil.CorpusDir(t, "dumps", "kubectl-json"), "troubleshoot-baseline-k3s_dns-debug.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sc := sniffDNSDebug(path, b); sc < 80 {
		t.Errorf("sniff %d", sc)
	}
	out, err := DNSDebug(strings.NewReader(string(b)), "debug.json")
	if err != nil || len(out) != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	c := out[0]
	if c.ClusterIP != netip.MustParseAddr("10.43.0.1") || c.DNSService != netip.MustParseAddr("10.43.0.10") || c.Ndots != 5 ||
		len(c.Nameservers) != 1 || c.Nameservers[0] != c.DNSService || len(c.Search) != 4 || c.Search[0] != "default.svc.cluster.local" {
		t.Errorf("check %+v", c)
	}
	if len(c.DNSEndpoints) != 1 || c.DNSEndpoints[0].String() != "10.42.0.6:53" || len(c.DNSPods) != 1 || c.DNSPods[0] != "coredns-56f6fc8fd7-p4x9z" {
		t.Errorf("DNS pods %v endpoints %v", c.DNSPods, c.DNSEndpoints)
	}
	if len(c.Queries) != 2 || c.Queries[0] != (model.DNSQuery{Check: "kubernetes", Name: "kubernetes", Address: "10.43.0.1"}) || c.Queries[1].Check != "nonResolvableDomain" || c.Queries[1].Address != "" {
		t.Errorf("queries %+v", c.Queries)
	}
	if c.Pos.Line != 1 {
		t.Errorf("pos %v", c.Pos)
	}
	// A bad endpoint is reported at its line; the rest is kept.
	out, err = DNSDebug(strings.NewReader("{\n\"kubeDNSService\": \"10.43.0.10\",\n\"kubeDNSEndpoints\": \"10.42.0.6:53,bad\"\n}\n"), "d.json")
	if at := parsetest.SyntaxErrorsAt(t, err); at != "d.json:3" || len(out) != 1 || len(out[0].DNSEndpoints) != 1 {
		t.Errorf("errors at %q, %+v", at, out)
	}
}

func FuzzClusterInfo(f *testing.F) {
	f.Add(clusterVersionJSON)
	f.Add("Client Version: v1.28.2\nServer Version: version.Info{Major:\"1\", Minor:\"20+\", GitVersion:\"v1.20.4\"}\n")
	f.Add(`{"kubernetesClusterIP":"10.43.0.1","podResolvConf":"nameserver 10.43.0.10\noptions ndots:5\n","query":{"kubernetes":{"name":"kubernetes","address":"10.43.0.1"}},"kubeDNSPods":["coredns-1"],"kubeDNSService":"10.43.0.10","kubeDNSEndpoints":"10.42.0.6:53"}`)
	f.Fuzz(func(t *testing.T, in string) {
		vs, err := Version(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, v := range vs {
			if v.Pos.Line == 0 || v.GitVersion == "" {
				t.Fatalf("version %+v", v)
			}
		}
		cs, err := DNSDebug(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, c := range cs {
			if c.Pos.Line == 0 {
				t.Fatalf("check %+v", c)
			}
		}
	})
}

// kubectl version's text: since 1.28 the versions alone, before it the Go
// struct of version.Info; the client's version and kubectl's skew warning
// are passed over.
func TestVersionText(t *testing.T) {
	in := "$ kubectl version\nClient Version: v1.28.2\nKustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3\nServer Version: v1.25.16+k3s4\n" +
		"WARNING: version difference between client (1.28) and server (1.25) exceeds the supported minor version skew of +/-1\n"
	if sc := sniffVersion("v.txt", []byte(in)); sc < 80 {
		t.Errorf("sniff %d", sc)
	}
	out, err := Version(strings.NewReader(in), "v.txt")
	if err != nil || len(out) != 1 || out[0].GitVersion != "v1.25.16+k3s4" || out[0].Major != "1" || out[0].Minor != "25" || out[0].Pos.Line != 4 {
		t.Errorf("%+v %v", out, err)
	}
	old := `Client Version: version.Info{Major:"1", Minor:"21", GitVersion:"v1.21.1", GitCommit:"5e58841cce77d4bc13713ad2b91fa0d961e69192", GitTreeState:"clean", BuildDate:"2021-05-12T14:18:45Z", GoVersion:"go1.16.4", Compiler:"gc", Platform:"linux/amd64"}
Server Version: version.Info{Major:"1", Minor:"20+", GitVersion:"v1.20.4-eks-6b7464", GitCommit:"6b746440c04cb81db4426842b4ae65c3f7035e53", GitTreeState:"clean", BuildDate:"2021-03-19T19:33:03Z", GoVersion:"go1.15.8", Compiler:"gc", Platform:"linux/amd64"}
garbage
`
	out, err = Version(strings.NewReader(old), "old.txt")
	if len(out) != 1 || out[0].GitVersion != "v1.20.4-eks-6b7464" || out[0].Minor != "20+" || out[0].Platform != "linux/amd64" || out[0].Pos.Line != 2 {
		t.Errorf("%+v", out)
	}
	if at := parsetest.SyntaxErrorsAt(t, err); at != "old.txt:3" {
		t.Errorf("errors at %q", at)
	}
	if sc := sniffVersion("x", []byte("Client Version: v1.28.2\n")); sc != 0 {
		t.Errorf("client alone sniffed %d", sc)
	}
}

// FuzzDNSDebug holds troubleshoot's DNS debug report to its own target:
// no panic, every error positioned, every check at a line.
func FuzzDNSDebug(f *testing.F) {
	f.Add(`{"kubernetesClusterIP":"10.43.0.1","podResolvConf":"nameserver 10.43.0.10\noptions ndots:5\n","query":{"kubernetes":{"name":"kubernetes","address":"10.43.0.1"}},"kubeDNSPods":["coredns-1"],"kubeDNSService":"10.43.0.10","kubeDNSEndpoints":"10.42.0.6:53"}`)
	f.Add("{\n\"kubeDNSService\": \"10.43.0.10\",\n\"kubeDNSEndpoints\": \"10.42.0.6:53,bad\"\n}\n")
	f.Fuzz(func(t *testing.T, in string) {
		cs, err := DNSDebug(strings.NewReader(in), "fuzz.json")
		parsetest.CheckFuzzErrors(t, err, "fuzz.json")
		for _, c := range cs {
			if c.Pos.File != "fuzz.json" || c.Pos.Line == 0 {
				t.Fatalf("check at %v", c.Pos)
			}
		}
		if s := DNSDebugFormat.Sniff("fuzz.json", []byte(in)); s < 0 || s > 100 {
			t.Fatalf("sniff %d", s)
		}
	})
}
