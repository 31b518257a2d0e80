package logs

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// NetErrorLinesFormat reads a component's failing network calls quoted
// without their log prefix: Go's net errors, one a line, as a ticket
// pastes the one line its logs fill with; and, the same way, nginx's
// failures to reach an upstream and an Ingress controller's word that a
// Service has no endpoint, and a CNI plugin's error.
var NetErrorLinesFormat = &format.Format{
	Name: "net-error-lines",
	Kind: model.KindLogs,
	Command: "a component's log lines cut down to their error, without time or level (`dial tcp 10.96.0.1:443: " +
		"connect: network is unreachable`)",
	Doc: "each line must hold a Go network error (`dial tcp ADDR: connect: ...`, `read tcp A->B: read: connection " +
		"reset by peer`, `... i/o timeout`, `... cannot assign requested address`, `listen tcp ADDR: bind: address " +
		"already in use`), nginx's error-log message " +
		"without its time (`connect() failed (111: Connection refused) while connecting to upstream, client: ..., " +
		"upstream: \"http://...\"`, its context in Fields as nginx-error gives it), an Ingress controller's " +
		"`Service \"NS/NAME\" does not have any active Endpoint`, or a CNI plugin's error a sandbox's failure quotes (`failed " +
		"to set bridge addr: \"cni0\" already has an IP address different from ...`, `open /run/flannel/subnet.env: no such " +
		"file or directory`, `failed to find plugin \"X\" in path [...]`, an IPAM's `no IP addresses available in range " +
		"set` or `cannot allocate new block due to per host block limit`), or an iptables command that failed " +
		"for want of a chain as the program that ran it quotes it (Docker's `iptables failed: iptables --wait -t nat " +
		"-A DOCKER ...: iptables: No chain/target/match by that name.`, firewalld's `COMMAND_FAILED: ...`); the event has no time, its level is error " +
		"(warning for the controller's line) and its source is the component the file (coredns.log, " +
		"capo-controller-manager.log) or the command above it is named after",
	Sniff: sniffNetErrorLines,
	Parse: format.Records(readNetErrorLines, func(s *model.Snapshot, out []model.LogEvent) {
		s.Logs = append(s.Logs, out...)
	}, "events"),
}

// NetErrorLines parses lines of Go network errors. A line that holds none
// is reported with its position and the rest is read. name names the
// lines' source and is used in positions.
func NetErrorLines(r io.Reader, name string) ([]model.LogEvent, error) {
	return format.ReadAll(r, name, readNetErrorLines)
}

// netErrorRe finds a Go network error: the operation, its network and
// addresses, and the error.
var netErrorRe = lazyre.New(`\b(?:dial|read|write) (?:tcp|udp)[46]? (?:\S+->)?\S+: (?:(?:connect|read|write|getsockopt): )?` +
	`(connection refused|no route to host|network is unreachable|i/o timeout|cannot assign requested address|` +
	`connection reset by peer|connection timed out|broken pipe)|\blisten (?:tcp|udp)[46]? \S+: bind: (address already in use)`)

// nginxBareRe is nginx's error-log message without its time and
// process: `connect() failed (111: Connection refused) while connecting
// to upstream, client: ...`.
var nginxBareRe = lazyre.New(`^(?:\S+\(\) failed|upstream timed out|upstream prematurely closed connection|no live upstreams|upstream sent\b)[^,]*?\bwhile (?:connecting to|reading [a-z ]+ from|sending [a-z ]+ to) upstream, `)

// noEndpointLineRe is an Ingress controller's line that a Service has no
// endpoint (ingress-nginx: `Service "NS/NAME" does not have any active
// Endpoint.`; its releases of 2016 wrote "does no have").
var noEndpointLineRe = lazyre.New(`(?i)^service "?[a-z0-9][a-z0-9./-]*"? does not? have any active endpoints?\b`)

// cniErrorRe is a CNI plugin's error as a sandbox's failure quotes it:
// the bridge plugin's `failed to set bridge addr: "cni0" already has an IP
// address different from 10.244.1.1/24`, flannel's `open
// /run/flannel/subnet.env: no such file or directory`, libcni's `failed to
// find plugin "loopback" in path [/opt/cni/bin]`, the IPAMs' `no IP
// addresses available in range set` (host-local) and `cannot allocate new
// block due to per host block limit` (Calico); in any case, the bridge's
// words with or without those before them.
var cniErrorRe = lazyre.New(`(?i)(?:\bfailed to set bridge addr: )?\S+ already has an IP address different from |` +
	`\bopen /run/flannel/subnet\.env: no such file or directory|\bfailed to find plugin "[^"]+" in path \[|` +
	`\bno IP addresses available in (?:range set|network)|\bcannot allocate new block due to per host block limit`)

// iptablesFailRe is an iptables command that failed for want of a chain
// or target, as the program that ran it quotes it: Docker's "iptables
// failed: iptables --wait -t nat -A DOCKER ...: iptables: No
// chain/target/match by that name." (in `docker run`'s error and
// dockerd's), nf_tables' "Chain 'DOCKER' does not exist", firewalld's
// "COMMAND_FAILED: '/sbin/iptables -w2 -t nat -A DOCKER ...' failed: ...".
var iptablesFailRe = lazyre.New("(?:\\biptables failed: |\\bCOMMAND_FAILED: ')(?:/(?:usr/)?s?bin/)?ip6?tables\\b.*?" +
	"(No chain/target/match by that name|Chain '[^']+' does not exist|Couldn't load target `[^']+')")

// exitStatusRe is the line Docker's error ends on when the message of
// the command it ran ends its own with a line break.
var exitStatusRe = lazyre.New(`^\(exit status \d+\)\)?\.?$`)

// bareErrorLine reads t, a line of net-error-lines, into an event of
// source: its error and level, and nginx's context in Fields.
func bareErrorLine(t, source string) (model.LogEvent, bool) {
	if m := netErrorRe.FindStringSubmatch(t); m != nil {
		return model.LogEvent{Source: source, Level: "error", Message: t, Fields: map[string]string{"error": m[1] + m[2]}}, true
	}
	if nginxBareRe.MatchString(t) {
		ev := nginxContext(t)
		ev.Source, ev.Level = source, "error"
		return ev, true
	}
	if noEndpointLineRe.MatchString(t) {
		return model.LogEvent{Source: source, Level: "warning", Message: t}, true
	}
	if m := iptablesFailRe.FindStringSubmatch(t); m != nil {
		if strings.HasPrefix(t, "docker: ") {
			source = "docker" // the CLI names itself
		}
		return model.LogEvent{Source: source, Level: "error", Message: t, Fields: map[string]string{"error": m[1]}}, true
	}
	if m := cniErrorRe.FindString(t); m != "" {
		return model.LogEvent{Source: source, Level: "error", Message: t,
			Fields: map[string]string{"error": strings.TrimSpace(m)}}, true
	}
	return model.LogEvent{}, false
}

// netErrorSource names the component of a file of error lines: the one
// it is named after, or its name without extensions.
func netErrorSource(name string) string {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	if c := knownComponent(base); c != "" {
		return c
	}
	stem, _, _ := strings.Cut(base, ".")
	return stem
}

func readNetErrorLines(r io.Reader, src *format.File, errs *model.ErrorList) []model.LogEvent {
	var out []model.LogEvent
	source := netErrorSource(src.Name)
	text.ReadLines(r, src, errs, text.Hooks{Command: func(cmd string) {
		if s := sourceFromCommand(cmd); s != "" {
			source = s
		}
	}}, func(l *text.Line) {
		ev, ok := bareErrorLine(l.Trimmed, source)
		if !ok && exitStatusRe.MatchString(l.Trimmed) {
			return // the end of the error before it
		}
		if !ok {
			l.Syntax(fmt.Errorf("expected a network error (\"dial tcp 10.96.0.1:443: connect: connection refused\"), "+
				"nginx's upstream error (\"connect() failed (111: ...) while connecting to upstream, ...\"), an Ingress "+
				"controller's \"Service ... does not have any active Endpoint\" or a CNI plugin's error, got %q", l.Trimmed))
			return
		}
		ev.Node, ev.Pos = l.Node, l.Pos()
		out = append(out, ev)
	})
	return out
}

func sniffNetErrorLines(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	found := 0
	for _, line := range text.HeadLines(head, 200) {
		t := strings.TrimSpace(line)
		if t == "" || text.IsPromptOrMarker(line) {
			continue
		}
		if exitStatusRe.MatchString(t) {
			continue
		}
		if _, ok := bareErrorLine(t, ""); !ok || strings.HasPrefix(t, "{") {
			return 0 // JSON records holding an error are JSON's
		}
		found++
	}
	if found == 0 {
		return 0
	}
	return 80 // below the log formats, which read a line with its prefix
}
