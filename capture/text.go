package capture

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/model"
)

// Text formats of pasted packet listings.
const (
	FormatTcpdumpText = "tcpdump-text"
	FormatTsharkText  = "tshark-text"
)

// SniffText reports whether head looks like pasted packet text and which:
// FormatTcpdumpText (tcpdump -nn output, with or without -v, -e, -tttt, -A)
// or FormatTsharkText (tshark / Wireshark packet list), with a score from 0
// to 100 as parse.Format.Sniff wants it.
func SniffText(head []byte) (string, int) {
	var tcpdump, tshark, total int
	sc := bufio.NewScanner(strings.NewReader(string(head)))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 0; sc.Scan() && n < 300; n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "tcpdump:") || strings.HasPrefix(line, "listening on") || isPromptish(line) {
			continue
		}
		total++
		switch {
		case tsharkHeaderRe.MatchString(line):
			tshark += 5
		case tsharkLineRe.MatchString(line):
			tshark++
		case tcpdumpLineRe.MatchString(line), tcpdumpAddrRe.MatchString(line) && strings.Contains(line, ": "),
			tcpdumpNoTimeSniffRe.MatchString(line):
			tcpdump++ // a packet line, or the addresses line of tcpdump -v
		}
	}
	if total == 0 {
		return "", 0
	}
	if tshark > tcpdump && tshark > 0 {
		return FormatTsharkText, scoreOf(tshark, total)
	}
	if tcpdump > 0 {
		return FormatTcpdumpText, scoreOf(tcpdump, total)
	}
	return "", 0
}

// scoreOf turns how many lines matched into a sniff score. Payload dumps
// (-A, -X) and -v continuation lines do not match, so a third is enough.
func scoreOf(matched, total int) int {
	switch {
	case matched*3 >= total:
		return 85
	case matched >= 3:
		return 50
	}
	return 0
}

func isPromptish(line string) bool {
	return strings.HasPrefix(line, "#") || strings.HasPrefix(line, "$ ") || promptHostRe.MatchString(line)
}

var (
	// A shell prompt with a host: "root@node3:~# tcpdump ...".
	promptHostRe = regexp.MustCompile(`^[A-Za-z0-9._-]+@([A-Za-z0-9._-]+):[^#$]*[#$]\s*(.*)$`)

	// tcpdump's timestamp (-t default, -tttt, -tt), an optional -i any
	// interface and direction, then the rest.
	// -i any adds the interface (SLL2; "?" when read from a file) and the
	// direction, and with -e the interface index.
	tcpdumpLineRe = regexp.MustCompile(`^(?:(\d{4}-\d{2}-\d{2}) )?(\d{2}:\d{2}:\d{2}\.\d+|\d{9,10}\.\d+)\s+(?:(?:(\S+)\s+)?(In|Out|M|B|P)\s+(?:ifindex \d+ )?)?(IP6?|ARP|[0-9a-f]{2}(?::[0-9a-f]{2}){5}) ?(.*)$`)
	// tcpdump -t prints no timestamp: "IP 10.0.0.1.1 > 10.0.0.2.80: ...".
	// Sniffing takes the numeric form only.
	tcpdumpNoTimeRe      = regexp.MustCompile(`^(?:(\S+)\s+(In|Out|M|B|P)\s+(?:ifindex \d+ )?)?(IP6?|ARP|[0-9a-f]{2}(?::[0-9a-f]{2}){5})[ ,]\s*(.*)$`)
	tcpdumpNoTimeSniffRe = regexp.MustCompile(`^IP6? [0-9A-Fa-f.:]+ > [0-9A-Fa-f.:]+: `)
	// -e: "aa:bb:.. > cc:dd:.., ethertype IPv4 (0x0800), length 74: REST",
	// or on -i any (Linux SLL, SLL2), the source MAC alone:
	// "aa:bb:.. ethertype IPv4 (0x0800), length 80: REST".
	tcpdumpEtherRe = regexp.MustCompile(`^(?:> ([0-9a-f:]{17}), )?ethertype (\S+) \(0x[0-9a-f]+\), length \d+: (?:(IP6?|ARP),? ?)?(.*)$`)
	// "SRC > DST: PROTO-DETAILS", with numeric addresses and ports (what
	// sniffing trusts) or, to parse, with the names tcpdump prints without
	// -nn ("10.0.0.1.https", "node1.example.com.domain").
	tcpdumpAddrRe    = regexp.MustCompile(`^([0-9A-Fa-f.:]+) > ([0-9A-Fa-f.:]+): (.*)$`)
	tcpdumpAddrAnyRe = regexp.MustCompile(`^([0-9A-Za-z._:-]+) > ([0-9A-Za-z._:-]+): (.*)$`)
	tcpFlagsRe       = regexp.MustCompile(`Flags \[([A-Z.]*)\]`)
	tcpSeqRe         = regexp.MustCompile(`[, ]seq (\d+)(?::(\d+))?`)
	tcpAckRe         = regexp.MustCompile(`[, ]ack (\d+)`)
	tcpLenRe         = regexp.MustCompile(`length (\d+)`)

	tsharkHeaderRe = regexp.MustCompile(`^No\.\s+Time\s+Source\s+Destination\s+Protocol\s+Length\s+Info`)
	// "649 2022-09-15 19:09:02.533940 10.23.77.129 10.23.77.138 TCP 66 INFO" or
	// "1   0.000000 10.0.0.1 → 10.0.0.2 TCP 74 INFO"
	tsharkLineRe = regexp.MustCompile(`^(\d+)\s+((?:\d{4}-\d{2}-\d{2} )?\d{1,2}:\d{2}:\d{2}\.\d+|-?\d+\.\d+)\s+(\S+)\s+(?:(?:→|->)\s+)?(\S+)\s+([A-Za-z0-9/._-]+)\s+(\d+)\s+(.*)$`)
	// "46356 → 80 [SYN]"; with transport names resolved (Wireshark's
	// default) "46356 → http(80) [SYN]", or "http" alone in old versions.
	tsharkTCPRe = regexp.MustCompile(`([\w.-]+(?:\(\d+\))?)\s+(?:→|->|>)\s+([\w.-]+(?:\(\d+\))?)\s+\[([A-Z, ]+)\]`)
	tsharkSeqRe = regexp.MustCompile(`\bSeq=(\d+)`)
	tsharkAckRe = regexp.MustCompile(`\bAck=(\d+)`)
	tsharkLenRe = regexp.MustCompile(`\bLen=(\d+)`)
)

// ReadText reads pasted tcpdump or tshark text (format is FormatTcpdumpText
// or FormatTsharkText) into the same attempts, ICMP events and ARP claims a
// pcap of the same packets gives, with line numbers (and, for tshark, the
// frame numbers it printed) as evidence. A shell prompt naming a host
// ("root@node3:~# tcpdump ...") starts a new capture on that node: one
// Result per node section. Lines that belong to a packet (-v continuation
// lines, -A/-X payload dumps, tshark's frame details) are skipped; a line
// that looks like a packet but cannot be read is reported with its position.
//
// Times carry the date only when the text has one (tcpdump -tttt, tshark
// absolute times); otherwise they are times of day on 0000-01-01, moving to
// the next day when the clock wraps at midnight.
func ReadText(ctx context.Context, r io.Reader, name, format string, opts Options) ([]*Result, error) {
	tr := &textReader{name: name, format: format, node: opts.Node}
	tr.start(opts.Node)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		tr.line++
		if tr.line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		tr.handle(strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		tr.errs.Addf(model.Pos{File: name, Line: tr.line + 1}, "", "reading: %w", err)
	}
	tr.flush()
	tr.finish()
	return tr.results, tr.errs.Err()
}

type textReader struct {
	name, format, node string
	line               int
	errs               model.ErrorList
	t                  *Tracker
	results            []*Result
	packets            int
	command            string

	// pending is a tcpdump packet whose line continues on the next one
	// (-v puts the addresses on a second line; a paste may break a line).
	pending     *Packet
	pendingText string
	pendingV    bool
	// held is an ICMP error shown with -v, kept until the quoted packet
	// that follows it has been read.
	held      *Packet
	heldLines int
	lastMAC   string
	day       time.Time
	lastClock time.Duration
	// relative times (-ttt, -ttttt): the last one read, where the capture
	// is, and whether they count from the previous packet.
	relLast, relAt    time.Duration
	relSeen, relDelta bool
	// quiet is set once a tcpdump -q TCP line ("tcp 0") was warned about,
	// namesWarned and portsWarned once host or port names were.
	quiet, namesWarned, portsWarned bool
}

func (tr *textReader) start(node string) {
	tr.t = NewTracker(tr.name, node)
	tr.node = node
	tr.packets = 0
}

func (tr *textReader) finish() {
	if tr.packets == 0 && len(tr.results) > 0 {
		return
	}
	res := tr.t.Finish()
	res.Info.Format = tr.format
	res.Info.LinkType = "text"
	res.Info.Command = tr.command
	tr.results = append(tr.results, res)
}

func (tr *textReader) pos() model.Pos { return model.Pos{File: tr.name, Line: tr.line} }

func (tr *textReader) handle(line string) {
	t := strings.TrimSpace(line)
	if m := promptHostRe.FindStringSubmatch(t); m != nil {
		tr.flush()
		if m[1] != tr.node && tr.packets > 0 {
			tr.finish()
			tr.start(m[1])
		} else {
			tr.node = m[1]
			tr.t.node = m[1]
		}
		tr.command = m[2]
		return
	}
	if cmd, ok := strings.CutPrefix(t, "# "); ok && (strings.HasPrefix(cmd, "tcpdump") || strings.HasPrefix(cmd, "tshark")) {
		tr.flush()
		tr.command = cmd
		return
	}
	if t == "" || strings.HasPrefix(t, "tcpdump:") || strings.HasPrefix(t, "listening on") ||
		strings.HasPrefix(t, "#") || strings.HasPrefix(t, "$ ") ||
		strings.HasSuffix(t, "packets captured") || strings.HasSuffix(t, "received by filter") ||
		strings.HasSuffix(t, "dropped by kernel") {
		tr.flush()
		return
	}
	if tr.format == FormatTsharkText {
		tr.tsharkLine(t)
		return
	}
	tr.tcpdumpLine(line, t)
}

// clock turns a time of day (and an optional date) into a time.Time.
func (tr *textReader) clock(date, tod string, relative bool) (time.Time, bool) {
	if relative {
		return tr.relativeClock(tod)
	}
	if !strings.Contains(tod, ":") { // -tt: seconds since the epoch
		d, ok := parseSeconds(tod)
		return time.Unix(0, 0).UTC().Add(d), ok
	}
	if date != "" {
		ts, err := time.Parse("2006-01-02 15:04:05.999999999", date+" "+tod)
		return ts, err == nil
	}
	c, err := time.Parse("15:04:05.999999999", tod)
	if err != nil {
		return time.Time{}, false
	}
	d := time.Duration(c.Hour())*time.Hour + time.Duration(c.Minute())*time.Minute +
		time.Duration(c.Second())*time.Second + time.Duration(c.Nanosecond())
	if tr.day.IsZero() {
		tr.day = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if d < tr.lastClock-12*time.Hour {
		tr.day = tr.day.AddDate(0, 0, 1) // past midnight
	}
	tr.lastClock = d
	return tr.day.Add(d), true
}

// relativeClock reads the times of tcpdump -ttt (since the previous
// packet) and -ttttt (since the first). The command line, when pasted,
// says which; otherwise the times are taken as since the first until one
// goes back, which only deltas do.
func (tr *textReader) relativeClock(tod string) (time.Time, bool) {
	c, err := time.Parse("15:04:05.999999999", tod)
	if err != nil {
		return time.Time{}, false
	}
	d := time.Duration(c.Hour())*time.Hour + time.Duration(c.Minute())*time.Minute +
		time.Duration(c.Second())*time.Second + time.Duration(c.Nanosecond())
	return tr.relative(d, false), true
}

// relative returns the time of a packet shown d after the first packet
// or, in delta mode, after the previous one. The pasted command line says
// which (tcpdump -ttt, tshark -t d); otherwise the times are taken as
// since the first until one goes back, which deltas do and times since
// the first do not, but for packets out of order: when bigDrop is set
// (tshark, whose default -t r meets merged multi-interface captures) only
// a drop below half the previous time counts.
func (tr *textReader) relative(d time.Duration, bigDrop bool) time.Time {
	switch {
	case !tr.relSeen:
		tr.relSeen, tr.relDelta = true, deltaCommand(tr.command)
	case !tr.relDelta && d < tr.relLast && (!bigDrop || d < tr.relLast/2):
		tr.relDelta = true
	}
	if tr.relDelta {
		tr.relAt += d
	} else {
		tr.relAt = d
	}
	tr.relLast = d
	return time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Add(tr.relAt)
}

// parseSeconds reads "1795439503.290971" or "-0.000010" exactly, without
// the rounding of a float.
func parseSeconds(s string) (time.Duration, bool) {
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > math.MaxInt64/int64(time.Second)-1 || len(frac) > 9 {
		return 0, false
	}
	ns := int64(0)
	if frac != "" {
		n, err := strconv.ParseUint(frac, 10, 64)
		if err != nil {
			return 0, false
		}
		ns = int64(n)
		for range 9 - len(frac) {
			ns *= 10
		}
	}
	d := time.Duration(sec)*time.Second + time.Duration(ns)
	if neg {
		d = -d
	}
	return d, true
}

// tsharkDeltaRe matches tshark's options for times since the previous
// packet: -t d, -t dd, -tdd.
var tsharkDeltaRe = regexp.MustCompile(`(?:^|\s)-t\s*dd?(?:\s|$)`)

// deltaCommand reports whether a pasted capture command prints times since
// the previous packet.
func deltaCommand(cmd string) bool {
	if strings.Contains(cmd, "tshark") {
		return tsharkDeltaRe.MatchString(cmd)
	}
	return tcpdumpTimeFlag(cmd) == 3
}

// tcpdumpTimeFlag returns how many t's the longest -t option of a tcpdump
// command line has (-ttt: 3), 0 without one.
func tcpdumpTimeFlag(cmd string) int {
	best := 0
	for _, f := range strings.Fields(cmd) {
		if !strings.HasPrefix(f, "-") || strings.HasPrefix(f, "--") {
			continue
		}
		run := 0
		for _, c := range f[1:] {
			if c == 't' {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
	}
	return best
}

// noTimeLine reports whether the rest of a tcpdump -t line is a packet:
// addresses for IP, a request or reply for ARP, a link header after a MAC.
func noTimeLine(kind, rest string) bool {
	switch {
	case kind == "IP" || kind == "IP6":
		return tcpdumpAddrAnyRe.MatchString(rest)
	case kind == "ARP":
		return strings.HasPrefix(rest, "Request") || strings.HasPrefix(rest, "Reply")
	default:
		return strings.Contains(rest, "ethertype")
	}
}

func (tr *textReader) emit(p *Packet) {
	tr.packets++
	tr.t.Add(p)
}

// flush emits a pending tcpdump packet that had no continuation.
func (tr *textReader) flush() {
	tr.release()
	if tr.pending == nil {
		return
	}
	p := tr.pending
	tr.pending = nil
	if tr.pendingV {
		tr.errs.Addf(p.Pos, "", "tcpdump -v header without the addresses line that should follow it")
		return
	}
	if tr.decodeTcpdump(p, tr.pendingText) {
		tr.emit(p)
	}
}

// release emits a held ICMP error.
func (tr *textReader) release() {
	if tr.held != nil {
		tr.emit(tr.held)
		tr.held = nil
	}
}

func (tr *textReader) tcpdumpLine(raw, t string) {
	if tr.held != nil && !tcpdumpLineRe.MatchString(t) {
		// The quoted packet of a -v ICMP error: "IP (tos ...)", then
		// its addresses.
		tr.heldLines++
		if m := tcpdumpAddrAnyRe.FindStringSubmatch(t); m != nil {
			tr.quotedLine(tr.held, t)
			tr.release()
		} else if tr.heldLines > 2 {
			tr.release()
		}
		return
	}
	tr.release()
	if tr.pending != nil {
		switch {
		case strings.HasPrefix(t, ","): // a paste broke the line
			tr.pendingText += t
			return
		case tr.pendingV && tcpdumpAddrAnyRe.MatchString(t): // -v: the addresses line
			p := tr.pending
			tr.pending, tr.pendingV = nil, false
			if !tr.decodeTcpdump(p, t) {
				return
			}
			if p.ICMP != nil {
				tr.held, tr.heldLines = p, 0
				return
			}
			tr.emit(p)
			return
		}
		tr.flush()
	}
	m := tcpdumpLineRe.FindStringSubmatch(t)
	var ts time.Time
	switch {
	case m != nil:
		// -ttt and -ttttt print times relative to the previous or the
		// first packet, indented by a space.
		relative := m[1] == "" && strings.Contains(m[2], ":") && strings.HasPrefix(raw, " ")
		var ok bool
		if ts, ok = tr.clock(m[1], m[2], relative); !ok {
			tr.errs.Addf(tr.pos(), t, "unreadable timestamp %q", m[2])
			return
		}
	default:
		n := tcpdumpNoTimeRe.FindStringSubmatch(t)
		if n == nil || !noTimeLine(n[3], n[4]) {
			return // -A / -X payload, -v option lines, wrapped text
		}
		m = []string{n[0], "", "", n[1], n[2], n[3], n[4]} // tcpdump -t: no time
	}
	p := &Packet{Pos: tr.pos(), Time: ts}
	kind, rest := m[5], m[6]
	if strings.Contains(kind, ":") { // -e: the source MAC came first
		e := tcpdumpEtherRe.FindStringSubmatch(rest)
		if e == nil {
			tr.errs.Addf(tr.pos(), t, "expected tcpdump -e link header \"SRC > DST, ethertype ..., length N: ...\" (or \"SRC ethertype ...\" on -i any)")
			return
		}
		tr.lastMAC = kind
		switch {
		case e[2] == "ARP" || e[3] == "ARP":
			kind = "ARP"
		case e[2] == "IPv6" || e[3] == "IP6":
			kind = "IP6"
		case e[2] == "IPv4" || e[3] == "IP":
			kind = "IP"
		default:
			tr.emit(p) // another EtherType: counted only
			return
		}
		rest = e[4]
	} else {
		tr.lastMAC = ""
	}
	rest = strings.TrimPrefix(rest, ", ")
	if kind == "ARP" {
		tr.tcpdumpARP(p, rest)
		return
	}
	if strings.HasPrefix(rest, "(") {
		// -v: "IP (tos 0x0, ttl 64, ..., length 60)", the addresses on
		// the next line; IPv6 keeps them on this one, after the header.
		if after := skipParens(rest); after != "" {
			rest = after
		} else {
			tr.pending, tr.pendingText, tr.pendingV = p, "", true
			return
		}
	}
	tr.pending, tr.pendingText, tr.pendingV = p, rest, false
}

// skipParens returns what follows a leading parenthesized group, trimmed.
func skipParens(s string) string {
	depth := 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return strings.TrimSpace(s[i+1:])
			}
		}
	}
	return ""
}

// quietTCPRe matches the TCP part of a tcpdump -q line: "tcp 0".
var quietTCPRe = regexp.MustCompile(`^tcp \d+$`)

// decodeTcpdump fills p from the "SRC > DST: ..." part of a tcpdump line
// and reports whether it could.
func (tr *textReader) decodeTcpdump(p *Packet, text string) bool {
	m := tcpdumpAddrAnyRe.FindStringSubmatch(text)
	if m == nil {
		tr.errs.Addf(p.Pos, text, "expected \"SRC > DST: ...\" after the tcpdump timestamp")
		return false
	}
	src, dst, detail := m[1], m[2], m[3]
	switch {
	case strings.HasPrefix(detail, "Flags ["):
		s, err1 := tcpdumpAddrPort(src)
		d, err2 := tcpdumpAddrPort(dst)
		if err := cmp.Or(err1, err2); err != nil {
			tr.addrError(p, text, err)
			return false
		}
		fm := tcpFlagsRe.FindStringSubmatch(detail)
		if fm == nil {
			tr.errs.Addf(p.Pos, text, "expected the TCP flags in brackets (\"Flags [S.]\")")
			return false
		}
		p.Proto, p.Src, p.Dst = "tcp", s, d
		p.Flags = tcpdumpFlags(fm[1])
		if sm := tcpSeqRe.FindStringSubmatch(detail); sm != nil {
			seq, _ := strconv.ParseUint(sm[1], 10, 32)
			p.Seq = uint32(seq)
		}
		if am := tcpAckRe.FindStringSubmatch(detail); am != nil {
			ack, _ := strconv.ParseUint(am[1], 10, 32)
			p.Ack = uint32(ack)
		}
		if lm := tcpLenRe.FindAllStringSubmatch(detail, -1); lm != nil {
			p.Payload, _ = strconv.Atoi(lm[len(lm)-1][1])
		}
	case strings.HasPrefix(detail, "ICMP"):
		return tr.tcpdumpICMP(p, src, dst, detail)
	case quietTCPRe.MatchString(detail):
		// tcpdump -q prints "tcp LEN" without flags or sequence numbers:
		// the packet counts, but no attempt can be told from it.
		if !tr.quiet {
			tr.quiet = true
			tr.errs.Addf(p.Pos, text, "tcpdump -q output shows no TCP flags: its TCP packets are counted, but "+
				"connection attempts cannot be told from them (print the capture again without -q)")
		}
	default:
		s, err1 := tcpdumpAddrPort(src)
		d, err2 := tcpdumpAddrPort(dst)
		if err1 == nil && err2 == nil {
			p.Src, p.Dst = s, d
			if strings.HasPrefix(detail, "UDP") || strings.Contains(detail, "UDP,") {
				p.Proto = "udp"
			}
		}
	}
	return true
}

// tcpdumpAddrPort reads "10.0.0.1.443", "fd00::1.443", or an address
// without a port.
func tcpdumpAddrPort(s string) (netip.AddrPort, error) {
	if a, err := netip.ParseAddr(s); err == nil && (a.Is6() || strings.Count(s, ".") == 3) {
		return netip.AddrPortFrom(a, 0), nil
	}
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return netip.AddrPort{}, fmt.Errorf("no port in %q", s)
	}
	a, err := netip.ParseAddr(s[:i])
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %q", errHostName, s[:i])
	}
	if port, err := strconv.ParseUint(s[i+1:], 10, 16); err == nil {
		return netip.AddrPortFrom(a, uint16(port)), nil
	}
	if port, ok := servicePort(s[i+1:]); ok {
		return netip.AddrPortFrom(a, port), nil
	}
	return netip.AddrPort{}, fmt.Errorf("%w: %q", errPortName, s[i+1:])
}

var (
	errHostName = errors.New("a host name, not an address")
	errPortName = errors.New("a port name netmortem does not know")
)

// addrError reports a line whose addresses cannot be read. Names that
// tcpdump printed for want of -n or -nn are told once per file (each such
// line is skipped); anything else at its line.
func (tr *textReader) addrError(p *Packet, text string, err error) {
	switch {
	case errors.Is(err, errHostName):
		if !tr.namesWarned {
			tr.namesWarned = true
			tr.errs.Addf(p.Pos, text, "tcpdump printed host names, not addresses (%v): the lines that name hosts are skipped; "+
				"print the capture again with -nn", err)
		}
	case errors.Is(err, errPortName):
		if !tr.portsWarned {
			tr.portsWarned = true
			tr.errs.Addf(p.Pos, text, "tcpdump printed port names (%v): the lines that use it are skipped; print the capture "+
				"again with -nn", err)
		}
	default:
		tr.errs.Addf(p.Pos, text, "unreadable address: %v", err)
	}
}

func tcpdumpFlags(s string) uint8 {
	var f uint8
	for _, c := range s {
		switch c {
		case 'S':
			f |= SYN
		case '.':
			f |= ACK
		case 'F':
			f |= FIN
		case 'R':
			f |= RST
		case 'P':
			f |= PSH
		case 'U':
			f |= URG
		case 'E':
			f |= ECE
		case 'W':
			f |= CWR
		}
	}
	return f
}

var (
	icmpUnreachRe  = regexp.MustCompile(`^ICMP (?:(host|net) (\S+) unreachable|(\S+) (tcp|udp) port (\S+) unreachable|(\S+) protocol \d+ unreachable|(\S+) unreachable)(.*)$`)
	icmpRedirectRe = regexp.MustCompile(`^ICMP redirect (\S+) to (?:host|net) ([^\s,]+)`)
)

func (tr *textReader) tcpdumpICMP(p *Packet, src, dst, detail string) bool {
	s, err1 := netip.ParseAddr(src)
	d, err2 := netip.ParseAddr(dst)
	if err1 != nil || err2 != nil {
		tr.errs.Addf(p.Pos, detail, "unreadable ICMP addresses %q > %q", src, dst)
		return false
	}
	p.Proto = "icmp"
	p.Src, p.Dst = netip.AddrPortFrom(s, 0), netip.AddrPortFrom(d, 0)
	ev := &model.ICMPEvent{From: s, To: d, V6: strings.HasPrefix(detail, "ICMP6") || s.Is6()}
	if ev.V6 {
		p.Proto = "icmp6"
	}
	quotedDst := ""
	quotedPort := ""
	switch m := icmpUnreachRe.FindStringSubmatch(detail); {
	case m != nil:
		ev.Type = 3
		tail := m[8]
		switch {
		case m[1] == "host":
			ev.Code, ev.What, quotedDst = 1, "host-unreachable", m[2]
		case m[1] == "net":
			ev.Code, ev.What, quotedDst = 0, "net-unreachable", m[2]
		case m[4] != "":
			ev.Code, ev.What, quotedDst, quotedPort = 3, "port-unreachable", m[3], m[5]
			ev.QuotedProto = m[4]
		case m[6] != "":
			ev.Code, ev.What, quotedDst = 2, "protocol-unreachable", m[6]
		default:
			ev.Code, ev.What, quotedDst = 3, "unreachable", m[7]
		}
		switch {
		case strings.Contains(tail, "need to frag"):
			ev.Code, ev.What = 4, "frag-needed"
		case strings.Contains(tail, "admin prohibited"):
			ev.Code, ev.What = 13, "admin-prohibited"
		}
	default:
		if r := icmpRedirectRe.FindStringSubmatch(detail); r != nil {
			ev.Type, ev.Code, ev.What, quotedDst = 5, 1, "redirect", r[1]
			ev.Gateway, _ = netip.ParseAddr(r[2])
		} else if strings.Contains(detail, "time exceeded") {
			ev.Type, ev.What = 11, "ttl-exceeded"
		} else {
			return true // echo and other informational messages: counted only
		}
	}
	if qa, err := netip.ParseAddr(quotedDst); err == nil {
		port, _ := strconv.ParseUint(quotedPort, 10, 16)
		ev.Quoted = model.Tuple{Src: netip.AddrPortFrom(d, 0), Dst: netip.AddrPortFrom(qa, uint16(port))}
	}
	p.ICMP = ev
	return true
}

// tsharkPort reads a port of tshark's Info column: "80", "http(80)", or a
// bare service name.
func tsharkPort(tok string) (uint16, bool) {
	if i := strings.IndexByte(tok, '('); i >= 0 {
		tok = strings.TrimSuffix(tok[i+1:], ")")
	}
	if n, err := strconv.ParseUint(tok, 10, 16); err == nil {
		return uint16(n), true
	}
	return servicePort(tok)
}

// quotedLine reads the quoted packet of an ICMP error shown with -v and
// completes the pending event with its ports.
func (tr *textReader) quotedLine(p *Packet, t string) {
	m := tcpdumpAddrAnyRe.FindStringSubmatch(t)
	if m == nil {
		return
	}
	s, err1 := tcpdumpAddrPort(m[1])
	d, err2 := tcpdumpAddrPort(m[2])
	if err1 != nil || err2 != nil {
		return
	}
	p.ICMP.Quoted = model.Tuple{Src: s, Dst: d}
	if strings.HasPrefix(m[3], "Flags [") {
		p.ICMP.QuotedProto = "tcp"
	}
}

var (
	arpRequestRe = regexp.MustCompile(`^(?:ARP, )?Request who-has ([^\s,]+)(?: \([0-9a-f:]+\))? tell ([^\s,]+)`)
	arpReplyRe   = regexp.MustCompile(`^(?:ARP, )?Reply (\S+) is-at ([0-9a-f:]{17})`)
)

func (tr *textReader) tcpdumpARP(p *Packet, rest string) {
	p.Proto = "arp"
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, "ARP"), ", ")
	if m := arpRequestRe.FindStringSubmatch(rest); m != nil {
		target, err1 := netip.ParseAddr(m[1])
		sender, err2 := netip.ParseAddr(m[2])
		if err1 == nil && err2 == nil {
			p.ARP = &model.ARPEvent{Op: "request", IP: sender, Target: target, MAC: tr.lastMAC, Gratuitous: sender == target}
		}
	} else if m := arpReplyRe.FindStringSubmatch(rest); m != nil {
		if ip, err := netip.ParseAddr(m[1]); err == nil {
			p.ARP = &model.ARPEvent{Op: "reply", IP: ip, MAC: m[2]}
		}
	}
	tr.emit(p)
}

func (tr *textReader) tsharkLine(t string) {
	if tsharkHeaderRe.MatchString(t) {
		return
	}
	m := tsharkLineRe.FindStringSubmatch(t)
	if m == nil {
		return // frame details under a packet (-V, -O), or wrapped text
	}
	frame, _ := strconv.Atoi(m[1])
	var ts time.Time
	if date, tod, ok := strings.Cut(m[2], " "); ok {
		ts, ok = tr.clock(date, tod, false)
		if !ok {
			tr.errs.Addf(tr.pos(), t, "unreadable time %q", m[2])
			return
		}
	} else if strings.Contains(m[2], ":") {
		ts, _ = tr.clock("", m[2], false)
	} else if d, ok := parseSeconds(m[2]); ok {
		if d >= 1e8*time.Second { // -t e: seconds since the epoch
			ts = time.Unix(0, 0).UTC().Add(d)
		} else { // -t r (since the first packet), -t d (since the previous)
			ts = tr.relative(d, true)
		}
	}
	p := &Packet{Pos: model.Pos{File: tr.name, Line: tr.line, Frame: frame}, Time: ts}
	src, dst, proto, info := m[3], m[4], m[5], m[7]
	switch {
	case proto == "ARP":
		tr.tsharkARP(p, info)
		return
	case strings.HasPrefix(proto, "ICMP"):
		s, err1 := netip.ParseAddr(src)
		d, err2 := netip.ParseAddr(dst)
		if err1 == nil && err2 == nil {
			p.Proto = "icmp"
			if proto == "ICMPv6" {
				p.Proto = "icmp6"
			}
			p.Src, p.Dst = netip.AddrPortFrom(s, 0), netip.AddrPortFrom(d, 0)
			if ev := tsharkICMP(info, s, d); ev != nil {
				p.ICMP = ev
			}
		}
		tr.emit(p)
		return
	}
	tm := tsharkTCPRe.FindStringSubmatch(info)
	if tm == nil {
		tr.emit(p) // HTTP, TLS ... summaries: a packet, but not one whose TCP header shows
		return
	}
	s, err1 := netip.ParseAddr(src)
	d, err2 := netip.ParseAddr(dst)
	if err1 != nil || err2 != nil {
		tr.errs.Addf(p.Pos, t, "unreadable addresses %q and %q (use tshark -n)", src, dst)
		return
	}
	sp, ok1 := tsharkPort(tm[1])
	dp, ok2 := tsharkPort(tm[2])
	if !ok1 || !ok2 {
		if !tr.portsWarned {
			tr.portsWarned = true
			tr.errs.Addf(p.Pos, t, "port names %q and %q: the lines with names netmortem does not know are skipped; "+
				"print the capture again with tshark -n", tm[1], tm[2])
		}
		return
	}
	p.Proto = "tcp"
	p.Src, p.Dst = netip.AddrPortFrom(s, uint16(sp)), netip.AddrPortFrom(d, uint16(dp))
	for _, f := range strings.Split(tm[3], ",") {
		switch strings.TrimSpace(f) {
		case "SYN":
			p.Flags |= SYN
		case "ACK":
			p.Flags |= ACK
		case "RST":
			p.Flags |= RST
		case "FIN":
			p.Flags |= FIN
		case "PSH":
			p.Flags |= PSH
		case "URG":
			p.Flags |= URG
		case "ECE", "ECN":
			p.Flags |= ECE
		case "CWR":
			p.Flags |= CWR
		}
	}
	if sm := tsharkSeqRe.FindStringSubmatch(info); sm != nil {
		v, _ := strconv.ParseUint(sm[1], 10, 32)
		p.Seq = uint32(v)
	}
	if am := tsharkAckRe.FindStringSubmatch(info); am != nil {
		v, _ := strconv.ParseUint(am[1], 10, 32)
		p.Ack = uint32(v)
	}
	if lm := tsharkLenRe.FindStringSubmatch(info); lm != nil {
		p.Payload, _ = strconv.Atoi(lm[1])
	}
	tr.emit(p)
}

func tsharkICMP(info string, s, d netip.Addr) *model.ICMPEvent {
	ev := &model.ICMPEvent{From: s, To: d, V6: s.Is6()}
	switch {
	case strings.HasPrefix(info, "Destination unreachable"):
		ev.Type = 3
		switch {
		case strings.Contains(info, "Host unreachable"):
			ev.Code, ev.What = 1, "host-unreachable"
		case strings.Contains(info, "Port unreachable"):
			ev.Code, ev.What = 3, "port-unreachable"
		case strings.Contains(info, "Network unreachable"):
			ev.Code, ev.What = 0, "net-unreachable"
		case strings.Contains(info, "Fragmentation needed"):
			ev.Code, ev.What = 4, "frag-needed"
		case strings.Contains(info, "administratively"):
			ev.Code, ev.What = 13, "admin-prohibited"
		default:
			ev.What = "unreachable"
		}
	case strings.HasPrefix(info, "Redirect"):
		ev.Type, ev.What = 5, "redirect"
	case strings.HasPrefix(info, "Time-to-live exceeded"):
		ev.Type, ev.What = 11, "ttl-exceeded"
	default:
		return nil
	}
	return ev
}

var (
	tsharkWhoHasRe = regexp.MustCompile(`^Who has (\S+)\? Tell (\S+)`)
	tsharkIsAtRe   = regexp.MustCompile(`^(\S+) is at ([0-9a-f:]{17})`)
	tsharkGratRe   = regexp.MustCompile(`^Gratuitous ARP for (\S+) \((Request|Reply)\)`)
)

func (tr *textReader) tsharkARP(p *Packet, info string) {
	p.Proto = "arp"
	switch {
	case tsharkWhoHasRe.MatchString(info):
		m := tsharkWhoHasRe.FindStringSubmatch(info)
		target, err1 := netip.ParseAddr(m[1])
		sender, err2 := netip.ParseAddr(m[2])
		if err1 == nil && err2 == nil {
			p.ARP = &model.ARPEvent{Op: "request", IP: sender, Target: target, Gratuitous: sender == target}
		}
	case tsharkIsAtRe.MatchString(info):
		m := tsharkIsAtRe.FindStringSubmatch(info)
		if ip, err := netip.ParseAddr(m[1]); err == nil {
			p.ARP = &model.ARPEvent{Op: "reply", IP: ip, MAC: m[2]}
		}
	case tsharkGratRe.MatchString(info):
		m := tsharkGratRe.FindStringSubmatch(info)
		if ip, err := netip.ParseAddr(m[1]); err == nil {
			p.ARP = &model.ARPEvent{Op: strings.ToLower(m[2]), IP: ip, Target: ip, Gratuitous: true}
		}
	}
	tr.emit(p)
}
