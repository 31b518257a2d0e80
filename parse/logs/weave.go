package logs

import (
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// WeaveLogFormat reads the log of Weave Net's weave container.
var WeaveLogFormat = logFormat("weave", format.Format{
	Name:    "weave-log",
	Command: "weave-net's log: kubectl logs -n kube-system weave-net-XXXXX -c weave",
	Doc: "the router's `INFO: 2023/07/05 05:09:36.639718 msg` lines (levels DEBU, INFO, WARN, ERRO, FATA), and the " +
		"launch script's refusal `Network 10.32.0.0/12 overlaps with existing route 10.0.0.0/8 on host`: the " +
		"network weave would allocate Pod addresses from in Fields `network`, the node's route in `route`, " +
		"level error. Their source is \"weave\"",
})

// weaveRe matches a line of weave's router: level, date and time.
var weaveRe = lazyre.New(`^(DEBU|INFO|WARN|ERRO|FATA): (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+) `)

// weaveOverlapRe matches the launch script's refusal to allocate from a
// range that overlaps a route of the host.
var weaveOverlapRe = lazyre.New(`^Network (\S+/\d+) overlaps with existing route (\S+/\d+) on host\.?$`)

// weaveLevels spells weave's four-letter levels out.
var weaveLevels = map[string]string{"DEBU": "debug", "INFO": "info", "WARN": "warning", "ERRO": "error", "FATA": "fatal"}

// parseWeave reads one line of weave's log.
func parseWeave(line string) (model.LogEvent, bool) {
	if m := weaveOverlapRe.FindStringSubmatch(line); m != nil {
		return model.LogEvent{Source: "weave", Level: "error", Message: line,
			Fields: map[string]string{"network": m[1], "route": m[2]}}, true
	}
	if len(line) < 6 || line[4] != ':' {
		return model.LogEvent{}, false
	}
	m, msg := submatches(weaveRe, line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("2006/01/02 15:04:05.999999999", m[2])
	if err != nil {
		return model.LogEvent{}, false
	}
	return model.LogEvent{Source: "weave", Time: ts, Level: weaveLevels[m[1]], Message: msg}, true
}
