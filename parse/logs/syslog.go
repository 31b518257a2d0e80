package logs

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

var (
	// syslogRestRe matches a syslog prefix after its month: "15
	// 19:09:04[.123456] host program[pid]: ".
	syslogRestRe = lazyre.New(`^(\d{1,2}) (\d\d):(\d\d):(\d\d)(\.\d+)? (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	syslogISORe  = lazyre.New(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	// syslogUnixRe matches journalctl -o short-unix: "1767177601.000000 host program[pid]: ".
	syslogUnixRe = lazyre.New(`^(\d{9,11})\.(\d{6}) (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	// syslogFullRe matches journalctl -o short-full: "Mon 2026-06-01
	// 15:05:37[.850615] UTC host program[pid]: ".
	syslogFullRe = lazyre.New(`^[A-Z][a-z]{2} (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) ([A-Z]{1,5}|[+-]\d{4}) (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?`)
	// journalMonotonicRe matches what journalctl -o short-monotonic puts
	// after the uptime: "host program[pid]: ".
	journalMonotonicRe = lazyre.New(`^(\S+) ([^\s\[:]+)\[(\d+)\]: ?`)
	// priRe matches the <PRI> a syslog receiver may keep (RFC 3164).
	priRe = lazyre.New(`^<(\d{1,3})>`)
)

// monthNames are the month abbreviations journalctl and syslog daemons
// print (strftime's %b) in the locales people paste from, lower case and
// without a final dot: English, German, French, Spanish, Italian,
// Portuguese, Dutch, Swedish, Polish, Turkish, Russian (the nominative and
// genitive forms, and the longer ones of newer glibc); "12月" (Chinese,
// Japanese) and "12월" (Korean) are read by number.
var monthNames = map[string]int{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	"mär": 3, "mai": 5, "okt": 10, "dez": 12, // de
	"janv": 1, "févr": 2, "mars": 3, "avr": 4, "avril": 4, "juin": 6, "juil": 7, "août": 8, "sept": 9, "déc": 12, // fr
	"ene": 1, "abr": 4, "ago": 8, "dic": 12, // es
	"gen": 1, "mag": 5, "giu": 6, "lug": 7, "set": 9, "ott": 10, // it
	"fev": 2, "out": 10, // pt
	"mrt": 3, "mei": 5, // nl
	"янв": 1, "фев": 2, "мар": 3, "апр": 4, "май": 5, "мая": 5, "июн": 6, "июл": 7, "авг": 8, "сен": 9, "окт": 10, "ноя": 11, "дек": 12,
	"февр": 2, "сент": 9, "нояб": 11, // ru, the longer forms of newer glibc
	"sty": 1, "lut": 2, "kwi": 4, "maj": 5, "cze": 6, "lip": 7, "sie": 8, "wrz": 9, "paź": 10, "lis": 11, "gru": 12, // pl (maj: sv too)
	"oca": 1, "şub": 2, "nis": 4, "haz": 6, "tem": 7, "ağu": 8, "eyl": 9, "eki": 10, "kas": 11, "ara": 12, // tr
}

// monthDigits are the months as yearless takes them.
var monthDigits = [...]string{"", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"}

func init() {
	// The capitalized forms too ("Sep", "Dez", "Déc", "Дек"), so that the
	// common case needs no lowering.
	for k, v := range monthNames {
		r, size := utf8.DecodeRuneInString(k)
		monthNames[string(unicode.ToUpper(r))+k[size:]] = v
	}
}

// monthNumber reads a month as %b prints it in any of the locales of
// monthNames; 0 when tok is none.
func monthNumber(tok string) int {
	for _, suffix := range []string{"月", "월"} {
		if n, ok := strings.CutSuffix(tok, suffix); ok {
			m, err := strconv.Atoi(n)
			if err != nil || m < 1 || m > 12 {
				return 0
			}
			return m
		}
	}
	if len(tok) > 10 {
		return 0
	}
	tok = strings.TrimSuffix(tok, ".")
	if m, ok := monthNames[tok]; ok {
		return m
	}
	return monthNames[strings.ToLower(tok)]
}

// syslogMonth reads the month that starts a syslog or journalctl -o short
// line, in any locale ("Sep", "Dez", "déc.", "дек", "12月", " 1月"), and
// returns it with the rest of the line after the spaces that follow.
func syslogMonth(line string) (int, string, bool) {
	if line[0] == ' ' {
		line = line[1:] // ja_JP pads the month number: " 1月"
	}
	i := strings.IndexByte(line, ' ')
	if i < 1 {
		return 0, "", false
	}
	c := line[0]
	if c >= '0' && c <= '9' && !strings.HasSuffix(line[:i], "月") && !strings.HasSuffix(line[:i], "월") {
		return 0, "", false
	}
	m := monthNumber(line[:i])
	if m == 0 {
		return 0, "", false
	}
	return m, strings.TrimLeft(line[i:], " "), true
}

// parseSyslog reads a line with a syslog or journald prefix; inner is
// "klog" when the message is a klog line, else "syslog". The prefix may be
// journalctl's short (month names in any common locale), short-precise,
// short-iso, short-iso-precise, short-full or short-unix form, or RFC 3164's with its
// <PRI> (whose severity is the level when the message gives none); a
// Markdown quote marker ("> ") before it is dropped.
func parseSyslog(line string) (model.LogEvent, string, bool) {
	line = strings.TrimPrefix(line, "> ")
	pri := -1
	if len(line) > 3 && line[0] == '<' {
		if m := priRe.FindStringSubmatch(line); m != nil {
			pri, _ = strconv.Atoi(m[1])
			line = line[len(m[0]):]
		}
	}
	ev, inner, ok := parseSyslogPrefix(line)
	if !ok {
		return model.LogEvent{}, "", false
	}
	if pri >= 0 && pri < 192 {
		if ev.Fields == nil {
			ev.Fields = map[string]string{}
		}
		ev.Fields["priority"] = strconv.Itoa(pri)
		if ev.Level == "" {
			ev.Level = syslogLevels[pri&7]
		}
	}
	return ev, inner, true
}

func parseSyslogPrefix(line string) (model.LogEvent, string, bool) {
	var ts time.Time
	var host, prog, pid, msg string
	if len(line) < 16 {
		return model.LogEvent{}, "", false
	}
	switch c := line[0]; {
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
	case c >= '1' && c <= '9' && line[10] == '.':
		m, rest := submatches(syslogUnixRe, line)
		if m == nil {
			return model.LogEvent{}, "", false
		}
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		usec, _ := strconv.Atoi(m[2])
		ts = time.Unix(sec, int64(usec)*1000).UTC()
		host, prog, pid, msg = m[3], m[4], m[5], rest
	case c >= 'A' && c <= 'Z' && line[3] == ' ' && line[8] == '-' && line[4] >= '0' && line[4] <= '9':
		// journalctl -o short-full: "Mon 2026-06-01 15:05:37 UTC host prog[pid]: ".
		m, rest := submatches(syslogFullRe, line)
		if m == nil {
			return model.LogEvent{}, "", false
		}
		ts = fullTime(m[1], m[2])
		host, prog, pid, msg = m[3], m[4], m[5], rest
	default:
		mon, rest, ok := syslogMonth(line)
		if !ok {
			return model.LogEvent{}, "", false
		}
		m, rest := submatches(syslogRestRe, rest)
		if m == nil {
			return model.LogEvent{}, "", false
		}
		day := m[1]
		if len(day) == 1 {
			day = "0" + day
		}
		frac := strings.TrimPrefix(m[5], ".")
		if ts, ok = yearless(monthDigits[mon], day, m[2], m[3], m[4], frac); !ok {
			return model.LogEvent{}, "", false
		}
		host, prog, pid, msg = m[6], m[7], m[8], rest
	}
	return syslogEvent(ts, host, prog, pid, msg)
}

// fullTime reads the time of journalctl -o short-full in zone: UTC, GMT
// or a numeric offset. Other zone names ("CET") are ambiguous: the time is
// left out (zero) rather than guessed.
func fullTime(clock, zone string) time.Time {
	switch {
	case zone == "UTC" || zone == "GMT":
		if t, err := time.Parse("2006-01-02 15:04:05.999999999", clock); err == nil {
			return t
		}
	case zone[0] == '+' || zone[0] == '-':
		if t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700", clock+" "+zone); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// syslogEvent reads the message of a syslog line: klog and logfmt
// messages as what they are, with the host as node and the program as
// source.
func syslogEvent(ts time.Time, host, prog, pid, msg string) (model.LogEvent, string, bool) {
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

// journalMonotonic reads a dmesg-shaped line that is journalctl -o
// short-monotonic's ("[   91.234567] host program[pid]: msg"): ev is the
// dmesg reading of it.
func journalMonotonic(ev model.LogEvent) (model.LogEvent, bool) {
	m, rest := submatches(journalMonotonicRe, ev.Message)
	if m == nil {
		return model.LogEvent{}, false
	}
	out, _, _ := syslogEvent(time.Time{}, m[1], m[2], m[3], rest)
	if up := ev.Fields["uptime"]; up != "" {
		if out.Fields == nil {
			out.Fields = map[string]string{}
		}
		out.Fields["uptime"] = up
	}
	return out, true
}

func parseISOTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not an ISO 8601 time")
}
