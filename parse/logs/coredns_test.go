package logs

import (
	"errors"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/kube"
)

// Each shape CoreDNS writes, as it writes it: dated and undated lines of
// every level, the log plugin's query lines, the errors plugin, the banner
// of a server bound to an address, and a bare "[LEVEL]" line, whose source
// is CoreDNS's only once CoreDNS's own lines were seen.
func TestCoreDNSShapes(t *testing.T) {
	in := `[WARNING] No files matching import glob pattern: /etc/coredns/custom/*.override
.:53 on 10.96.0.10
cluster.local.:53
tls://.:853
CoreDNS-1.12.0
linux/arm64, go1.23.1, 51e11f1
2024-10-08T20:16:40.123Z [INFO] plugin/reload: Running configuration SHA512 = 1b22
2024-10-08T20:16:41.5-07:00 [WARNING] plugin/kubernetes: starting server with unsynced Kubernetes API
[INFO] 10.244.0.1:45678 - 1234 "A IN example.com. udp 29 false 512" NOERROR qr,rd,ra 106 0.000123s
[INFO] [::1]:50759 - 29008 "AAAA IN kubernetes.default.svc.cluster.local. tcp 54 false 65535" NOERROR qr,aa,rd 156 0.001247749s
[ERROR] plugin/errors: 2 example.com. A: read udp 10.1.0.20:41000->8.8.8.8:53: i/o timeout
[DEBUG] plugin/loop: Forwarding to loop detection
[FATAL] plugin/loop: Loop (127.0.0.1:55953 -> :53) detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO 4547991504243258144.3688648895315093531."
[INFO] SIGTERM: Shutting down servers then terminating
[INFO] Reloading
2021-03-02T11:20:07.101Z [INFO] plugin/reload: Running configuration MD5 = 5d6e1ca2f3b3b0c8a4e8c1f6a1b2c3d4
[INFO] Reloading complete
2018/06/11 09:02:31 [INFO] Reloading
2018/06/11 09:02:31 [INFO] plugin/reload: Running configuration MD5 = 0a1b2c3d4e5f60718293a4b5c6d7e8f9
`
	evs, err := Logs(strings.NewReader(in), "kube-dns.txt")
	if err != nil {
		t.Fatalf("errors: %v", err)
	}
	want := `1 - WARNING @ "No files matching import glob pattern: /etc/coredns/custom/*.override" {}
2 -  coredns@ ".:53 on 10.96.0.10" {bind=10.96.0.10 port=53 server=.:53}
3 -  coredns@ "cluster.local.:53" {port=53 server=cluster.local.:53}
4 -  coredns@ "tls://.:853" {port=853 server=tls://.:853}
5 -  coredns@ "CoreDNS-1.12.0" {version=1.12.0}
6 -  coredns@ "linux/arm64, go1.23.1, 51e11f1" {commit=51e11f1 go=go1.23.1 platform=linux/arm64}
7 2024-10-08T20:16:40.123Z INFO coredns@ "Running configuration SHA512 = 1b22" {plugin=reload}
8 2024-10-09T03:16:41.5Z WARNING coredns@ "starting server with unsynced Kubernetes API" {plugin=kubernetes}
9 - INFO coredns@ "10.244.0.1:45678 - 1234 \"A IN example.com. udp 29 false 512\" NOERROR qr,rd,ra 106 0.000123s" {bufsize=512 class=IN do=false duration=0.000123s id=1234 name=example.com. plugin=log proto=udp rcode=NOERROR remote=10.244.0.1:45678 rflags=qr,rd,ra rsize=106 size=29 type=A}
10 - INFO coredns@ "[::1]:50759 - 29008 \"AAAA IN kubernetes.default.svc.cluster.local. tcp 54 false 65535\" NOERROR qr,aa,rd 156 0.001247749s" {bufsize=65535 class=IN do=false duration=0.001247749s id=29008 name=kubernetes.default.svc.cluster.local. plugin=log proto=tcp rcode=NOERROR remote=[::1]:50759 rflags=qr,aa,rd rsize=156 size=54 type=AAAA}
11 - ERROR coredns@ "2 example.com. A: read udp 10.1.0.20:41000->8.8.8.8:53: i/o timeout" {plugin=errors qname=example.com. qtype=A rcode=2}
12 - DEBUG coredns@ "Forwarding to loop detection" {plugin=loop}
13 - FATAL coredns@ "Loop (127.0.0.1:55953 -> :53) detected for zone \".\", see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO 4547991504243258144.3688648895315093531.\"" {plugin=loop}
14 - INFO coredns@ "SIGTERM: Shutting down servers then terminating" {}
15 - INFO coredns@ "Reloading" {}
16 2021-03-02T11:20:07.101Z INFO coredns@ "Running configuration MD5 = 5d6e1ca2f3b3b0c8a4e8c1f6a1b2c3d4" {plugin=reload}
17 - INFO coredns@ "Reloading complete" {}
18 2018-06-11T09:02:31Z INFO coredns@ "Reloading" {}
19 2018-06-11T09:02:31Z INFO coredns@ "Running configuration MD5 = 0a1b2c3d4e5f60718293a4b5c6d7e8f9" {plugin=reload}
`
	if got := eventLines(evs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Named after CoreDNS, the file names every line's source.
	evs, _ = Logs(strings.NewReader(in), "coredns.log")
	if evs[0].Source != "coredns" {
		t.Errorf("coredns.log: source %q", evs[0].Source)
	}
}

// Lines that are not CoreDNS's are reported at their line; a dated line
// whose time does not parse is reported and read without it.
func TestCoreDNSErrors(t *testing.T) {
	in := `[INFO] plugin/ready: Still waiting on: "kubernetes"
2024-13-08T20:16:40.123Z [ERROR] plugin/errors: 2 example.com. A: i/o timeout
2018/06/31 09:02:31 [INFO] Reloading
[NOTICE] plugin/ready: not a CoreDNS level
CoreDNS 1.11.1
[INFO] plugin/kubernetes: Trace[1]: "Reflector ListAndWatch" (total time: 30007ms):
Trace[1]: [30.007665517s] [30.007665517s] END
`
	evs, err := Logs(strings.NewReader(in), "coredns.txt")
	var list model.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v is not a list", err)
	}
	wantErrs := []string{
		`coredns.txt:2: syntax error: invalid time 2024-13-08T20:16:40.123Z in a CoreDNS line: the entry is read without it ("2024-13-08T20:16:40.123Z [ERROR] plugin/errors: 2 example.co")`,
		`coredns.txt:3: syntax error: invalid time 2018/06/31 09:02:31 in a CoreDNS line: the entry is read without it ("2018/06/31 09:02:31 [INFO] Reloading")`,
		`coredns.txt:4: syntax error: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log) ("[NOTICE] plugin/ready: not a CoreDNS level")`,
		`coredns.txt:5: syntax error: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log) ("CoreDNS 1.11.1")`,
	}
	if len(list) != len(wantErrs) {
		t.Fatalf("errors %v", list)
	}
	for i, w := range wantErrs {
		if got := list[i].Error(); got != w {
			t.Errorf("error %d:\n got %s\nwant %s", i, got, w)
		}
	}
	want := `1 - INFO coredns@ "Still waiting on: \"kubernetes\"" {plugin=ready}
2 - ERROR coredns@ "2 example.com. A: i/o timeout" {plugin=errors qname=example.com. qtype=A rcode=2}
3 - INFO coredns@ "Reloading" {}
6 - INFO coredns@ "Trace[1]: \"Reflector ListAndWatch\" (total time: 30007ms):\nTrace[1]: [30.007665517s] [30.007665517s] END" {plugin=kubernetes}
`
	if got := eventLines(evs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A CoreDNS log is sniffed as coredns-log only, and CoreDNS's sniffer
// leaves the other logs alone (TestSniffLogs checks the other formats on
// each of them too).
func TestSniffCoreDNS(t *testing.T) {
	coredns := `[WARNING] No files matching import glob pattern: /etc/coredns/custom/*.server
[INFO] plugin/ready: Still waiting on: "kubernetes"
.:53
[INFO] plugin/reload: Running configuration SHA512 = b941b080e5322f6519009bb49349462c7ddb6317425b0f6a83e5451175b720703949e3f3b454a24e77f3ffe57fd5e9c6130e528a5a1dd00d9000e4afd6c1108d
CoreDNS-1.9.1
linux/arm64, go1.17.8, 4b597f8
`
	formats := []*format.Format{KlogFormat, EtcdLogFormat, JSONLogFormat, LogfmtFormat, NginxAccessFormat, NginxErrorFormat, CoreDNSLogFormat, kube.KubectlTableFormat}
	for _, tt := range []struct{ name, in, want string }{
		{"coredns", coredns, "coredns-log"},
		{"coredns dated", "2024-10-08T20:16:40.123Z [INFO] plugin/reload: Running configuration SHA512 = 1b22\n2024-10-08T20:16:41.001Z [ERROR] plugin/errors: 2 example.com. A: i/o timeout\n", "coredns-log"},
		{"coredns Go log time", "2018/06/11 09:02:31 [INFO] Reloading\n2018/06/11 09:02:31 [INFO] plugin/reload: Running configuration MD5 = 0a1b\n", "coredns-log"},
		{"coredns query log", `[INFO] 10.244.0.1:45678 - 1234 "A IN example.com. udp 29 false 512" NOERROR qr,rd,ra 106 0.000123s` + "\n", "coredns-log"},
		// etcd's flag warnings are "[WARNING]" lines too.
		{"etcd with warnings", "[WARNING] Deprecated '--logger=capnslog' flag is set\n2018-12-04 22:47:14.729606 I | embed: serving\n2018-12-04 22:47:15.729606 I | embed: ready\n", "etcd-log"},
		{"klog", "I0915 19:09:04.534948 607529 prober.go:121] \"Probe failed\"\nE0915 19:09:05.534948 607529 reflector.go:138] Failed to watch *v1.Service\n", "klog"},
		{"dated syslog", "2024-06-05T10:01:04.123456+0000 node3 containerd[700]: started\n2024-06-05T10:01:05.123456+0000 node3 kubelet[700]: I0605 10:01:05.000000 700 a.go:1] x\n", "klog"},
		{"logfmt", `time="2022-12-20T23:40:34Z" level=info msg="Configuration loaded from flags."` + "\n", "logfmt"},
		{"json", `{"level":"info","ts":"2024-06-05T22:35:17Z","msg":"x"}` + "\n", "json-log"},
		{"nginx error", "2024/06/04 23:38:19 [error] 137992#137992: *3406 connect() failed\n", "nginx-error"},
		{"nginx access", `10.23.77.129 - - [15/Sep/2022:11:08:42 +0000] "GET / HTTP/1.1" 200 615 "-" "kube-probe/1.23" "-"` + "\n", "nginx-access"},
		{"bare warnings", "[WARNING] one\n[WARNING] two\n", ""},
	} {
		checkScores(t, formats, tt.name, tt.in, tt.want)
	}
}

func FuzzCoreDNS(f *testing.F) {
	f.Add("[INFO] plugin/kubernetes: pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: failed to list *v1.Service: Get \"https://10.96.0.1:443/api/v1/services\": dial tcp 10.96.0.1:443: i/o timeout\nTrace[1]: [30s] END\n")
	f.Add(".:53\nCoreDNS-1.11.1\nlinux/amd64, go1.20.7, ae2bbc2\n.:53 on 10.0.0.1\ntls://.:853\n")
	f.Add("2024-10-08T20:16:40.123Z [INFO] plugin/reload: x\n2024-13-08T99:16:40.123Z [ERROR] y\n")
	f.Add("2018/05/04 06:09:56 [INFO] Reloading\n2018/13/04 06:09:56 [INFO] x\n2024/06/04 23:38:19 [error] 1#1: y\n")
	f.Add(`[INFO] 10.244.0.1:45678 - 1234 "A IN example.com. udp 29 false 512" NOERROR qr,rd,ra 106 0.000123s` + "\n")
	f.Add("[ERROR] plugin/errors: 2 example.com. A: read udp 10.1.0.20:41000->8.8.8.8:53: i/o timeout\n[WARNING] x\n[NOTICE] y\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := Logs(strings.NewReader(in), "fuzz.log")
		parsetest.CheckFuzzErrors(t, err, "fuzz.log")
		last := 0
		for _, ev := range evs {
			if ev.Pos.Line <= last {
				t.Fatalf("event position %v after line %d", ev.Pos, last)
			}
			last = ev.Pos.Line
			if _, ok := ev.Fields[problemMarker]; ok {
				t.Fatalf("internal marker left in %v", ev.Fields)
			}
		}
		if s := CoreDNSLogFormat.Sniff("fuzz.log", []byte(in)); s < 0 || s > 100 {
			t.Fatalf("sniff %d", s)
		}
	})
}
