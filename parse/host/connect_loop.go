package host

import (
	"io"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// ProbesFormat reads connect loops run by hand (nc) with their output.
var ProbesFormat = &format.Format{
	Name: "connect-loop",
	Kind: model.KindProbes,
	Command: "a pasted shell loop of nc (netcat, ncat, nc.traditional, nc.openbsd) connects with its " +
		"output: for x in $(seq 1 1000); do nc IP PORT -nvz 2>&1 | grep -v open; done | wc -l and" +
		" its count, or each try's line",
	Doc: "one run per loop: the target, the tries (`seq 1 N`, `seq N`, `seq A STEP B`, `{1..N}`) " +
		"and the failures, from the count (`wc -l`, `grep -c`) of the lines a grep keeps (`grep " +
		"-v open`/`succeeded`: failures; `grep open`: successes; `grep refused`: failures) or " +
		"from each try's line (`succeeded`, `open`, `Connected` against `refused`, `timed out`, " +
		"`No route`, `failed`); other commands of the session are not read. `stale-dnat` holds " +
		"the share that failed against the share its stale targets predict",
	Sniff: sniffProbes,
	Parse: format.Records(readProbes, func(s *model.Snapshot, out []model.ProbeRun) { s.Probes = append(s.Probes, out...) }, "probe runs"),
}

// Probes parses pasted terminal sessions in which a shell loop tries TCP
// connections with nc (netcat, ncat) to one address:
//
//	root@toolbox:~# for x in $(seq 1 1000); do nc 10.178.64.10 53 -nvz 2>&1 | grep -v open; done | wc -l
//	257
//
// The number of tries comes from the loop (seq 1 N, seq N, {1..N}). When the
// loop's output is counted (wc -l, grep -c), the count on the next line is
// the number of failures if the filter drops the successes (grep -v open,
// grep -v succeeded) or keeps the failures (grep refused), and the number
// of successes if it keeps them (grep open). Otherwise each try's own line
// is read ("... open", "succeeded!", "Connected to" against "Connection
// refused", "timed out", "No route to host"). Other commands of the session
// and their output are not read. A loop whose target or count cannot be
// read is reported with its position. name is used only in positions.
func Probes(r io.Reader, name string) ([]model.ProbeRun, error) {
	return format.ReadAll(r, name, readProbes)
}

var (
	seqRe   = lazyre.New(`\bseq\s+(\d+)(?:\s+(\d+))?(?:\s+(\d+))?`)
	braceRe = lazyre.New(`\{(\d+)\.\.(\d+)\}`)
	grepRe  = lazyre.New(`\bgrep((?:\s+-[A-Za-z]+)*)\s+(?:-e\s+)?(?:"([^"]*)"|'([^']*)'|(\S+))`)
)

// ncArgFlags are the nc options (traditional, OpenBSD and ncat) that take
// an argument.
const ncArgFlags = "wipsxXqIOTWeg"

// probeCmd is what a connect loop's command line says.
type probeCmd struct {
	tool     string
	target   netip.AddrPort
	tries    int  // 0 when the loop does not say
	counted  bool // the output is counted (wc -l, grep -c)
	filtered bool // a grep keeps only some result lines
	failures bool // the kept (or counted) lines are the failures
}

// parseProbeCmd reads a loop's command line; ok is false when it is not a
// connect loop with nc.
func parseProbeCmd(cmd string) (pc probeCmd, ok bool, err string) {
	if !strings.Contains(cmd, "for ") && !strings.Contains(cmd, "while ") {
		return pc, false, ""
	}
	f := strings.Fields(strings.NewReplacer(";", " ; ", "|", " | ", "(", " ( ", ")", " ) ").Replace(cmd))
	at := -1
	for i, w := range f {
		// Debian installs the two netcats as nc.traditional and nc.openbsd.
		name, _, _ := strings.Cut(path.Base(w), ".")
		switch name {
		case "nc", "ncat", "netcat":
			pc.tool, at = name, i
		}
		if at >= 0 {
			break
		}
	}
	if at < 0 {
		return pc, false, ""
	}
	var host, port string
	for i := at + 1; i < len(f) && port == ""; i++ {
		w := f[i]
		switch {
		case w == ";" || w == "|" || w == ")" || strings.HasPrefix(w, "2>") || w == ">":
			i = len(f)
		case strings.HasPrefix(w, "-"):
			if last := w[len(w)-1]; len(w) > 1 && strings.IndexByte(ncArgFlags, last) >= 0 {
				i++ // the option's argument
			}
		case host == "":
			host = w
		default:
			port = w
		}
	}
	if host == "" || port == "" {
		return pc, true, "expected the target address and port after " + pc.tool
	}
	addr, aerr := netip.ParseAddr(strings.Trim(host, "[]"))
	p, perr := strconv.ParseUint(port, 10, 16)
	if aerr != nil || perr != nil {
		return pc, true, "expected an IP address and a port number after " + pc.tool + ", not " + strconv.Quote(host+" "+port)
	}
	pc.target = netip.AddrPortFrom(addr.Unmap(), uint16(p))
	if m := seqRe.FindStringSubmatch(cmd); m != nil {
		a, _ := strconv.Atoi(m[1])
		switch {
		case m[3] != "": // seq FIRST INCR LAST
			b, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[3])
			if b > 0 && c >= a {
				pc.tries = (c-a)/b + 1
			}
		case m[2] != "":
			b, _ := strconv.Atoi(m[2])
			if b >= a {
				pc.tries = b - a + 1
			}
		default:
			pc.tries = a
		}
	} else if m := braceRe.FindStringSubmatch(cmd); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		if b >= a {
			pc.tries = b - a + 1
		}
	}
	for _, m := range grepRe.FindAllStringSubmatch(cmd, -1) {
		flags, pat := m[1], m[2]+m[3]+m[4]
		invert := strings.Contains(flags, "v")
		if strings.Contains(flags, "c") {
			pc.counted = true
		}
		switch {
		case probeSuccess(pat):
			pc.filtered, pc.failures = true, invert
		case probeFailure(pat):
			pc.filtered, pc.failures = true, !invert
		}
	}
	if strings.Contains(cmd, "wc -l") {
		pc.counted = true
	}
	if pc.counted && !pc.filtered {
		return pc, true, "the loop counts its output without a grep that tells successes from failures"
	}
	return pc, true, ""
}

func probeSuccess(s string) bool {
	return strings.Contains(s, "open") || strings.Contains(s, "succeeded") || strings.Contains(s, "Connected")
}

func probeFailure(s string) bool {
	for _, w := range []string{"refused", "timed out", "No route", "failed", "unreachable", "Connection reset"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func readProbes(r io.Reader, src *format.File, errs *model.ErrorList) []model.ProbeRun {
	var out []model.ProbeRun
	var cur *model.ProbeRun
	var pc probeCmd
	kept, fails, succ := 0, 0, 0 // result lines: kept by a grep, failures, successes
	finish := func() {
		if cur == nil {
			return
		}
		switch {
		case pc.counted:
		case pc.filtered:
			// Only one kind of line is printed: count them.
			if pc.failures {
				cur.Failed = kept
			} else {
				cur.Failed = cur.Attempts - kept
			}
		default:
			cur.Failed = fails
			if cur.Attempts == 0 {
				cur.Attempts = fails + succ
			}
		}
		if cur.Attempts > 0 && cur.Result.Line > 0 && cur.Failed <= cur.Attempts && cur.Failed >= 0 {
			out = append(out, *cur)
		} else if cur.Result.Line == 0 {
			errs.Addf(cur.Pos, cur.Command, "%w: no result follows the connect loop", format.ErrSyntax)
		} else {
			errs.Addf(cur.Result, "", "%w: %d failures of %d tries does not add up", format.ErrSyntax, cur.Failed, cur.Attempts)
		}
		cur = nil
	}
	prompt := func(l *text.Line, cmd string) {
		finish()
		c, loop, bad := parseProbeCmd(cmd)
		if !loop {
			return
		}
		if bad != "" {
			l.Errorf("%w: %s", format.ErrSyntax, bad)
			return
		}
		pc, kept, fails, succ = c, 0, 0, 0
		cur = &model.ProbeRun{Pos: l.Pos(), Node: l.Node, Tool: c.tool, Command: cmd, Target: c.target, Attempts: c.tries}
	}
	text.ReadLines(r, src, errs, text.Hooks{Prompt: prompt}, func(l *text.Line) {
		if cur == nil {
			return // another command's output
		}
		t := l.Trimmed
		if pc.counted {
			if cur.Result.Line > 0 {
				return
			}
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 {
				l.Errorf("%w: expected the loop's count", format.ErrSyntax)
				cur = nil
				return
			}
			cur.Result = l.Pos()
			if pc.failures {
				cur.Failed = n
			} else {
				cur.Failed = cur.Attempts - n
			}
			return
		}
		switch {
		case pc.filtered:
			kept++
			cur.Result = l.Pos()
		case probeFailure(t):
			fails++
			cur.Result = l.Pos()
		case probeSuccess(t):
			succ++
			cur.Result = l.Pos()
		}
	})
	finish()
	return out
}

func sniffProbes(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	for _, line := range text.HeadLines(head, 400) {
		if _, cmd, ok := text.Prompt(line); ok {
			if _, loop, bad := parseProbeCmd(cmd); loop && bad == "" {
				return 80
			}
		}
	}
	return 0
}
