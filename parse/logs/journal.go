package logs

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// JournalFormat reads journalctl's export-like outputs: -o json and -o
// verbose.
var JournalFormat = logFormat("journal", format.Format{
	Name:    "journal",
	Command: "journalctl -o json, journalctl -o verbose, journalctl -u kubelet -o json",
	Doc: "one journal entry per line (-o json) or per header and its indented `KEY=value` lines (-o verbose): " +
		"`MESSAGE` read as what it is (klog, logfmt ...), `__REALTIME_TIMESTAMP` (or the cursor's `t=`) its time " +
		"unless the message has its own, `_HOSTNAME` the node, `SYSLOG_IDENTIFIER` (else `_SYSTEMD_UNIT`, else " +
		"`_COMM`) the source, `PRIORITY` the level when the message gives none; `_PID` and `_SYSTEMD_UNIT` in " +
		"Fields \"pid\" and \"unit\"",
})

// parseJournalJSON reads one line of journalctl -o json: an object of
// string values (MESSAGE may be an array of bytes when it is not UTF-8).
func parseJournalJSON(line string) (model.LogEvent, string, bool) {
	if !strings.Contains(line, `"MESSAGE"`) || !strings.Contains(line, `"__REALTIME_TIMESTAMP"`) {
		return model.LogEvent{}, "", false
	}
	var e map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &e) != nil {
		return model.LogEvent{}, "", false
	}
	str := func(k string) string {
		var s string
		if json.Unmarshal(e[k], &s) == nil {
			return s
		}
		var b []byte // a value that is not UTF-8: an array of bytes
		if json.Unmarshal(e[k], &b) == nil {
			return string(b)
		}
		return ""
	}
	usec, err := strconv.ParseInt(str("__REALTIME_TIMESTAMP"), 10, 64)
	if err != nil {
		return model.LogEvent{}, "", false
	}
	fields := map[string]string{}
	for _, k := range []string{"_HOSTNAME", "SYSLOG_IDENTIFIER", "_SYSTEMD_UNIT", "_COMM", "_PID", "PRIORITY", "MESSAGE"} {
		fields[k] = str(k)
	}
	return journalEvent(time.UnixMicro(usec).UTC(), fields), "journal", true
}

// journalEvent makes the event of a journal entry from its time and its
// fields.
func journalEvent(ts time.Time, f map[string]string) model.LogEvent {
	unit := f["_SYSTEMD_UNIT"]
	prog := f["SYSLOG_IDENTIFIER"]
	if prog == "" {
		prog = strings.TrimSuffix(unit, ".service")
	}
	if prog == "" {
		prog = f["_COMM"]
	}
	// The entry is the journal's whatever its message: the message is
	// whole, so a klog value said to continue (key=<) has no next line.
	ev, _, _ := syslogEvent(ts, f["_HOSTNAME"], prog, f["_PID"], f["MESSAGE"])
	delete(ev.Fields, multiKeyMarker)
	if unit != "" {
		if ev.Fields == nil {
			ev.Fields = map[string]string{}
		}
		ev.Fields["unit"] = unit
	}
	if p, err := strconv.Atoi(f["PRIORITY"]); err == nil && p >= 0 && p <= 7 && ev.Level == "" {
		ev.Level = syslogLevels[p]
	}
	return ev
}

// verboseHeaderRe matches the line journalctl -o verbose writes before an
// entry's fields: "Mon 2026-06-01 15:05:37.850615 UTC [s=...;i=6;b=...;m=...;t=6533286f3acf7;x=...]".
var verboseHeaderRe = lazyre.New(`^[A-Z][a-z]{2} (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (\S+) \[s=[0-9a-f]+;[^\]]*\]$`)

// cursorTimeRe finds the realtime (microseconds, hex) in a journal cursor.
var cursorTimeRe = lazyre.New(`;t=([0-9a-f]{1,16});`)

// verboseEntry is a journalctl -o verbose entry being read.
type verboseEntry struct {
	time   time.Time
	pos    model.Pos
	fields map[string]string
}

// parseVerboseHeader reads the header of a journalctl -o verbose entry: its
// time from the cursor (exact, in UTC), else from the local time before it
// when its zone is UTC.
func parseVerboseHeader(line string) (*verboseEntry, bool) {
	if len(line) < 40 || line[3] != ' ' {
		return nil, false
	}
	m := verboseHeaderRe.FindStringSubmatch(line)
	if m == nil {
		return nil, false
	}
	v := &verboseEntry{fields: map[string]string{}}
	if c := cursorTimeRe.FindStringSubmatch(line); c != nil {
		if usec, err := strconv.ParseInt(c[1], 16, 64); err == nil {
			v.time = time.UnixMicro(usec).UTC()
		}
	}
	if v.time.IsZero() && (m[2] == "UTC" || m[2] == "GMT") {
		if t, err := time.Parse("2006-01-02 15:04:05.999999999", m[1]); err == nil {
			v.time = t
		}
	}
	return v, true
}

// verboseField reads one "    KEY=value" line of a verbose entry.
func verboseField(line string) (string, string, bool) {
	if line == "" || (line[0] != ' ' && line[0] != '\t') {
		return "", "", false
	}
	k, v, ok := strings.Cut(strings.TrimLeft(line, " \t"), "=")
	if !ok || k == "" || strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
		return "", "", false
	}
	return k, v, true
}

// endVerbose adds the verbose entry being read.
func (lr *logReader) endVerbose() {
	v := lr.verbose
	if v == nil {
		return
	}
	lr.verbose = nil
	ev := journalEvent(v.time, v.fields)
	ev.Pos = v.pos
	lr.add(ev, "journal", nil)
}
