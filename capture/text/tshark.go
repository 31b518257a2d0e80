package text

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/services"
	"github.com/netmortem/netmortem/model"
)

// tsharkHeaderRe matches the column header of tshark's packet list.
var tsharkHeaderRe = lazyre.New(`^No\.\s+Time\s+Source\s+Destination\s+Protocol\s+Length\s+Info`)

// tsharkPort reads a port of tshark's Info column: "80", "http(80)", or a
// bare service name.
func tsharkPort(tok string) (uint16, bool) {
	if i := strings.IndexByte(tok, '('); i >= 0 {
		tok = strings.TrimSuffix(tok[i+1:], ")")
	}
	if n, err := strconv.ParseUint(tok, 10, 16); err == nil {
		return uint16(n), true
	}
	return services.Port(tok)
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

// tsharkFlags are the TCP flags as tshark's Info column names them.
var tsharkFlags = map[string]uint8{"SYN": decode.SYN, "ACK": decode.ACK, "RST": decode.RST, "FIN": decode.FIN, "PSH": decode.PSH, "URG": decode.URG, "ECE": decode.ECE, "ECN": decode.ECE, "CWR": decode.CWR}

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
	p := &decode.Packet{Pos: model.Pos{File: tr.name, Line: tr.line, Frame: frame}, Time: ts}
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
		p.Flags |= tsharkFlags[strings.TrimSpace(f)]
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
	tsharkWhoHasRe = lazyre.New(`^Who has (\S+)\? Tell (\S+)`)
	tsharkIsAtRe   = lazyre.New(`^(\S+) is at ([0-9a-f:]{17})`)
	tsharkGratRe   = lazyre.New(`^Gratuitous ARP for (\S+) \((Request|Reply)\)`)
)

func (tr *textReader) tsharkARP(p *decode.Packet, info string) {
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

func isWordChar(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// wordNumber returns the digits after the first key ("Seq=") that starts
// a word.
func wordNumber(s, key string) (string, bool) { return digitsAfter(s, key, true) }
