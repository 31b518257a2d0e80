package host

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ClientFormat reads client-side transcripts: which destination a client
// failed to reach, and how.
var ClientFormat = &format.Format{
	Name: "client-transcript",
	Kind: model.KindClient,
	Command: "curl, curl -v, wget, nc -vz, ncat, telnet, dig, nslookup, arping and kubectl exec|port-forward|logs " +
		"transcripts pasted with or without their command lines (also kubectl exec POD -- curl ...), and " +
		"an application's bare error lines (dial tcp 10.96.0.1:443: i/o timeout)",
	Doc: "one record per destination and outcome of each command: the destination (address:port, a URL's " +
		"host and port, the DNS server and the name asked) and how it ended: connected (curl's `Connected " +
		"to`, an HTTP status line, nc's `succeeded!`/`open`, telnet's `Connected to`), refused, timeout " +
		"(`Connection timed out`, `i/o timeout`, dig's `connection timed out; no servers could be " +
		"reached`), no-answer (a command interrupted with `^C` before it printed anything), no-route, " +
		"net-unreachable, reset, addr-unavailable (`Cannot assign requested address`), unresolved " +
		"(`Could not resolve host`, `no such host`, `bad address`), or answered with its DNS status " +
		"(NOERROR, NXDOMAIN, SERVFAIL) and answers; the connect errors in the C library's words of other " +
		"languages too (`连接超时`, `Verbindungsaufbau abgelehnt`: glibc's in Chinese, Japanese, Korean, German, " +
		"French, Spanish, Portuguese, Russian and Italian); arping's replies one per MAC that answered (an " +
		"address answered from two MACs is two results), `Received 0 response(s)` a timeout. Other " +
		"commands' output is passed over",
	Sniff: sniffClient,
	Parse: format.Records(readClient, func(s *model.Snapshot, out []model.ClientResult) { s.Client = append(s.Client, out...) }, "client results"),
}

// Client parses client-side transcripts (see ClientFormat). name is used
// only in positions.
func Client(r io.Reader, name string) ([]model.ClientResult, error) {
	return format.ReadAll(r, name, readClient)
}

var (
	curlErrRe       = lazyre.New(`curl: \((\d+)\) (.+)$`)
	curlTryingRe    = lazyre.New(`^\*\s+Trying (\S+?)(?:\.\.\.)?$`)
	curlConnectedRe = lazyre.New(`^\*\s+Connected to (\S+) \(([^)]*)\) port (\d+)`)
	// "Failed to connect to X port 443 after 3 ms: Connection refused",
	// "connect to X port 443 failed: No route to host".
	failedConnectRe = lazyre.New(`(?i)^(?:\*\s+)?(?:Failed to connect to|connect to) (\S+) port (\d+)(?: from \S+ port \d+)?(?: after \d+ ?ms)?(?: failed)?: (.+)$`)
	httpStatusRe    = lazyre.New(`^(?:< )?HTTP/[0-9.]+ (\d{3})\b`)
	telnetTryingRe  = lazyre.New(`^Trying (\S+?)\.\.\.$`)
	telnetConnRe    = lazyre.New(`^Connected to (\S+?)\.?$`)
	telnetFailRe    = lazyre.New(`^telnet: (?:Unable to connect to remote host|connect to address (\S+)): (.+)$`)
	ncOKRe          = lazyre.New(`^Connection to (\S+) (\d+) port \[[^\]]*\] succeeded!`)
	ncFailRe        = lazyre.New(`^nc: connect to (\S+) port (\d+) \(\w+\) (?:failed|timed out): (.+)$`)
	ncOpenRe        = lazyre.New(`^(?:\S+ )?\((\S+?)[:.](\d+)\) open\b`)
	ncBusyFailRe    = lazyre.New(`^nc: (\S+) \((\S+?)[:.](\d+)\)(?: \([^)]*\))?: (.+)$`)
	ncatRe          = lazyre.New(`^Ncat: (.+?)\.?$`)
	wgetConnRe      = lazyre.New(`^Connecting to (?:(\S+) )?(?:\(\S+\))?\|?([^|\s]*)\|?:(\d+)\.\.\. (.+)$`)
	wgetFailRe      = lazyre.New(`^wget: can't connect to remote host \(([^)]*)\): (.+)$`)
	wgetBadRe       = lazyre.New(`^wget: (?:bad address|unable to resolve host address) ['‘]([^'’]*)`)
	wgetResolveRe   = lazyre.New(`^Resolving (\S+?)(?: \(\S+\))?\.\.\. failed: (.+)$`)
	wgetStatusRe    = lazyre.New(`^HTTP request sent, awaiting response\.\.\. (\d{3})\b`)
	kubectlRefused  = lazyre.New(`The connection to the server (\S+) was refused`)
	dialRe          = lazyre.New(`\bdial (?:tcp|udp)[46]? (\S+?): (.+)$`)
	lookupRe        = lazyre.New(`\blookup (\S+?)(?: on (\S+?))?: (.+)$`)
	rwRe            = lazyre.New(`\b(?:read|write) (?:tcp|udp)[46]? \S+->(\S+?): (.+)$`)
	arpingRe        = lazyre.New(`^ARPING (\S+)(?: from \S+ \S+)?$`)
	arpingReplyRe   = lazyre.New(`^Unicast reply from (\S+) \[([0-9A-Fa-f:]{17})\]`)
	arpingHabetsRe  = lazyre.New(`^\d+ bytes from ([0-9A-Fa-f:]{17}) \((\S+)\): index=`)
	arpingNoneRe    = lazyre.New(`^Received 0 response`)
	barePromptRe    = lazyre.New(`^\S{0,60} [$#] (\S.*)$`)
	bareClientRe    = lazyre.New(`^(?:sudo\s+)?(?:curl|wget|nc|ncat|telnet|dig|nslookup|arping)\s+\S`)
)

// classify names the outcome an error text says, "" when it says none
// netmortem reads.
func classify(msg string) model.ClientOutcome {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "refused"):
		return model.ClientRefused
	case strings.Contains(m, "no route to host"), strings.Contains(m, "host is unreachable"):
		// EHOSTUNREACH in glibc's words, and in musl's (Alpine, busybox).
		return model.ClientNoRoute
	case strings.Contains(m, "network is unreachable"), strings.Contains(m, "network unreachable"):
		return model.ClientNetUnreachable
	case strings.Contains(m, "cannot assign requested address"):
		return model.ClientAddrUnavailable
	case strings.Contains(m, "reset by peer"), strings.Contains(m, "empty reply from server"),
		strings.Contains(m, "broken pipe"), strings.Contains(m, "connection reset"):
		return model.ClientReset
	case strings.Contains(m, "no such host"), strings.Contains(m, "could not resolve"),
		strings.Contains(m, "name or service not known"), strings.Contains(m, "bad address"),
		strings.Contains(m, "temporary failure in name resolution"), strings.Contains(m, "unknown host"):
		return model.ClientUnresolved
	case strings.Contains(m, "timed out"), strings.Contains(m, "timeout"), strings.Contains(m, "deadline exceeded"):
		return model.ClientTimeout
	case strings.Contains(m, "succeeded"), strings.HasPrefix(m, "connected"):
		return model.ClientConnected
	}
	return classifyLocalized(m)
}

// clientPrompt recognizes a command line in a transcript: a shell prompt,
// busybox's "/ # ", or a client command pasted without a prompt.
func clientPrompt(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "> ") || strings.HasPrefix(t, "< ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, ";") {
		return "", false
	}
	if bareClientRe.MatchString(t) {
		return t, true
	}
	if _, cmd, ok := text.ShellCommand(line); ok {
		return cmd, true
	}
	if m := barePromptRe.FindStringSubmatch(t); m != nil {
		return strings.TrimSpace(m[1]), true
	}
	return "", false
}

// clientReader reads one transcript.
type clientReader struct {
	out     []model.ClientResult
	cmd     clientCmd
	seen    map[string]int // target|outcome of the command: its record
	trying  string         // the address curl -v or telnet is trying
	printed bool           // the command printed something
	dns     dnsState
}

func (c *clientReader) command(cmd string) {
	c.cmd = parseClientCmd(cmd)
	c.seen = map[string]int{}
	c.trying, c.printed = "", false
	c.dns = dnsState{}
}

func (c *clientReader) tool(def string) string {
	switch {
	case c.cmd.tool != "":
		return c.cmd.tool
	case def != "":
		return def
	}
	return "app"
}

// emit adds a record unless the command already said the same of the
// same destination; it returns the record's index.
func (c *clientReader) emit(l *text.Line, r model.ClientResult, host string, port uint16) int {
	if r.Target == "" {
		r.Target = hostPort(host, port)
	}
	if r.Target == "" || r.Outcome == "" {
		return -1
	}
	if !r.Addr.IsValid() {
		r.Addr = addrPort(host, port)
	}
	if r.Name == "" && !r.Addr.IsValid() && host != "" {
		r.Name = host
	}
	key := r.Target + "|" + string(r.Outcome) + "|" + r.MAC
	if i, ok := c.seen[key]; ok {
		return i
	}
	r.Pos, r.Node, r.Command = l.Pos(), l.Node, c.cmd.line
	if r.Message == "" {
		r.Message = l.Trimmed
	}
	c.out = append(c.out, r)
	c.seen[key] = len(c.out) - 1
	return len(c.out) - 1
}

// fail records a failure whose destination the command names.
func (c *clientReader) fromCmd(l *text.Line, tool string, o model.ClientOutcome) {
	host, port := c.cmd.host, c.cmd.port
	if c.trying != "" {
		if h, p := splitTarget(c.trying); h != "" {
			host = h
			if p != 0 {
				port = p
			}
		}
	}
	if host == "" && c.cmd.name != "" {
		c.dns.fail(c, l, o)
		return
	}
	c.emit(l, model.ClientResult{Tool: c.tool(tool), Outcome: o}, host, port)
}

func readClient(r io.Reader, src *format.File, errs *model.ErrorList) []model.ClientResult {
	c := &clientReader{}
	c.command(src.Command)
	var last *text.Line
	prompt := func(l *text.Line, cmd string) {
		c.dns.finish(c)
		c.command(cmd)
	}
	text.ReadLines(r, src, errs, text.Hooks{Prompt: prompt}, func(l *text.Line) {
		last = l
		if cmd, ok := clientPrompt(l.Text()); ok {
			prompt(l, cmd)
			return
		}
		c.line(l)
	})
	if last != nil {
		c.dns.finish(c)
	}
	// DNS lookups are recorded when their output ends: in line order.
	slices.SortStableFunc(c.out, func(a, b model.ClientResult) int { return a.Pos.Line - b.Pos.Line })
	return c.out
}

// line reads one output line.
func (c *clientReader) line(l *text.Line) {
	t := l.Trimmed
	if t == "^C" {
		if !c.printed && (c.cmd.host != "" || c.cmd.name != "") {
			c.fromCmd(l, "", model.ClientNoAnswer)
		}
		return
	}
	if strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">") && !strings.Contains(t, " ") {
		return // the paster's note: <hangs>
	}
	c.printed = true
	if c.dns.line(c, l) {
		return
	}
	if m := curlErrRe.FindStringSubmatch(t); m != nil {
		l.Trimmed = t[strings.Index(t, "curl: ("):]
		if c.connectLine(l, "curl", m[2]) {
			return
		}
		if o := classify(m[2]); o != "" {
			c.fromCmd(l, "curl", o)
		}
		return
	}
	if c.connectLine(l, "", t) {
		return
	}
	if m := httpStatusRe.FindStringSubmatch(t); m != nil && c.cmd.host != "" {
		host, port := c.cmd.host, c.cmd.port
		if i := c.emit(l, model.ClientResult{Tool: c.tool("curl"), Outcome: model.ClientConnected}, host, port); i >= 0 && c.out[i].Status == "" {
			c.out[i].Status = m[1]
		}
		return
	}
	if m := wgetStatusRe.FindStringSubmatch(t); m != nil && c.cmd.host != "" {
		if i := c.emit(l, model.ClientResult{Tool: "wget", Outcome: model.ClientConnected}, c.cmd.host, c.cmd.port); i >= 0 && c.out[i].Status == "" {
			c.out[i].Status = m[1]
		}
		return
	}
	c.appLine(l)
}

// connectLine reads the lines that say how a connection attempt ended
// with its destination; msg is the line or curl's message.
func (c *clientReader) connectLine(l *text.Line, tool, msg string) bool {
	port := func(s string) uint16 { n, _ := strconv.ParseUint(s, 10, 16); return uint16(n) }
	res := func(tool string, o model.ClientOutcome) model.ClientResult {
		return model.ClientResult{Tool: c.tool(tool), Outcome: o}
	}
	var m []string
	is := func(re *lazyre.Regexp) bool { m = re.FindStringSubmatch(msg); return m != nil }
	switch {
	case is(curlTryingRe):
		c.trying = m[1]
	case is(telnetTryingRe):
		c.trying = m[1]
	case is(failedConnectRe):
		c.emit(l, res(tool, classify(m[3])), m[1], port(m[2]))
	case is(curlConnectedRe):
		host := m[2]
		if !addrPort(host, 0).Addr().IsValid() {
			host = m[1]
		}
		c.emit(l, res("curl", model.ClientConnected), host, port(m[3]))
	case is(telnetConnRe) && c.cmd.tool == "telnet":
		c.fromCmd(l, "telnet", model.ClientConnected)
	case is(telnetFailRe):
		if m[1] != "" {
			c.trying = m[1]
		}
		c.fromCmd(l, "telnet", classify(m[2]))
	case is(ncOKRe):
		c.emit(l, res("nc", model.ClientConnected), m[1], port(m[2]))
	case is(ncFailRe):
		o := classify(m[3])
		if strings.Contains(msg, ") timed out") {
			o = model.ClientTimeout
		}
		c.emit(l, res("nc", o), m[1], port(m[2]))
	case is(ncOpenRe):
		c.emit(l, res("nc", model.ClientConnected), m[1], port(m[2]))
	case is(ncBusyFailRe):
		c.emit(l, res("nc", classify(m[4])), m[2], port(m[3]))
	case is(ncatRe):
		if rest, ok := strings.CutPrefix(m[1], "Connected to "); ok {
			h, p := splitTarget(rest)
			c.emit(l, res("nc", model.ClientConnected), h, p)
		} else if o := classify(m[1]); o != "" {
			c.fromCmd(l, "nc", o)
		} else if strings.EqualFold(m[1], "TIMEOUT") {
			c.fromCmd(l, "nc", model.ClientTimeout)
		}
	case is(wgetConnRe):
		host := m[2]
		if host == "" {
			host = m[1]
		}
		o := classify(m[4])
		if strings.HasPrefix(m[4], "connected") {
			o = model.ClientConnected
		}
		c.emit(l, res("wget", o), host, port(m[3]))
	case is(wgetFailRe):
		c.emit(l, res("wget", classify(m[2])), m[1], c.cmd.port)
	case is(wgetBadRe):
		c.emit(l, res("wget", model.ClientUnresolved), m[1], 0)
	case is(wgetResolveRe):
		c.emit(l, res("wget", model.ClientUnresolved), m[1], 0)
	case strings.HasPrefix(msg, "wget: download timed out"):
		c.fromCmd(l, "wget", model.ClientTimeout)
	case is(arpingRe):
		c.trying = m[1]
	case is(arpingReplyRe):
		c.emit(l, model.ClientResult{Tool: "arping", Outcome: model.ClientConnected, MAC: strings.ToLower(m[2])}, m[1], 0)
	case is(arpingHabetsRe):
		c.emit(l, model.ClientResult{Tool: "arping", Outcome: model.ClientConnected, MAC: strings.ToLower(m[1])}, m[2], 0)
	case is(arpingNoneRe):
		if c.trying != "" {
			c.emit(l, model.ClientResult{Tool: "arping", Outcome: model.ClientTimeout}, c.trying, 0)
		}
	case is(kubectlRefused):
		h, p := splitTarget(m[1])
		c.emit(l, res("kubectl", model.ClientRefused), h, p)
	default:
		return false
	}
	return true
}

// appLine reads the error lines of Go programs (kubectl among them) and
// other applications: "dial tcp 10.96.0.1:443: i/o timeout", "lookup
// NAME on 10.96.0.10:53: no such host", "read tcp A->B: read: connection
// reset by peer".
func (c *clientReader) appLine(l *text.Line) {
	t := l.Trimmed
	if m := dialRe.FindStringSubmatch(t); m != nil {
		if o := classify(m[2]); o != "" && o != model.ClientConnected {
			h, p := splitTarget(m[1])
			c.emit(l, model.ClientResult{Tool: c.tool("app"), Outcome: o}, h, p)
		}
		return
	}
	if m := lookupRe.FindStringSubmatch(t); m != nil {
		o := classify(m[3])
		if o == model.ClientTimeout || o == model.ClientRefused || o == model.ClientUnresolved {
			r := model.ClientResult{Tool: c.tool("app"), Outcome: o, Name: m[1]}
			if m[2] != "" {
				h, p := splitTarget(m[2])
				r.Target, r.Addr = hostPort(h, p), addrPort(h, p)
			} else {
				r.Target = m[1]
			}
			c.emit(l, r, "", 0)
		}
		return
	}
	if m := rwRe.FindStringSubmatch(t); m != nil {
		if o := classify(m[2]); o != "" && o != model.ClientConnected {
			h, p := splitTarget(m[1])
			c.emit(l, model.ClientResult{Tool: c.tool("app"), Outcome: o}, h, p)
		}
	}
}

var (
	// curlMeterRe is curl's progress meter, which a failure message
	// follows on the same line when stderr is not a terminal.
	curlMeterRe = lazyre.New(`^[\s0-9:.kMG%-]*$`)
	// clientStrong are lines only a client prints.
	clientStrong = []*lazyre.Regexp{
		curlTryingRe, curlConnectedRe, failedConnectRe, telnetFailRe, ncOKRe, ncFailRe, ncBusyFailRe,
		wgetConnRe, wgetFailRe, wgetBadRe, wgetResolveRe, wgetStatusRe, kubectlRefused,
		digBannerRe, digHeaderRe, digCommErrRe, nsCantFindRe, nsCantResolveRe, arpingRe, arpingReplyRe, arpingHabetsRe,
		lazyre.New(`^Ncat: (?:Connected to|Connection refused|Connection timed out|TIMEOUT|No route to host)`),
		lazyre.New(`^;; connection timed out; no servers could be reached`),
		lazyre.New(`^(?:error: )?(?:Error from server: )?error dialing backend: `),
		// Not its TLS failures: the connection was made, and the
		// client-errors format reads them.
		lazyre.New(`^Unable to connect to the server: (?:[^xt]|x[^5]|t[^l])`),
		lazyre.New(`^error: (?:error upgrading connection|unable to forward port)`),
	}
	// appErrRe are an application's bare error lines.
	appErrRe = lazyre.New(`^(?:\w+ )?(?:dial (?:tcp|udp)[46]? \S+: |lookup \S+ on \S+: |(?:read|write) (?:tcp|udp)[46]? \S+->\S+: )`)
)

// sniffClient claims text holding a line only a client prints (curl's
// errors and -v lines, nc's, telnet's, wget's, dig's and nslookup's,
// kubectl's dialing errors), or made of an application's bare error
// lines. A shell loop of nc connects is the connect-loop format's.
//
// Only prompts, curl's `* Trying`, telnet's `Connected to`, dig's `;;`
// headers and the like make a transcript: bare application lines score
// below net-error-lines, which reads them as their component's events.
func sniffClient(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	strong, app, other, ncOnly := 0, 0, 0, 0
	prompted, clientCmd := false, false
	for _, line := range text.HeadLines(head, 400) {
		t := strings.TrimSpace(line)
		if _, cmd, ok := text.Prompt(line); ok {
			if _, loop, _ := parseProbeCmd(cmd); loop {
				return 0
			}
			prompted = true
			clientCmd = clientCmd || isClientCommand(cmd)
			continue
		}
		if bareClientRe.MatchString(t) {
			clientCmd = true
		}
		if ncOKRe.MatchString(t) || ncFailRe.MatchString(t) {
			ncOnly++
		}
		if i := strings.Index(t, "curl: ("); i >= 0 && curlMeterRe.MatchString(t[:i]) && curlErrRe.MatchString(t) {
			strong++
			continue
		}
		hit := false
		for _, re := range clientStrong {
			if re.MatchString(t) {
				hit = true
				break
			}
		}
		switch {
		case hit:
			strong++
		case appErrRe.MatchString(t) && classify(t) != "":
			app++
		default:
			if _, ok := clientPrompt(line); !ok {
				other++
			}
		}
	}
	switch {
	case strong > 0 && strong == ncOnly && !prompted:
		// nc's lines alone may be a connect loop's output cut from
		// its command line: the loop's format reads it with it.
		return 70
	case strong > 0:
		return 85
	case app > 0 && other == 0 && clientCmd:
		// An application's error lines under the client command that
		// printed them (kubectl exec POD -- curl ...).
		return 85
	case app > 0 && other == 0:
		// Bare error lines with no transcript around them: a component's
		// log cut down to its errors, which net-error-lines (80) reads as
		// the component's events; this format takes the lines it does not.
		return 75
	case app > 0 && app >= other:
		return 50
	}
	return 0
}

// isClientCommand reports whether a command line runs one of the clients
// this format reads, directly, under sudo or through kubectl exec.
func isClientCommand(cmd string) bool {
	t := strings.TrimSpace(cmd)
	if bareClientRe.MatchString(t) {
		return true
	}
	if _, after, ok := strings.Cut(t, " -- "); ok {
		return bareClientRe.MatchString(strings.TrimSpace(after))
	}
	return false
}
