package text

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/netmortem/netmortem/capture/decode"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/services"
	"github.com/netmortem/netmortem/model"
)

var (
	// tcpdump -t prints no timestamp: "IP 10.0.0.1.1 > 10.0.0.2.80: ...".
	// Sniffing takes the numeric form only.
	tcpdumpNoTimeRe      = lazyre.New(`^(?:(\S+)\s+(In|Out|M|B|P)\s+(?:ifindex \d+ )?)?(IP6?|ARP|[0-9a-f]{2}(?::[0-9a-f]{2}){5})[ ,]\s*(.*)$`)
	tcpdumpNoTimeSniffRe = lazyre.New(`^IP6? [0-9A-Fa-f.:]+ > [0-9A-Fa-f.:]+: `)
	// -e: "aa:bb:.. > cc:dd:.., ethertype IPv4 (0x0800), length 74: REST",
	// or on -i any (Linux SLL, SLL2), the source MAC alone:
	// "aa:bb:.. ethertype IPv4 (0x0800), length 80: REST".
	tcpdumpEtherRe = lazyre.New(`^(?:> ([^\s,]+), )?ethertype (\S+) \(0x[0-9a-f]+\), length \d+: (?:(IP6?|ARP),? ?)?(.*)$`)
	// "SRC > DST: PROTO-DETAILS" with numeric addresses and ports, what
	// sniffing trusts. Parsing, which also takes the names tcpdump prints
	// without -n ("10.0.0.1.https"), splits the line by hand (splitAddrs):
	// regular expressions cost most of the reading time.
	tcpdumpAddrRe = lazyre.New(`^([0-9A-Fa-f.:]+) > ([0-9A-Fa-f.:]+): (.*)$`)
)

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
		if n == nil && cutICMPRe.MatchString(t) {
			// An ICMP error cut before its addresses by a paste.
			p := &decode.Packet{Pos: tr.pos()}
			if tr.tcpdumpICMP(p, "", "", t) && p.ICMP != nil {
				tr.emit(p)
			}
			return
		}
		if n == nil || !noTimeLine(n[3], n[4]) {
			return // -A / -X payload, -v option lines, wrapped text
		}
		m = []string{n[0], "", "", n[1], n[2], n[3], n[4]} // tcpdump -t: no time
	}
	p := &decode.Packet{Pos: tr.pos(), Time: ts}
	kind, rest := m[5], m[6]
	if kind != "IP" && kind != "IP6" && kind != "ARP" { // -e: the source MAC came first
		e := tcpdumpEtherRe.FindStringSubmatch(rest)
		if e == nil {
			tr.errs.Addf(tr.pos(), t, "expected tcpdump -e link header \"SRC > DST, ethertype ..., length N: ...\" (or \"SRC ethertype ...\" on -i any)")
			return
		}
		tr.lastMAC = ""
		if len(kind) == 17 && isMAC(kind) {
			tr.lastMAC = kind // not a word that replaced it
		}
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

// quietTCPRe matches the TCP part of a tcpdump -q line: "tcp 0".
var quietTCPRe = lazyre.New(`^tcp \d+$`)

// decodeTcpdump fills p from the "SRC > DST: ..." part of a tcpdump line
// and reports whether it could.
func (tr *textReader) decodeTcpdump(p *decode.Packet, text string) bool {
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
		if n, ok := numberAfter(detail, "options [mss "); ok && p.Flags&decode.SYN != 0 {
			mss, _ := strconv.ParseUint(n, 10, 16)
			p.MSS = uint16(mss)
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
		if err := cmp.Or(err1, err2); errors.Is(err, errHostName) {
			// A UDP line (VXLAN, DNS) that names hosts: told as a TCP
			// line's are, not passed over unsaid.
			tr.addrError(p, text, err)
		}
		if err1 == nil && err2 == nil {
			p.Src, p.Dst = s, d
			if strings.HasPrefix(detail, "UDP") || strings.Contains(detail, "UDP,") {
				p.Proto = "udp"
			}
			// tcpdump -v checks UDP checksums: "[bad udp cksum 0x9c31 -> 0x2f5a!]".
			if strings.HasPrefix(detail, "[bad udp cksum ") {
				p.Proto, p.BadChecksum = "udp", true
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
	if port, ok := services.Port(s[i+1:]); ok {
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
func (tr *textReader) addrError(p *decode.Packet, text string, err error) {
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
			f |= decode.SYN
		case '.':
			f |= decode.ACK
		case 'F':
			f |= decode.FIN
		case 'R':
			f |= decode.RST
		case 'P':
			f |= decode.PSH
		case 'U':
			f |= decode.URG
		case 'E':
			f |= decode.ECE
		case 'W':
			f |= decode.CWR
		}
	}
	return f
}

var (
	// cutICMPRe is an ICMP unreachable error whose line a paste cut
	// before its addresses: "ICMP 10.0.0.9 unreachable - need to frag
	// (mtu 1320), length 556".
	cutICMPRe      = lazyre.New(`^ICMP (?:(?:host|net) )?\S+ (?:(?:tcp|udp) port \S+ )?unreachable\b.*, length \d+$`)
	icmpMTURe      = lazyre.New(`\(mtu (\d+)\)`)
	icmpUnreachRe  = lazyre.New(`^ICMP (?:(host|net) (\S+) unreachable|(\S+) (tcp|udp) port (\S+) unreachable|(\S+) protocol \d+ unreachable|(\S+) unreachable)(.*)$`)
	icmpRedirectRe = lazyre.New(`^ICMP redirect (\S+) to (?:host|net) ([^\s,]+)`)
)

func (tr *textReader) tcpdumpICMP(p *decode.Packet, src, dst, detail string) bool {
	s, err1 := netip.ParseAddr(src)
	d, err2 := netip.ParseAddr(dst)
	if src == "" && dst == "" {
		err1, err2 = nil, nil // a line cut before its addresses: who sent it to whom is unknown
	}
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
			if mtu := icmpMTURe.FindStringSubmatch(tail); mtu != nil {
				ev.MTU, _ = strconv.Atoi(mtu[1])
			}
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

// quotedLine reads the quoted packet of an ICMP error shown with -v and
// completes the pending event with its ports.
func (tr *textReader) quotedLine(p *decode.Packet, t string) {
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
	switch {
	case strings.HasPrefix(rest, "Flags ["):
		p.ICMP.QuotedProto = "tcp"
	case strings.HasPrefix(rest, "ICMP "):
		p.ICMP.QuotedProto = "icmp"
	case strings.HasPrefix(rest, "UDP,"):
		p.ICMP.QuotedProto = "udp"
	}
}

var (
	arpRequestRe = lazyre.New(`^(?:ARP, )?Request who-has ([^\s,]+)(?: \([0-9a-f:]+\))? tell ([^\s,]+)`)
	arpReplyRe   = lazyre.New(`^(?:ARP, )?Reply (\S+) is-at ([0-9a-f:]{17})`)
)

func (tr *textReader) tcpdumpARP(p *decode.Packet, rest string) {
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

// numberAfter returns the digits after the first key ("seq ") that follows
// a comma or a space.
func numberAfter(s, key string) (string, bool) { return digitsAfter(s, key, false) }
