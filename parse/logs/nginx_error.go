package logs

import (
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// NginxErrorFormat reads nginx's error log.
var NginxErrorFormat = logFormat("nginx-error", format.Format{
	Name: "nginx-error",
	Command: "nginx error log, ingress-nginx controller logs, the nginx image's /docker-entrypoint.sh " +
		"lines before it",
	Doc: "the context (`client`, `server`, `request`, `upstream`, `host`) in Fields, the errno of " +
		"`(113: No route to host)` in `errno` and `strerror`; stray characters before the " +
		"timestamp (a scraping artifact) give a warning and the line is read from the timestamp " +
		"on",
})

var (
	nginxErrorRe  = lazyre.New(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) \[([a-z]+)\] (\d+)#(\d+): (?:\*(\d+) )?`)
	nginxErrnoRe  = lazyre.New(`\((\d+): ([^)]*)\)`)
	nginxCtxKeyRe = lazyre.New(`, (client|server|request|subrequest|upstream|host|referrer|login): `)
)

func parseNginxError(line string) (model.LogEvent, bool) {
	if len(line) < 20 || line[4] != '/' {
		return model.LogEvent{}, false
	}
	m, msg := submatches(nginxErrorRe, line)
	if m == nil {
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("2006/01/02 15:04:05", m[1])
	if err != nil {
		return model.LogEvent{}, false
	}
	ev := nginxContext(msg)
	ev.Source, ev.Time, ev.Level = "nginx", ts, m[2]
	ev.Fields["pid"], ev.Fields["tid"] = m[3], m[4]
	if m[5] != "" {
		ev.Fields["connection"] = m[5]
	}
	return ev, true
}

// nginxContext reads an nginx error-log message, msg: the context nginx
// appends (client, server, request, upstream, host ...) into Fields, the
// errno of "(113: No route to host)" into errno and strerror, the rest
// into Message.
func nginxContext(msg string) model.LogEvent {
	ev := model.LogEvent{Fields: map[string]string{}}
	// The context nginx appends: ", client: A, server: B, request: "...", ...".
	locs := nginxCtxKeyRe.FindAllStringSubmatchIndex(msg, -1)
	if len(locs) > 0 {
		for i, loc := range locs {
			key := msg[loc[2]:loc[3]]
			end := len(msg)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			val := msg[loc[1]:end]
			// Quoted values; a value that lost a quote in copying keeps
			// what is left.
			val = strings.TrimSuffix(strings.TrimPrefix(val, `"`), `"`)
			ev.Fields[key] = val
		}
		msg = msg[:locs[0][0]]
	}
	ev.Message = msg
	if e := nginxErrnoRe.FindStringSubmatch(msg); e != nil {
		ev.Fields["errno"], ev.Fields["strerror"] = e[1], e[2]
	}
	return ev
}
