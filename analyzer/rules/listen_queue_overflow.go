package rules

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// ListenQueueOverflow finds listening sockets whose queue overflows: the
// server does not accept connections as fast as they come, and the kernel
// drops the handshakes it has no room for.
var ListenQueueOverflow = &analyzer.Rule{
	Name:        "listen-queue-overflow",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindCounters, model.KindSockets, model.KindLogs},
	Uses:        []model.Kind{model.KindSysctl},
	SubjectKeys: []string{"node", "listener", "counter"},
	Run:         runListenQueueOverflow,
	Explains:    []*analyzer.Rule{SynUnanswered},
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(120), ServiceUnreachable.At(260), LoadBalancer502.At(170)},
	Proof: "two of: a LISTEN socket whose accept queue (ss -lnt's Recv-Q) is at or above its backlog (Send-Q); " +
		"the kernel's TcpExtListenOverflows counter above 0 (nstat -az, or netstat -s's \"times the listen queue " +
		"of a socket overflowed\"); the kernel's \"Possible SYN flooding on port\" line",
	Unproven: "one of them alone is a warning of likely cause, with the command that shows the other (ss -lnt for " +
		"which socket, nstat for the drops); the SYN flooding line alone also leaves a real SYN flood open",
	Doc: `a listening socket's queue overflows: handshakes are dropped

A server's kernel completes TCP handshakes by itself and queues the
connections until the program calls accept(). The queue holds what the
program asked for in listen() (its backlog), capped by net.core.somaxconn.
When it is full the kernel drops the handshake's last ACK or the next SYNs
(with net.ipv4.tcp_abort_on_overflow = 1 it resets them instead), and counts
TcpExtListenOverflows and TcpExtListenDrops. Clients see connects that take
1, 3 or 7 s (their SYN retransmissions) or time out: probes fail, a proxy
returns 502 or 504, while the server looks idle and logs nothing. The cause
is a program that accepts too slowly (a blocked or busy accept loop, too few
workers, CPU throttling) for the connections that arrive, or a backlog too
small for their bursts.

Evidence: ss -lnt (a LISTEN socket's Recv-Q is the queue, its Send-Q the
backlog), nstat -az or netstat -s (the overflow counters), the kernel's
"Possible SYN flooding on port N" line (its SYN queue, bounded by the same
backlog, was full).

Severity: error when two of these agree on a node; a warning of likely
cause from one alone.

Fix: find why the program does not accept (a thread dump, its CPU
throttling, its worker count), and raise its backlog (nginx listen ...
backlog=, the framework's setting) together with net.core.somaxconn (a Pod
sysctl, or the node's).`,
}

// listenFullSocket is a LISTEN socket whose accept queue is at or above its
// backlog.
type listenFullSocket struct {
	sock *model.Socket
}

// listenCounters are a node's overflow counters, the largest of each name
// its listings show.
type listenCounters struct {
	overflows, drops uint64
	ev               []analyzer.Evidence
	overflowPos      model.Pos // the line of the largest TcpExtListenOverflows
}

// listenFloodRe matches the kernel's line of a full SYN queue: "TCP:
// request_sock_TCP: Possible SYN flooding on port 8080. Sending cookies.",
// "Possible SYN flooding on port [10.0.0.1]:8080. Dropping request."
var listenFloodRe = lazyre.New(`(?i)possible SYN flooding on port (?:\[?([0-9A-Fa-f.:]+?)\]?:)?(\d+)\.`)

// listenNode is what a node's evidence says of its listen queues.
type listenNode struct {
	node     string
	full     []listenFullSocket
	counters listenCounters
	flood    []model.LogEvent
	ports    []string // every listener the kernel lines name ("10.0.0.1:8080", ":8080"), in order
}

func runListenQueueOverflow(p *analyzer.Pass) error {
	s := p.Snap
	nodes := map[string]*listenNode{}
	get := func(node string) *listenNode {
		n := nodes[node]
		if n == nil {
			n = &listenNode{node: node}
			nodes[node] = n
		}
		return n
	}
	for i := range s.Sockets {
		sk := &s.Sockets[i]
		// netstat prints 0 as a listening socket's Send-Q: only ss shows
		// the backlog.
		if sk.State == "LISTEN" && strings.HasPrefix(sk.Proto, "tcp") && sk.SendQ > 0 && sk.RecvQ >= sk.SendQ {
			n := get(sk.Node)
			n.full = append(n.full, listenFullSocket{sock: sk})
		}
	}
	for _, c := range s.Counters {
		if c.Name != "TcpExtListenOverflows" && c.Name != "TcpExtListenDrops" {
			continue
		}
		n := get(c.Node)
		if c.Name == "TcpExtListenOverflows" {
			if c.Value > n.counters.overflows {
				n.counters.overflows, n.counters.overflowPos = c.Value, c.Pos
			}
		} else {
			n.counters.drops = max(n.counters.drops, c.Value)
		}
		if c.Value > 0 && len(n.counters.ev) < 4 {
			n.counters.ev = append(n.counters.ev, analyzer.Evidence{Pos: c.Pos, Note: fmt.Sprintf("%s %d", c.Name, c.Value)})
		}
	}
	for _, le := range s.Logs {
		if le.Source != "kernel" && le.Source != "" {
			continue
		}
		m := listenFloodRe.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		n := get(le.Node)
		n.flood = append(n.flood, le)
		if v, err := strconv.ParseUint(m[2], 10, 16); err == nil {
			l := ":" + m[2]
			if a, err := netip.ParseAddr(m[1]); err == nil {
				l = netip.AddrPortFrom(a, uint16(v)).String()
			}
			if !slices.Contains(n.ports, l) {
				n.ports = append(n.ports, l)
			}
		}
	}
	for _, node := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[node]
		if len(n.full) == 0 && n.counters.overflows == 0 && len(n.flood) == 0 {
			continue // no overflow; drops alone have other causes too
		}
		p.Report(listenFinding(p, n, somaxconn(s, node)))
	}
	return nil
}

// somaxconn returns the node's net.core.somaxconn, 0 when not known.
func somaxconn(s *model.Snapshot, node string) int {
	if sc, ok := s.Sysctl(node, "net.core.somaxconn"); ok {
		if v, err := strconv.Atoi(sc.Value); err == nil {
			return v
		}
	}
	return 0
}

// listenFinding judges n's listen queues, then words the finding.
func listenFinding(p *analyzer.Pass, n *listenNode, maxconn int) analyzer.Finding {
	var ev []analyzer.Evidence
	var supports, contradicts []string
	kinds := 0
	listener := ""
	if len(n.full) > 0 {
		kinds++
		for i, f := range n.full {
			if i == maxGroupEvidence {
				break
			}
			ev = append(ev, analyzer.Evidence{Pos: f.sock.Pos, Note: fmt.Sprintf("LISTEN %s: Recv-Q %d, Send-Q (backlog) %d",
				f.sock.Local, f.sock.RecvQ, f.sock.SendQ)})
		}
		f := n.full[0].sock
		listener = f.Local.String()
		supports = append(supports, fmt.Sprintf("%s: the accept queue of %s holds %d %s, at or above its backlog of %d",
			f.Pos, f.Local, f.RecvQ, plural(f.RecvQ, "connection", "connections"), f.SendQ))
	}
	if n.counters.overflows > 0 {
		kinds++
		ev = append(ev, n.counters.ev...)
		supports = append(supports, fmt.Sprintf("%s: the kernel counts %d listen queue %s (TcpExtListenOverflows)",
			n.counters.overflowPos, n.counters.overflows, plural(int(n.counters.overflows), "overflow", "overflows")))
	} else if len(n.counters.ev) > 0 || n.counters.drops > 0 {
		contradicts = append(contradicts, "the kernel's counters show no listen queue overflow (TcpExtListenOverflows), only drops")
	}
	if len(n.flood) > 0 {
		kinds++
		for i, le := range n.flood {
			if i == maxGroupEvidence {
				break
			}
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "kernel: " + strings.TrimSpace(le.Message)})
		}
		supports = append(supports, fmt.Sprintf("%s: the kernel logs a full SYN queue: %s (%d %s)", n.flood[0].Pos,
			strings.TrimSpace(n.flood[0].Message), len(n.flood), plural(len(n.flood), "line", "lines")))
		if listener == "" && len(n.ports) > 0 {
			listener = n.ports[0]
		}
	}
	ev = dedupEvidence(ev)

	// The judgement.
	c := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely, Supports: supports, Contradicts: contradicts}
	switch {
	case kinds >= 2 && p.Joins(ev) && len(contradicts) == 0:
		c.Severity, c.Certainty = analyzer.Error, analyzer.Proven
	case len(n.full) > 0:
		c.Decide = "# on the node, twice a few seconds apart: a count that grows proves the drops\n" +
			"nstat -az TcpExtListenOverflows TcpExtListenDrops"
		c.Alternatives = []string{"a queue that fills only for a moment, under a burst the program then accepts"}
	case n.counters.overflows > 0:
		c.Decide = "# on the node while the connects fail: the LISTEN socket whose Recv-Q reaches its Send-Q is the one\nss -lnt"
		c.Alternatives = []string{"overflows counted long ago (the counter counts since boot): compare two readings"}
	default: // the kernel's line alone
		c.Decide = "# on the node\nss -lnt; nstat -az TcpExtListenOverflows TcpExtListenDrops TcpExtTCPReqQFullDoCookies"
		c.Alternatives = []string{"a SYN flood: half-open connections from clients that never complete the handshake"}
	}

	// The words.
	where := "this node"
	if n.node != "" {
		where = n.node
	}
	values := map[string]any{}
	if n.node != "" {
		values["node"] = n.node
	}
	var says []string
	title := "listen queues overflow on " + where + ": the kernel drops handshakes"
	if len(n.full) > 0 {
		f := n.full[0].sock
		values["listener"], values["recv_q"], values["backlog"] = f.Local.String(), f.RecvQ, f.SendQ
		title = fmt.Sprintf("the listen queue of %s is full: %d %s wait for accept(), backlog %d", f.Local, f.RecvQ,
			plural(f.RecvQ, "connection", "connections"), f.SendQ)
		says = append(says, fmt.Sprintf("ss shows the LISTEN socket %s with %d %s in its accept queue (Recv-Q) for a "+
			"backlog of %d (Send-Q): new handshakes to it are dropped until the program accepts.", f.Local, f.RecvQ,
			plural(f.RecvQ, "connection", "connections"), f.SendQ))
		if len(n.full) > 1 {
			says = append(says, fmt.Sprintf("%d other listening sockets are full too.", len(n.full)-1))
		}
	}
	if n.counters.overflows > 0 {
		values["listen_overflows"], values["listen_drops"] = n.counters.overflows, n.counters.drops
		if len(n.full) == 0 {
			title = fmt.Sprintf("the kernel of %s dropped %d handshakes at full listen queues", where, n.counters.overflows)
		}
		says = append(says, fmt.Sprintf("The kernel counted %d listen queue %s (TcpExtListenOverflows) and %d dropped "+
			"SYNs or handshakes (TcpExtListenDrops).", n.counters.overflows, plural(int(n.counters.overflows), "overflow",
			"overflows"), n.counters.drops))
	}
	if len(n.flood) > 0 {
		values["kernel_messages"] = len(n.flood)
		if len(n.full) == 0 && n.counters.overflows == 0 {
			title = fmt.Sprintf("the SYN queue of %s on %s was full (\"Possible SYN flooding\")", listener, where)
			if len(n.ports) > 1 {
				title = fmt.Sprintf("the SYN queues of %s on %s were full (\"Possible SYN flooding\")",
					strings.Join(n.ports, ", "), where)
			}
		}
		says = append(says, fmt.Sprintf("The kernel logged %q: the queue of half-open connections, bounded by the same "+
			"backlog, was full.", strings.TrimSpace(n.flood[0].Message)))
		if len(n.ports) > 1 {
			values["listeners"] = n.ports
			says = append(says, fmt.Sprintf("It logged so of %d listeners: %s.", len(n.ports), strings.Join(n.ports, ", ")))
		}
	}
	// The kernel's line alone, answering with SYN cookies: the handshakes
	// beyond the queue were answered, not dropped.
	cookies := len(n.full) == 0 && n.counters.overflows == 0 && len(n.flood) > 0
	for _, le := range n.flood {
		cookies = cookies && strings.Contains(le.Message, "Sending cookies")
	}
	fix := "Find why the program does not accept fast enough (a thread dump, its CPU throttling, its worker count) " +
		"and raise its listen backlog (nginx: listen ... backlog=N; the framework's setting)"
	if maxconn > 0 {
		values["somaxconn"] = maxconn
		fix += fmt.Sprintf(" together with net.core.somaxconn (%d here), which caps it", maxconn)
	} else {
		fix += " together with net.core.somaxconn, which caps it"
	}
	fix += ": a Pod sysctl, or the node's."
	sub := subject("node", n.node, "listener", listener)
	if listener == "" { // the node's counters, which name no socket
		sub = subject("node", n.node, "counter", "TcpExtListenOverflows")
	}
	f := analyzer.Finding{
		Subject: sub,
		Title:   title,
		Summary: strings.Join(says, " ") + " Clients see connects that take seconds (their SYN retransmissions) or time out.",
		Cause: "A program accepts connections more slowly than they arrive (a blocked or busy accept loop, too few " +
			"workers, CPU throttling), or its backlog is too small for their bursts: the kernel queues what the backlog " +
			"allows and drops the rest of the handshakes.",
		Fix:      fix,
		Facts:    values,
		Evidence: ev,
	}
	if cookies {
		f.Summary = strings.Join(says, " ") + " The kernel answered the SYNs beyond it with SYN cookies: those " +
			"handshakes were not dropped, but complete without the TCP options a cookie cannot carry, and the accept " +
			"queue behind, bounded by the same backlog, may overflow next."
		f.Cause = "Connections arrive in bursts larger than the program's listen backlog, or it accepts them too " +
			"slowly (a blocked or busy accept loop, too few workers, CPU throttling): the SYN queue fills first."
	}
	return withFinding(c, f)
}
