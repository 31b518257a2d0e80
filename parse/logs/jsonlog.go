package logs

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// JSONLogFormat reads JSON lines loggers (zap, logrus JSON).
var JSONLogFormat = logFormat("json", format.Format{
	Name:    "json-log",
	Command: "kubectl logs of JSON-lines loggers: etcd 3.4+ (zap), MetalLB, any zap or logrus JSON",
	Doc: "`level`/`severity`, `ts`/`time` (RFC 3339 or epoch seconds) and `msg`/`message`; every " +
		"other key is a Field (objects and arrays as compact JSON); a line without `msg` keeps an" +
		" empty message. A record pasted pretty-printed (`{` alone on its first line, one key a line) is one " +
		"record at its `{`, its lines joined with spaces, which also mends a message the paste broke over lines",
})

// etcdPackages are the packages etcd's zap logger names in "caller".
var etcdPackages = []string{"etcdserver/", "embed/", "etcdmain/", "rafthttp/", "raft/", "v3rpc/", "mvcc/",
	"wal/", "membership/", "etcdhttp/", "v3compactor/", "snap/", "backend/", "auth/", "etcdutil/", "osutil/", "fileutil/"}

// jsonLogKeys reads a JSON object's keys and values in order; ok is false
// when line is not one JSON object.
func jsonLogKeys(line string) (keys []string, vals []json.RawMessage, ok bool) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, false // something after the object
	}
	return keys, vals, true
}

func parseJSONLog(line string) (model.LogEvent, bool) {
	line = strings.TrimRight(line, " \t")
	if !strings.HasSuffix(line, "}") {
		return model.LogEvent{}, false
	}
	keys, vals, ok := jsonLogKeys(line)
	if !ok {
		return model.LogEvent{}, false
	}
	var ev model.LogEvent
	logLike := false
	for i, k := range keys {
		raw := vals[i]
		var s string
		isStr := json.Unmarshal(raw, &s) == nil
		if !isStr {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				s = b.String()
			} else {
				s = string(raw)
			}
		}
		switch k {
		case "level", "severity", "lvl":
			if ev.Level == "" {
				ev.Level, logLike = s, true
				continue
			}
		case "msg", "message":
			if ev.Message == "" && isStr {
				ev.Message, logLike = s, true
				continue
			}
		case "ts", "time", "timestamp", "@timestamp":
			if ev.Time.IsZero() {
				if t, ok := jsonTime(raw, s, isStr); ok {
					ev.Time = t
					continue
				}
			}
		}
		if ev.Fields == nil {
			ev.Fields = map[string]string{}
		}
		ev.Fields[k] = s
	}
	if !logLike {
		return model.LogEvent{}, false
	}
	if c := ev.Fields["caller"]; c != "" {
		for _, p := range etcdPackages {
			if strings.HasPrefix(c, p) {
				ev.Source = "etcd"
			}
		}
	}
	return ev, true
}

// jsonTime reads an RFC 3339 / ISO 8601 string or epoch seconds.
func jsonTime(raw json.RawMessage, s string, isStr bool) (time.Time, bool) {
	if isStr {
		t, err := parseISOTime(s)
		return t, err == nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}
