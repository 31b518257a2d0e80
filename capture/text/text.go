// Package text reads packet captures pasted as text: tcpdump's output
// (-nn or not, with or without -v, -e, -q, -A, -X and any -t option, from
// one interface or -i any) and tshark's or Wireshark's packet list. Each
// line becomes the decode.Packet a capture file's frame would, folded by
// a track.Tracker, so that a paste and a pcap of the same traffic give
// the same attempts; line numbers (and the frame numbers tshark printed)
// are the evidence.
package text

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/capture/track"
	"github.com/netmortem/netmortem/internal/failread"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// Text formats of pasted packet listings, as Sniff names them and Read
// takes them.
const (
	Tcpdump = "tcpdump-text" // tcpdump's output
	Tshark  = "tshark-text"  // tshark's or Wireshark's packet list
)

// Sniff reports whether head looks like pasted packet text and which:
// Tcpdump (tcpdump -nn output, with or without -v, -e, -tttt, -A)
// or Tshark (tshark / Wireshark packet list), with a score from 0
// to 100 as parse.Format.Sniff wants it.
func Sniff(head []byte) (string, int) {
	var tcpdump, tshark, total int
	rest := head
	for n := 0; len(rest) > 0 && n < 300; n++ {
		raw := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			raw, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line := strings.TrimSpace(string(raw))
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
			tcpdumpNoTimeSniffRe.MatchString(line), cutICMPRe.MatchString(line):
			tcpdump++ // a packet line, or the addresses line of tcpdump -v
		}
	}
	if total == 0 {
		return "", 0
	}
	if tshark > tcpdump && tshark > 0 {
		return Tshark, scoreOf(tshark, total)
	}
	if tcpdump > 0 {
		return Tcpdump, scoreOf(tcpdump, total)
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

// promptHostRe matches a shell prompt with a host: "root@node3:~#
// tcpdump ...".
var promptHostRe = lazyre.New(`^[A-Za-z0-9._-]+@([A-Za-z0-9._-]+):[^#$]*[#$]\s*(.*)$`)

// Read reads pasted tcpdump or tshark text (format is Tcpdump
// or Tshark) into the same attempts, ICMP events and ARP claims a
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
//
// A read whose ctx ends is cut short there: the Results hold the lines
// before, and the error, which wraps ctx.Err(), names the first line not
// read.
func Read(ctx context.Context, r io.Reader, name, format string, opts track.Options) ([]*track.Result, error) {
	tr := &textReader{name: name, format: format, node: opts.Node, opts: opts}
	tr.start(opts.Node)
	er := &failread.Reader{R: r}
	sc := bufio.NewScanner(er)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	sc.Split(er.Lines)
	var stopped error // the context's error, when it cut the read short
	for sc.Scan() {
		tr.line++
		if tr.line&1023 == 0 {
			if stopped = ctx.Err(); stopped != nil {
				break
			}
		}
		tr.handle(strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		tr.line++ // the line the read stopped in, or before
		if stopped = ctx.Err(); stopped == nil {
			tr.errs.Addf(tr.pos(), "", "reading: %w", err)
		}
	}
	if stopped != nil && tr.pendingV {
		tr.pending = nil // its addresses line not read, not missing
	}
	pos := tr.pos()
	tr.flush()
	if stopped != nil {
		tr.errs = append(tr.errs, model.Stopped(pos, stopped))
	}
	tr.finish()
	return tr.results, tr.errs.Err()
}

type textReader struct {
	name, format, node string
	opts               track.Options
	line               int
	errs               model.ErrorList
	t                  *track.Tracker
	results            []*track.Result
	packets            int
	command            string

	// pending is a tcpdump packet whose line continues on the next one
	// (-v puts the addresses on a second line; a paste may break a line).
	pending     *decode.Packet
	pendingText string
	pendingV    bool
	// held is an ICMP error shown with -v, kept until the quoted packet
	// that follows it has been read.
	held      *decode.Packet
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
	tr.t = track.NewTracker(tr.name, o)
	tr.node = node
	tr.packets = 0
}

func (tr *textReader) finish() {
	if tr.packets == 0 && len(tr.results) > 0 {
		return
	}
	res := tr.t.Finish()
	tr.errs.Append(tr.t.FarTimes())
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
			tr.t.SetNode(m[1])
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
	if tr.format == Tshark {
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
var tsharkDeltaRe = lazyre.New(`(?:^|\s)-t\s*dd?(?:\s|$)`)

// deltaCommand reports whether a pasted capture command prints times since
// the previous packet.
func deltaCommand(cmd string) bool {
	if strings.Contains(cmd, "tshark") {
		return tsharkDeltaRe.MatchString(cmd)
	}
	return tcpdumpTimeFlag(cmd) == 3
}

func (tr *textReader) emit(p *decode.Packet) {
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

// digitsAfter returns the digits after the first key that starts a word
// (word: after no letter, digit or underscore) or, otherwise, that follows
// a comma or a space.
func digitsAfter(s, key string, word bool) (string, bool) {
	for off := 0; ; {
		i := strings.Index(s[off:], key)
		if i < 0 {
			return "", false
		}
		i += off
		var bounded bool
		if word {
			bounded = i == 0 || !isWordChar(s[i-1])
		} else {
			bounded = i > 0 && (s[i-1] == ',' || s[i-1] == ' ')
		}
		if bounded {
			if n := leadingDigits(s[i+len(key):]); n != "" {
				return n, true
			}
		}
		off = i + 1
	}
}

func leadingDigits(s string) string {
	k := 0
	for k < len(s) && '0' <= s[k] && s[k] <= '9' {
		k++
	}
	return s[:k]
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
