package logs

import (
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// LogfmtFormat reads logfmt as logrus writes it (containerd, traefik,
// kube-vip).
var LogfmtFormat = logFormat("logfmt", format.Format{
	Name:    "logfmt",
	Command: "logrus/logfmt text logs (time=... level=... msg=...): containerd, traefik, kube-vip",
	Doc: "`time=\"...\" level=info msg=\"...\" key=value`, also after a journald prefix, and lines " +
		"pasted from their message on (`msg=\"...\" error=\"...\"`: level error when an error is given)",
})

var logfmtStartRe = lazyre.New(`^(?:time|ts|level|lvl)=`)

// parseLogfmt reads `time="2022-12-20T23:40:34Z" level=info msg="..." k=v`.
func parseLogfmt(line string) (model.LogEvent, bool) {
	if !logfmtStartRe.MatchString(line) {
		return model.LogEvent{}, false
	}
	kv := map[string]string{}
	if rest := readKV(line, kv); rest != "" {
		return model.LogEvent{}, false
	}
	if _, ok := kv[multiKeyMarker]; ok {
		return model.LogEvent{}, false
	}
	var ev model.LogEvent
	level, hasLevel := kv["level"]
	if !hasLevel {
		level, hasLevel = kv["lvl"]
	}
	msg, hasMsg := kv["msg"]
	if !hasLevel || !hasMsg {
		return model.LogEvent{}, false
	}
	ev.Level, ev.Message = level, msg
	delete(kv, "level")
	delete(kv, "lvl")
	delete(kv, "msg")
	for _, k := range []string{"time", "ts"} {
		if v, ok := kv[k]; ok {
			if t, err := parseISOTime(v); err == nil {
				ev.Time = t
				delete(kv, k)
				break
			}
		}
	}
	if len(kv) > 0 {
		ev.Fields = kv
	}
	return ev, true
}
