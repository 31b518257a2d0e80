package netfilter

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ConntrackFormat reads connection tracking tables: conntrack -L and
// /proc/net/nf_conntrack.
var ConntrackFormat = &format.Format{
	Name: "conntrack",
	Kind: model.KindConntrack,
	Command: "conntrack -L, conntrack -L -p tcp (and other filters), conntrack -L -o extended, cat " +
		"/proc/net/nf_conntrack",
	Doc: "protocol, timeout, TCP state, the original and reply tuples (a reply source other than " +
		"the original destination is a DNAT, a reply destination other than the original source " +
		"an SNAT), `[UNREPLIED]`, `[ASSURED]` and other bracketed flags, mark (decimal or hex), " +
		"zone, use, packet and byte counters with accounting on, ICMP type/code/id; the family " +
		"comes from `ipv4 2`/`ipv6 10` or the addresses; secctx, labels and timestamps are not " +
		"kept; conntrack's \"N flow entries have been shown\" summary (first or last) is checked " +
		"against the lines read, a warning when they differ (not behind a pipe such as `| grep`), " +
		"and passed over when a paste ran it on after an entry; a placeholder a paste put for the original " +
		"destination's address (`dst=<clusterIp>`) leaves it unknown but for its port; prompts and banners " +
		"name the node",
	Sniff: sniffConntrack,
	Parse: format.Records(readConntrack, func(s *model.Snapshot, out []model.ConntrackEntry) { s.Conntrack = append(s.Conntrack, out...) }, "conntrack"),
}

// Conntrack parses conntrack table listings: "tcp 6 117 TIME_WAIT src=A
// dst=B sport=P dport=Q [packets=N bytes=M] src=... dst=... sport=...
// dport=... [ASSURED] mark=0 zone=0 use=1", where the first tuple is the
// original direction and the second the reply (a DNAT shows as a reply
// source other than the original destination). conntrack -o extended and
// /proc/net/nf_conntrack put the family ("ipv4 2") first. [UNREPLIED] and
// [ASSURED] are read as such, other bracketed flags (OFFLOAD, HW_OFFLOAD)
// kept in Flags, the ICMP type, code and id of the original tuple in ICMP;
// secctx, labels and timestamps are not kept. conntrack's own summary
// ("conntrack v1.4.7 (conntrack-tools): 5 flow entries have been shown.") is
// checked against the entry lines of its command's output. Shell prompts
// name the node of the lines below them, and so do node markers. A line that
// is none of these is reported with its position and the rest is read. name
// is used only in positions.
func Conntrack(r io.Reader, name string) ([]model.ConntrackEntry, error) {
	return format.ReadAll(r, name, readConntrack)
}

func readConntrack(r io.Reader, src *format.File, errs *model.ErrorList) []model.ConntrackEntry {
	var out []model.ConntrackEntry
	sum := newCtSummary(src.Command)
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(_ *text.Line, cmd string) { sum.prompt(errs, cmd) }}, func(l *text.Line) {
		if sum.summary(l) || strings.HasPrefix(l.Trimmed, "```") {
			return // the summary conntrack writes to stderr, a Markdown fence of a paste
		}
		if strings.HasPrefix(l.Trimmed, "conntrack v") {
			return // conntrack's other messages
		}
		f := l.Fields()
		c, err := conntrackLine(f)
		if err == nil || entryStart(f[0]) {
			sum.lines++ // an entry, read or not; not a line of something else
		}
		if l.Syntax(err) {
			c.Node, c.Pos = l.Node, l.Pos()
			out = append(out, c)
		}
	})
	sum.check(errs)
	return out
}

// entryStart reports whether a line starting with field w is meant as an
// entry: a protocol's name, or the layer 3 name of /proc/net/nf_conntrack.
func entryStart(w string) bool {
	_, ok := conntrackProtos[w]
	return ok || w == "ipv4" || w == "ipv6"
}

// conntrackProtos are the protocol names conntrack prints, with their
// numbers.
var conntrackProtos = map[string]string{
	"tcp": "6", "udp": "17", "icmp": "1", "icmpv6": "58", "sctp": "132", "dccp": "33",
	"udplite": "136", "gre": "47", "unknown": "",
}

var (
	// ctPlaceholderRe is a placeholder a paste put for an address:
	// "<clusterIp>", "<service-ip>".
	ctPlaceholderRe = lazyre.New(`^<[A-Za-z][\w.-]*>$`)
	// ctRunOnSummaryRe is conntrack's summary run on after an entry in a
	// paste that lost its line break, its name misspelt or not.
	ctRunOnSummaryRe = lazyre.New(`^\w+ v[0-9.]+ \(conntrack-tools\): \d+ flow entries have been shown\.?$`)
)

// conntrackLine reads one entry. A placeholder for the original
// destination's address (dst=<clusterIp>) leaves it unknown (HiddenDst),
// and conntrack's summary run on after the entry is passed over.
func conntrackLine(f []string) (model.ConntrackEntry, error) {
	var c model.ConntrackEntry
	const want = "expected a conntrack entry (\"tcp 6 117 ESTABLISHED src=10.0.0.1 dst=10.0.0.2 sport=40000 dport=80 src=... [ASSURED] mark=0 use=1\")"
	i := 0
	if len(f) >= 2 && (f[0] == "ipv4" || f[0] == "ipv6") {
		c.Family = f[0]
		i = 2
	}
	if i+1 >= len(f) {
		return c, fmt.Errorf("%s", want)
	}
	num, known := conntrackProtos[f[i]]
	if !known || (num != "" && f[i+1] != num) {
		return c, fmt.Errorf("%s", want)
	}
	c.Proto = f[i]
	i += 2
	if i < len(f) && !strings.Contains(f[i], "=") && !strings.HasPrefix(f[i], "[") {
		n, err := strconv.Atoi(f[i])
		if err != nil {
			return c, fmt.Errorf("%s: timeout %q is not a number", want, f[i])
		}
		c.Timeout = n
		i++
	}
	if i < len(f) && !strings.Contains(f[i], "=") && !strings.HasPrefix(f[i], "[") {
		c.State = f[i]
		i++
	}
	tuples := 0 // tuples started: a src= starts one
	var addrs [2][2]netip.Addr
	var ports [2][2]uint16
	for ; i < len(f); i++ {
		w := f[i]
		if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") {
			switch flag := w[1 : len(w)-1]; flag {
			case "UNREPLIED":
				c.Unreplied = true
			case "ASSURED":
				c.Assured = true
			default:
				c.Flags = append(c.Flags, flag)
			}
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok && tuples == 2 && ctRunOnSummaryRe.MatchString(strings.Join(f[i:], " ")) {
			break // conntrack's summary pasted on the entry's line
		}
		if !ok {
			return c, fmt.Errorf("unexpected %q in a conntrack entry", w)
		}
		if k == "src" {
			if tuples == 2 {
				return c, fmt.Errorf("a third src= in a conntrack entry")
			}
			tuples++
		}
		tu := tuples - 1
		if tu < 0 {
			switch k {
			case "dst", "sport", "dport", "packets", "bytes":
				return c, fmt.Errorf("%s before src=", k)
			}
		}
		var err error
		switch k {
		case "src", "dst":
			a, perr := netip.ParseAddr(v)
			if perr != nil && k == "dst" && tu == 0 && ctPlaceholderRe.MatchString(v) {
				c.HiddenDst = v // an address the paste replaced: unknown
				continue
			}
			if perr != nil {
				return c, fmt.Errorf("%s=%q is not an address", k, v)
			}
			if k == "src" {
				addrs[tu][0] = a
			} else {
				addrs[tu][1] = a
			}
		case "sport", "dport":
			p, perr := strconv.ParseUint(v, 10, 16)
			if perr != nil {
				return c, fmt.Errorf("%s=%q is not a port", k, v)
			}
			if k == "sport" {
				ports[tu][0] = uint16(p)
			} else {
				ports[tu][1] = uint16(p)
			}
		case "packets", "bytes":
			n, perr := strconv.ParseUint(v, 10, 64)
			if perr != nil {
				return c, fmt.Errorf("%s=%q is not a number", k, v)
			}
			switch {
			case tu == 0 && k == "packets":
				c.OrigPackets = n
			case tu == 0:
				c.OrigBytes = n
			case k == "packets":
				c.ReplyPackets = n
			default:
				c.ReplyBytes = n
			}
		case "type", "code", "id":
			if tu != 0 {
				break // the reply's ICMP part answers the original's
			}
			var n uint64
			n, err = strconv.ParseUint(v, 10, 16)
			if c.ICMP == nil {
				c.ICMP = &model.ConntrackICMP{}
			}
			switch k {
			case "type":
				c.ICMP.Type = int(n)
			case "code":
				c.ICMP.Code = int(n)
			default:
				c.ICMP.ID = uint16(n)
			}
		case "mark":
			var n uint64
			n, err = strconv.ParseUint(v, 0, 32)
			c.Mark = uint32(n)
		case "zone":
			c.Zone, err = strconv.Atoi(v)
		case "use":
			c.Use, err = strconv.Atoi(v)
		}
		// secctx, labels, delta-time, timestamps, portid, progname: not kept
		if err != nil {
			return c, fmt.Errorf("%s=%q is not a number", k, v)
		}
	}
	if tuples < 2 || !addrs[0][0].IsValid() || !addrs[0][1].IsValid() && c.HiddenDst == "" || !addrs[1][0].IsValid() || !addrs[1][1].IsValid() {
		return c, fmt.Errorf("%s: the original and reply tuples need src= and dst= each", want)
	}
	c.Orig = model.Tuple{Src: netip.AddrPortFrom(addrs[0][0], ports[0][0]), Dst: netip.AddrPortFrom(addrs[0][1], ports[0][1])}
	c.Reply = model.Tuple{Src: netip.AddrPortFrom(addrs[1][0], ports[1][0]), Dst: netip.AddrPortFrom(addrs[1][1], ports[1][1])}
	if c.Family == "" {
		c.Family = "ipv4"
		if addrs[0][0].Is6() {
			c.Family = "ipv6"
		}
	}
	return c, nil
}

func sniffConntrack(_ string, head []byte) int {
	matched, total, _ := text.SniffLines(head, 200, conntrackLists, func(line string) text.Match {
		if strings.HasPrefix(line, "conntrack v") {
			return text.Skip
		}
		if _, err := conntrackLine(strings.Fields(line)); err == nil {
			return text.Hit
		}
		return text.Miss
	})
	return min(text.RatioScore(matched, total, 95), 95)
}

// conntrackLists reports whether cmd runs conntrack to list entries: its
// counters (-S), count (-C) and events (-E) are other formats.
func conntrackLists(cmd string) bool {
	if text.Program(cmd) != "conntrack" {
		return false
	}
	for _, w := range strings.Fields(cmd) {
		switch w {
		case "-S", "--stats", "-C", "--count", "-E", "--event":
			return false
		}
	}
	return true
}
