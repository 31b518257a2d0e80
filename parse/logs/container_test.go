package logs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// containerLine renders an event with its container and stream:
// "LINE TIME LEVEL SOURCE@NODE NS/POD/CONTAINER STREAM MESSAGE".
func containerLine(ev model.LogEvent) string {
	ts := "-"
	if !ev.Time.IsZero() {
		ts = ev.Time.Format("2006-01-02T15:04:05.999999999Z07:00")
	}
	return fmt.Sprintf("%d %s %s %s@%s %s/%s/%s %s %q", ev.Pos.Line, ts, ev.Level, ev.Source, ev.Node,
		ev.Namespace, ev.Pod, ev.Container, ev.Stream, ev.Message)
}

// readReal reads a file of fixtures/real with its path from the repository
// root as its name, as a bundle would name it.
func readReal(t *testing.T, rel string) ([]model.LogEvent, error) {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Logs(f, rel)
}

// The container runtimes' log files of fixtures/real (see its README):
// every record read, the line inside read as what it is, namespace, pod
// and container from the path or from the pasted command.
func TestContainerLogsReal(t *testing.T) {
	for _, c := range []struct {
		file   string
		events int
		errs   string // positions of the warnings
		want   map[int]string
	}{{
		file: "cri-log/index51769831322_cat-var-log-containers-apiserver_local-offset-plus0200.log", events: 2,
		want: map[int]string{
			0: `3 0000-08-06T08:38:13.341625Z I kube-apiserver@ kube-system/kube-apiserver-controlplane/kube-apiserver stderr "external host was not specified, using 192.168.97.17"`,
			1: `4 0000-08-06T08:38:13.342314Z E kube-apiserver@ kube-system/kube-apiserver-controlplane/kube-apiserver stderr "command failed"`,
		},
	}, {
		// CRI-O's local offsets, in reverse order (tac), each record
		// wrapped over three lines with " \".
		file: "cri-log/earthly-blog_tac-0.log_crio-offset-minus0500_backslash-wrapped.log", events: 3,
		want: map[int]string{
			0: `1 0000-01-20T04:05:26.344466Z I @ // stderr "quota admission added evaluator for: replicasets.apps"`,
			2: `7 0000-01-20T04:05:14.155011Z I @ // stderr "quota admission added evaluator for: daemonsets.apps"`,
		},
	}, {
		// An ls of /var/log/containers (skipped), then a prompt naming
		// the node and the file.
		file: "cri-log/index35521002314_ls-var-log-containers_and_cat-apiserver-log_killercoda.log", events: 14,
		want: map[int]string{
			0:  `19 0000-08-23T03:03:59.258654Z I kube-apiserver@controlplane kube-system/kube-apiserver-controlplane/kube-apiserver stderr "external host was not specified, using 172.30.1.2"`,
			8:  `27 0000-08-23T03:03:59.576188Z W kube-apiserver@controlplane kube-system/kube-apiserver-controlplane/kube-apiserver stderr "Skipping API apiextensions.k8s.io/v1beta1 because it has no resources."`,
			13: `32 0000-08-23T03:04:00.557944Z I kube-apiserver@controlplane kube-system/kube-apiserver-controlplane/kube-apiserver stderr "Serving securely on [::]:6443"`,
		},
	}, {
		// An indented block: "chroot /host" is no log line.
		file: "cri-log/index12860955295_chroot-cat-var-log-pods-nginx_tls-bytes-escaped_indented.log", events: 1, errs: "1",
		want: map[int]string{
			0: `3 2025-07-07T12:49:22Z  nginx@ homework/websrv-pod/nginx-distroless-container stdout "\\x16\\x03\\x01\\x02\\x8C\\x01\\x00\\x02\\x88\\x03\\x03%\\x7F\\xB8\\xF9\\xBC\\xEAG\\xBCS\\xDF>\\xDE\\xF14\\xF7!F\\x8A\\x0B:\\xBBb\\xF1TD[\\xF5\\x01U\\xC8u} \\x7F\\xFE\\xB6\\xAFkU\\x9CX\\xAB\\x8A\\xC8\\xA6\\x97\\xCB\\xC2\\xE3)\\xB3\\xBE\\xF8\\xB3\\x15\\x06Z\\x9E\\xF9\\xEE\\xEFD\\x0C\\x81\\xFE\\x00\\x22\\x13\\x01\\x13\\x03\\x13\\x02\\xC0+\\xC0/\\xCC\\xA9\\xCC\\xA8\\xC0,\\xC00\\xC0"`,
		},
	}, {
		// rsyslog's "<ns> <pod> <container> " before each record.
		file: "cri-log/index17198188655_rsyslog-ns-pod-container-prefixed-cri-lines_rke2.log", events: 4,
		want: map[int]string{
			0: `1 2026-02-23T16:31:05Z info tigera-operator@ tigera-operator/tigera-operator-5b8c7f9d4c-q2xkt/tigera-operator stderr "Reconciling Goldmane"`,
			3: `4 0000-02-23T16:30:29.692758Z I kube-apiserver@ kube-system/kube-apiserver-site02/kube-apiserver stderr "updated ClusterIP allocator for Service CIDR 10.43.0.0/16"`,
		},
	}, {
		// Records forwarded by syslog: the syslog host is the node.
		file: "cri-log/index17198188655_rsyslog-forwarded-cri-lines_rke2.log", events: 5,
		want: map[int]string{
			2: `3 0000-01-28T12:30:33.021337Z I @wnode3.lab.internal // stderr "Caches are synced"`,
			4: `5 2026-02-23T16:33:58.662103Z info etcd@wnode2.lab.internal // stderr "finished scheduled compaction"`,
		},
	}, {
		file: "cri-log/index53727516996_kind-artifacts/kind-control-plane/pods/kube-system_kube-scheduler-kind-control-plane_5c1e7a0f93d24b68e1a7c04d2f9b3e81/kube-scheduler/0.log", events: 4,
		want: map[int]string{
			3: `4 0000-02-17T17:29:37.086409Z I kube-scheduler@ kube-system/kube-scheduler-kind-control-plane/kube-scheduler stderr "Successfully bound pod to node"`,
		},
	}, {
		file: "cri-log/index17198188655_var-log-pods/tigera-operator_tigera-operator-5b8c7f9d4c-q2xkt_9d1e2f40-7c5b-4a8e-b1d3-5e6f7a8b9c0d/tigera-operator/3.log", events: 2,
		want: map[int]string{
			1: `2 2026-02-23T16:31:05Z info tigera-operator@ tigera-operator/tigera-operator-5b8c7f9d4c-q2xkt/tigera-operator stderr "Patching nftables mode"`,
		},
	}, {
		// Docker's json-file inside /var/log/pods (dockershim), after a
		// "$ cat <path>" line.
		file: "docker-json-log/thawzinmyo-hackathon_cat-var-log-pods-apiserver-9.log_dockershim-json.log", events: 3,
		want: map[int]string{
			2: `4 0000-03-16T03:29:16.449049Z E kube-apiserver@ kube-system/kube-apiserver-controlplane/kube-apiserver stderr "command failed"`,
		},
	}, {
		file: "docker-json-log/index32924649206_rke-kube-apiserver-json.log_u0026-escapes.log", events: 3,
		want: map[int]string{
			2: `3 0000-08-08T06:11:10.695421Z F @ // stderr "Unable to perform initial IP allocation check: unable to refresh the service IP block: Get \"https://localhost:6443/api/v1/services\": dial tcp [::1]:6443: connect: no route to host"`,
		},
	}, {
		// A terminal hard-wrapped each record: joined; nginx's own times.
		file: "docker-json-log/index32709674137_var-log-pods-nginx-0.log_hard-wrapped-by-terminal.log", events: 4,
		want: map[int]string{
			0: `3 2024-09-16T11:13:26Z  nginx@ homework/nginx-distroless/nginx stdout "GET / HTTP/1.1"`,
			2: `7 2024-09-16T19:13:26Z error nginx@ homework/nginx-distroless/nginx stderr "open() \"/usr/share/nginx/html/favicon.ico\" failed (2: No such file or directory)"`,
			3: `9 2024-09-16T11:14:49Z  nginx@ homework/nginx-distroless/nginx stdout "GET / HTTP/1.1"`,
		},
	}, {
		// The author's "//" output marker is no log line.
		file: "docker-json-log/index34354272232_var-log-containers-kube-proxy-tail-1_healthcheck-closed.log", events: 1, errs: "4",
		want: map[int]string{
			0: `5 0000-04-29T14:29:48.685879Z E @ // stderr "Healthcheck closed"`,
		},
	}} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			evs, err := readReal(t, filepath.Join("fixtures/real", c.file))
			errs := ""
			if err != nil {
				errs = parsetest.SyntaxErrorsAt(t, err)
			}
			if c.errs != "" {
				c.errs = filepath.Join("fixtures/real", c.file) + ":" + c.errs
			}
			if errs != c.errs {
				t.Errorf("warnings at %q, want %q: %v", errs, c.errs, err)
			}
			if len(evs) != c.events {
				t.Fatalf("%d events, want %d:\n%s", len(evs), c.events, eventLines(evs))
			}
			for i, want := range c.want {
				if got := containerLine(evs[i]); got != want {
					t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
				}
			}
		})
	}
}

// The Docker record's escapes are decoded: Go's \u0026 is an '&'.
func TestDockerJSONEscapes(t *testing.T) {
	evs, err := readReal(t, "fixtures/real/docker-json-log/index32924649206_rke-kube-apiserver-json.log_u0026-escapes.log")
	if err != nil || len(evs) != 3 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	if !strings.Contains(evs[0].Message, "&resourceVersion=0") || evs[0].Fields["caller"] != "reflector.go:138" {
		t.Errorf("event 0: %s %v", evs[0].Message, evs[0].Fields)
	}
}

// Partial records are joined to the full record of their stream, at the
// position of the first, events in the order of their positions; the
// streams interleave; a partial line the input
// ends in is still read; an unreadable line is a warning and the rest is
// read.
func TestCRIPartial(t *testing.T) {
	in := `2026-11-23T13:19:08.000000001Z stdout P I1123 13:19:08.000001       1 proxier.go:865] "Syncing
2026-11-23T13:19:08.000000002Z stderr F E1123 13:19:08.000002       1 reflector.go:138] failed to list *v1.Service: timeout
2026-11-23T13:19:08.000000003Z stdout P  iptables
2026-11-23T13:19:08.000000004Z stdout F  rules"
garbage in the middle
2026-11-23T13:19:09Z stdout F plain output of an app
2026-11-23T13:19:09Z stderr F
{"log":"part one, ","stream":"stdout","time":"2026-11-23T13:19:10Z"}
{"log":"part two\n","stream":"stdout","time":"2026-11-23T13:19:10.5Z"}
2026-11-23T13:19:11Z stdout P cut short
`
	evs, err := Logs(strings.NewReader(in), "node1/var/log/pods/kube-system_kube-proxy-x2x9k_0f9a7c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b/kube-proxy/0.log")
	if got := parsetest.SyntaxErrorsAt(t, err); !strings.HasSuffix(got, "/0.log:5") || strings.Contains(got, " ") {
		t.Errorf("warnings at %s: %v", got, err)
	}
	want := `1 0000-11-23T13:19:08.000001Z I kube-proxy@ kube-system/kube-proxy-x2x9k/kube-proxy stdout "Syncing iptables rules"
2 0000-11-23T13:19:08.000002Z E kube-proxy@ kube-system/kube-proxy-x2x9k/kube-proxy stderr "failed to list *v1.Service: timeout"
6 2026-11-23T13:19:09Z  kube-proxy@ kube-system/kube-proxy-x2x9k/kube-proxy stdout "plain output of an app"
8 2026-11-23T13:19:10Z  kube-proxy@ kube-system/kube-proxy-x2x9k/kube-proxy stdout "part one, part two"
10 2026-11-23T13:19:11Z  kube-proxy@ kube-system/kube-proxy-x2x9k/kube-proxy stdout "cut short"
`
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(containerLine(ev) + "\n")
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestContainerLogPath(t *testing.T) {
	for _, c := range []struct {
		path string
		want ContainerLog
		ok   bool
	}{
		{"/var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-973f6f661fe3987813a0a9c800b0ff741e41fe3281bf618a9685aa1fb18d16b4.log",
			ContainerLog{"kube-system", "kube-proxy-h2n9c", "kube-proxy"}, true},
		{"b.tar.gz!sosreport-n1/var/log/pods/kube-system_etcd-m1_e27f4c1a9b5d08336fa2c7d1e0b94f58/etcd/3.log",
			ContainerLog{"kube-system", "etcd-m1", "etcd"}, true},
		{"var/log/pods/default_web-0_9d1e2f40-7c5b-4a8e-b1d3-5e6f7a8b9c0d/nginx/0.log.20240102-030405.gz",
			ContainerLog{"default", "web-0", "nginx"}, true},
		{"var/log/pods/default_web-0_9d1e2f40/nginx/0.log", ContainerLog{}, false}, // uid too short
		{"var/log/pods/9d1e2f40-7c5b-4a8e-b1d3-5e6f7a8b9c0d/nginx_2.log", ContainerLog{Container: "nginx"}, true},
		{"var/log/pods/not-a-uid/nginx_2.log", ContainerLog{}, false},
		{"/var/log/kube-proxy.log", ContainerLog{}, false},
		{"/var/log/containers/kube-proxy.log", ContainerLog{}, false},
		{"0.log", ContainerLog{}, false},
	} {
		got, ok := ContainerLogPath(c.path)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

// A container's log read from `kubectl logs -n NS POD -c C` and from its
// file under /var/log/containers give the same events but for the
// runtime's stream.
func TestContainerLogLikeKubectlLogs(t *testing.T) {
	lines := []string{
		`E1123 13:19:08.532911       1 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to watch *v1.Service: failed to list *v1.Service: Get "https://10.96.0.1:443/api/v1/services": dial tcp 10.96.0.1:443: i/o timeout`,
		`I1123 13:19:09.000100       1 proxier.go:865] "Syncing iptables rules"`,
		`plain text`,
	}
	kubectl := "$ kubectl logs -n kube-system kube-proxy-h2n9c -c kube-proxy\n"
	cri := ""
	for _, l := range lines {
		kubectl += l + "\n"
		cri += "2026-11-23T13:19:10.1Z stderr F " + l + "\n"
	}
	a, errA := Logs(strings.NewReader(kubectl), "x")
	b, errB := Logs(strings.NewReader("\n"+cri), "/var/log/containers/kube-proxy-h2n9c_kube-system_kube-proxy-973f6f661fe3987813a0a9c800b0ff741e41fe3281bf618a9685aa1fb18d16b4.log")
	if errB != nil {
		t.Fatal(errB)
	}
	if errA == nil || parsetest.SyntaxErrorsAt(t, errA) != "x:4" {
		t.Errorf("kubectl logs: %v", errA) // plain text is no log line there
	}
	if len(a) != 2 || len(b) != 3 {
		t.Fatalf("%d and %d events", len(a), len(b))
	}
	for i := range a {
		b[i].Stream, b[i].Pos.File = "", a[i].Pos.File
		if containerLine(a[i]) != containerLine(b[i]) || fmt.Sprint(a[i].Fields) != fmt.Sprint(b[i].Fields) {
			t.Errorf("event %d:\nkubectl %s %v\n   file %s %v", i, containerLine(a[i]), a[i].Fields, containerLine(b[i]), b[i].Fields)
		}
	}
}

func FuzzContainerLogs(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testutil.Root(), "fixtures/real/cri-log/*.log"))
	more, _ := filepath.Glob(filepath.Join(testutil.Root(), "fixtures/real/docker-json-log/*.log"))
	for _, p := range append(files, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("2026-11-23T13:19:08Z stdout P a\n2026-11-23T13:19:08Z stdout P b \\\nc\n{\"log\":\"x")
	f.Fuzz(func(t *testing.T, in string) {
		name := "n/var/log/pods/ns_p_0f9a7c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b/c/0.log"
		evs, err := Logs(strings.NewReader(in), name)
		parsetest.CheckFuzzErrors(t, err, name)
		last := 0
		for _, ev := range evs {
			if ev.Pos.File != name || ev.Pos.Line <= 0 || ev.Pos.Line < last {
				t.Fatalf("event position %v after line %d", ev.Pos, last)
			}
			last = ev.Pos.Line
		}
		for _, fm := range []*format.Format{CRILogFormat, DockerJSONLogFormat} {
			if s := fm.Sniff(name, []byte(in)); s < 0 || s > 100 {
				t.Fatalf("%s sniff %d", fm.Name, s)
			}
		}
	})
}

// kubectl logs --timestamps (fixtures/real): kubectl's time before each
// klog line; the line's own time is the event's, as without the flag.
func TestKubectlLogsTimestamps(t *testing.T) {
	evs, err := readReal(t, "fixtures/real/kubectl-logs/kubernetes-pr111219_kube-proxy-log-with-timestamps_structured-klog.log")
	if err != nil || len(evs) != 7 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	want := map[int]string{
		0: `1 0000-07-05T07:15:17.986509Z I @ //  "Syncing iptables rules"`,
		5: `6 0000-07-05T07:15:18.162045Z I @ //  "SyncProxyRules complete"`,
	}
	for i, w := range want {
		if got := containerLine(evs[i]); got != w {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, w)
		}
	}
	if evs[5].Fields["elapsed"] != "175.66099ms" || evs[4].Fields["numServices"] != "121" {
		t.Errorf("fields %v %v", evs[5].Fields, evs[4].Fields)
	}
	// CoreDNS's dated line after kubectl's time.
	evs, err = Logs(strings.NewReader("2024-10-08T18:09:15.015123456Z 2024-10-08T18:09:15.015Z [INFO] plugin/ready: Still waiting on: \"kubernetes\"\n"), "x")
	if err != nil || len(evs) != 1 || evs[0].Level != "INFO" || evs[0].Source != "coredns" || evs[0].Fields["plugin"] != "ready" ||
		evs[0].Time.Format(time.RFC3339Nano) != "2024-10-08T18:09:15.015Z" {
		t.Errorf("%v %+v", err, evs)
	}
	// A log of lines of no known shape after kubectl's time: read as the
	// klog format reads them, with that time.
	app := "2026-11-23T13:19:08.5Z starting the server on :8080\n2026-11-23T13:19:09Z GET /healthz 200\n"
	if sk := KlogFormat.Sniff("x", []byte(app)); sk == 0 {
		t.Errorf("klog sniff %d", sk)
	}
	// A line of no known shape after kubectl's time is read with that time.
	evs, err = Logs(strings.NewReader("2026-11-23T13:19:08.5Z starting the server on :8080\n"), "x")
	if err != nil || len(evs) != 1 || evs[0].Message != "starting the server on :8080" || evs[0].Time.Format(time.RFC3339Nano) != "2026-11-23T13:19:08.5Z" {
		t.Errorf("%v %+v", err, evs)
	}
}

// A Docker record cut short (by a head -c, a crash) before a whole one:
// a warning at the cut record, the whole one read.
func TestDockerRecordCutShort(t *testing.T) {
	in := `{"log":"I1123 13:19:08.000001       1 proxier.go:865] \"Syncing
{"log":"I1123 13:19:09.000001       1 proxier.go:865] \"Syncing iptables rules\"\n","stream":"stderr","time":"2026-11-23T13:19:09Z"}
{"log":"cut at the end
`
	evs, err := Logs(strings.NewReader(in), "d.log")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "d.log:1 d.log:3" {
		t.Errorf("warnings at %s: %v", got, err)
	}
	if len(evs) != 1 || evs[0].Pos.Line != 2 || evs[0].Message != "Syncing iptables rules" || evs[0].Stream != "stderr" {
		t.Errorf("events %+v", evs)
	}
}
