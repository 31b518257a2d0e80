package logs

import (
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// FelixLogFormat reads the log of Calico's Felix, the agent of calico-node.
var FelixLogFormat = logFormat("felix", format.Format{
	Name:    "felix-log",
	Command: "calico-node's log: kubectl logs -n kube-system calico-node-XXXXX -c calico-node",
	Doc: "`2021-02-28 22:46:00.451 [FATAL][47] int_dataplane.go 1035: msg` (Felix in Go) and " +
		"`2016-07-28 18:19:24,702 [CRITICAL][311/4] calico.felix.devices 70: msg` (Felix in Python): the pid " +
		"in Fields `pid`, the file or module and its line in `caller`; BIRD's lines among them (`bird: BGP: " +
		"Unexpected connect from unknown address 10.0.2.15 (port 53721)`), of no time, source bird; the lines " +
		"after an entry that have no log shape of their own (a Python traceback, a message wrapped by a paste) " +
		"continue it",
})

var felixRe = lazyre.New(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[.,]\d+) \[([A-Z]+)\]\[([\d/]+)\] (\S+) (\d+): `)

// parseFelix reads one line of Felix's log.
func parseFelix(line string) (model.LogEvent, bool) {
	if len(line) < 24 || line[4] != '-' || line[10] != ' ' {
		return model.LogEvent{}, false
	}
	m, msg := submatches(felixRe, line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("2006-01-02 15:04:05.999999999", strings.Replace(m[1], ",", ".", 1))
	if err != nil {
		return model.LogEvent{}, false
	}
	return model.LogEvent{Source: "felix", Time: ts, Level: m[2], Message: msg,
		Fields: map[string]string{"pid": m[3], "caller": m[4] + " " + m[5]}}, true
}

// parseBird reads a line of Calico's BIRD in calico-node's log, "bird:
// BGP: Unexpected connect from unknown address 10.0.2.15 (port 53721)"
// (bird6 for IPv6): no time, no level.
func parseBird(line string) (model.LogEvent, bool) {
	for _, p := range []string{"bird: ", "bird6: "} {
		if msg, ok := strings.CutPrefix(line, p); ok && strings.TrimSpace(msg) != "" {
			return model.LogEvent{Source: strings.TrimSuffix(p, ": "), Message: strings.TrimSpace(msg)}, true
		}
	}
	return model.LogEvent{}, false
}
