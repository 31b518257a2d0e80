package logs

import (
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// HubbleObserveFormat reads the flows `hubble observe` prints: one flow a
// line, its endpoints, what happened to it and its verdict.
var HubbleObserveFormat = logFormat("hubble", format.Format{
	Name:    "hubble-observe",
	Command: "hubble observe, hubble observe --verdict DROPPED (or kubectl exec into a cilium Pod)",
	Doc: "`Jun 14 06:29:32.553: default/xwing:43314 (ID:3040) <> default/deathstar-6fb5694d48-5hmds:80 " +
		"(ID:32460) Policy denied DROPPED (TCP Flags: SYN)`, with or without the time and the identities in " +
		"parentheses: source `hubble`, Fields `src` and `dst` (namespace/pod:port or address:port), " +
		"`src_identity` and `dst_identity`, `direction` (->, <-, <>), `event` (\"Policy denied\", " +
		"\"to-endpoint\", \"policy-verdict:none INGRESS\" ...), `verdict` (FORWARDED, DROPPED, DENIED ...) and " +
		"`summary` (\"UDP\", \"TCP Flags: SYN\"). `network-policy-deny` reads the \"Policy denied\" drops",
})

// hubbleRe: "[TIME: ]SRC[ (ID)] ARROW DST[ (ID)] EVENT VERDICT[ (SUMMARY)]".
var hubbleRe = lazyre.New(`^(?:([A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?|\d{4}-\d\d-\d\dT\S+): )?` +
	`(\S+)(?: \(([^)]*)\))? (->|<-|<>) (\S+)(?: \(([^)]*)\))? +(.*?) ?` +
	`(FORWARDED|DROPPED|DENIED|ERROR|AUDIT|REDIRECTED|TRACED|TRANSLATED)(?: \((.*)\))?$`)

// parseHubble reads one flow line of hubble observe.
func parseHubble(line string) (model.LogEvent, bool) {
	m, _ := submatches(hubbleRe, line)
	if m == nil || !strings.Contains(m[2]+m[5], ":") {
		return model.LogEvent{}, false
	}
	f := map[string]string{"src": m[2], "direction": m[4], "dst": m[5], "verdict": m[8]}
	for k, v := range map[string]string{"src_identity": m[3], "dst_identity": m[6], "event": m[7], "summary": m[9]} {
		if v != "" {
			f[k] = v
		}
	}
	ev := model.LogEvent{Source: "hubble", Message: line, Fields: f}
	if m[1] != "" {
		if ts, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			ev.Time = ts.UTC()
		} else if ts, err := time.Parse("Jan 2 15:04:05", strings.Join(strings.Fields(m[1]), " ")); err == nil {
			ev.Time = ts
		}
	}
	return ev, true
}
