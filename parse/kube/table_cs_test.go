package kube_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/kube"
)

// Two rows of kubectl get cs as a real ticket pasted them, without the
// header and the command (kubernetes#93342): read as ComponentStatuses,
// and the file sniffed as a kubectl table, not as lines of errors (which
// would make the scheduler's port an apiserver refusing connections).
func TestKubectlTableHeaderlessComponentStatus(t *testing.T) {
	file := filepath.Join(testutil.Root(), "fixtures/field/apiserver-affinity--k8s-93342/kubectl-get-cs.txt")
	snap, warns, err := parse.Open(context.Background(), file, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("open: %v %v", err, warns)
	}
	if len(snap.Inputs) != 1 || snap.Inputs[0].Format != "kubectl-table" || len(snap.Logs) != 0 {
		t.Fatalf("inputs %+v, %d log events", snap.Inputs, len(snap.Logs))
	}
	var got []string
	for _, cs := range snap.Kube.ComponentStatuses {
		for _, c := range cs.Conditions {
			got = append(got, cs.Name+" "+string(c.Type)+"="+string(c.Status)+" "+c.Message)
		}
	}
	want := "scheduler Healthy=False Get http://127.0.0.1:10251/healthz: dial tcp 127.0.0.1:10251: connect: connection refused|" +
		"controller-manager Healthy=False Get http://127.0.0.1:10252/healthz: dial tcp 127.0.0.1:10252: connect: connection refused"
	if strings.Join(got, "|") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// A row is taken for a ComponentStatus without a header only when its name
// is one the apiserver checks and its status one ComponentStatus has.
func TestKubectlTableHeaderlessComponentStatusNames(t *testing.T) {
	for _, c := range []struct {
		row string
		n   int
	}{
		{"etcd-0               Healthy     {\"health\":\"true\"}", 1},
		{"scheduler Unknown", 1},
		{"my-scheduler         Unhealthy   Get http://127.0.0.1:10251/healthz: connection refused", 0},
		{"scheduler            Failed      connection refused", 0},
		{"etcd                 Healthy     ok", 0},
	} {
		k, _ := kube.KubectlTable(strings.NewReader(c.row+"\n"), "cs.txt")
		if got := len(k.ComponentStatuses); got != c.n {
			t.Errorf("%q: %d ComponentStatuses, want %d", c.row, got, c.n)
		}
	}
}
