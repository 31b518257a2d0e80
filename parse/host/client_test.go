package host

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// clientLines formats results as "line node tool target outcome
// [status] [name] [answers]".
func clientLines(out []model.ClientResult) []string {
	var s []string
	for _, r := range out {
		line := fmt.Sprintf("%d %s %s %s %s", r.Pos.Line, r.Node, r.Tool, r.Target, r.Outcome)
		if r.Status != "" {
			line += " " + r.Status
		}
		if r.Name != "" {
			line += " name=" + r.Name
		}
		if len(r.Answers) > 0 {
			line += fmt.Sprint(" ", r.Answers)
		}
		if r.MAC != "" {
			line += " mac=" + r.MAC
		}
		if r.Count > 0 {
			line += fmt.Sprint(" x", r.Count)
		}
		s = append(s, line)
	}
	return s
}

func TestClientField(t *testing.T) {
	for rel, want := range map[string][]string{
		// kubectl exec POD -- curl; the failure follows curl's progress meter.
		"fixtures/field/filter-forward-drop--kubeadm-issue-139/curl.txt": {"4  curl 10.96.0.1:443 no-route"},
		// curl -I answered by one address, refused by the next.
		"fixtures/field/ipvs-strict-arp--antrea-3785/curl.txt": {
			"2  curl 10.211.52.163:80 connected 200",
			"8  curl 10.183.0.231:80 refused",
		},
		"fixtures/field/vxlan-port-blocked--cloud-api-adaptor-issue-244/curl.txt": {"2  curl 172.26.143.207:80 no-route"},
		// busybox "/ # " prompts; a dig interrupted, then one answered.
		"fixtures/field/filter-forward-drop--kube-router-issue-316/dig.txt": {
			"3  dig 10.50.0.2:53 no-answer name=kubernetes-dashboard",
			"10  dig 10.244.1.83:53 answered NXDOMAIN name=kubernetes-dashboard",
		},
		"fixtures/field/vxlan-checksum-offload--flannel-issue-1279/ethtool-K-and-nslookup.txt": {
			"2 ip-172-21-117-203 nslookup 100.64.0.10:53 timeout name=www.google.com",
			"17 ip-172-21-117-203 nslookup 100.64.0.10:53 answered NOERROR name=www.google.com [198.51.100.228]",
		},
		"fixtures/field/apiserver-unreachable--mlab-k8s-support-152/coredns.log": {"1  app 172.30.0.1:443 net-unreachable"},
		// Made here: testdata/make-client.sh.
		"parse/testdata/client/curl-v.txt": {
			"3  curl 127.0.0.1:18081 refused",
			"8  curl 127.0.0.1:18080 connected 200",
			"16  curl 127.0.0.1:18080 connected 200",
		},
		// One address answered from two MACs (testdata/make-arping.sh).
		"parse/testdata/client/arping-two-macs.txt": {
			"3 client arping 10.99.0.10 connected mac=4e:f8:23:e2:3c:fc",
			"4 client arping 10.99.0.10 connected mac=86:61:36:6c:50:73",
			"11 client arping 10.99.0.77 timeout",
		},
		"parse/testdata/client/wget.txt": {
			"3  wget 127.0.0.1:18081 refused",
			"6  wget 127.0.0.1:18080 connected 200",
		},
	} {
		parsetest.CheckLines(t, rel, clientLines(parsetest.ReadFile(t, rel, Client)), want)
	}
}

// Transcripts as tickets paste them, of the tools not installed here.
func TestClientTools(t *testing.T) {
	in := "$ nc -vz 10.0.0.5 443\n" +
		"Connection to 10.0.0.5 443 port [tcp/https] succeeded!\n" +
		"$ nc -zv -w 2 10.0.0.6 80\n" +
		"nc: connect to 10.0.0.6 port 80 (tcp) timed out: Operation now in progress\n" +
		"$ nc -zv 10.0.0.7 80\n" +
		"nc: connect to 10.0.0.7 port 80 (tcp) failed: Connection refused\n" +
		"/ # nc -zv 10.0.0.8 53\n" +
		"nc: 10.0.0.8 (10.0.0.8:53): Connection refused\n" +
		"$ ncat -v 10.0.0.9 6443\n" +
		"Ncat: Version 7.70 ( https://nmap.org/ncat )\n" +
		"Ncat: Connection timed out.\n" +
		"$ telnet 10.0.0.10 2379\n" +
		"Trying 10.0.0.10...\n" +
		"telnet: Unable to connect to remote host: Connection refused\n" +
		"$ telnet 10.0.0.11 80\n" +
		"Trying 10.0.0.11...\n" +
		"Connected to 10.0.0.11.\n" +
		"Escape character is '^]'.\n" +
		"$ curl http://web.default.svc:8080/\n" +
		"curl: (6) Could not resolve host: web.default.svc\n" +
		"$ curl -m 5 https://10.0.0.12/\n" +
		"curl: (28) Failed to connect to 10.0.0.12 port 443 after 5001 ms: Connection timed out\n" +
		"$ wget -O- http://10.0.0.13\n" +
		"Connecting to 10.0.0.13 (10.0.0.13:80)\n" +
		"wget: can't connect to remote host (10.0.0.13): No route to host\n" +
		"$ kubectl exec -it web-0 -- sh\n" +
		"error: error upgrading connection: error dialing backend: dial tcp 10.0.0.14:10250: i/o timeout\n" +
		"$ kubectl get pods\n" +
		"The connection to the server 10.0.0.15:6443 was refused - did you specify the right host or port?\n" +
		"$ dig @10.96.0.10 kubernetes.default.svc.cluster.local +short\n" +
		";; connection timed out; no servers could be reached\n" +
		"$ nslookup kubernetes.default\n" +
		"Server:    10.96.0.10\n" +
		"Address 1: 10.96.0.10\n" +
		"\n" +
		"nslookup: can't resolve 'kubernetes.default'\n" +
		"$ nslookup nope.example 10.96.0.10\n" +
		"Server:\t\t10.96.0.10\n" +
		"Address:\t10.96.0.10#53\n" +
		"\n" +
		"** server can't find nope.example: SERVFAIL\n" +
		"\n" +
		"$ dig web.default.svc.cluster.local\n" +
		";; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 1\n" +
		";; ANSWER SECTION:\n" +
		"web.default.svc.cluster.local. 5 IN A 10.96.3.4\n" +
		"\n" +
		";; SERVER: 10.96.0.10#53(10.96.0.10)\n" +
		"$ cat app.log\n" +
		"E0101 00:00:00.000000 1 reflector.go:1] Get \"https://10.96.0.1:443/api\": dial tcp 10.96.0.1:443: connect: no route to host\n" +
		"2024/01/01 00:00:00 read tcp 10.1.0.2:40000->10.96.0.20:80: read: connection reset by peer\n" +
		"dial tcp 10.1.0.9:80: connect: cannot assign requested address\n" +
		"lookup redis.prod on 10.96.0.10:53: no such host\n"
	out, err := Client(strings.NewReader(in), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2  nc 10.0.0.5:443 connected",
		"4  nc 10.0.0.6:80 timeout",
		"6  nc 10.0.0.7:80 refused",
		"8  nc 10.0.0.8:53 refused",
		"11  nc 10.0.0.9:6443 timeout",
		"14  telnet 10.0.0.10:2379 refused",
		"17  telnet 10.0.0.11:80 connected",
		"20  curl web.default.svc:8080 unresolved name=web.default.svc",
		"22  curl 10.0.0.12:443 timeout",
		"25  wget 10.0.0.13:80 no-route",
		"27  kubectl 10.0.0.14:10250 timeout",
		"29  kubectl 10.0.0.15:6443 refused",
		"31  dig 10.96.0.10:53 timeout name=kubernetes.default.svc.cluster.local",
		"36  nslookup 10.96.0.10:53 unresolved name=kubernetes.default",
		"41  nslookup 10.96.0.10:53 answered SERVFAIL name=nope.example",
		"44  dig 10.96.0.10:53 answered NOERROR name=web.default.svc.cluster.local [10.96.3.4]",
		"50  app 10.96.0.1:443 no-route",
		"51  app 10.96.0.20:80 reset",
		"52  app 10.1.0.9:80 addr-unavailable",
		"53  app 10.96.0.10:53 unresolved name=redis.prod",
	}
	parsetest.CheckLines(t, "t.txt", clientLines(out), want)
}

// musl's and busybox's words for the errors (Alpine images): "Host is
// unreachable" is EHOSTUNREACH, glibc's "No route to host".
func TestClientMuslErrors(t *testing.T) {
	in := "[root@rem ~]# kubectl exec -it traefik-76dc4fcf59-g6fmk -- wget 10.42.0.17:8080 -T 2\n" +
		"Connecting to 10.42.0.17:8080 (10.42.0.17:8080)\n" +
		"wget: can't connect to remote host (10.42.0.17): Host is unreachable\n" +
		"command terminated with exit code 1\n" +
		"/ # nc -zv 10.42.0.18 80\n" +
		"nc: 10.42.0.18 (10.42.0.18:80): Host is unreachable\n" +
		"/ # wget -T 2 http://10.42.0.19\n" +
		"Connecting to 10.42.0.19 (10.42.0.19:80)\n" +
		"wget: can't connect to remote host (10.42.0.19): Operation timed out\n"
	out, err := Client(strings.NewReader(in), "m.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "m.txt", clientLines(out), []string{
		"3  wget 10.42.0.17:8080 no-route",
		"6  nc 10.42.0.18:80 no-route",
		"9  wget 10.42.0.19:80 timeout",
	})
}

// A hanging command is no answer only when it printed nothing; an
// annotation such as <hangs> is not output.
func TestClientNoAnswer(t *testing.T) {
	in := "$ curl http://10.0.0.1/\n<hangs>\n^C\n$ curl http://10.0.0.2/\nhello\n^C\n$ ls\n^C\n"
	out, err := Client(strings.NewReader(in), "h.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "h.txt", clientLines(out), []string{"3  curl 10.0.0.1:80 no-answer"})
}

func FuzzClient(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"parse/testdata/client/curl-v.txt", "parse/testdata/client/wget.txt",
		"fixtures/field/filter-forward-drop--kube-router-issue-316/dig.txt",
		"fixtures/field/vxlan-checksum-offload--flannel-issue-1279/ethtool-K-and-nslookup.txt"})
	f.Add("$ kubectl exec p -- nc -zv [::1] 99999\nnc: connect to ::1 port 0 (tcp) failed: Connection refused\n^C\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Client(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, r := range out {
			if r.Pos.Line == 0 || r.Target == "" || r.Outcome == "" || r.Tool == "" {
				t.Fatalf("bad result: %+v", r)
			}
		}
		sniffClient("fuzz.txt", []byte(in))
	})
}

// nslookup's "No answer" (busybox or musl, as k3s-io/k3s#6561 pasted it:
// the name exists without the record asked for) is an answer, NOERROR.
func TestClientNslookupNoAnswer(t *testing.T) {
	in := "kubectl run -ti --rm alpine-musl --image=giantswarm/tiny-tools:3.12 --restart=Never --timeout=5s -- nslookup google.com\n" +
		"Server:\t\t10.43.0.10\n" +
		"Address:\t10.43.0.10#53\n" +
		"\n" +
		"Non-authoritative answer:\n" +
		"*** Can't find google.com.mydomain.com: No answer\n" +
		"\n" +
		"pod \"alpine-musl\" deleted\n"
	out, err := Client(strings.NewReader(in), "nslookup.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "nslookup.txt", clientLines(out), []string{
		"6  nslookup 10.43.0.10:53 answered NOERROR name=google.com.mydomain.com",
	})
}

// The C library's connect errors in other languages, as glibc prints
// them (testdata/strerror-locales.txt, strerror under each locale): each
// is read as its English words are.
func TestClassifyLocalized(t *testing.T) {
	b, err := os.ReadFile("testdata/strerror-locales.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ClientOutcome{model.ClientTimeout, model.ClientRefused, model.ClientNoRoute, model.ClientNetUnreachable}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		loc, words, _ := strings.Cut(line, " ")
		for i, w := range strings.Split(words, "|") {
			if got := classify("Failed connect to 10.0.0.5:80; " + w); got != want[i] {
				t.Errorf("%s %q: %q, want %q", loc, w, got, want[i])
			}
			n++
		}
	}
	if n != 40 {
		t.Errorf("%d errors read, want 40", n)
	}
}

// opsnull/follow-me-install-kubernetes-cluster#553: curl 7.29's verbose
// transcript on a zh_CN host, its connect error in Chinese.
func TestClientCurlChinese(t *testing.T) {
	in := "[root@rs102 ~]# curl http://10.254.176.48/host.html -v\n" +
		"* About to connect() to 10.254.176.48 port 80 (#0)\n" +
		"*   Trying 10.254.176.48...\n" +
		"* 连接超时\n" +
		"* Failed connect to 10.254.176.48:80; 连接超时\n" +
		"* Closing connection 0\n" +
		"curl: (7) Failed connect to 10.254.176.48:80; 连接超时\n"
	out, err := Client(strings.NewReader(in), "curl.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Outcome != model.ClientTimeout || out[0].Target != "10.254.176.48:80" {
		t.Errorf("got %+v", out)
	}
}
