package logs

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// JournalJSONFormat reads journalctl -o json.
var JournalJSONFormat = logFormat("journal", format.Format{
	Name:    "journal-json",
	Command: "journalctl -o json, journalctl -u kubelet -o json",
	Doc: "one journal entry per line: `MESSAGE` read as what it is (klog, logfmt ...), `__REALTIME_TIMESTAMP` " +
		"(microseconds) its time unless the message has its own, `_HOSTNAME` the node, `SYSLOG_IDENTIFIER` (else " +
		"`_SYSTEMD_UNIT`, else `_COMM`) the source, `PRIORITY` the level when the message gives none; `_PID` " +
		"and `_SYSTEMD_UNIT` in Fields \"pid\" and \"unit\"",
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
	ts := time.UnixMicro(usec).UTC()
	unit := str("_SYSTEMD_UNIT")
	prog := str("SYSLOG_IDENTIFIER")
	if prog == "" {
		prog = strings.TrimSuffix(unit, ".service")
	}
	if prog == "" {
		prog = str("_COMM")
	}
	// The entry is the journal's whatever its message: the message is
	// whole, so a klog value said to continue (key=<) has no next line.
	ev, _, _ := syslogEvent(ts, str("_HOSTNAME"), prog, str("_PID"), str("MESSAGE"))
	delete(ev.Fields, multiKeyMarker)
	if unit != "" {
		if ev.Fields == nil {
			ev.Fields = map[string]string{}
		}
		ev.Fields["unit"] = unit
	}
	if p, err := strconv.Atoi(str("PRIORITY")); err == nil && p >= 0 && p <= 7 && ev.Level == "" {
		ev.Level = syslogLevels[p]
	}
	return ev, "journal", true
}
