package rules

import (
	"fmt"
	"slices"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// mssAboveMTU returns a connection attempt whose client sends the
// fragmentation-needed (Packet Too Big) errors of events, to that
// attempt's server, and whose SYN advertised a maximum segment size above
// what the errors' MTU carries: the client asked for segments it then
// refuses. It returns the attempt and the MTU, or nil.
func mssAboveMTU(s *model.Snapshot, events []*model.ICMPEvent) (*model.Attempt, int) {
	for _, e := range events {
		if !isTooBig(e.What) || e.MTU == 0 {
			continue
		}
		for i := range s.Attempts {
			a := &s.Attempts[i]
			if a.Client.Addr() != e.From || e.To.IsValid() && a.Server.Addr() != e.To {
				continue
			}
			if q := e.Quoted; q.Src.IsValid() && q.Src.Addr() != a.Server.Addr() {
				continue // it answers another connection's packets
			}
			if synMTU(a) > e.MTU && len(a.SYN) > 0 {
				return a, e.MTU
			}
		}
	}
	return nil, 0
}

// synMTU returns the MTU a's SYN advertises: its maximum segment size
// and the IP and TCP headers without options.
func synMTU(a *model.Attempt) int {
	if a.Client.Addr().Is6() {
		return int(a.MSS) + 60
	}
	return int(a.MSS) + 40
}

// judgeMSSAboveMTU makes f, an ICMP fragmentation-needed finding of g,
// the finding of the MTU behind its sender that the sender's own SYN
// shows (mssAboveMTU), and words it: the sender advertises segments of
// an MTU its network does not carry.
func judgeMSSAboveMTU(f *analyzer.Finding, g *icmpGroup, a *model.Attempt, mtu int) {
	own := synMTU(a)
	from := g.from
	f.Severity, f.Certainty = analyzer.Warning, analyzer.Likely
	// The sender's SYN says why it refuses them: the capture does.
	f.Contradicts = slices.DeleteFunc(f.Contradicts, func(c string) bool { return c == icmpReasonUnshown })
	f.Facts["advertised_mss"] = int(a.MSS)
	f.Facts["mtu"] = mtu
	syn := a.SegPos(a.SYN[0])
	f.Supports = append([]string{fmt.Sprintf("%s: %s's SYN to %s advertises an MSS of %d (an MTU of %d), and %s "+
		"refuses packets above %d to it", syn, a.Client, a.Server, a.MSS, own, from, mtu)}, f.Supports...)
	if !slices.ContainsFunc(f.Evidence, func(e analyzer.Evidence) bool { return e.Pos == syn }) {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: syn, Note: fmt.Sprintf("SYN %s -> %s, MSS %d",
			a.Client, a.Server, a.MSS)})
	}
	f.Alternatives = []string{
		fmt.Sprintf("%s's own interface has an MTU of %d and the link that delivers to it %d (the CNI's MTU changed "+
			"under a running Pod)", from, own, mtu),
		"a middlebox on the path rewrites the MSS upwards",
	}
	f.Decide = fmt.Sprintf("# in the Pod or host of %s, and in the containers nested in it (docker-in-docker): an "+
		"interface at %d beside one at %d decides\nip link show", from, own, mtu)
	g.mssOver, g.mssMTU = a, mtu
}

// mssAboveMTUWords words g's finding when judgeMSSAboveMTU judged it.
func mssAboveMTUWords(g *icmpGroup) (title, summary, cause, fix string) {
	a, mtu, from := g.mssOver, g.mssMTU, g.from
	own := synMTU(a)
	n := g.count()
	title = fmt.Sprintf("%s advertises MSS %d (MTU %d) but takes packets of at most %d: an MTU of %d behind a "+
		"network of %d", from, a.MSS, own, mtu, own, mtu)
	summary = fmt.Sprintf("%s opens %s -> %s advertising a maximum segment size of %d, so %s sends it packets of "+
		"up to %d bytes; %s then answers them with %d ICMP %s %s (MTU %d). Only path-MTU discovery brings the "+
		"sender down, and where the ICMP errors do not reach it (filtered, or not translated back through a NAT) "+
		"large transfers to %s stall while small requests work.", from, a.Client, a.Server, a.MSS,
		a.Server.Addr(), own, from, n, g.what, plural(n, "message", "messages"), mtu, from)
	cause = fmt.Sprintf("Whatever sends as %s has an MTU of %d, the default, inside a network that carries %d: "+
		"an interface nested behind it (docker-in-docker's docker0 and its containers, a VM's, a nested bridge's) "+
		"kept 1500 in a Pod network of %d, so it advertises segments its own network cannot deliver.", from, own,
		mtu, mtu)
	fix = fmt.Sprintf("Give the interfaces behind %s the network's MTU, %d or less (for docker-in-docker, dockerd "+
		"--mtu=%d), or clamp the MSS where its traffic leaves (iptables -t mangle -A POSTROUTING -p tcp "+
		"--tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu).", from, mtu, mtu)
	return title, summary, cause, fix
}
