package logs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The one line three tickets quoted of their component's log: CoreDNS
// failing to reach the kubernetes Service (m-lab/k8s-support#152),
// capo-controller-manager out of local ports (cluster-api-provider-openstack#3227)
// and ingress-nginx without an endpoint (helm/charts#21515).
func TestNetErrorLinesReal(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"fixtures/field/apiserver-unreachable--mlab-k8s-support-152/coredns.log",
			[]string{"1 coredns network is unreachable dial tcp 172.30.0.1:443: connect: network is unreachable"}},
		{"fixtures/field/leaked-established-ports--capo-issue-3227/capo-controller-manager.log",
			[]string{"1 capo-controller-manager cannot assign requested address dial tcp <openstack-api-vip>:443: connect: cannot assign requested address"}},
		{"fixtures/field/docker-chains-flushed--moby-23154/docker-run.txt",
			[]string{"1 docker No chain/target/match by that name docker: Error response from daemon: driver failed programming " +
				"external connectivity on endpoint naughty_babbage (ca698c082b2ffe55229b7183a1588100a2011f82df0e718f16274e02a6cf26fb): " +
				"iptables failed: iptables --wait -t nat -A DOCKER -p tcp -d 0/0 --dport 8080 -j DNAT --to-destination " +
				"172.17.0.2:8080 ! -i docker0: iptables: No chain/target/match by that name."}},
		{"fixtures/field/service-no-endpoints--helm-charts-21515/ingress-nginx-controller.log",
			[]string{`1 ingress-nginx-controller  Service "nginx-ingress-default-backend" does not have any active Endpoint`}},
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
			if e.Pos.Line == 0 || e.Message == "" || e.Level == "" {
				t.Fatalf("bad event: %+v", e)
			}
		}
		sniffNetErrorLines("fuzz.log", []byte(in))
	})
}

// A CNI plugin's error quoted alone (kata-containers#505's CI error) is
// an error of the component the file is named after.
func TestNetErrorLinesCNI(t *testing.T) {
	file := "fixtures/field/cni-bridge-address-mismatch--kata-containers-issue-505/ci-sandbox-error.txt"
	out := parsetest.ReadFile(t, file, NetErrorLines)
	if len(out) != 1 || out[0].Level != "error" || out[0].Source != "ci-sandbox-error" ||
		out[0].Fields["error"] != "failed to set bridge addr: \"cni0\" already has an IP address different from" {
		t.Errorf("got %+v", out)
	}
	in := "plugin type=\"flannel\" failed (add): open /run/flannel/subnet.env: no such file or directory\n" +
		"failed to find plugin \"portmap\" in path [/opt/cni/bin]\nfailed to find the plugin\n"
	out, err := NetErrorLines(strings.NewReader(in), "kubelet.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "kubelet.txt:3" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 2 || out[0].Fields["error"] != "open /run/flannel/subnet.env: no such file or directory" ||
		out[1].Source != "kubelet" {
		t.Errorf("got %+v", out)
	}
}

// The IPAMs' words for no address left, as a sandbox's failure quotes them
// (projectcalico/calico#9462's event message, host-local's).
func TestNetErrorLinesIPAM(t *testing.T) {
	in := "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox " +
		"\"a95d922a5537\": plugin type=\"calico\" failed (add): cannot allocate new block due to per host block limit\n" +
		"plugin type=\"host-local\" failed (add): failed to allocate for range 0: no IP addresses available in range " +
		"set: 10.244.1.1-10.244.1.254\n"
	out, err := NetErrorLines(strings.NewReader(in), "pod-event.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Fields["error"] != "cannot allocate new block due to per host block limit" ||
		out[1].Fields["error"] != "no IP addresses available in range set" {
		t.Errorf("got %+v", out)
	}
}

// An Ingress controller's line that a Service has no endpoint, cut to its
// message, is a warning of the component the file is named after.
func TestNetErrorLinesNoEndpoint(t *testing.T) {
	in := "Service \"nginx-ingress-default-backend\" does not have any active Endpoint\n" +
		"service kube-system/kibana-logging does no have any active endpoints\nService default/web is fine\n"
	out, err := NetErrorLines(strings.NewReader(in), "ingress-nginx-controller.log")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "ingress-nginx-controller.log:3" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 2 || out[0].Level != "warning" || out[1].Source != "ingress-nginx-controller" ||
		out[1].Message != "service kube-system/kibana-logging does no have any active endpoints" {
		t.Errorf("got %+v", out)
	}
}

// nginx's error-log message quoted without its time and process (as
// kubernetes/ingress-nginx#2476 pasted it) is read with its context, as
// nginx-error reads the whole line.
func TestNetErrorLinesNginx(t *testing.T) {
	line := `connect() failed (111: Connection refused) while connecting to upstream, client: 192.168.99.1, ` +
		`server: example, request: "GET / HTTP/1.1", upstream: "http://127.0.0.1:8181/", host: "example"`
	out, err := NetErrorLines(strings.NewReader("$ kubectl logs -n ingress-nginx nginx-ingress-controller-x7k2p\n"+line+"\n"), "e.txt")
	if err != nil || len(out) != 1 {
		t.Fatalf("%v: %+v", err, out)
	}
	whole, ok := parseNginxError("2018/05/06 10:01:02 [error] 37#37: *248 " + line)
	if !ok {
		t.Fatal("nginx-error does not read the whole line")
	}
	e := out[0]
	for _, k := range []string{"client", "server", "request", "upstream", "host", "errno", "strerror"} {
		if e.Fields[k] == "" || e.Fields[k] != whole.Fields[k] {
			t.Errorf("%s: %q, nginx-error %q", k, e.Fields[k], whole.Fields[k])
		}
	}
	if e.Message != whole.Message || e.Level != "error" || e.Source != "nginx" {
		t.Errorf("got %+v", e)
	}
	// nginx's other failures of an upstream, without their time too.
	for _, l := range []string{
		`upstream prematurely closed connection while reading response header from upstream, client: 10.0.0.5, server: _, request: "GET / HTTP/1.1", upstream: "http://10.244.1.7:8080/"`,
		`upstream timed out (110: Connection timed out) while reading response header from upstream, client: 10.0.0.5, server: _, request: "GET / HTTP/1.1", upstream: "http://10.244.1.7:8080/"`,
	} {
		if out, err := NetErrorLines(strings.NewReader(l+"\n"), "e.txt"); err != nil || len(out) != 1 || out[0].Fields["upstream"] != "http://10.244.1.7:8080/" {
			t.Errorf("%s: %v %+v", l, err, out)
		}
	}
}

// Go's failure to listen, cut to its error (deliveryhero/helm-charts#474's
// node-local-dns line).
func TestNetErrorLinesListen(t *testing.T) {
	out, err := NetErrorLines(strings.NewReader("listen tcp 169.254.20.20:8080: bind: address already in use\n"),
		"node-local-dns.log")
	if err != nil || len(out) != 1 || out[0].Fields["error"] != "address already in use" {
		t.Errorf("%v: %+v", err, out)
	}
}
