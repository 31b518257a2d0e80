package kube_test

import (
	"testing"

	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
	"github.com/netmortem/netmortem/parse/kube"
)

// kubectl get events without its header is read as events; the pods
// table beside it is not.
func TestSniffEventsTable(t *testing.T) {
	own := []string{"fixtures/field/probe-restart-loop--uptime-kuma-helm-67/kubectl-get-events.txt"}
	others := []string{"fixtures/field/probe-restart-loop--uptime-kuma-helm-67/kubectl-get-pods.txt"}
	parsetest.CheckSniff(t, parse.Formats(), kube.EventsTableFormat, own, others)
}
