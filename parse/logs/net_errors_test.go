package logs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The one line two tickets quoted of their component's log: CoreDNS
// failing to reach the kubernetes Service (m-lab/k8s-support#152) and
// capo-controller-manager out of local ports (cluster-api-provider-openstack#3227).
func TestNetErrorLinesReal(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"fixtures/field/apiserver-unreachable--mlab-k8s-support-152/coredns.log",
			[]string{"1 coredns network is unreachable dial tcp 172.30.0.1:443: connect: network is unreachable"}},
		{"fixtures/field/leaked-established-ports--capo-issue-3227/capo-controller-manager.log",
			[]string{"1 capo-controller-manager cannot assign requested address dial tcp <openstack-api-vip>:443: connect: cannot assign requested address"}},
	} {
		out := parsetest.ReadFile(t, c.file, NetErrorLines)
		var got []string
		for _, e := range out {
			got = append(got, fmt.Sprintf("%d %s %s %s", e.Pos.Line, e.Source, e.Fields["error"], e.Message))
		}
		parsetest.CheckLines(t, c.file, got, c.want)
	}
}

// A prompt's command names the source; a line without a network error is
// reported at its line and the others kept.
func TestNetErrorLinesErrors(t *testing.T) {
	in := "$ kubectl logs -n kube-system kube-proxy-abcde\nread tcp 10.0.0.5:41234->10.0.0.1:6443: read: connection reset by peer\n" +
		"all good\ndial udp 10.96.0.10:53: i/o timeout\n"
	out, err := NetErrorLines(strings.NewReader(in), "e.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "e.txt:3" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 2 || out[0].Source != "kube-proxy" || out[1].Fields["error"] != "i/o timeout" {
		t.Errorf("got %+v", out)
	}
}

func FuzzNetErrorLines(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"fixtures/field/apiserver-unreachable--mlab-k8s-support-152/coredns.log",
		"fixtures/field/leaked-established-ports--capo-issue-3227/capo-controller-manager.log"})
	f.Add("# tail x.log\ndial tcp: connect: \nwrite tcp6 [::1]:1->[::1]:2: write: broken pipe\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NetErrorLines(strings.NewReader(in), "fuzz.log")
		parsetest.CheckFuzzErrors(t, err, "fuzz.log")
		for _, e := range out {
			if e.Pos.Line == 0 || e.Message == "" || e.Fields["error"] == "" {
				t.Fatalf("bad event: %+v", e)
			}
		}
		sniffNetErrorLines("fuzz.log", []byte(in))
	})
}
