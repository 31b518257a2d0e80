package kube

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The Events of `kubectl describe pod` as mmumshad/kubernetes-the-hard-way#40
// pasted them (the sandbox's ID changed), under the description's name and
// namespace and the command's kind.
func TestDescribeEventsToday(t *testing.T) {
	in := "$ kubectl describe pod -n kube-system coredns-69cbb76ff8-q2zgf\n" +
		"Name:         coredns-69cbb76ff8-q2zgf\nNamespace:    kube-system\nLabels:       k8s-app=kube-dns\n" +
		"              pod-template-hash=69cbb76ff8\nContainers:\n  coredns:\n    Image:  coredns/coredns:1.6.2\n" +
		"Events:\n" +
		"  Type     Reason                  Age                   From               Message\n" +
		"  ----     ------                  ----                  ----               -------\n" +
		"  Normal   Scheduled               13m                   default-scheduler  Successfully assigned kube-system/coredns-69cbb76ff8-q2zgf to worker-1\n" +
		`  Warning  FailedCreatePodSandBox  13m                   kubelet, worker-1  Failed create pod sandbox: rpc error: code = Unknown desc = [failed to set up sandbox container "5e0c3a1d9b7f4e2a8c6d0b9f1a3e5c7d9b1f3a5c7e9d1b3f5a7c9e1d3b5f7a9c" network for pod "coredns-69cbb76ff8-q2zgf": NetworkPlugin cni failed to set up pod "coredns-69cbb76ff8-q2zgf_kube-system" network: failed to find plugin "loopback" in path [/opt/cni/bin]]` + "\n" +
		"  Normal   SandboxChanged          3m34s (x48 over 13m)  kubelet, worker-1  Pod sandbox changed, it will be killed and re-created.\n"
	evs, err := DescribeEvents(strings.NewReader(in), "describe-pod.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%d %s %s/%s/%s %s %s %d node=%s from=%q age=%q %.40s", e.Source.Pos.Line, e.Type,
			e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason, e.Type, e.Count,
			e.Source.Node, e.Source.Cells["FROM"], e.Source.Cells["AGE"], e.Message))
	}
	parsetest.CheckLines(t, "describe-pod.txt", got, []string{
		`12 Normal Pod/kube-system/coredns-69cbb76ff8-q2zgf Scheduled Normal 1 node= from="default-scheduler" age="13m" Successfully assigned kube-system/coredn`,
		`13 Warning Pod/kube-system/coredns-69cbb76ff8-q2zgf FailedCreatePodSandBox Warning 1 node=worker-1 from="kubelet, worker-1" age="13m" Failed create pod sandbox: rpc error: co`,
		`14 Normal Pod/kube-system/coredns-69cbb76ff8-q2zgf SandboxChanged Normal 48 node=worker-1 from="kubelet, worker-1" age="3m34s (x48 over 13m)" Pod sandbox changed, it will be killed a`,
	})
	if !strings.HasSuffix(evs[1].Message, `failed to find plugin "loopback" in path [/opt/cni/bin]]`) {
		t.Errorf("message %q", evs[1].Message)
	}
	// The table alone, its rows' spacing lost: split at two spaces.
	alone := "Events:\n  Type    Reason   Age  From     Message\n  ----    ------   ---- ----     -------\n" +
		"  Warning  Unhealthy  2m (x5 over 4m)  kubelet  Readiness probe failed: HTTP probe failed with statuscode: 503\n"
	evs, err = DescribeEvents(strings.NewReader(alone), "events.txt")
	if err != nil || len(evs) != 1 || evs[0].Count != 5 || evs[0].Source.Cells["FROM"] != "kubelet" ||
		evs[0].Message != "Readiness probe failed: HTTP probe failed with statuscode: 503" {
		t.Errorf("%v: %+v", err, evs)
	}
}

// kubectl before 1.10 printed the table tab-separated, with FirstSeen,
// LastSeen, Count and SubObjectPath (coreos/coreos-kubernetes#874).
func TestDescribeEventsBefore110(t *testing.T) {
	in := "Events:\n" +
		"  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubObjectPath\tType\t\tReason\t\tMessage\n" +
		"  ---------\t--------\t-----\t----\t\t\t-------------\t--------\t------\t\t-------\n" +
		"  6m\t\t6m\t\t1\tdefault-scheduler\t\t\tNormal\t\tScheduled\tSuccessfully assigned mypod to 10.0.0.5\n" +
		"  6m\t\t3m\t\t117\tkubelet, 10.0.0.5\t\t\tWarning\t\tFailedSync\tError syncing pod, skipping: failed to find plugin \"loopback\" in path [/opt/loopback/bin /opt/cni/bin]\n"
	evs, err := DescribeEvents(strings.NewReader(in), "old.txt")
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v: %+v", err, evs)
	}
	if e := evs[1]; e.Type != "Warning" || e.Reason != "FailedSync" || e.Count != 117 || e.Source.Node != "10.0.0.5" ||
		!strings.HasSuffix(e.Message, "[/opt/loopback/bin /opt/cni/bin]") {
		t.Errorf("%+v", e)
	}
}

// A line of no describe shape before the table is reported at its line;
// in the table, a line that is no row is the rest of the message above it
// (kubectl prints a multi-line message so, a terminal wraps a long one).
func TestDescribeEventsErrors(t *testing.T) {
	in := "Name: x\nthis is prose\nEvents:\n  Type    Reason   Age  From     Message\n" +
		"  Normal  Pulled  1m   kubelet  Container image pulled\n  something else entirely\n" +
		"  Warning  Unhealthy  10s (x3 over 30s)  kubelet  Readiness probe failed: calico/node is not ready:\n" +
		"calico/node is not ready: BIRD is not ready: BGP not established with 10.0.0.12\n"
	evs, err := DescribeEvents(strings.NewReader(in), "d.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "d.txt:2" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(evs) != 2 || evs[0].InvolvedObject.Name != "x" || evs[0].Message != "Container image pulled something else entirely" ||
		!strings.HasSuffix(evs[1].Message, "BGP not established with 10.0.0.12") {
		t.Errorf("%+v", evs)
	}
}

// An event without a message (kube-proxy's Starting, on every Node), its
// row padded to the Message column, is read; the Pod's Node: names the
// node of its events when FROM does not.
func TestDescribeEventsEmptyMessage(t *testing.T) {
	in := "Name:         web-0\nNode:         worker-2/10.0.0.12\nEvents:\n" +
		"  Type    Reason    Age  From        Message\n  ----    ------    ----  ----        -------\n" +
		"  Normal  Starting  70m  kube-proxy  \n" +
		"  Normal  Pulled    2m   kubelet     Container image \"nginx\" already present on machine\n"
	evs, err := DescribeEvents(strings.NewReader(in), "d.txt")
	if err != nil || len(evs) != 2 || evs[0].Message != "" || evs[0].Source.Cells["FROM"] != "kube-proxy" ||
		evs[1].Source.Node != "worker-2" {
		t.Errorf("%v: %+v", err, evs)
	}
}

// A row pasted without its header whose message kubectl went on with on
// lines of their own (a probe's output), as projectcalico/calico#3541
// pasted calico-node's Unhealthy event (the node renamed): one event, its
// message joined; a description's field after it ends it.
func TestDescribeEventsRowGoesOn(t *testing.T) {
	in := "  Warning  Unhealthy  3m39s (x134 over 25m)  kubelet, master-1  (combined from similar events): Readiness " +
		"probe failed: 2020-05-12 05:43:43.500 [INFO][5161] confd/health.go 177: Number of node(s) with BGP peering " +
		"established = 0\ncalico/node is not ready: BIRD is not ready: BGP not established with 192.168.10.172,192.168.10.8\n"
	if s := sniffDescribeEvents("x", []byte(in)); s != 80 {
		t.Errorf("the row and its message's line score %d", s)
	}
	evs, err := DescribeEvents(strings.NewReader(in), "e.txt")
	if err != nil || len(evs) != 1 || evs[0].Count != 134 || evs[0].Source.Node != "master-1" ||
		!strings.HasSuffix(evs[0].Message, "= 0 calico/node is not ready: BIRD is not ready: BGP not established with 192.168.10.172,192.168.10.8") {
		t.Errorf("%v: %+v", err, evs)
	}
	in = "  Warning  Unhealthy  1m  kubelet, n1  Readiness probe failed: x\nnot ready\nName:  web\n"
	if s := sniffDescribeEvents("x", []byte(in)); s != 0 {
		t.Errorf("a row, its message's line and a description's field score %d", s)
	}
	evs, err = DescribeEvents(strings.NewReader(in), "e.txt")
	if err != nil || len(evs) != 1 || evs[0].Message != "Readiness probe failed: x not ready" {
		t.Errorf("%v: %+v", err, evs)
	}
}

// The table is the format's; a description of a Service or Endpoints is
// kubectl-describe's, and a table of kubectl get events is its own.
func TestSniffDescribeEvents(t *testing.T) {
	table := "Events:\n  Type    Reason   Age  From     Message\n  ----    ------   ---- ----     -------\n" +
		"  Normal  Pulled  1m   kubelet  Container image pulled\n"
	if s := sniffDescribeEvents("x", []byte(table)); s != 85 {
		t.Errorf("the table scores %d", s)
	}
	if s := sniffDescribeEvents("x", []byte("$ kubectl describe svc web\nName: web\n"+table)); s != 0 {
		t.Errorf("a Service's description scores %d", s)
	}
	rows := "  Warning  FailedCreatePodSandBox  9m29s (x1836 over 44m)  kubelet  Failed to create pod sandbox\n" +
		"  Normal   SandboxChanged          4m29s (x2096 over 44m)  kubelet  Pod sandbox changed\n"
	if s := sniffDescribeEvents("x", []byte(rows)); s != 80 {
		t.Errorf("rows without their header score %d", s)
	}
	if evs, err := DescribeEvents(strings.NewReader(rows), "rows.txt"); err != nil || len(evs) != 2 || evs[0].Count != 1836 ||
		evs[0].Source.Cells["FROM"] != "kubelet" || evs[1].Message != "Pod sandbox changed" {
		t.Errorf("rows without their header: %v %+v", err, evs)
	}
	svc := "Name:              web\nNamespace:         default\nType:              LoadBalancer\nTargetPort:        8080/TCP\n" +
		"Endpoints:         10.244.1.7:8080\n" + table
	if s := sniffDescribeEvents("x", []byte(svc)); s != 0 {
		t.Errorf("a Service's description without its command scores %d", s)
	}
	get := "LAST SEEN   TYPE      REASON      OBJECT      MESSAGE\n2m          Warning   Unhealthy   pod/web-1   Readiness probe failed\n"
	if s := sniffDescribeEvents("x", []byte(get)); s != 0 {
		t.Errorf("kubectl get events scores %d", s)
	}
}

func FuzzDescribeEvents(f *testing.F) {
	f.Add("Events:\n  Type    Reason   Age  From     Message\n  ----    ------   ---- ----     -------\n" +
		"  Normal  Pulled  1m (x2 over 3m)  kubelet, n1  Container image pulled\n")
	f.Add("Events:\n  Type    Reason    Age  From        Message\n  Normal  Starting  70m  kube-proxy  \n")
	f.Add("Events:\n  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubObjectPath\tType\t\tReason\t\tMessage\n  6m\t6m\t1\tx\tNormal\tA\tb\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, _ := DescribeEvents(strings.NewReader(in), "fuzz.txt")
		for _, e := range evs {
			if e.Type != "Normal" && e.Type != "Warning" {
				t.Fatalf("type %q", e.Type)
			}
		}
	})
}
