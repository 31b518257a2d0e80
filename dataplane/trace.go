package dataplane

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/model"
)

// Probe is the packet a trace follows: the first packet of a connection.
type Probe struct {
	Src   netip.Addr // invalid when unknown
	Dst   netip.AddrPort
	Proto string // tcp, udp, sctp
	// Local says the destination address is one of the node's own
	// (addrtype LOCAL matches), as for a NodePort.
	Local bool
	// Output traces a connection the node itself opens (nat OUTPUT);
	// otherwise one that arrives from elsewhere (nat PREROUTING).
	Output bool
}

// Step is one rule the probe matches, in order.
type Step struct {
	Depth       int    // nesting of chains
	Chain       string // the chain the rule is in
	Rule        *model.Rule
	Probability float64 // the share of new connections that reach this rule and match it
	Note        string  // what happens: "jump", "DNAT to 10.1.2.3:53", "statistic 0.25" ...
}

// Destination is where a share of the probe's connections ends up.
type Destination struct {
	Addr        string // the DNAT target, or the original destination when not translated
	Probability float64
	Translated  bool
	Pos         model.Pos // the DNAT rule, or the chain whose policy let it through
	Via         []string  // the chains walked
}

// Trace is the walk of one probe through one ruleset's nat table.
type Trace struct {
	Node         string
	Hook         string // PREROUTING or OUTPUT
	Steps        []Step
	Destinations []Destination
	// Unknown lists what the walk could not evaluate and assumed.
	Unknown []string
}

// maxTraceDepth bounds chain nesting (iptables allows 32 levels too).
const maxTraceDepth = 32

// TraceNAT walks probe through the nat table of rs the way the kernel
// does for a connection's first packet: the built-in chain, every rule in
// order, jumps into user chains and back, statistic matches splitting the
// connections by their probabilities, until DNAT, ACCEPT or the chain's
// policy. Matches on marks, connection state, recent lists (session
// affinity) and interfaces are taken as a new connection from a new
// client would see them, and listed in Unknown.
func TraceNAT(rs *model.Ruleset, probe Probe) (*Trace, error) {
	var nat *model.Table
	for _, t := range rs.Tables {
		if t.Name == "nat" || (t.Name == "" && nat == nil) {
			nat = t
		}
	}
	if nat == nil {
		return nil, fmt.Errorf("no nat table in %s", rs.Pos.File)
	}
	hook := "PREROUTING"
	if probe.Output {
		hook = "OUTPUT"
	}
	tr := &Trace{Node: rs.Node, Hook: hook}
	w := walker{tr: tr, probe: probe, chains: map[string]*model.Chain{}, unknown: map[string]bool{}}
	for _, c := range nat.Chains {
		if _, dup := w.chains[c.Name]; !dup {
			w.chains[c.Name] = c
		}
	}
	start := w.chains[hook]
	if start == nil {
		// A listing of KUBE-SERVICES alone: start there.
		start = w.chains["KUBE-SERVICES"]
	}
	if start == nil {
		return nil, fmt.Errorf("neither %s nor KUBE-SERVICES is in the nat table of %s", hook, rs.Pos.File)
	}
	rest := w.walk(start, 1, 0, []string{start.Name})
	if rest > 1e-12 {
		tr.Destinations = append(tr.Destinations, Destination{Addr: probe.Dst.String(), Probability: rest, Pos: start.Pos,
			Via: []string{start.Name}})
	}
	return tr, nil
}

type walker struct {
	tr      *Trace
	probe   Probe
	chains  map[string]*model.Chain
	unknown map[string]bool
}

func (w *walker) assume(s string) {
	if !w.unknown[s] {
		w.unknown[s] = true
		w.tr.Unknown = append(w.tr.Unknown, s)
	}
}

// walk runs the share p of connections through chain c and returns the
// share that leaves it without a verdict (RETURN or the end of a user
// chain).
func (w *walker) walk(c *model.Chain, p float64, depth int, via []string) float64 {
	if depth > maxTraceDepth {
		w.assume("chains nested deeper than 32: walk cut short")
		return 0
	}
	for _, r := range c.Rules {
		if p <= 1e-12 {
			return 0
		}
		if !w.matches(r) {
			continue
		}
		q := p
		note := ""
		if r.Statistic == "random" && r.Probability > 0 {
			q = p * r.Probability
			note = fmt.Sprintf("statistic %s: ", strconv.FormatFloat(r.Probability, 'f', -1, 64))
		}
		p -= q
		switch t := r.Target; {
		case t == "DNAT":
			to := r.ToDestination
			if to == ":0" || to == "" {
				// `to::0`: the listing lost the address; the chain's
				// masquerade rule names the endpoint.
				to = "?"
				for _, x := range c.Rules {
					if pf, ok := x.SrcPrefix(); ok && pf.IsSingleIP() && x.Target == "KUBE-MARK-MASQ" {
						to = pf.Addr().String()
					}
				}
				to += " (the listing shows to::0)"
			}
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + "DNAT to " + to})
			w.tr.Destinations = append(w.tr.Destinations, Destination{Addr: to, Probability: q, Translated: true,
				Pos: r.Pos, Via: append([]string(nil), via...)})
		case strings.HasPrefix(t, "KUBE-SEP-") && w.chains[t] == nil:
			// An endpoint chain the dump does not list: the connection
			// is translated there, to an address not shown.
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + "jump to " + t + " (not listed)"})
			w.tr.Destinations = append(w.tr.Destinations, Destination{Addr: t + " (not listed)", Probability: q, Translated: true,
				Pos: r.Pos, Via: append(append([]string(nil), via...), t)})
		case t == "RETURN":
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + "RETURN"})
			return p + q
		case t == "ACCEPT":
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + "ACCEPT: not translated"})
			w.tr.Destinations = append(w.tr.Destinations, Destination{Addr: w.probe.Dst.String(), Probability: q, Pos: r.Pos,
				Via: append([]string(nil), via...)})
		case t == "MARK" || t == "" || t == "LOG" || t == "CONNMARK":
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + strings.TrimSpace(t+" "+r.SetMark)})
			p += q // not a verdict: the packet goes on
		case w.chains[t] != nil:
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + "jump to " + t})
			back := w.walk(w.chains[t], q, depth+1, append(via, t))
			if r.Goto {
				// -g: no return to this chain; what falls through
				// leaves with the caller's verdict.
				return p + back
			}
			p += back
		default:
			// A target whose chain is not in the dump, or one this walk
			// does not model (SNAT, MASQUERADE, REDIRECT ...).
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + t + " (not followed)"})
			if strings.HasPrefix(t, "KUBE-") || strings.HasPrefix(t, "cali-") {
				w.assume("chain " + t + " is not in the dump")
			}
			p += q
		}
	}
	return p
}

// matches evaluates a rule's matches against the probe.
func (w *walker) matches(r *model.Rule) bool {
	if r.Proto != "" && (r.Proto == w.probe.Proto) == r.NotProto {
		return false
	}
	if pf, ok := r.DstPrefix(); ok && pf.Contains(w.probe.Dst.Addr()) == r.NotDst {
		return false
	} else if !ok && r.Dst != "" {
		w.assume("destination " + r.Dst + " (a name) taken as not matching")
		return false
	}
	if pf, ok := r.SrcPrefix(); ok {
		if !w.probe.Src.IsValid() {
			// Unknown source: a client elsewhere, not this prefix.
			if !r.NotSrc {
				return false
			}
		} else if pf.Contains(w.probe.Src) == r.NotSrc {
			return false
		}
	}
	if r.DPort != "" && portMatches(r.DPort, w.probe.Dst.Port()) == r.NotDPort {
		return false
	}
	if r.DstType != "" {
		local := strings.Contains(r.DstType, "LOCAL")
		if local != w.probe.Local {
			return false
		}
	}
	if r.MarkMatch != "" {
		w.assume("mark matches taken as for an unmarked packet")
		if !r.NotMark {
			return false
		}
	}
	if r.Recent != nil && !r.Recent.Set {
		w.assume("session affinity (recent) checks taken as a new client")
		return false
	}
	if r.CTState != "" {
		new := strings.Contains(r.CTState, "NEW")
		if new == r.NotCTState {
			return false
		}
	}
	if r.InIface != "" || r.OutIface != "" {
		w.assume("interface matches taken as matching")
	}
	return true
}

// portMatches reads "53", "30000:32767", "80,443" and service names.
func portMatches(spec string, port uint16) bool {
	for _, part := range strings.Split(spec, ",") {
		if a, b, ok := strings.Cut(part, ":"); ok {
			lo, ok1 := model.PortNumber(a)
			hi, ok2 := model.PortNumber(b)
			if ok1 && ok2 && int(port) >= lo && int(port) <= hi {
				return true
			}
			continue
		}
		if n, ok := model.PortNumber(part); ok && n == int(port) {
			return true
		}
	}
	return false
}
