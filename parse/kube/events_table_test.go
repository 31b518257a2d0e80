package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func readEventsString(t testing.TB, in, cmd string) ([]model.Event, error) {
	snap := &model.Snapshot{}
	src := &format.File{Name: "x.txt", Format: EventsTableFormat.Name, Command: cmd}
	_, err := EventsTableFormat.Parse(context.Background(), strings.NewReader(in), src, snap)
	return snap.Kube.Events, err
}

func eventLines(evs []model.Event) string {
	var out []string
	for _, e := range evs {
		o := e.InvolvedObject
		out = append(out, fmt.Sprintf("%d %s %s %s/%s/%s %q", e.Source.Pos.Line, e.Type, e.Reason, o.Kind, o.Namespace, o.Name, e.Message))
	}
	return strings.Join(out, "\n")
}

// kubectl get events as pasted in uptime-kuma-helm#67 (fixtures/field):
// no header, the command behind a prompt of its own ("-> kubectl get
// events"), five Events of one Pod.
func TestEventsTableReal(t *testing.T) {
	rel := "fixtures/field/probe-restart-loop--uptime-kuma-helm-67/kubectl-get-events.txt"
	b, err := os.ReadFile(filepath.Join(testutil.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	if s := EventsTableFormat.Sniff(rel, b); s < 80 {
		t.Errorf("sniff %d", s)
	}
	evs, err := readEventsString(t, string(b), "")
	if err != nil {
		t.Error(err)
	}
	want := `2 Normal Created Pod//uptime-kuma-helm-6b8d4c7f9d-r5mtq "Created container uptime-kuma"
3 Normal Started Pod//uptime-kuma-helm-6b8d4c7f9d-r5mtq "Started container uptime-kuma"
4 Warning Unhealthy Pod//uptime-kuma-helm-6b8d4c7f9d-r5mtq "Readiness probe failed: Get \"http://10.42.0.153:3001/\": dial tcp 10.42.0.153:3001: connect: connection refused"
5 Warning Unhealthy Pod//uptime-kuma-helm-6b8d4c7f9d-r5mtq "Liveness probe failed: Health Check ERROR"
6 Warning Unhealthy Pod//uptime-kuma-helm-6b8d4c7f9d-r5mtq "Liveness probe failed: command \"node extra/healthcheck.js\" timed out"`
	if got := eventLines(evs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The header and -A's NAMESPACE column; -n names the namespace of rows
// without one; a row of another shape is reported.
func TestEventsTableForms(t *testing.T) {
	in := "NAMESPACE     LAST SEEN   TYPE      REASON      OBJECT          MESSAGE\n" +
		"kube-system   5m          Warning   BackOff     pod/coredns-x   Back-off restarting failed container\n" +
		"not a row\n"
	evs, err := readEventsString(t, in, "kubectl get events -A")
	if got, want := eventLines(evs), `2 Warning BackOff Pod/kube-system/coredns-x "Back-off restarting failed container"`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "x.txt:3") {
		t.Errorf("the odd row not reported: %v", err)
	}
	evs, _ = readEventsString(t, "<unknown>   Normal   Scheduled   pod/web-1   Successfully assigned\n", "kubectl -n shop get events")
	if got, want := eventLines(evs), `1 Normal Scheduled Pod/shop/web-1 "Successfully assigned"`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if s := EventsTableFormat.Sniff("x.txt", []byte("NAME READY STATUS\nweb-1 1/1 Running\n")); s != 0 {
		t.Errorf("a pods table sniffed %d", s)
	}
}

func FuzzEventsTable(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"fixtures/field/probe-restart-loop--uptime-kuma-helm-67/kubectl-get-events.txt"})
	f.Add("NAMESPACE LAST SEEN TYPE REASON OBJECT MESSAGE\nns 1m Normal Pulled pod/x ok\n")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := readEventsString(t, in, "")
		parsetest.CheckFuzzErrors(t, err, "x.txt")
		for _, e := range evs {
			if e.Source.Pos.Line == 0 || e.InvolvedObject.Name == "" {
				t.Fatalf("bad event: %+v", e)
			}
		}
		if s := EventsTableFormat.Sniff("x.txt", []byte(in)); s < 0 || s > 100 {
			t.Fatalf("sniff %d", s)
		}
	})
}
