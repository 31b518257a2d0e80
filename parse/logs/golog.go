package logs

import (
	"time"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
)

// GoLogFormat reads the log of a program that writes through Go's standard
// log package.
var GoLogFormat = logFormat("golog", format.Format{
	Name: "go-log",
	Command: "the log of a program that writes through Go's standard log package (Kubernetes Dashboard, " +
		"controllers and tools of every kind): kubectl logs POD, or the file it writes",
	Doc: "`2019/01/21 15:47:20 msg` lines, with microseconds (`2019/01/21 15:47:20.123456`) and the caller " +
		"(`main.go:42: msg`) when the program sets those flags: the time (read as UTC, as the log writes no " +
		"zone), the caller in Fields `caller`, no level (the package writes none); lines without the prefix " +
		"after one (the rest of a message with line breaks) continue its entry. The source is the component " +
		"the file or the command above it is named after",
})

// goLogRe matches the prefix of Go's log package: the date and time
// (log.LstdFlags), microseconds (log.Lmicroseconds) and the caller
// (log.Lshortfile or log.Llongfile).
var goLogRe = lazyre.New(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?) (?:([\w./-]+\.go:\d+): )?`)

// parseGoLog reads one line of Go's log package. A line whose time is no
// valid date is not one.
func parseGoLog(line string) (model.LogEvent, bool) {
	if len(line) < 20 || line[4] != '/' {
		return model.LogEvent{}, false
	}
	m, msg := submatches(goLogRe, line)
	if m == nil || msg == "" {
		return model.LogEvent{}, false
	}
	ts, err := time.Parse("2006/01/02 15:04:05.999999", m[1])
	if err != nil {
		return model.LogEvent{}, false
	}
	ev := model.LogEvent{Time: ts, Message: msg}
	if m[2] != "" {
		ev.Fields = map[string]string{"caller": m[2]}
	}
	return ev, true
}
