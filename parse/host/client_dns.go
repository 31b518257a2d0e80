package host

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/text"
)

var (
	digBannerRe     = lazyre.New(`^; <<>> DiG \S+ <<>> (.*)$`)
	digHeaderRe     = lazyre.New(`^;; ->>HEADER<<- opcode: \w+, status: (\w+)`)
	digServerRe     = lazyre.New(`^;; SERVER: ([^#\s]+)#(\d+)`)
	digCommErrRe    = lazyre.New(`^;; communications error to ([^#\s]+)#(\d+): (.+)$`)
	digAnswerRe     = lazyre.New(`^(\S+)\s+\d+\s+IN\s+(?:A|AAAA)\s+(\S+)$`)
	nsServerRe      = lazyre.New(`^Server:\s+(\S+)$`)
	nsAddressRe     = lazyre.New(`^Address(?: \d+)?:\s+(\S+?)(?:#(\d+))?(?:\s.*)?$`)
	nsNameRe        = lazyre.New(`^Name:\s+(\S+)$`)
	nsCantFindRe    = lazyre.New(`^\*\*\*? (?:server can't find|Can't find) (\S+?):? (No answer|\S+?)\.?$`)
	nsCantResolveRe = lazyre.New(`^nslookup: can't resolve '([^']*)'`)
)

// dnsState is the DNS lookup a dig or nslookup transcript is printing.
type dnsState struct {
	open    bool // a lookup's result is being read
	tool    string
	name    string
	server  string
	sport   uint16
	status  string
	answers []netip.Addr
	posv    model.Pos // the line that says how it ended
	node    string
	msg     string
	inAns   bool // in dig's ANSWER SECTION
	nsAfter bool // nslookup printed its Name: line: Address lines are answers
}

func (d *dnsState) start(c *clientReader, tool string) {
	*d = dnsState{open: true, tool: tool, name: c.cmd.name, server: c.cmd.server, sport: c.cmd.sport}
	if d.sport == 0 {
		d.sport = 53
	}
}

func (d *dnsState) at(l *text.Line) {
	if d.posv.Line == 0 {
		d.posv, d.node, d.msg = l.Pos(), l.Node, l.Trimmed
	}
}

// result is the record of the lookup so far.
func (d *dnsState) result(o model.ClientOutcome) model.ClientResult {
	r := model.ClientResult{Tool: d.tool, Outcome: o, Name: d.name, Status: d.status, Answers: d.answers, Message: d.msg}
	if d.server != "" {
		r.Target = hostPort(d.server, d.sport)
		r.Addr = addrPort(d.server, d.sport)
	} else {
		r.Target = d.name
	}
	return r
}

// finish records an answered lookup.
func (d *dnsState) finish(c *clientReader) {
	if !d.open || d.posv.Line == 0 || d.status == "" {
		*d = dnsState{}
		return
	}
	r := d.result(model.ClientAnswered)
	r.Pos, r.Node, r.Command = d.posv, d.node, c.cmd.line
	key := r.Target + "|" + string(r.Outcome) + "|" + d.name
	if _, ok := c.seen[key]; !ok && r.Target != "" {
		c.out = append(c.out, r)
		c.seen[key] = len(c.out) - 1
	}
	*d = dnsState{}
}

// fail records a lookup that got no answer.
func (d *dnsState) fail(c *clientReader, l *text.Line, o model.ClientOutcome) {
	if !d.open {
		tool := c.cmd.tool
		if tool != "dig" && tool != "nslookup" {
			tool = "nslookup"
		}
		d.start(c, tool)
	}
	r := d.result(o)
	r.Message = ""
	c.emit(l, r, "", 0)
	*d = dnsState{}
}

// line reads a line of dig's or nslookup's output; it reports whether
// the line was one.
func (d *dnsState) line(c *clientReader, l *text.Line) bool {
	t := l.Trimmed
	var m []string
	is := func(re *lazyre.Regexp) bool { m = re.FindStringSubmatch(t); return m != nil }
	switch {
	case is(digBannerRe):
		d.finish(c)
		dc := parseClientCmd("dig " + m[1])
		c.cmd.name, c.cmd.server, c.cmd.sport = dc.name, dc.server, dc.sport
		if c.cmd.tool == "" {
			c.cmd.tool = "dig"
		}
		d.start(c, "dig")
	case strings.HasPrefix(t, ";; connection timed out; no servers could be reached"):
		d.fail(c, l, model.ClientTimeout)
	case is(digCommErrRe):
		if !d.open {
			d.start(c, c.tool("dig"))
		}
		d.server = m[1]
		if p, err := strconv.ParseUint(m[2], 10, 16); err == nil {
			d.sport = uint16(p)
		}
		if o := classify(m[3]); o != "" && o != model.ClientConnected {
			r := d.result(o)
			r.Message = ""
			c.emit(l, r, "", 0)
		}
	case is(digHeaderRe):
		if !d.open {
			d.start(c, "dig")
		}
		d.status = m[1]
		d.at(l)
	case t == ";; ANSWER SECTION:":
		d.inAns = true
	case is(digServerRe):
		if d.open {
			d.server = m[1]
			if p, err := strconv.ParseUint(m[2], 10, 16); err == nil {
				d.sport = uint16(p)
			}
		}
	case d.inAns && is(digAnswerRe):
		if a, err := netip.ParseAddr(m[2]); err == nil {
			d.answers = append(d.answers, a)
		}
	case strings.HasPrefix(t, ";;"):
		d.inAns = false
		if strings.HasPrefix(t, ";; MSG SIZE") {
			d.finish(c)
		}
	case strings.HasPrefix(t, ";"):
	case is(nsServerRe):
		d.finish(c)
		d.start(c, "nslookup")
		d.server = m[1]
	case is(nsNameRe) && d.open:
		d.name = strings.TrimSuffix(m[1], ".")
		d.nsAfter = true
		if d.status == "" {
			d.status = "NOERROR"
		}
		d.at(l)
	case is(nsAddressRe) && d.open:
		if d.nsAfter {
			if a, err := netip.ParseAddr(m[1]); err == nil {
				d.answers = append(d.answers, a)
			}
		} else if m[2] != "" {
			d.server = m[1]
			if p, err := strconv.ParseUint(m[2], 10, 16); err == nil {
				d.sport = uint16(p)
			}
		}
	case is(nsCantFindRe):
		if !d.open {
			d.start(c, "nslookup")
		}
		d.name = m[1]
		st := strings.ToUpper(m[2])
		if st == "NO" || !isRcode(st) {
			st = "NOERROR" // "No answer": the name exists without the record
		}
		d.status = st
		d.at(l)
	case is(nsCantResolveRe):
		if !d.open {
			d.start(c, "nslookup")
		}
		d.name = m[1]
		d.fail(c, l, model.ClientUnresolved)
	case t == "Non-authoritative answer:" || strings.HasPrefix(t, "Authoritative answers can be found"):
	default:
		return false
	}
	return true
}

func isRcode(s string) bool {
	switch s {
	case "NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "FORMERR", "NOTIMP":
		return true
	}
	return false
}
