package host

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ABFormat reads ApacheBench's report.
var ABFormat = &format.Format{
	Name:    "ab",
	Kind:    model.KindProbes,
	Command: "ab -n N -c C http://HOST:PORT/ (ApacheBench)",
	Doc: "one record per report: the server (`Server Hostname`, `Server Port`), `Concurrency Level`, `Complete " +
		"requests`, `Failed requests`, and the `Connect:` row of `Connection Times (ms)` (min, mean, median, max); " +
		"the other lines of the report are skipped, a report cut after its Connect row is read",
	Sniff: sniffAB,
	Parse: format.Records(readAB, func(s *model.Snapshot, out []model.ConnectTimes) {
		s.ConnectTimes = append(s.ConnectTimes, out...)
	}, "reports"),
}

// AB parses ApacheBench reports. A Connect row that is not five numbers is
// reported with its position. name is used only in positions.
func AB(r io.Reader, name string) ([]model.ConnectTimes, error) {
	return format.ReadAll(r, name, readAB)
}

// abField reads a "Name:   value" line of ab's report.
func abField(line string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(line, ":")
	return strings.TrimSpace(key), strings.TrimSpace(value), ok
}

func readAB(r io.Reader, src *format.File, errs *model.ErrorList) []model.ConnectTimes {
	var out []model.ConnectTimes
	var cur model.ConnectTimes
	port := uint16(0)
	text.ReadLines(r, src, errs, text.Hooks{}, func(l *text.Line) {
		key, value, ok := abField(l.Trimmed)
		if !ok {
			return // the table's header, ab's banner and progress
		}
		first := strings.Fields(value)
		switch key {
		case "Server Hostname":
			cur = model.ConnectTimes{Tool: "ab", Host: value}
			port = 0
		case "Server Port":
			if p, err := strconv.ParseUint(value, 10, 16); err == nil {
				port = uint16(p)
			}
		case "Concurrency Level", "Complete requests", "Failed requests":
			if len(first) == 0 {
				return
			}
			n, err := strconv.Atoi(first[0])
			if err != nil {
				return
			}
			switch key {
			case "Concurrency Level":
				cur.Concurrency = n
			case "Complete requests":
				cur.Requests = n
			default:
				cur.Failed = n
			}
		case "Connect":
			var n [5]float64
			if len(first) != 5 {
				l.Syntax(fmt.Errorf("expected the Connect row's min, mean, sd, median and max, got %q", value))
				return
			}
			for i, v := range first {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil || x < 0 || x > 1e9 {
					l.Syntax(fmt.Errorf("connect time %q is not a number of milliseconds", v))
					return
				}
				n[i] = x
			}
			c := cur
			c.Tool, c.Node, c.Pos = "ab", l.Node, l.Pos()
			c.Min, c.Mean, c.Median, c.Max = int(n[0]), int(n[1]), int(n[3]), int(n[4])
			if a, err := netip.ParseAddr(c.Host); err == nil && port != 0 {
				c.Target = netip.AddrPortFrom(a, port)
			}
			out = append(out, c)
		}
	})
	return out
}

func sniffAB(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	s := string(head)
	if strings.Contains(s, "This is ApacheBench") {
		return 100
	}
	if strings.Contains(s, "Connection Times (ms)") && strings.Contains(s, "Server Hostname:") {
		return 95
	}
	return 0
}
