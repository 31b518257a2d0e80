package logs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/logs"
)

// The log formats among all the formats parse.Open tries.

func TestSniffDmesg(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.Root(), "parse/testdata/logs/dmesg*.txt"))
	if len(files) != 6 {
		t.Fatalf("%d dmesg files", len(files))
	}
	for _, f := range files {
		head, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if best, _ := parsetest.Best(parse.Formats(), "x", head); best != "dmesg" {
			t.Errorf("%s read as %q", filepath.Base(f), best)
		}
	}
}

// The `kubectl logs -l k8s-app=kube-dns` section of a pasted terminal
// session (shared corpus): read by coredns-log at the file's line numbers,
// client-go's traces joined to their entry.
func TestCoreDNSCorpus(t *testing.T) {
	dir := testutil.CorpusDir(t, "dumps", "logs")
	file := filepath.Join(dir, "inquisitivefrog_coredns_failed-to-list_clusterip-10.96.0.1-io-timeout.txt")
	snap, warns, err := parse.Open(context.Background(), file, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	var section *model.Input
	for i, in := range snap.Inputs {
		if in.Path == file+":112" {
			section = &snap.Inputs[i]
		}
	}
	if section == nil || section.Format != "coredns-log" || section.Kind != model.KindLogs || section.Records != 58 ||
		section.Command != "kubectl logs --namespace=kube-system -l k8s-app=kube-dns" {
		t.Fatalf("the kube-dns section: %+v", section)
	}
	if len(snap.Logs) != 58 {
		t.Fatalf("%d events, want 58", len(snap.Logs))
	}
	for i, want := range map[int]string{
		0:  `113 - INFO coredns@ "Still waiting on: \"kubernetes\"" {plugin=ready}`,
		11: `124 - WARNING coredns@ "starting server with unsynced Kubernetes API" {plugin=kubernetes}`,
		12: `125 -  coredns@ ".:53" {port=53 server=.:53}`,
		13: `126 - INFO coredns@ "Running configuration SHA512 = 591cf328cccc12bc490481273e738df59329c62c0b729d94e8b61db9961c2fa5f046dd37f1cf888b953814040d180f52594972691cd6ff41be96639138a43908" {plugin=reload}`,
		14: `127 -  coredns@ "CoreDNS-1.11.1" {version=1.11.1}`,
		15: `128 -  coredns@ "linux/amd64, go1.20.7, ae2bbc2" {commit=ae2bbc2 go=go1.20.7 platform=linux/amd64}`,
		20: `133 - INFO coredns@ "pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: failed to list *v1.Service: Get \"https://10.96.0.1:443/api/v1/services?limit=500&resourceVersion=0\": dial tcp 10.96.0.1:443: i/o timeout" {plugin=kubernetes}`,
		22: `135 - INFO coredns@ "Trace[989619704]: \"Reflector ListAndWatch\" name:pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231 (08-Oct-2024 18:09:15.015) (total time: 30007ms):\nTrace[989619704]: ---\"Objects listed\" error:Get \"https://10.96.0.1:443/apis/discovery.k8s.io/v1/endpointslices?limit=500&resourceVersion=0\": dial tcp 10.96.0.1:443: i/o timeout 30004ms (18:09:45.024)\nTrace[989619704]: [30.007665517s] [30.007665517s] END" {plugin=kubernetes}`,
		24: `141 - ERROR coredns@ "pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: Failed to watch *v1.Service: failed to list *v1.Service: Get \"https://10.96.0.1:443/api/v1/services?limit=500&resourceVersion=0\": dial tcp 10.96.0.1:443: i/o timeout" {plugin=kubernetes}`,
		57: `182 - ERROR coredns@ "pkg/mod/k8s.io/client-go@v0.27.4/tools/cache/reflector.go:231: Failed to watch *v1.Service: failed to list *v1.Service: Get \"https://10.96.0.1:443/api/v1/services?limit=500&resourceVersion=0\": dial tcp 10.96.0.1:443: i/o timeout" {plugin=kubernetes}`,
	} {
		if got := logs.EventLine(snap.Logs[i]); got != want {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
	levels := map[string]int{}
	for _, ev := range snap.Logs {
		levels[ev.Level]++
		if ev.Source != "coredns" || ev.Pos.File != file {
			t.Errorf("event %s: source %q file %q", logs.EventLine(ev), ev.Source, ev.Pos.File)
		}
	}
	if levels["INFO"] != 44 || levels["WARNING"] != 2 || levels["ERROR"] != 6 || levels[""] != 6 {
		t.Errorf("levels %v", levels)
	}
}

// The container runtimes' files and journalctl's -o json and -o verbose
// outputs of fixtures/real are told by their content among all the
// formats; kubectl logs --timestamps is read as the klog it stamps,
// journalctl's short forms in any locale as the journal the klog format
// reads.
func TestSniffContainerLogs(t *testing.T) {
	root := filepath.Join(testutil.Root(), "fixtures/real")
	for pattern, want := range map[string]string{
		"cri-log/index5*.log":                             "cri-log",
		"cri-log/index3*.log":                             "cri-log",
		"cri-log/earthly*.log":                            "cri-log",
		"cri-log/index12860955295*.log":                   "cri-log",
		"cri-log/*rsyslog-ns-pod*.log":                    "cri-log",
		"cri-log/index17198188655_var-log-pods/*/*/*.log": "cri-log",
		"docker-json-log/*.log":                           "docker-json-log",
		"kubectl-logs/*with-timestamps*.log":              "klog",
	} {
		files, _ := filepath.Glob(filepath.Join(root, pattern))
		if len(files) == 0 {
			t.Fatalf("no file %s", pattern)
		}
		for _, f := range files {
			head, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if best, _ := parsetest.Best(parse.Formats(), "x", head); best != want {
				t.Errorf("%s read as %q, want %s", filepath.Base(f), best, want)
			}
		}
	}
}

// kind's exported logs (fixtures/real): the node is the directory above
// pods/, the namespace, pod and container come from the path below it.
func TestKindArtifactsNode(t *testing.T) {
	dir := filepath.Join(testutil.Root(), "fixtures/real/cri-log/index53727516996_kind-artifacts")
	snap, warns, err := parse.Open(context.Background(), dir, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Logs) != 4 || len(snap.Inputs) != 1 || snap.Inputs[0].Format != "cri-log" || snap.Inputs[0].Node != "kind-control-plane" {
		t.Fatalf("%d events, inputs %+v", len(snap.Logs), snap.Inputs)
	}
	for _, ev := range snap.Logs {
		if ev.Node != "kind-control-plane" || ev.Namespace != "kube-system" || ev.Pod != "kube-scheduler-kind-control-plane" ||
			ev.Container != "kube-scheduler" || ev.Source != "kube-scheduler" || ev.Stream != "stderr" {
			t.Errorf("event %+v", ev)
		}
	}
}

// kubectl logs --timestamps of an application's plain lines is read as
// logs among all the formats.
func TestSniffTimestampedPlainLines(t *testing.T) {
	in := []byte("2026-11-23T13:19:08.5Z starting the server on :8080\n2026-11-23T13:19:09Z GET /healthz 200\n2026-11-23T13:19:10Z GET /healthz 200\n")
	if best, _ := parsetest.Best(parse.Formats(), "x", in); best != "klog" {
		t.Errorf("read as %q", best)
	}
}

// Error lines quoted without their log prefix are read as such; whole
// logs holding the same errors are read by their own format.
func TestSniffNetErrorLines(t *testing.T) {
	own := []string{"fixtures/field/apiserver-unreachable--mlab-k8s-support-152/coredns.log",
		"fixtures/field/leaked-established-ports--capo-issue-3227/capo-controller-manager.log"}
	others := append([]string{"parse/testdata/logs/coredns-1.11.1.log", "parse/testdata/logs/kubectl-v6-klog.log",
		"fixtures/real/kubectl-logs/inquisitivefrog_kubectl-logs-coredns_failed-to-list-10.96.0.1-io-timeout.txt",
		"fixtures/real/kubectl-logs/troubleshoot-testdata_traefik-previous-log_failed-to-watch-io-timeout.log"},
		parsetest.OtherHostOutputs...)
	parsetest.CheckSniff(t, parse.Formats(), logs.NetErrorLinesFormat, own, others)
}
