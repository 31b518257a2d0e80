package logs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/logs"
)

// Go's log package: the date and time, with microseconds and the caller
// when the program sets those flags; a message with line breaks goes on
// below its prefix.
func TestGoLogLines(t *testing.T) {
	in := "2019/01/21 15:47:17 Starting overwatch\n" +
		"2019/01/21 15:47:20 Error while initializing connection to Kubernetes apiserver. Reason: Get https://10.96.0.1:443/version: dial tcp 10.96.0.1:443: connect: no route to host\n" +
		"Refer to our FAQ and wiki pages for more information: https://github.com/kubernetes/dashboard/wiki/FAQ\n" +
		"2023/07/05 05:09:36.639718 main.go:42: listening on :8080\n"
	evs, err := logs.Logs(strings.NewReader(in), "kubernetes-dashboard.log")
	if err != nil || len(evs) != 3 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	want := []struct {
		line        int
		msg, caller string
		at          time.Time
	}{
		{1, "Starting overwatch", "", time.Date(2019, 1, 21, 15, 47, 17, 0, time.UTC)},
		{2, "Error while initializing", "", time.Date(2019, 1, 21, 15, 47, 20, 0, time.UTC)},
		{4, "listening on :8080", "main.go:42", time.Date(2023, 7, 5, 5, 9, 36, 639718000, time.UTC)},
	}
	for i, w := range want {
		ev := evs[i]
		if ev.Pos.Line != w.line || !strings.HasPrefix(ev.Message, w.msg) || ev.Fields["caller"] != w.caller ||
			!ev.Time.Equal(w.at) || ev.Level != "" {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
	if !strings.HasSuffix(evs[1].Message, "no route to host\nRefer to our FAQ and wiki pages for more information: https://github.com/kubernetes/dashboard/wiki/FAQ") {
		t.Errorf("the continued entry: %q", evs[1].Message)
	}
}

// A date that is no date is no Go log line: it is reported, not read
// (after a Go log line it would continue that line's message).
func TestGoLogBadDate(t *testing.T) {
	in := "2019/13/45 25:61:00 not a time\n2019/01/21 15:47:17 Starting overwatch\n"
	evs, err := logs.Logs(strings.NewReader(in), "app.log")
	if len(evs) != 1 || err == nil || !strings.Contains(err.Error(), "app.log:1") {
		t.Fatalf("%d events, %v", len(evs), err)
	}
}

func TestGoLogSniff(t *testing.T) {
	own := []string{"analyzer/rules/testdata/apiserver-unreachable/hit-symptom-clusterip-no-route/kubernetes-dashboard.log"}
	others := []string{
		"fixtures/field/pod-cidr-overlap--weave-issue-3211/weave.log",
		"fixtures/field/coredns-loop--k8s-issue-71705/coredns.log",
	}
	parsetest.CheckSniff(t, parse.Formats(), logs.GoLogFormat, own, others)
}
