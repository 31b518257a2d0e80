package logs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/kube"
)

// eventLine renders an event on one line for exact comparison:
// "LINE TIME LEVEL SOURCE@NODE MESSAGE {k=v ...}".
func eventLine(ev model.LogEvent) string {
	var kv []string
	for k, v := range ev.Fields {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	ts := "-"
	if !ev.Time.IsZero() {
		ts = ev.Time.Format("2006-01-02T15:04:05.999999Z07:00")
	}
	return fmt.Sprintf("%d %s %s %s@%s %q {%s}", ev.Pos.Line, ts, ev.Level, ev.Source, ev.Node, ev.Message, strings.Join(kv, " "))
}

// EventLine is eventLine for the tests outside the package.
var EventLine = eventLine

func eventLines(evs []model.LogEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(eventLine(ev) + "\n")
	}
	return b.String()
}

func readLogFile(t *testing.T, path string) ([]model.LogEvent, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Logs(f, filepath.Base(path))
}

func TestLogsSeeds(t *testing.T) {
	for _, tt := range []struct{ name, want, err string }{{
		name: "001-probe-restart-loop/etcd.log",
		want: `1 2018-12-04T22:47:14.729606Z I etcd@ "serving client requests on 127.0.0.1:2379" {pkg=embed}
2 2018-12-04T22:48:46.05058Z N etcd@ "received terminated signal, shutting down..." {pkg=pkg/osutil}
`,
	}, {
		// journald prefix: node and program; klog inside, without a year.
		name: "001-probe-restart-loop/kubelet.log",
		want: `1 0000-12-04T20:59:24.234181Z I kubelet@antidote-controller-6m4d "Container {Name:etcd...truncated....} is dead, but RestartPolicy says that we should restart it." {caller=kuberuntime_manager.go:513 pid=23953}
`,
	}, {
		// Structured klog: quoted message, key="value" and bare values.
		name: "002-synack-reset/kubelet.log",
		want: `1 0000-09-15T19:09:04.534948Z I kubelet@ "Probe failed" {caller=prober.go:121 containerName=nginx output=Get "http://10.23.77.138:80/": context deadline exceeded (Client.Timeout exceeded while awaiting headers) pid=607529 pod=default/nginx-5dfb7c896c-x2q2w podUID=3daea6ef-f286-43f2-8825-51edaa3994d3 probeResult=failure probeType=Readiness}
`,
	}, {
		name: "002-synack-reset/nginx-access.log",
		want: `1 2022-09-15T11:08:42Z  nginx@ "GET / HTTP/1.1" {body_bytes_sent=615 http_referer=- http_user_agent=kube-probe/1.23 http_x_forwarded_for=- method=GET path=/ protocol=HTTP/1.1 remote_addr=10.23.77.129 remote_user=- request=GET / HTTP/1.1 status=200}
2 2022-09-15T11:08:52Z  nginx@ "GET / HTTP/1.1" {body_bytes_sent=615 http_referer=- http_user_agent=kube-probe/1.23 http_x_forwarded_for=- method=GET path=/ protocol=HTTP/1.1 remote_addr=10.23.77.129 remote_user=- request=GET / HTTP/1.1 status=200}
3 2022-09-15T11:09:12Z  nginx@ "GET / HTTP/1.1" {body_bytes_sent=615 http_referer=- http_user_agent=kube-probe/1.23 http_x_forwarded_for=- method=GET path=/ protocol=HTTP/1.1 remote_addr=10.23.77.129 remote_user=- request=GET / HTTP/1.1 status=200}
4 2022-09-15T11:09:22Z  nginx@ "GET / HTTP/1.1" {body_bytes_sent=615 http_referer=- http_user_agent=kube-probe/1.23 http_x_forwarded_for=- method=GET path=/ protocol=HTTP/1.1 remote_addr=10.23.77.129 remote_user=- request=GET / HTTP/1.1 status=200}
`,
	}, {
		// Line 1 starts with a scrape artifact "33": reported, and read
		// from its timestamp. Line 2 lost the opening quote of upstream.
		name: "003-lb-controller-conflict/nginx-error.log",
		err:  `nginx-error.log:1: syntax error: "33" before the timestamp (pasted or scraped text?): the entry is read from column 3 ("332024/06/04 23:38:19 [error] 137992#137992: *3406 connect()")`,
		want: `1 2024-06-04T23:38:19Z error nginx@ "connect() failed (113: No route to host) while connecting to upstream" {client=192.168.1.10 connection=3406 errno=113 host=example.com pid=137992 request=GET /grafana/ HTTP/1.1 server=example.com strerror=No route to host tid=137992 upstream=https://192.168.200.99:443/grafana/}
2 2024-06-04T23:38:19Z error nginx@ "connect() failed (113: No route to host) while connecting to upstream" {client=192.168.1.10 connection=3408 errno=113 host=example.com pid=137992 request=GET /webapp/ HTTP/1.1 server=example.com strerror=No route to host tid=137992 upstream=https://192.168.200.99:443/webapp/}
3 2024-06-05T12:17:38Z error nginx@ "connect() failed (113: No route to host) while connecting to upstream" {client=192.168.1.10 connection=1896 errno=113 host=example.com pid=148052 request=GET /grafana/ HTTP/1.1 server=example.com strerror=No route to host tid=148052 upstream=https://192.168.200.99:443/grafana/}
4 2024-06-05T12:28:35Z error nginx@ "peer closed connection in SSL handshake (104: Connection reset by peer) while SSL handshaking to upstream" {client=192.168.1.10 connection=1962 errno=104 host=example.com pid=148053 request=GET /webapp/ HTTP/1.1 server=example.com strerror=Connection reset by peer tid=148053 upstream=https://192.168.200.99:443/webapp/}
5 2024-06-05T12:34:36Z error nginx@ "SSL_write() failed (104: Connection reset by peer) while sending request to upstream" {client=192.168.1.10 connection=2010 errno=104 host=example.com pid=148052 request=GET /webapp/ HTTP/1.1 server=example.com strerror=Connection reset by peer tid=148052 upstream=https://192.168.200.99:443/webapp/}
`,
	}, {
		name: "003-lb-controller-conflict/ingress-nginx-controller.log",
		want: `1 0000-06-05T05:00:35.170262Z W ingress-nginx-controller@ "Error obtaining X.509 certificate: no object matching key \"myns/webapp-tls\" in local store" {caller=backend_ssl.go:47 pid=7}
2 0000-06-05T05:20:41.272285Z I ingress-nginx-controller@ "Adding secret to local store" {caller=backend_ssl.go:67 name=myns/webapp-tls pid=7}
3 0000-06-05T05:20:41.369159Z I ingress-nginx-controller@ "Starting NGINX process" {caller=nginx.go:307 pid=7}
`,
	}, {
		// JSON lines without msg keep their keys as Fields.
		name: "003-lb-controller-conflict/metallb-controller.log",
		want: `1 2024-06-05T22:35:17Z info metallb-controller@ "" {caller=service_controller.go:60 controller=ServiceReconciler start reconcile=minio/my-minio-console-lb}
2 2024-06-05T22:35:17Z info metallb-controller@ "updated service object" {caller=main.go:101 event=serviceUpdated}
3 2024-06-05T22:35:17Z info metallb-controller@ "" {caller=service_controller.go:103 controller=ServiceReconciler end reconcile=minio/my-minio-console-lb}
4 2024-06-05T22:35:17Z info metallb-controller@ "" {caller=service_controller.go:60 controller=ServiceReconciler start reconcile=ingress-nginx/ingress-nginx}
5 2024-06-05T22:35:17Z info metallb-controller@ "updated service object" {caller=main.go:101 event=serviceUpdated}
6 2024-06-05T22:35:17Z info metallb-controller@ "" {caller=service_controller.go:103 controller=ServiceReconciler end reconcile=ingress-nginx/ingress-nginx}
`,
	}, {
		// "dxia@my-gke-node ~ $ tail -f /var/log/kube-proxy.log": node and source.
		name: "004-stale-dnat/kube-proxy.log",
		want: `2 0000-01-26T20:40:24.739255Z E kube-proxy@my-gke-node "k8s.io/client-go/informers/factory.go:135: Failed to list *v1.Service: an error on the server (\"\") has prevented the request from succeeding (get services)" {caller=reflector.go:153 pid=1}
3 0000-01-26T20:40:24.739611Z E kube-proxy@my-gke-node "k8s.io/client-go/informers/factory.go:135: Failed to list *v1.Endpoints: an error on the server (\"\") has prevented the request from succeeding (get endpoints)" {caller=reflector.go:153 pid=1}
4 0000-01-26T20:40:34.742869Z E kube-proxy@my-gke-node "k8s.io/client-go/informers/factory.go:135: Failed to list *v1.Service: an error on the server (\"\") has prevented the request from succeeding (get services)" {caller=reflector.go:153 pid=1}
`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := readLogFile(t, filepath.Join(testutil.Root(), "fixtures", "seeds", tt.name))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.err {
				t.Errorf("error %q\nwant %q", gotErr, tt.err)
			}
			if got := eventLines(evs); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			for _, ev := range evs {
				if ev.Pos.File != filepath.Base(tt.name) {
					t.Errorf("position %v", ev.Pos)
				}
			}
		})
	}
}

// Real output of nginx 1.22, etcd 3.4 and kubectl 1.32 (see
// testdata/logs/README.md).
func TestLogsRealOutput(t *testing.T) {
	for _, tt := range []struct {
		file   string
		events int
		err    string
		picks  map[int]string // event index -> eventLine
	}{{
		file: "nginx-access.log", events: 4,
		picks: map[int]string{
			3: `4 2026-11-23T13:19:03Z  nginx@ "GET /noroute/grafana/ HTTP/1.1" {body_bytes_sent=157 http_referer=- http_user_agent=kube-probe/1.30 method=GET path=/noroute/grafana/ protocol=HTTP/1.1 remote_addr=127.0.0.1 remote_user=- request=GET /noroute/grafana/ HTTP/1.1 status=502}`,
		},
	}, {
		file: "nginx-error.log", events: 3,
		picks: map[int]string{
			0: `1 2026-11-23T13:18:59Z error nginx@ "connect() failed (111: Connection refused) while connecting to upstream" {client=127.0.0.1 connection=2 errno=111 host=example.com pid=17054 request=GET /refused/ HTTP/1.1 server=example.com strerror=Connection refused tid=17054 upstream=http://127.0.0.1:9/}`,
			1: `2 2026-11-23T13:18:59Z error nginx@ "open() \"/usr/share/nginx/html/missing\" failed (2: No such file or directory)" {client=127.0.0.1 connection=4 errno=2 host=example.com pid=17054 request=GET /missing HTTP/1.1 server=example.com strerror=No such file or directory tid=17054}`,
			2: `3 2026-11-23T13:19:03Z error nginx@ "connect() failed (113: No route to host) while connecting to upstream" {client=127.0.0.1 connection=5 errno=113 host=example.com pid=17054 request=GET /noroute/grafana/ HTTP/1.1 server=example.com strerror=No route to host tid=17054 upstream=http://10.213.0.99:80/grafana/}`,
		},
	}, {
		// capnslog lines, raft's own lines, and etcd's flag warnings.
		file: "etcd-3.4-capnslog.log", events: 43,
		picks: map[int]string{
			0:  `1 - WARNING etcd@ "Deprecated '--logger=capnslog' flag is set; use '--logger=zap' flag instead" {}`,
			6:  `7 2026-11-23T13:19:08.832839Z N etcd@ "failed to detect default host (could not find default route)" {pkg=etcdmain}`,
			16: `17 2026-11-23T13:19:08Z INFO etcd@ "b71f75320dc06a6c switched to configuration voters=()" {pkg=raft}`,
			21: `22 2026-11-23T13:19:08.836756Z W etcd@ "simple token is not cryptographically signed" {pkg=auth}`,
			42: `43 2026-11-23T13:19:12.832586Z I etcd@ "skipped leadership transfer for single voting member cluster" {pkg=etcdserver}`,
		},
	}, {
		// zap JSON: arrays kept as compact JSON.
		file: "etcd-3.4-zap.log", events: 39,
		picks: map[int]string{
			0:  `1 2026-11-23T13:19:21.84Z info etcd@ "failed to detect default host" {caller=etcdmain/etcd.go:110 error=could not find default route}`,
			38: `39 2026-11-23T13:19:26.249Z info etcd@ "closed etcd server" {advertise-client-urls=["http://127.0.0.1:2379"] advertise-peer-urls=["http://127.0.0.1:2380"] caller=embed/etcd.go:375 data-dir=/tmp/nm-t-logs/etcd-b name=m1}`,
		},
	}, {
		// kubectl's last line is its own message, not klog: reported.
		file: "kubectl-v6-klog.log", events: 18,
		err: `kubectl-v6-klog.log:19: syntax error: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log) ("The connection to the server 127.0.0.1:6443 was refused - di")`,
		picks: map[int]string{
			2:  `3 0000-11-23T13:19:37.615154Z E @ "Unhandled Error" {caller=memcache.go:265 err=couldn't get current server API group list: Get "https://127.0.0.1:6443/api?timeout=3s": dial tcp 127.0.0.1:6443: connect: connection refused pid=17613}`,
			17: `18 0000-11-23T13:19:37.621563Z I @ "Connection error: Get https://127.0.0.1:6443/api?timeout=3s: dial tcp 127.0.0.1:6443: connect: connection refused" {caller=helpers.go:264 pid=17613}`,
		},
	}, {
		// CoreDNS 1.11.1 with a closed apiserver and a closed upstream:
		// reflector errors, the banner, query log and errors plugin lines.
		file: "coredns-1.11.1.log", events: 67,
		picks: map[int]string{
			0:  `1 - INFO coredns@ "pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: failed to list *v1.Service: Get \"https://127.0.0.1:6443/api/v1/services?limit=500&resourceVersion=0\": dial tcp 127.0.0.1:6443: connect: connection refused" {plugin=kubernetes}`,
			27: `28 - WARNING coredns@ "starting server with unsynced Kubernetes API" {plugin=kubernetes}`,
			28: `29 -  coredns@ ".:1053" {port=1053 server=.:1053}`,
			31: `32 -  coredns@ "linux/amd64, go1.26.8, " {commit= go=go1.26.8 platform=linux/amd64}`,
			38: `39 - INFO coredns@ "127.0.0.1:41164 - 44068 \"AAAA IN kubernetes.default.svc.cluster.local. udp 65 false 1232\" SERVFAIL qr,aa,rd 147 0.000204765s" {bufsize=1232 class=IN do=false duration=0.000204765s id=44068 name=kubernetes.default.svc.cluster.local. plugin=log proto=udp rcode=SERVFAIL remote=127.0.0.1:41164 rflags=qr,aa,rd rsize=147 size=65 type=AAAA}`,
			42: `43 - INFO coredns@ "127.0.0.1:60365 - 21450 \"A IN example.com. udp 40 false 1232\" - - 0 1.0105532s" {bufsize=1232 class=IN do=false duration=1.0105532s id=21450 name=example.com. plugin=log proto=udp rcode=- remote=127.0.0.1:60365 rflags=- rsize=0 size=40 type=A}`,
			43: `44 - ERROR coredns@ "2 example.com. A: read udp 127.0.0.1:34765->127.0.0.1:9: read: connection refused" {plugin=errors qname=example.com. qtype=A rcode=2}`,
			66: `67 - INFO coredns@ "SIGTERM: Shutting down servers then terminating" {}`,
		},
	}} {
		t.Run(tt.file, func(t *testing.T) {
			evs, err := readLogFile(t, filepath.Join(testutil.Root(), "parse", "testdata", "logs", tt.file))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.err {
				t.Errorf("error %q\nwant %q", gotErr, tt.err)
			}
			if len(evs) != tt.events {
				t.Fatalf("%d events, want %d", len(evs), tt.events)
			}
			for i, want := range tt.picks {
				if got := eventLine(evs[i]); got != want {
					t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
				}
			}
		})
	}
}

// Real logs from the shared corpus: a kubelet journal with journalctl -x
// explanations, and traefik's log mixing logfmt, klog and klog traces.
func TestLogsCorpus(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps", "logs")
	evs, err := readLogFile(t, filepath.Join(dir, "inquisitivefrog_kubelet_journald_failed-to-list_connection-refused.log"))
	if err != nil {
		t.Errorf("kubelet journal: %v", err)
	}
	if len(evs) != 237 {
		t.Errorf("kubelet journal: %d events, want 237", len(evs))
	}
	for i, want := range map[int]string{
		0: `2 0000-10-22T16:45:56Z  systemd@controller "Started kubelet.service - kubelet: The Kubernetes Node Agent." {pid=1}`,
		4: `13 0000-10-22T16:45:57.520699Z I kubelet@controller "Kubelet version" {caller=server.go:467 kubeletVersion=v1.28.14 pid=854}`,
	} {
		if got := eventLine(evs[i]); got != want {
			t.Errorf("kubelet journal event %d:\n got %s\nwant %s", i, got, want)
		}
	}

	evs, err = readLogFile(t, filepath.Join(dir, "troubleshoot-testdata_traefik-previous_failed-to-list.log"))
	if err != nil {
		t.Errorf("traefik: %v", err)
	}
	if len(evs) != 27 {
		t.Errorf("traefik: %d events, want 27", len(evs))
	}
	if got, want := eventLine(evs[1]), `2 2022-12-20T23:41:04Z error @ "Error watching kubernetes events: could not retrieve server version: Get \"https://10.43.0.1:443/version?timeout=32s\": dial tcp 10.43.0.1:443: i/o timeout" {providerName=kubernetes}`; got != want {
		t.Errorf("traefik logfmt:\n got %s\nwant %s", got, want)
	}
	if !strings.HasSuffix(evs[2].Message, "\nTrace[1667975177]: [30.000514555s] [30.000514555s] END") {
		t.Errorf("klog trace not joined: %q", evs[2].Message)
	}
}

func TestLogsShapes(t *testing.T) {
	in := `-- Logs begin at Mon 2024-06-03 10:00:00 UTC, end at Wed 2024-06-05 12:00:00 UTC. --
Jun  5 10:01:02 node2 systemd[1]: Started kubelet.service.
Jun  5 10:01:03 node2 kubelet[812]: E0605 10:01:03.000001     812 kubelet.go:2855] "Container runtime network not ready" networkReady="NetworkReady=false" err=<
	network plugin returned error:
	cni config uninitialized
 >
2024-06-05T10:01:04.123456+0000 node3 containerd[700]: time="2024-06-05T10:01:04.123456Z" level=warning msg="cleanup warnings" id=abc namespace=k8s.io
I0605 10:01:05.5 1 shared.go:42] "Synced" node={"name":"node2"} ports=[80 443] count=3 trailing words
root@node4:~# kubectl logs -n ingress-nginx deploy/ingress-nginx-controller -c controller
I0605 10:01:06.000000       7 main.go:1] "Started"
goroutine 1 [running]:
	/go/src/main.go:12 +0x1d
{"level":"warn","ts":1717581667.25,"caller":"zap/x.go:1","msg":"slow","took":"1.2s","nested":{"a":[1,2]}}
{"severity":"ERROR","time":"2024-06-05T10:01:08Z","message":"boom"}
{"kind":"Service","apiVersion":"v1"}
10.0.0.7 - - [05/Jun/2024:10:01:09 +0200] "GET /api HTTP/2.0" 503 190 "-" "curl/8.5.0" 512 0.004 [shop-api-80] [] 10.244.1.7:8080 0 0.004 503 6f1c2b9d
2024/06/05 10:01:10 [warn] 29#29: *7 upstream server temporarily disabled while connecting to upstream, client: 10.0.0.7, server: _, request: "GET /api HTTP/2.0", upstream: "http://10.244.1.7:8080/api", host: "shop.example.com"
2024/06/05 10:01:11 [notice] 1#1: signal process started
`
	evs, err := Logs(strings.NewReader(in), "mixed.log")
	var list model.ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("errors %v, want 2", err)
	}
	for i, want := range []string{
		`mixed.log:11: syntax error: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log) ("goroutine 1 [running]:")`,
		`mixed.log:15: syntax error: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log) ("{\"kind\":\"Service\",\"apiVersion\":\"v1\"}")`,
	} {
		if got := list[i].Error(); got != want {
			t.Errorf("error %d:\n got %s\nwant %s", i, got, want)
		}
	}
	want := `2 0000-06-05T10:01:02Z  systemd@node2 "Started kubelet.service." {pid=1}
3 0000-06-05T10:01:03.000001Z E kubelet@node2 "Container runtime network not ready" {caller=kubelet.go:2855 err=network plugin returned error:
cni config uninitialized networkReady=NetworkReady=false pid=812}
7 2024-06-05T10:01:04.123456Z warning containerd@node3 "cleanup warnings" {id=abc namespace=k8s.io}
8 0000-06-05T10:01:05.5Z I @ "Synced trailing words" {caller=shared.go:42 count=3 node={"name":"node2"} pid=1 ports=[80 443]}
10 0000-06-05T10:01:06Z I controller@ "Started\n/go/src/main.go:12 +0x1d" {caller=main.go:1 pid=7}
13 2024-06-05T10:01:07.25Z warn controller@ "slow" {caller=zap/x.go:1 nested={"a":[1,2]} took=1.2s}
14 2024-06-05T10:01:08Z ERROR controller@ "boom" {}
16 2024-06-05T08:01:09Z  nginx@ "GET /api HTTP/2.0" {body_bytes_sent=190 http_referer=- http_user_agent=curl/8.5.0 method=GET path=/api protocol=HTTP/2.0 proxy_alternative_upstream_name= proxy_upstream_name=shop-api-80 remote_addr=10.0.0.7 remote_user=- req_id=6f1c2b9d request=GET /api HTTP/2.0 request_length=512 request_time=0.004 status=503 upstream_addr=10.244.1.7:8080 upstream_response_length=0 upstream_response_time=0.004 upstream_status=503}
17 2024-06-05T10:01:10Z warn nginx@ "upstream server temporarily disabled while connecting to upstream" {client=10.0.0.7 connection=7 host=shop.example.com pid=29 request=GET /api HTTP/2.0 server=_ tid=29 upstream=http://10.244.1.7:8080/api}
18 2024-06-05T10:01:11Z notice nginx@ "signal process started" {pid=1 tid=1}
`
	if got := eventLines(evs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if evs[0].Time.Year() != 0 || evs[5].Time.Location() != time.UTC {
		t.Errorf("times %v %v", evs[0].Time, evs[5].Time)
	}
}

// The layout's command and the file name name the source.
func TestLogSources(t *testing.T) {
	for _, tt := range []struct{ cmd, file, want string }{
		{"journalctl -u kubelet.service --no-pager", "x.txt", "kubelet"},
		{"journalctl --unit=containerd", "x.txt", "containerd"},
		{"kubectl logs -n kube-system etcd-m1", "x.txt", "etcd"},
		{"kubectl logs -n metallb-system controller-7d9c8f7b5-abcde", "x.txt", "controller-7d9c8f7b5-abcde"},
		{"kubectl logs -n ns pod-1 --container=sidecar --previous", "x.txt", "sidecar"},
		{"cat /var/log/kube-proxy.log", "x.txt", "kube-proxy"},
		{"", "bundle/pods/logs/kube-system/kube-apiserver-m1/kube-apiserver.log", "kube-apiserver"},
		{"", "notes.txt", ""},
	} {
		lr := newLogReader(tt.file, "", tt.cmd, &model.ErrorList{})
		if lr.source != tt.want {
			t.Errorf("%q %q: source %q, want %q", tt.cmd, tt.file, lr.source, tt.want)
		}
	}
}

func TestSniffLogs(t *testing.T) {
	seed := func(name string) string {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", "seeds", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	real := func(name string) string {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "parse", "testdata", "logs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	field := func(name string) string {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "fixtures", "field", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	formats := []*format.Format{KlogFormat, EtcdLogFormat, JSONLogFormat, LogfmtFormat, NginxAccessFormat, NginxErrorFormat, CoreDNSLogFormat, kube.KubectlTableFormat}
	for _, tt := range []struct {
		name, in, want string // want: the one format scoring >= 50, "" for none
	}{
		{"klog", seed("002-synack-reset/kubelet.log"), "klog"},
		{"journald klog", seed("001-probe-restart-loop/kubelet.log"), "klog"},
		{"klog with prompt", seed("004-stale-dnat/kube-proxy.log"), "klog"},
		{"ingress-nginx klog", seed("003-lb-controller-conflict/ingress-nginx-controller.log"), "klog"},
		{"kubectl klog", real("kubectl-v6-klog.log"), "klog"},
		{"klog quoting iptables-restore", field("kube-proxy-restore-failed--openshift-installer-1816/kube-proxy.log"), "klog"},
		{"ingress-nginx's configuration diff", field("service-no-endpoints--rancher-16052/ingress-nginx-controller.log"), "klog"},
		{"journal without klog", "Jun  5 10:01:02 node2 systemd[1]: Started kubelet.service.\nJun  5 10:01:02 node2 kernel: eth0: link up\n", "klog"},
		{"etcd", seed("001-probe-restart-loop/etcd.log"), "etcd-log"},
		{"etcd real", real("etcd-3.4-capnslog.log"), "etcd-log"},
		{"etcd zap", real("etcd-3.4-zap.log"), "json-log"},
		{"metallb", seed("003-lb-controller-conflict/metallb-controller.log"), "json-log"},
		{"logfmt", `time="2022-12-20T23:40:34Z" level=info msg="Configuration loaded from flags."` + "\n", "logfmt"},
		{"nginx access", seed("002-synack-reset/nginx-access.log"), "nginx-access"},
		{"nginx error", seed("003-lb-controller-conflict/nginx-error.log"), "nginx-error"},
		{"nginx error real", real("nginx-error.log"), "nginx-error"},
		{"coredns real", real("coredns-1.11.1.log"), "coredns-log"},
		{"kubectl table", seed("001-probe-restart-loop/pods.txt"), "kubectl-table"},
		{"kubectl table grep'd", seed("002-synack-reset/svc.txt"), "kubectl-table"},
		{"kubectl table aligned", parsetest.PodsWide, "kubectl-table"},
		{"kubectl JSON object", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"x"}}` + "\n", ""},
		{"sysctl", "net.ipv4.ip_local_port_range = 1024 65000\n", ""},
		{"ipvsadm", parsetest.IPVSListing, ""},
		{"prose", "The connection to the server was refused.\nPlease check.\n", ""},
		{"binary", "I0915 19:09:04.534948 1 a.go:1] x\x00", ""},
	} {
		checkScores(t, formats, tt.name, tt.in, tt.want)
	}
}

// checkScores checks that, of formats, want scores in (at least 50) and
// every other 0; want "" is no format.
func checkScores(t *testing.T, formats []*format.Format, name, in, want string) {
	t.Helper()
	for _, f := range formats {
		score := f.Sniff("x", []byte(in))
		if f.Name == want && score < 50 {
			t.Errorf("%s: %s scores %d, want it high", name, f.Name, score)
		}
		if f.Name != want && score != 0 {
			t.Errorf("%s: %s scores %d, want 0", name, f.Name, score)
		}
	}
}

func FuzzLogs(f *testing.F) {
	f.Add(`I0915 19:09:04.534948 607529 prober.go:121] "Probe failed" probeType="Readiness" output="Get \"x\"" n={"a":1} l=[1 2] m=<
	line
 >
`)
	f.Add("Dec 04 20:59:24 m1 kubelet[23953]: I1204 20:59:24.234181 23953 kuberuntime_manager.go:513] dead\n")
	f.Add("[17398.958480] nm-t-dmbr: port 1(nm-t-dm1) entered disabled state\nkern  :info  : [17398.958511] x\n<6>[1.000001] y\n" +
		"[Mon Nov 23 16:59:14 2026] z\n2026-11-23T16:59:14,958480+00:00 w\n")
	f.Add("2018-12-04 22:47:14.729606 I | embed: serving\nraft2026/11/23 13:19:08 INFO: x\n[WARNING] y\n")
	f.Add(`{"level":"info","ts":"2024-06-05T22:35:17Z","msg":"x","k":[1]}` + "\n" + `{"ts":1717581667.25,"msg":"y"}` + "\n")
	f.Add(`10.23.77.129 - - [15/Sep/2022:11:08:42 +0000] "GET / HTTP/1.1" 200 615 "-" "kube-probe/1.23" "-"` + "\n")
	f.Add(`332024/06/04 23:38:19 [error] 1#1: *3 connect() failed (113: No route to host), client: 1.2.3.4, upstream: x", host: "h"` + "\n")
	f.Add(`dxia@node ~ $ tail -f /var/log/kube-proxy.log` + "\n" + `time="2022-12-20T23:40:34Z" level=info msg="x" a=b` + "\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := Logs(strings.NewReader(in), "fuzz.log")
		parsetest.CheckFuzzErrors(t, err, "fuzz.log")
		last := 0
		for _, ev := range evs {
			if ev.Pos.File != "fuzz.log" || ev.Pos.Line <= last {
				t.Fatalf("event position %v after line %d", ev.Pos, last)
			}
			last = ev.Pos.Line
			if _, ok := ev.Fields[multiKeyMarker]; ok {
				t.Fatalf("internal marker left in %v", ev.Fields)
			}
		}
		for _, fm := range []*format.Format{KlogFormat, EtcdLogFormat, JSONLogFormat, LogfmtFormat, NginxAccessFormat, NginxErrorFormat, CoreDNSLogFormat} {
			if s := fm.Sniff("fuzz.log", []byte(in)); s < 0 || s > 100 {
				t.Fatalf("%s sniff %d", fm.Name, s)
			}
		}
	})
}

// The official nginx image prints its entrypoint's lines before nginx's
// own log (as in the k3d support bundle of the shared corpus).
func TestLogsNginxEntrypoint(t *testing.T) {
	in := `/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration
10-listen-on-ipv6-by-default.sh: info: Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf
/docker-entrypoint.sh: Configuration complete; ready for start up
2022/12/21 09:42:41 [notice] 1#1: using the "epoll" event method
/usr/local/bin/other.sh: not an entrypoint line
`
	evs, err := Logs(strings.NewReader(in), "nginx.log")
	if err == nil || err.Error() != `nginx.log:5: syntax error: expected a log line (klog, syslog, etcd, CoreDNS, JSON, nginx access or error log) ("/usr/local/bin/other.sh: not an entrypoint line")` {
		t.Errorf("err %v", err)
	}
	want := `1 -  nginx@ "/docker-entrypoint.d/ is not empty, will attempt to perform configuration" {script=/docker-entrypoint.sh}
2 - info nginx@ "Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf" {script=10-listen-on-ipv6-by-default.sh}
3 -  nginx@ "Configuration complete; ready for start up" {script=/docker-entrypoint.sh}
4 2022-12-21T09:42:41Z notice nginx@ "using the \"epoll\" event method" {pid=1 tid=1}
`
	if got := eventLines(evs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := sniffLogs([]byte(in), "nginx-error"); got == 0 {
		t.Errorf("nginx-error sniff %d", got)
	}
}

// A klog error that quotes a command's output (kube-proxy's failed
// iptables-restore) goes on for the lines the command printed, up to the
// ")" klog closes it with: they are the entry's, not lines of no shape.
func TestKlogQuotesCommandOutput(t *testing.T) {
	path := filepath.Join(testutil.Root(), "fixtures", "field", "kube-proxy-restore-failed--openshift-installer-1816", "kube-proxy.log")
	evs, err := readLogFile(t, path)
	if err != nil {
		t.Fatalf("errors: %v", err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3:\n%s", len(evs), eventLines(evs))
	}
	want := "Failed to execute iptables-restore: exit status 2 (iptables-restore v1.4.21: Couldn't load target " +
		"`KUBE-MARK-DROP':No such file or directory\nError occurred at line: 286\n" +
		"Try `iptables-restore -h' or 'iptables-restore --help' for more information.\n)"
	if evs[0].Message != want || evs[1].Pos.Line != 6 || !strings.HasSuffix(evs[2].Message, "line: 160\nTry `iptables-restore -h' or 'iptables-restore --help' for more information.\n)") {
		t.Errorf("events:\n%s", eventLines(evs))
	}

	// An open parenthesis holds the lines up to a prompt, and no more than
	// maxParenLines.
	in := "E0625 18:23:05.161594       1 proxier.go:1350] Failed (cut\nline\n$ kubectl get pods\nNAME READY\n"
	evs, err = Logs(strings.NewReader(in), "cut.log")
	if len(evs) != 1 || evs[0].Message != "Failed (cut\nline" || err == nil || !strings.Contains(err.Error(), "cut.log:4:") {
		t.Errorf("cut at a prompt: %v\n%s", err, eventLines(evs))
	}
	// Lines of their own the reader reads are never taken in: minikube's
	// "* " lines, a runtime's records, a file's command.
	for name, in := range map[string]string{
		"minikube": "* E0625 18:23:05.161594       1 proxier.go:1350] Failed (open\n" +
			"* I0625 18:23:05.161600       1 proxier.go:1351] next\n* I0625 18:23:05.161700       1 proxier.go:1352] third\n",
		"cri": "2024-06-05T10:01:03.000000001Z stderr F E0605 10:01:03.000001       1 proxier.go:1] Failed (open\n" +
			"2024-06-05T10:01:03.000000002Z stdout F app says hi\n2024-06-05T10:01:03.000000003Z stdout F and more\n",
		"cat": "E0625 18:23:05.161594       1 proxier.go:1350] Failed (open\ncat /var/log/other.log\n" +
			"I0625 18:23:05.161600       1 proxier.go:1351] next\nI0625 18:23:05.161700       1 proxier.go:1352] third\n",
	} {
		if evs, _ := Logs(strings.NewReader(in), name+".log"); len(evs) != 3 {
			t.Errorf("%s: %d events, want 3:\n%s", name, len(evs), eventLines(evs))
		}
	}
	in = "E0625 18:23:05.161594       1 proxier.go:1350] Failed (open\n" + strings.Repeat("x\n", maxParenLines+1)
	evs, err = Logs(strings.NewReader(in), "long.log")
	if len(evs) != 1 || strings.Count(evs[0].Message, "\n") != maxParenLines || err == nil ||
		!strings.Contains(err.Error(), fmt.Sprintf("long.log:%d:", maxParenLines+2)) {
		t.Errorf("past %d lines: %v", maxParenLines, err)
	}
}

// ingress-nginx's "NGINX configuration diff:" goes on for the unified diff
// of nginx.conf that follows it (as rancher/rancher#16052 pasted it): its
// lines are the entry's, up to the next log line.
func TestKlogConfigurationDiff(t *testing.T) {
	in := "W1009 07:01:57.954692       5 controller.go:769] Service \"portal/web\" does not have any active Endpoint.\n" +
		"I1009 07:01:58.051641       5 nginx.go:626] NGINX configuration diff:\n" +
		"--- /etc/nginx/nginx.conf       2018-10-09 07:01:48.210045444 +0000\n" +
		"+++ /tmp/new-nginx-cfg415092377 2018-10-09 07:01:58.046093899 +0000\n" +
		"@@ -211,21 +211,12 @@\n                \n                keepalive 32;\n" +
		"-               server 10.42.5.21:80 max_fails=0 fail_timeout=0;\n" +
		"+               server 10.42.5.21:80 max_fails=0 fail_timeout=0;\n        }\n" +
		"-       upstream portal-web-80 {\n" +
		"I1009 07:01:58.152050       5 controller.go:179] Backend successfully reloaded.\n"
	evs, err := Logs(strings.NewReader(in), "ingress.log")
	if err != nil || len(evs) != 3 {
		t.Fatalf("%v: %d events, want 3:\n%s", err, len(evs), eventLines(evs))
	}
	if d := evs[1].Message; !strings.HasPrefix(d, "NGINX configuration diff:\n--- /etc/nginx/nginx.conf") ||
		!strings.HasSuffix(d, "\n-       upstream portal-web-80 {") || evs[2].Pos.Line != 12 {
		t.Errorf("events:\n%s", eventLines(evs))
	}
	if score := KlogFormat.Sniff("ingress.log", []byte(in)); score < 50 {
		t.Errorf("klog scores %d", score)
	}
	// A line of no diff shape ends it.
	in = "I1009 07:01:58.051641       5 nginx.go:626] NGINX configuration diff:\n--- a\n+++ b\nnot a diff line\n"
	if evs, err := Logs(strings.NewReader(in), "d.log"); len(evs) != 1 || err == nil || !strings.Contains(err.Error(), "d.log:4:") {
		t.Errorf("not a diff line: %v\n%s", err, eventLines(evs))
	}
	// However long, the diff is the entry's, its text kept up to
	// maxEntryBytes; diff's "\ No newline" is one of its lines.
	long := strings.Repeat("+"+strings.Repeat("x", 99)+"\n", maxEntryBytes/100+10)
	in = "I1009 07:01:58.051641       5 nginx.go:626] NGINX configuration diff:\n" + long + "\\ No newline at end of file\n" +
		"I1009 07:01:58.152050       5 controller.go:179] Backend successfully reloaded.\n"
	evs, err = Logs(strings.NewReader(in), "long.log")
	if err != nil || len(evs) != 2 || len(evs[0].Message) > maxEntryBytes+200 || !strings.HasSuffix(evs[0].Message, "\n…") {
		t.Errorf("a long diff: %v, %d events", err, len(evs))
	}
	// journalctl's lines around logs are not the diff's.
	in = "I1009 07:01:58.051641       5 nginx.go:626] NGINX configuration diff:\n--- a\n-- Boot 1a2b3c --\n"
	if evs, _ := Logs(strings.NewReader(in), "boot.log"); len(evs) != 1 || strings.Contains(evs[0].Message, "Boot") {
		t.Errorf("journalctl's line taken in:\n%s", eventLines(evs))
	}
}

// A klog line whose header the paste cut before the caller (as
// flannel-io/flannel#890 and kubernetes/kubernetes#92033 quote kubelet's and
// kube-proxy's) is klog's, without time or level; a line of another
// shape ending in "]" is not.
func TestKlogCutHeader(t *testing.T) {
	in := `cni.go:319] Error deleting network: failed to find plugin "portmap" in path [/opt/flannel/bin /opt/cni/bin]` + "\n" +
		`proxier.go:1909] Failed to add IPVS service "default/kubernetes:https": no such file or directory` + "\n"
	evs, err := Logs(strings.NewReader(in), "kubelet.log")
	if err != nil || len(evs) != 2 || evs[0].Fields["caller"] != "cni.go:319" || !evs[0].Time.IsZero() || evs[0].Level != "" ||
		!strings.HasPrefix(evs[1].Message, "Failed to add IPVS service") {
		t.Fatalf("%v:\n%s", err, eventLines(evs))
	}
	if score := KlogFormat.Sniff("kubelet.log", []byte(in)); score < 50 {
		t.Errorf("klog scores %d", score)
	}
	// A structured line keeps its fields, as whole.
	ev, ok := parseCutKlog(`pod_workers.go:1298] "Error syncing pod, skipping" err="network is not ready" pod="kube-system/coredns-1"`)
	if !ok || ev.Message != "Error syncing pod, skipping" || ev.Fields["err"] != "network is not ready" || ev.Fields["pod"] != "kube-system/coredns-1" {
		t.Errorf("structured: %+v", ev)
	}
	if _, ok := parseCutKlog("main.go:12]"); ok {
		t.Error("a caller without a message read")
	}
	if _, ok := parseCutKlog("see [docs.go:12] for more"); ok {
		t.Error("a line of prose read")
	}
}

// bottlerocket-os/bottlerocket#4295's kube-proxy log, pasted into Markdown:
// the tab before each line of the err=< value is lost. The value's lines,
// of no log shape, go on with it until its ">"; the next log line ends it.
func TestKlogMultiValueUnindented(t *testing.T) {
	in := `E1113 16:15:07.931291 1 proxier.go:1481] "Failed to execute iptables-restore" err=<
exit status 2: ip6tables-restore v1.8.4 (legacy): unknown option "--xor-mark"
Error occurred at line: 16
Try ` + "`ip6tables-restore -h'" + ` or 'ip6tables-restore --help' for more information.
>
I1113 16:15:07.931308 1 proxier.go:858] "Sync failed" retryingTime="30s"
E1113 16:15:37.9 1 proxier.go:1481] "Failed to execute iptables-restore" err=<
exit status 2: ip6tables-restore v1.8.4 (legacy): unknown option "--xor-mark"
I1113 16:15:37.95 1 proxier.go:858] "Sync failed" retryingTime="30s"
`
	evs, err := Logs(strings.NewReader(in), "kube-proxy.log")
	if err != nil {
		t.Fatal(err)
	}
	want := "exit status 2: ip6tables-restore v1.8.4 (legacy): unknown option \"--xor-mark\"\nError occurred at line: 16\n" +
		"Try `ip6tables-restore -h' or 'ip6tables-restore --help' for more information."
	if len(evs) != 4 || evs[0].Fields["err"] != want || evs[1].Message != "Sync failed" ||
		evs[2].Fields["err"] != "exit status 2: ip6tables-restore v1.8.4 (legacy): unknown option \"--xor-mark\"" ||
		evs[3].Pos.Line != 9 {
		t.Errorf("got %d events:\n%s", len(evs), eventLines(evs))
	}
}

// A klog value whose tabs a paste lost: its blank line does not end it, a
// shell prompt does (a value cut by head has no ">"), and the sniffer
// counts its lines as the value's, not as lines of no log shape.
func TestKlogMultiValueUnindentedEnds(t *testing.T) {
	in := `root@worker-1:~# crictl logs 3f2a1b | head -4
E1115 09:20:01.141733       1 proxier.go:1525] "Failed to execute iptables-restore" err=<
exit status 2: iptables-restore v1.8.7 (legacy): Couldn't load match ` + "`statistic'" + `:No such file or directory

Error occurred at line: 62
root@worker-2:~# crictl logs 9e8d7c | tail -1
I1115 09:20:01.141788       1 proxier.go:858] "Sync failed" retryingTime="30s"
`
	if got := sniffLogs([]byte(in), "klog"); got < 90 {
		t.Errorf("sniffed %d as klog", got)
	}
	evs, err := Logs(strings.NewReader(in), "kube-proxy.log")
	if err != nil {
		t.Fatal(err)
	}
	want := "exit status 2: iptables-restore v1.8.7 (legacy): Couldn't load match `statistic':No such file or directory\n" +
		"Error occurred at line: 62"
	if len(evs) != 2 || evs[0].Fields["err"] != want || evs[0].Node != "worker-1" || evs[1].Node != "worker-2" {
		t.Errorf("got %d events:\n%s", len(evs), eventLines(evs))
	}
}

// A write-up of projectcalico/calico#10538 publishes kube-proxy's log with
// the "<" of err=< lost (and the value's tabs turned to spaces): a key=
// that ends the line opens the value all the same, read until the next
// log line, and the sniffer counts its lines as the value's.
func TestKlogMultiValueOpenerLost(t *testing.T) {
	in := `E0610 07:32:16.910840       1 proxier.go:1564] "Failed to execute iptables-restore" err=
    exit status 2: Ignoring deprecated --wait-interval option.
    iptables-restore v1.8.8 (legacy): Couldn't load target ` + "`KUBE-SVC-UOLAULR5MHUYULMB'" + `:No such file or directory
    Error occurred at line: 177
 > ipFamily="IPv4"
I0610 07:32:16.910860       1 proxier.go:833] "Sync failed" ipFamily="IPv4" retryingTime="30s"
`
	if got := sniffLogs([]byte(in), "klog"); got < 90 {
		t.Errorf("sniffed %d as klog", got)
	}
	evs, err := Logs(strings.NewReader(in), "kube-proxy.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || !strings.HasPrefix(evs[0].Fields["err"], "exit status 2: Ignoring deprecated --wait-interval option.\n"+
		"iptables-restore v1.8.8 (legacy): Couldn't load target `KUBE-SVC-UOLAULR5MHUYULMB'") || evs[1].Message != "Sync failed" {
		t.Errorf("got %d events:\n%s", len(evs), eventLines(evs))
	}
}

// The AWS VPC CNI's ipamd writes dated "[LEVEL]" lines as CoreDNS does
// (amazon-vpc-cni-k8s#190): read from ipamd.log, they are ipamd's, while a
// dated line in a log of no named program, or CoreDNS's, stays CoreDNS's.
func TestDatedLevelLineSource(t *testing.T) {
	in := "2018-10-01T15:11:02Z [INFO] Setting up host network\n" +
		"2018-10-01T15:11:02Z [ERROR] initialization failureipamd init: failed to setup host network\n"
	for name, want := range map[string]string{"ipamd.log": "ipamd", "dns.txt": "coredns", "coredns.log": "coredns"} {
		evs, err := Logs(strings.NewReader(in), name)
		if err != nil || len(evs) != 2 || evs[0].Source != want || evs[1].Source != want {
			t.Errorf("%s: %v\n%s", name, err, eventLines(evs))
		}
	}
	evs, _ := Logs(strings.NewReader("2021-02-01T10:00:00Z [INFO] plugin/reload: Running configuration MD5 = db32\n"), "ipamd.log")
	if len(evs) != 1 || evs[0].Source != "coredns" {
		t.Errorf("a plugin's line: %s", eventLines(evs))
	}
}
