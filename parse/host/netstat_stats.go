package host

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// NetstatStatsFormat reads the kernel's counters as netstat -s words them.
var NetstatStatsFormat = &format.Format{
	Name:    "netstat-s",
	Kind:    model.KindCounters,
	Command: "netstat -s, and its lines cut out with grep (netstat -s | grep -i listen)",
	Doc: "the counters netstat words (\"18 times the listen queue of a socket overflowed\") are read under " +
		"nstat's names (TcpExtListenOverflows) when netmortem knows the wording; those it prints as \"Name: " +
		"value\" under their section's name (TcpExt: TCPTimeouts: 3 is TcpExtTCPTimeouts); other worded " +
		"counters and the ICMP histograms are skipped; prompts name the node",
	Sniff: sniffNetstatStats,
	Parse: format.Records(readNetstatStats, func(s *model.Snapshot, out []model.Counter) { s.Counters = append(s.Counters, out...) }, "counters"),
}

// NetstatStats parses netstat -s output. A line that is not netstat's is
// reported with its position and the rest is read. name is used only in
// positions.
func NetstatStats(r io.Reader, name string) ([]model.Counter, error) {
	return format.ReadAll(r, name, readNetstatStats)
}

// netstatWording is a counter netstat words: its section and its name in
// nstat's spelling.
type netstatWording struct{ section, name string }

// netstatWordings are the worded counters read, by netstat's wording
// (net-tools' statistics.c, with the spellings its versions used).
var netstatWordings = map[string]netstatWording{
	"active connection openings":                                       {"Tcp", "TcpActiveOpens"},
	"active connections openings":                                      {"Tcp", "TcpActiveOpens"},
	"passive connection openings":                                      {"Tcp", "TcpPassiveOpens"},
	"failed connection attempts":                                       {"Tcp", "TcpAttemptFails"},
	"connection resets received":                                       {"Tcp", "TcpEstabResets"},
	"connections established":                                          {"Tcp", "TcpCurrEstab"},
	"segments received":                                                {"Tcp", "TcpInSegs"},
	"segments sent out":                                                {"Tcp", "TcpOutSegs"},
	"segments send out":                                                {"Tcp", "TcpOutSegs"},
	"segments retransmitted":                                           {"Tcp", "TcpRetransSegs"},
	"segments retransmited":                                            {"Tcp", "TcpRetransSegs"},
	"bad segments received":                                            {"Tcp", "TcpInErrs"},
	"bad segments received.":                                           {"Tcp", "TcpInErrs"},
	"resets sent":                                                      {"Tcp", "TcpOutRsts"},
	"times the listen queue of a socket overflowed":                    {"TcpExt", "TcpExtListenOverflows"},
	"SYNs to LISTEN sockets dropped":                                   {"TcpExt", "TcpExtListenDrops"},
	"SYNs to LISTEN sockets ignored":                                   {"TcpExt", "TcpExtListenDrops"},
	"SYN cookies sent":                                                 {"TcpExt", "TcpExtSyncookiesSent"},
	"SYN cookies received":                                             {"TcpExt", "TcpExtSyncookiesRecv"},
	"invalid SYN cookies received":                                     {"TcpExt", "TcpExtSyncookiesFailed"},
	"resets received for embryonic SYN_RECV sockets":                   {"TcpExt", "TcpExtEmbryonicRsts"},
	"TCP sockets finished time wait in fast timer":                     {"TcpExt", "TcpExtTW"},
	"packets rejects in established connections because of timestamp":  {"TcpExt", "TcpExtPAWSEstab"},
	"packets rejected in established connections because of timestamp": {"TcpExt", "TcpExtPAWSEstab"},
	"delayed acks sent":                                                {"TcpExt", "TcpExtDelayedACKs"},
	"connections reset due to unexpected data":                         {"TcpExt", "TcpExtTCPAbortOnData"},
	"connections reset due to early user close":                        {"TcpExt", "TcpExtTCPAbortOnClose"},
	"connections aborted due to timeout":                               {"TcpExt", "TcpExtTCPAbortOnTimeout"},
	"packets to unknown port received":                                 {"Udp", "UdpNoPorts"},
	"packet receive errors":                                            {"Udp", "UdpInErrors"},
	"receive buffer errors":                                            {"Udp", "UdpRcvbufErrors"},
}

var (
	// netstatSectionRe matches a section header: "TcpExt:", "IpExt:".
	netstatSectionRe = lazyre.New(`^([A-Z][A-Za-z0-9]*):$`)
	// netstatWordedRe matches a worded counter: "18 SYNs to LISTEN sockets dropped".
	netstatWordedRe = lazyre.New(`^(\d+) ([A-Za-z].*)$`)
	// netstatNamedRe matches a counter netstat prints by its name: "TCPTimeouts: 3".
	netstatNamedRe = lazyre.New(`^([A-Za-z][A-Za-z0-9_]*): (\d+)$`)
	// netstatSkippedRe matches what netstat prints that is not a counter
	// netmortem reads: histogram headers and entries ("echo requests: 3"),
	// and the "Quick ack mode was activated 9 times" kind of wording.
	netstatSkippedRe = lazyre.New(`^(?:[A-Za-z][A-Za-z0-9 ]* histogram:|[a-z][A-Za-z0-9 ]*: \d+|[A-Z][A-Za-z ]+ \d+ times?)$`)
)

func readNetstatStats(r io.Reader, src *format.File, errs *model.ErrorList) []model.Counter {
	var out []model.Counter
	section := ""
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { section = "" }}, func(l *text.Line) {
		t := l.Trimmed
		if m := netstatSectionRe.FindStringSubmatch(t); m != nil {
			section = m[1]
			return
		}
		if m := netstatWordedRe.FindStringSubmatch(t); m != nil {
			w, ok := netstatWordings[m[2]]
			if !ok || (section != "" && section != w.section) {
				return // a counter netmortem does not read, or another section's wording
			}
			if v, err := strconv.ParseUint(m[1], 10, 64); l.Syntax(err) {
				out = append(out, model.Counter{Node: l.Node, Name: w.name, Value: v, Pos: l.Pos()})
			}
			return
		}
		if m := netstatNamedRe.FindStringSubmatch(t); m != nil {
			if section == "" {
				return // cut out of its section by grep: its full name is not known
			}
			if v, err := strconv.ParseUint(m[2], 10, 64); l.Syntax(err) {
				out = append(out, model.Counter{Node: l.Node, Name: section + m[1], Value: v, Pos: l.Pos()})
			}
			return
		}
		if netstatSkippedRe.MatchString(t) {
			return
		}
		l.Syntax(fmt.Errorf("expected a netstat -s line (\"TcpExt:\", \"18 times the listen queue of a socket overflowed\", "+
			"\"TCPTimeouts: 3\"), got %q", t))
	})
	return out
}

func sniffNetstatStats(_ string, head []byte) int {
	known := 0
	matched, total, _ := text.SniffLines(head, 200, netstatStatsCmd, func(line string) text.Match {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			return text.Skip
		case netstatSectionRe.MatchString(t):
			return text.Hit
		}
		if m := netstatWordedRe.FindStringSubmatch(t); m != nil {
			if _, ok := netstatWordings[m[2]]; ok {
				known++
				return text.Hit
			}
			return text.Skip
		}
		if netstatNamedRe.MatchString(t) || netstatSkippedRe.MatchString(t) {
			return text.Skip
		}
		return text.Miss
	})
	if known == 0 {
		return 0
	}
	return min(text.RatioScore(matched, total, 95), 95)
}

// netstatStatsCmd reports whether cmd runs netstat -s (-s, -st, -su ...),
// alone or piped into grep.
func netstatStatsCmd(cmd string) bool {
	if text.Program(cmd) != "netstat" {
		return false
	}
	first, _, _ := strings.Cut(cmd, "|")
	for _, f := range strings.Fields(first) {
		if len(f) > 1 && f[0] == '-' && f[1] != '-' && strings.Contains(f, "s") {
			return true
		}
	}
	return false
}
