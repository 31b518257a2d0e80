package logs

import (
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
)

var (
	syslogRe    = regexp.MustCompile(`^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(\.\d+)? (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	syslogISORe = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	months      = map[string]string{"Jan": "01", "Feb": "02", "Mar": "03", "Apr": "04", "May": "05", "Jun": "06",
		"Jul": "07", "Aug": "08", "Sep": "09", "Oct": "10", "Nov": "11", "Dec": "12"}
)

// parseSyslog reads a line with a syslog or journald prefix; inner is
// "klog" when the message is a klog line, else "syslog".
func parseSyslog(line string) (model.LogEvent, string, bool) {
	var ts time.Time
	var host, prog, pid, msg string
	if len(line) < 16 {
		return model.LogEvent{}, "", false
	}
	switch c := line[0]; {
	case c >= 'A' && c <= 'Z' && line[3] == ' ':
		m, rest := submatches(syslogRe, line)
		if m == nil {
			return model.LogEvent{}, "", false
		}
		mon, ok := months[m[1]]
		if !ok {
			return model.LogEvent{}, "", false
		}
		day := m[2]
		if len(day) == 1 {
			day = "0" + day
		}
		frac := strings.TrimPrefix(m[6], ".")
		if ts, ok = yearless(mon, day, m[3], m[4], m[5], frac); !ok {
			return model.LogEvent{}, "", false
		}
		host, prog, pid, msg = m[7], m[8], m[9], rest
	case c >= '0' && c <= '9' && line[10] == 'T':
		m, rest := submatches(syslogISORe, line)
		if m == nil {
			return model.LogEvent{}, "", false
		}
		var err error
		if ts, err = parseISOTime(m[1]); err != nil {
			return model.LogEvent{}, "", false
		}
		host, prog, pid, msg = m[2], m[3], m[4], rest
	default:
		return model.LogEvent{}, "", false
	}
	if ev, ok := parseKlog(msg); ok {
		ev.Node, ev.Source = host, prog
		return ev, "klog", true
	}
	if ev, ok := parseLogfmt(msg); ok {
		ev.Node, ev.Source = host, prog
		if ev.Time.IsZero() {
			ev.Time = ts
		}
		return ev, "logfmt", true
	}
	ev := model.LogEvent{Node: host, Source: prog, Time: ts, Message: msg}
	if pid != "" {
		ev.Fields = map[string]string{"pid": pid}
	}
	return ev, "syslog", true
}

func parseISOTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not an ISO 8601 time")
}
