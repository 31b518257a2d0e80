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
		case tsharkHead(line) != nil:
			tshark++
		case isTcpdumpLine(line), tcpdumpAddrRe.MatchString(line) && strings.Contains(line, ": "),
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

	// tcpdump -t prints no timestamp: "IP 10.0.0.1.1 > 10.0.0.2.80: ...".
	// Sniffing takes the numeric form only.
	tcpdumpNoTimeRe      = regexp.MustCompile(`^(?:(\S+)\s+(In|Out|M|B|P)\s+(?:ifindex \d+ )?)?(IP6?|ARP|[0-9a-f]{2}(?::[0-9a-f]{2}){5})[ ,]\s*(.*)$`)
	tcpdumpNoTimeSniffRe = regexp.MustCompile(`^IP6? [0-9A-Fa-f.:]+ > [0-9A-Fa-f.:]+: `)
	// -e: "aa:bb:.. > cc:dd:.., ethertype IPv4 (0x0800), length 74: REST",
	// or on -i any (Linux SLL, SLL2), the source MAC alone:
	// "aa:bb:.. ethertype IPv4 (0x0800), length 80: REST".
	tcpdumpEtherRe = regexp.MustCompile(`^(?:> ([0-9a-f:]{17}), )?ethertype (\S+) \(0x[0-9a-f]+\), length \d+: (?:(IP6?|ARP),? ?)?(.*)$`)
	// "SRC > DST: PROTO-DETAILS" with numeric addresses and ports, what
	// sniffing trusts. Parsing, which also takes the names tcpdump prints
	// without -n ("10.0.0.1.https"), splits the line by hand (splitAddrs):
	// regular expressions cost most of the reading time.
	tcpdumpAddrRe = regexp.MustCompile(`^([0-9A-Fa-f.:]+) > ([0-9A-Fa-f.:]+): (.*)$`)

	tsharkHeaderRe = regexp.MustCompile(`^No\.\s+Time\s+Source\s+Destination\s+Protocol\s+Length\s+Info`)
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
	tr := &textReader{name: name, format: format, node: opts.Node, opts: opts}
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
	opts               Options
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
	o := tr.opts
	o.Node = node
	tr.t = newTracker(tr.name, o)
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
		return isAddrLine(rest)
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
	if tr.held != nil && !isTcpdumpLine(t) {
		// The quoted packet of a -v ICMP error: "IP (tos ...)", then
		// its addresses.
		tr.heldLines++
		if _, _, _, ok := splitAddrs(t); ok {
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
		case tr.pendingV && isAddrLine(t): // -v: the addresses line
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
	m := tcpdumpHead(t)
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

// tcpdumpHead reads the start of a tcpdump packet line: the timestamp
// (-t default, -tttt, -tt), on -i any the interface (SLL2; "?" when read
// from a file) and the direction, with -e the interface index, then the
// kind (IP, IP6, ARP, or the MAC of -e) and the rest. It returns the
// submatches tcpdumpLineRe in the tests gives (the whole line, date, time,
// interface, direction, kind, rest), nil when the line is not one; it
// reads by hand because the expression cost most of the reading time.
func tcpdumpHead(t string) []string {
	s := t
	date := ""
	if len(s) > 10 && s[10] == ' ' && isDate(s[:10]) {
		date, s = s[:10], s[11:]
	}
	i := 0
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	tod := s[:i]
	if !isTcpdumpTime(tod) {
		return nil
	}
	s = s[i:]
	if len(s) == 0 || !isSpace(s[0]) {
		return nil
	}
	s = trimSpaceLeft(s)
	// Optional interface and direction, then the kind. The expression
	// tries the interface first, then a direction alone, then neither.
	iface, dir := "", ""
	a, afterA := field(s)
	b, afterB := field(trimSpaceLeft(afterA))
	switch {
	case a != "" && isDirection(b) && afterB != "" && isSpace(afterB[0]) && kindAt(skipIfindex(trimSpaceLeft(afterB))) != "":
		iface, dir, s = a, b, skipIfindex(trimSpaceLeft(afterB))
	case isDirection(a) && afterA != "" && isSpace(afterA[0]) && kindAt(skipIfindex(trimSpaceLeft(afterA))) != "":
		dir, s = a, skipIfindex(trimSpaceLeft(afterA))
	}
	kind := kindAt(s)
	if kind == "" {
		return nil
	}
	rest := strings.TrimPrefix(s[len(kind):], " ")
	if strings.ContainsRune(rest, '\n') {
		return nil
	}
	return []string{t, date, tod, iface, dir, kind, rest}
}

func isTcpdumpLine(t string) bool { return tcpdumpHead(t) != nil }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func trimSpaceLeft(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// field returns the first run of non-space characters of s and what
// follows it.
func field(s string) (string, string) {
	i := 0
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isDirection(s string) bool {
	return s == "In" || s == "Out" || s == "M" || s == "B" || s == "P"
}

// skipIfindex drops the "ifindex N " tcpdump -e prints on -i any.
func skipIfindex(s string) string {
	r, ok := strings.CutPrefix(s, "ifindex ")
	if !ok {
		return s
	}
	n := leadingDigits(r)
	if n == "" || len(r) == len(n) || r[len(n)] != ' ' {
		return s
	}
	return r[len(n)+1:]
}

// kindAt returns what a tcpdump line shows at s: IP, IP6, ARP or a MAC
// address (-e), "" for anything else.
func kindAt(s string) string {
	switch {
	case strings.HasPrefix(s, "IP6"):
		return "IP6"
	case strings.HasPrefix(s, "IP"):
		return "IP"
	case strings.HasPrefix(s, "ARP"):
		return "ARP"
	case len(s) >= 17 && isMAC(s[:17]):
		return s[:17]
	}
	return ""
}

func isMAC(s string) bool {
	for i := 0; i < 17; i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isDate(s string) bool {
	for i := 0; i < 10; i++ {
		if i == 4 || i == 7 {
			if s[i] != '-' {
				return false
			}
		} else if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isTcpdumpTime reports whether s is "HH:MM:SS.frac" or epoch seconds
// ("1663268942.533940").
func isTcpdumpTime(s string) bool {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || frac == "" || leadingDigits(frac) != frac {
		return false
	}
	if len(whole) == 8 && whole[2] == ':' && whole[5] == ':' {
		return leadingDigits(whole[:2]) != "" && len(leadingDigits(whole[:2])) == 2 &&
			len(leadingDigits(whole[3:5])) == 2 && len(leadingDigits(whole[6:])) == 2
	}
	return (len(whole) == 9 || len(whole) == 10) && leadingDigits(whole) == whole
}

// splitAddrs splits tcpdump's "SRC > DST: REST", where SRC and DST are
// addresses with ports or the names tcpdump prints without -n (letters,
// digits, '.', ':', '_' and '-').
func splitAddrs(t string) (src, dst, rest string, ok bool) {
	i := strings.Index(t, " > ")
	if i <= 0 {
		return "", "", "", false
	}
	src, r := t[:i], t[i+3:]
	j := strings.Index(r, ": ")
	if j <= 0 {
		return "", "", "", false
	}
	dst, rest = r[:j], r[j+2:]
	if !wordChars(src, "._:-") || !wordChars(dst, "._:-") || strings.ContainsAny(rest, "\n") {
		return "", "", "", false
	}
	return src, dst, rest, true
}

func isAddrLine(t string) bool {
	_, _, _, ok := splitAddrs(t)
	return ok
}

// wordChars reports whether s holds only ASCII letters, digits and the
// bytes of extra.
func wordChars(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// tcpdumpFlagsField returns the letters of the first "Flags [S.]".
func tcpdumpFlagsField(s string) (string, bool) {
	for off := 0; ; {
		i := strings.Index(s[off:], "Flags [")
		if i < 0 {
			return "", false
		}
		i += off + len("Flags [")
		j := i
		for j < len(s) && ('A' <= s[j] && s[j] <= 'Z' || s[j] == '.') {
			j++
		}
		if j < len(s) && s[j] == ']' {
			return s[i:j], true
		}
		off = i
	}
}

// numberAfter returns the digits after the first key ("seq ") that follows
// a comma or a space.
func numberAfter(s, key string) (string, bool) {
	for off := 0; ; {
		i := strings.Index(s[off:], key)
		if i < 0 {
			return "", false
		}
		i += off
		if i > 0 && (s[i-1] == ',' || s[i-1] == ' ') {
			if n := leadingDigits(s[i+len(key):]); n != "" {
				return n, true
			}
		}
		off = i + 1
	}
}

// lastLength returns the digits of the last "length N".
func lastLength(s string) (string, bool) {
	for end := len(s); ; {
		i := strings.LastIndex(s[:end], "length ")
		if i < 0 {
			return "", false
		}
		if n := leadingDigits(s[i+len("length "):]); n != "" {
			return n, true
		}
		end = i
	}
}

func leadingDigits(s string) string {
	k := 0
	for k < len(s) && '0' <= s[k] && s[k] <= '9' {
		k++
	}
	return s[:k]
}

// quietTCPRe matches the TCP part of a tcpdump -q line: "tcp 0".
var quietTCPRe = regexp.MustCompile(`^tcp \d+$`)

// decodeTcpdump fills p from the "SRC > DST: ..." part of a tcpdump line
// and reports whether it could.
func (tr *textReader) decodeTcpdump(p *Packet, text string) bool {
	src, dst, detail, ok := splitAddrs(text)
	if !ok {
		tr.errs.Addf(p.Pos, text, "expected \"SRC > DST: ...\" after the tcpdump timestamp")
		return false
	}
	switch {
	case strings.HasPrefix(detail, "Flags ["):
		s, err1 := tcpdumpAddrPort(src)
		d, err2 := tcpdumpAddrPort(dst)
		if err := cmp.Or(err1, err2); err != nil {
			tr.addrError(p, text, err)
			return false
		}
		flags, ok := tcpdumpFlagsField(detail)
		if !ok {
			tr.errs.Addf(p.Pos, text, "expected the TCP flags in brackets (\"Flags [S.]\")")
			return false
		}
		p.Proto, p.Src, p.Dst = "tcp", s, d
		p.Flags = tcpdumpFlags(flags)
		if n, ok := numberAfter(detail, "seq "); ok {
			seq, _ := strconv.ParseUint(n, 10, 32)
			p.Seq = uint32(seq)
		}
		if n, ok := numberAfter(detail, "ack "); ok {
			ack, _ := strconv.ParseUint(n, 10, 32)
			p.Ack = uint32(ack)
		}
		if n, ok := lastLength(detail); ok {
			p.Payload, _ = strconv.Atoi(n)
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
	src, dst, rest, ok := splitAddrs(t)
	if !ok {
		return
	}
	s, err1 := tcpdumpAddrPort(src)
	d, err2 := tcpdumpAddrPort(dst)
	if err1 != nil || err2 != nil {
		return
	}
	p.ICMP.Quoted = model.Tuple{Src: s, Dst: d}
	if strings.HasPrefix(rest, "Flags [") {
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

// tsharkHead reads a tshark packet list line, "649 2022-09-15
// 19:09:02.533940 10.23.77.129 10.23.77.138 TCP 66 INFO" or "1 0.000000
// 10.0.0.1 → 10.0.0.2 TCP 74 INFO", returning the submatches tsharkLineRe
// in the tests gives (the whole line, frame, time, source, destination,
// protocol, length, info), nil when the line is not one. It reads by hand
// because the expression cost most of the reading time.
func tsharkHead(t string) []string {
	var toks [8]string
	var rests [8]string
	s := t
	n := 0
	for n < len(toks) {
		f, r := field(s)
		if f == "" {
			break
		}
		toks[n], rests[n] = f, r
		n++
		s = trimSpaceLeft(r)
	}
	if n < 6 || leadingDigits(toks[0]) != toks[0] || rests[0] == "" {
		return nil
	}
	i := 1
	tm := toks[1]
	if isDate(padDate(toks[1])) && len(toks[1]) == 10 && rests[1] != "" && rests[1][0] == ' ' && isClock(toks[2], 1) {
		tm, i = toks[1]+" "+toks[2], 2
		if rests[1][1:] != toks[2]+rests[2] {
			return nil // more than one space between the date and the time
		}
	} else if !isClock(tm, 1) && !isSignedSeconds(tm) {
		return nil
	}
	// Source, an optional arrow, destination, protocol, length.
	try := func(arrow bool) []string {
		j := i + 1
		src := toks[j]
		j++
		if arrow {
			if toks[j] != "→" && toks[j] != "->" {
				return nil
			}
			j++
		}
		if j+2 >= n {
			return nil
		}
		dst, proto, length := toks[j], toks[j+1], toks[j+2]
		if dst == "" || proto == "" || length == "" || !wordChars(proto, "/._-") || leadingDigits(length) != length {
			return nil
		}
		after := rests[j+2]
		if after == "" || !isSpace(after[0]) {
			return nil
		}
		info := trimSpaceLeft(after)
		if strings.ContainsRune(info, '\n') {
			return nil // (.*)$ does not cross a line
		}
		return []string{t, toks[0], tm, src, dst, proto, length, info}
	}
	if m := try(true); m != nil {
		return m
	}
	return try(false)
}

func padDate(s string) string {
	if len(s) != 10 {
		return "xxxxxxxxxx"
	}
	return s
}

// isClock reports whether s is "H:MM:SS.frac" with minHour or more hour
// digits (at most two).
func isClock(s string, minHour int) bool {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || frac == "" || leadingDigits(frac) != frac {
		return false
	}
	parts := strings.Split(whole, ":")
	if len(parts) != 3 || len(parts[0]) < minHour || len(parts[0]) > 2 || len(parts[1]) != 2 || len(parts[2]) != 2 {
		return false
	}
	for _, p := range parts {
		if leadingDigits(p) != p {
			return false
		}
	}
	return true
}

// isSignedSeconds reports whether s is "-?DIGITS.DIGITS".
func isSignedSeconds(s string) bool {
	whole, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	return ok && whole != "" && frac != "" && leadingDigits(whole) == whole && leadingDigits(frac) == frac
}

func isWordChar(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// wordNumber returns the digits after the first key ("Seq=") that starts
// a word.
func wordNumber(s, key string) (string, bool) {
	for off := 0; ; {
		i := strings.Index(s[off:], key)
		if i < 0 {
			return "", false
		}
		i += off
		if i == 0 || !isWordChar(s[i-1]) {
			if n := leadingDigits(s[i+len(key):]); n != "" {
				return n, true
			}
		}
		off = i + 1
	}
}

// tsharkTCP finds the first "SPORT → DPORT [FLAGS]" of a tshark Info
// column (with transport names resolved, Wireshark's default, "46356 →
// http(80) [SYN]"; in old versions "http" alone), returning the
// submatches tsharkTCPRe in the tests gives.
func tsharkTCP(info string) []string {
	for off := 0; off < len(info); {
		i := indexArrow(info, off)
		if i < 0 {
			return nil
		}
		start, arrowLen := i, 1
		switch {
		case strings.HasPrefix(info[i:], "→"):
			arrowLen = len("→")
		case strings.HasPrefix(info[i:], "->"):
			arrowLen = 2
		}
		off = i + arrowLen
		// whitespace, then the left port, before the arrow
		j := start
		for j > 0 && isSpace(info[j-1]) {
			j--
		}
		if j == start {
			continue
		}
		left, ok := portWordBefore(info[:j])
		if !ok {
			continue
		}
		k := off
		for k < len(info) && isSpace(info[k]) {
			k++
		}
		if k == off {
			continue
		}
		right, after := portWordAt(info[k:])
		if right == "" {
			continue
		}
		a := trimSpaceLeft(after)
		if len(a) == len(after) || !strings.HasPrefix(a, "[") {
			continue
		}
		e := 1
		for e < len(a) && ('A' <= a[e] && a[e] <= 'Z' || a[e] == ',' || a[e] == ' ') {
			e++
		}
		if e == 1 || e >= len(a) || a[e] != ']' {
			continue
		}
		return []string{info[len(info[:j])-len(left) : len(info)-len(a)+e+1], left, right, a[1:e]}
	}
	return nil
}

// indexArrow returns the index of the first "→", "->" or ">" at or after
// off, -1 if none.
func indexArrow(s string, off int) int {
	for i := off; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "→"), s[i] == '>':
			return i
		case s[i] == '-' && i+1 < len(s) && s[i+1] == '>':
			return i
		}
	}
	return -1
}

// portWordBefore returns the port word that ends s: "[\w.-]+" with an
// optional "(DIGITS)", as long as it reaches back.
func portWordBefore(s string) (string, bool) {
	end := len(s)
	if strings.HasSuffix(s, ")") {
		k := strings.LastIndexByte(s, '(')
		if k > 0 && leadingDigits(s[k+1:len(s)-1]) == s[k+1:len(s)-1] && k+1 < len(s)-1 {
			end = k
		} else {
			return "", false
		}
	}
	b := end
	for b > 0 && (isWordChar(s[b-1]) || s[b-1] == '.' || s[b-1] == '-') {
		b--
	}
	if b == end {
		return "", false
	}
	return s[b:], true
}

// portWordAt returns the port word that starts s and what follows it.
func portWordAt(s string) (string, string) {
	e := 0
	for e < len(s) && (isWordChar(s[e]) || s[e] == '.' || s[e] == '-') {
		e++
	}
	if e == 0 {
		return "", s
	}
	if e < len(s) && s[e] == '(' {
		d := leadingDigits(s[e+1:])
		if d != "" && e+1+len(d) < len(s) && s[e+1+len(d)] == ')' {
			e += len(d) + 2
		}
	}
	return s[:e], s[e:]
}

func (tr *textReader) tsharkLine(t string) {
	if tsharkHeaderRe.MatchString(t) {
		return
	}
	m := tsharkHead(t)
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
	tm := tsharkTCP(info)
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
	if n, ok := wordNumber(info, "Seq="); ok {
		v, _ := strconv.ParseUint(n, 10, 32)
		p.Seq = uint32(v)
	}
	if n, ok := wordNumber(info, "Ack="); ok {
		v, _ := strconv.ParseUint(n, 10, 32)
		p.Ack = uint32(v)
	}
	if n, ok := wordNumber(info, "Len="); ok {
		p.Payload, _ = strconv.Atoi(n)
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
