package dataplane

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
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
	// Verdict is "DROP" or "REJECT" when the connections are dropped or
	// rejected there (kube-proxy's nftables mode rejects connections to
	// a Service port without endpoints); "" when they go on to Addr.
	Verdict string
	Pos     model.Pos // the DNAT or verdict rule, or the chain whose policy let it through
	Via     []string  // the chains walked
}

// Trace is the walk of one probe through one ruleset's nat table (and,
// for nftables, the base chains of every type on the probe's hooks).
type Trace struct {
	Node string
	// Hook is the nat chain walked, PREROUTING or OUTPUT, for iptables;
	// the hooks walked for nftables: "prerouting > forward",
	// "prerouting > input" or "output".
	Hook         string
	Format       string // the ruleset's: iptables-save, nft ...
	Steps        []Step
	Destinations []Destination
	// Unknown lists what the walk could not evaluate and assumed.
	Unknown []string

	evals int // rules evaluated, bounded by maxTraceRules
}

// maxTraceDepth bounds chain nesting (iptables allows 32 levels too).
const maxTraceDepth = 32

// maxTraceRules bounds the rules one trace evaluates: chains that jump to
// each other (which iptables-restore and nft refuse to load, but an edited
// dump can hold) would otherwise be walked 2^32 times.
const maxTraceRules = 500_000

// TraceNAT walks probe through the nat table of rs the way the kernel
// does for a connection's first packet: the built-in chain, every rule in
// order, jumps into user chains and back (a goto does not come back),
// statistic matches splitting the connections by their probabilities,
// until DNAT, ACCEPT or the chain's policy. Matches on marks, connection
// state, recent lists (session affinity) and interfaces are taken as a
// new connection from a new client would see them, and listed in Unknown.
//
// An nftables ruleset (kube-proxy's nftables mode) has no fixed chain
// names: the walk takes the base chains of the probe's hooks, of every
// type and table, in priority order (prerouting or output, then input for
// an untranslated destination of the node's own, forward for the rest
// from elsewhere), so the filter chains that reject connections to
// Service ports without endpoints are walked too. An address in
// kube-proxy's @nodeport-ips set is taken as the node's own. A DNAT ends
// the nat chains of its hook; the chains after it see the new
// destination. The filter chains' rules are listed in Steps only when
// they drop or reject some of the connections.
func TraceNAT(rs *model.Ruleset, probe Probe) (*Trace, error) {
	if rs.Format == "nft" {
		return traceNFT(rs, probe)
	}
	nat := natTable(rs)
	if nat == nil {
		return nil, fmt.Errorf("no nat table in %s", rs.Pos.File)
	}
	hook := "PREROUTING"
	if probe.Output {
		hook = "OUTPUT"
	}
	tr := &Trace{Node: rs.Node, Hook: hook, Format: rs.Format}
	w := newWalker(tr, probe, nat)
	start := w.chains[hook]
	if start == nil {
		// A listing of KUBE-SERVICES alone: start there.
		start = w.chains["KUBE-SERVICES"]
	}
	if start == nil {
		return nil, fmt.Errorf("neither %s nor KUBE-SERVICES is in the nat table of %s", hook, rs.Pos.File)
	}
	rest := w.walk(start, 1, 0, []string{start.Name})
	tr.Destinations = w.dests
	if rest > 1e-12 {
		tr.Destinations = append(tr.Destinations, Destination{Addr: probe.Dst.String(), Probability: rest, Pos: start.Pos,
			Via: []string{start.Name}})
	}
	return tr, nil
}

// TraceTable walks probe through the built-in chain of an iptables
// ruleset's table (raw PREROUTING, raw OUTPUT ...) the way TraceNAT walks
// the nat table: the rules the probe matches are in Steps, and a DROP,
// REJECT or ACCEPT ends a share of the connections in Destinations.
// Targets that are not verdicts (CT, NOTRACK, MARK) are listed in Steps and
// the walk goes on after them.
func TraceTable(rs *model.Ruleset, table, chain string, probe Probe) (*Trace, error) {
	var t *model.Table
	for _, x := range rs.Tables {
		if x.Name == table {
			t = x
			break
		}
	}
	if t == nil {
		return nil, fmt.Errorf("no %s table in %s", table, rs.Pos.File)
	}
	tr := &Trace{Node: rs.Node, Hook: chain, Format: rs.Format}
	w := newWalker(tr, probe, t)
	start := w.chains[chain]
	if start == nil {
		return nil, fmt.Errorf("no %s chain in the %s table of %s", chain, table, rs.Pos.File)
	}
	w.walk(start, 1, 0, []string{start.Name})
	tr.Destinations = w.dests
	return tr, nil
}

// natTable returns the iptables ruleset's nat table (or the one unnamed
// table of rule lines cut out with grep).
func natTable(rs *model.Ruleset) *model.Table {
	var nat *model.Table
	for _, t := range rs.Tables {
		if t.Name == "nat" || (t.Name == "" && nat == nil) {
			nat = t
		}
	}
	return nat
}

// baseChain is an nftables base chain with its table.
type baseChain struct {
	table *model.Table
	chain *model.Chain
}

// baseChains returns the base chains of hook in every table of rs, from
// the lowest priority.
func baseChains(rs *model.Ruleset, hook string) []baseChain {
	var out []baseChain
	for _, t := range rs.Tables {
		for _, c := range t.Chains {
			if c.Hook == hook {
				out = append(out, baseChain{t, c})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].chain.Priority < out[j].chain.Priority })
	return out
}

// flow is a share of the probe's connections between two base chains.
type flow struct {
	dest Destination
	dst  netip.AddrPort // the destination the next chains see
	done bool           // dropped or rejected
	nat  bool           // a nat chain of this hook has translated it
}

func traceNFT(rs *model.Ruleset, probe Probe) (*Trace, error) {
	hooks := []string{"prerouting"}
	if probe.Output {
		hooks = []string{"output"}
	}
	hasNAT := false
	for _, bc := range baseChains(rs, hooks[0]) {
		hasNAT = hasNAT || bc.chain.Type == "nat"
	}
	if !hasNAT {
		return nil, fmt.Errorf("no nat chain on the %s hook in %s", hooks[0], rs.Pos.File)
	}
	tr := &Trace{Node: rs.Node, Hook: hooks[0], Format: rs.Format}
	if !probe.Local {
		for _, t := range rs.Tables {
			if elems, ok := t.Sets["nodeport-ips"]; ok && setContains(elems, probe.Dst.Addr()) {
				// kube-proxy lists the node's addresses there.
				probe.Local = true
				tr.Unknown = append(tr.Unknown, "destination taken as an address of the node: it is in @nodeport-ips")
				break
			}
		}
	}
	flows := []flow{{dest: Destination{Addr: probe.Dst.String(), Probability: 1}, dst: probe.Dst}}
	flows = traceHook(rs, tr, probe, hooks[0], flows)
	// After routing: the node's own addresses go to input (from the
	// node itself too, over loopback), the rest (a ClusterIP, a Pod
	// after DNAT) to forward, or out for the node's own connections.
	var input, forward, done, out []flow
	for _, f := range flows {
		switch {
		case f.done:
			done = append(done, f)
		case probe.Local && !f.dest.Translated:
			input = append(input, f)
		case probe.Output:
			out = append(out, f)
		default:
			forward = append(forward, f)
		}
	}
	var hs []string
	if len(input) > 0 {
		hs = append(hs, "input")
		input = traceHook(rs, tr, probe, "input", input)
	}
	if len(forward) > 0 {
		hs = append(hs, "forward")
		forward = traceHook(rs, tr, probe, "forward", forward)
		if slices.ContainsFunc(forward, func(f flow) bool { return f.dest.Translated }) && len(baseChains(rs, "forward")) > 0 {
			tr.Unknown = append(tr.Unknown, "translated connections taken as forwarded (to an endpoint that is not the node itself)")
		}
	}
	flows = slices.Concat(done, input, forward, out)
	if len(hs) > 0 {
		tr.Hook += " > " + strings.Join(hs, ", ")
	}
	for _, f := range flows {
		if f.dest.Probability > 1e-12 {
			tr.Destinations = append(tr.Destinations, f.dest)
		}
	}
	return tr, nil
}

// traceHook runs each flow through the base chains of hook in priority
// order and returns the flows that come out.
func traceHook(rs *model.Ruleset, tr *Trace, probe Probe, hook string, flows []flow) []flow {
	unknown := map[string]bool{}
	for _, u := range tr.Unknown {
		unknown[u] = true
	}
	for _, bc := range baseChains(rs, hook) {
		c := bc.chain
		var next []flow
		for _, f := range flows {
			if f.done || (c.Type == "nat" && f.nat) {
				// A DNAT binds the connection: no other nat chain of
				// the hook sees it.
				next = append(next, f)
				continue
			}
			if !f.dst.IsValid() {
				// A DNAT target the dump does not show: the chains after
				// it cannot be matched.
				next = append(next, f)
				continue
			}
			p := probe
			p.Dst = f.dst
			w := newWalker(tr, p, bc.table)
			w.unknown = unknown
			steps := len(tr.Steps)
			rest := w.walk(c, f.dest.Probability, 0, []string{c.Name})
			if c.Type != "nat" && !slices.ContainsFunc(w.dests, func(d Destination) bool { return d.Verdict != "" }) {
				// A filter chain that lets every connection through:
				// its rules say nothing about where they go.
				tr.Steps = tr.Steps[:steps]
			}
			for _, d := range w.dests {
				nf := flow{dest: d, dst: f.dst, nat: f.nat}
				switch {
				case d.Verdict != "":
					nf.done = true
				case d.Translated:
					nf.nat = true
					nf.dst = parseTarget(d.Addr, f.dst.Port())
				default:
					// accept: on to the next base chain.
					nf.dest = f.dest
					nf.dest.Probability = d.Probability
				}
				next = append(next, nf)
			}
			if rest > 1e-12 {
				nf := f
				nf.dest.Probability = rest
				if c.Policy == "DROP" {
					nf.done = true
					nf.dest.Verdict = "DROP"
					nf.dest.Pos = c.Pos
					nf.dest.Via = []string{c.Name}
				} else if !f.dest.Translated && (f.dest.Pos == model.Pos{} || c.Type == "nat") {
					nf.dest.Pos = c.Pos
					nf.dest.Via = []string{c.Name}
				}
				next = append(next, nf)
			}
		}
		flows = next
	}
	return flows
}

// parseTarget reads a DNAT target: "10.1.2.3:53", "[fd00::2]:53", or an
// address alone (the port is kept).
func parseTarget(to string, port uint16) netip.AddrPort {
	if ap, err := netip.ParseAddrPort(to); err == nil {
		return ap
	}
	if a, err := netip.ParseAddr(strings.Trim(to, "[]")); err == nil {
		return netip.AddrPortFrom(a, port)
	}
	return netip.AddrPort{}
}

type walker struct {
	tr      *Trace
	evals   *int // rules evaluated by the whole trace
	probe   Probe
	table   *model.Table
	chains  map[string]*model.Chain
	unknown map[string]bool
	dests   []Destination
}

func newWalker(tr *Trace, probe Probe, t *model.Table) *walker {
	w := &walker{tr: tr, probe: probe, table: t, chains: map[string]*model.Chain{}, unknown: map[string]bool{}, evals: &tr.evals}
	for _, c := range t.Chains {
		if _, dup := w.chains[c.Name]; !dup {
			w.chains[c.Name] = c
		}
	}
	return w
}

func (w *walker) assume(s string) {
	if !w.unknown[s] {
		w.unknown[s] = true
		w.tr.Unknown = append(w.tr.Unknown, s)
	}
}

// walk runs the share p of connections through chain c and returns the
// share that leaves it without a verdict (RETURN, the end of a user
// chain, or the same from a chain it went to with goto).
func (w *walker) walk(c *model.Chain, p float64, depth int, via []string) float64 {
	if depth > maxTraceDepth {
		w.assume("chains nested deeper than 32: walk cut short")
		return 0
	}
	back := 0.0 // what returns from chains entered with goto
	for _, r := range c.Rules {
		if p <= 1e-12 {
			break
		}
		if *w.evals++; *w.evals > maxTraceRules {
			w.assume("more than 500000 rule evaluations (chains that jump to each other?): walk cut short")
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
		step := func(n string) {
			w.tr.Steps = append(w.tr.Steps, Step{Depth: depth, Chain: c.Name, Rule: r, Probability: q, Note: note + n})
		}
		jump := "jump to "
		if r.Goto {
			jump = "goto "
		}
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
			step("DNAT to " + to)
			w.dests = append(w.dests, Destination{Addr: to, Probability: q, Translated: true,
				Pos: r.Pos, Via: slices.Clone(via)})
		case endpointChains.match(t) && w.chains[t] == nil:
			// An endpoint chain the dump does not list: the connection
			// is translated there, to an address not shown.
			step(jump + t + " (not listed)")
			w.dests = append(w.dests, Destination{Addr: t + " (not listed)", Probability: q, Translated: true,
				Pos: r.Pos, Via: append(slices.Clone(via), t)})
		case t == "RETURN":
			step("RETURN")
			back += q
		case t == "ACCEPT":
			step("ACCEPT: not translated")
			w.dests = append(w.dests, Destination{Addr: w.probe.Dst.String(), Probability: q, Pos: r.Pos,
				Via: slices.Clone(via)})
		case t == "DROP" || t == "REJECT":
			if t == "DROP" {
				step("DROP: the connection is dropped")
			} else {
				step("REJECT: the connection is refused")
			}
			w.dests = append(w.dests, Destination{Addr: w.probe.Dst.String(), Probability: q, Verdict: t, Pos: r.Pos,
				Via: slices.Clone(via)})
		case t == "MARK" || t == "" || t == "LOG" || t == "CONNMARK":
			step(strings.TrimSpace(t + " " + r.SetMark))
			p += q // not a verdict: the packet goes on
		case w.chains[t] != nil:
			step(jump + t)
			b := w.walk(w.chains[t], q, depth+1, append(slices.Clone(via), t))
			if r.Goto {
				// goto: what falls through the chain leaves this one
				// too, with the caller's verdict.
				back += b
			} else {
				p += b
			}
		default:
			// A target whose chain is not in the dump, or one this walk
			// does not model (SNAT, MASQUERADE, REDIRECT ...).
			step(t + " (not followed)")
			if strings.HasPrefix(t, "KUBE-") || strings.HasPrefix(t, "cali-") || strings.ToUpper(t) != t {
				w.assume("chain " + t + " is not in the dump")
			}
			p += q
		}
	}
	return p + back
}

// matches evaluates a rule's matches against the probe.
func (w *walker) matches(r *model.Rule) bool {
	if r.Proto != "" && (r.Proto == w.probe.Proto) == r.NotProto {
		return false
	}
	if r.Target == "" && strings.Contains(r.Raw, " vmap @") {
		// A lookup in a verdict map without elements (nft lists the
		// rule once, with no verdict): nothing matches.
		return false
	}
	if elems, ok := w.table.SetElems(r.Dst); ok {
		if setContains(elems, w.probe.Dst.Addr()) == r.NotDst {
			return false
		}
	} else if pf, ok := r.DstPrefix(); ok && pf.Contains(w.probe.Dst.Addr()) == r.NotDst {
		return false
	} else if strings.HasPrefix(r.Dst, "@") {
		w.assume("set " + r.Dst + " is not in the dump: taken as not matching")
		return false
	} else if !ok && r.Dst != "" {
		w.assume("destination " + r.Dst + " (a name) taken as not matching")
		return false
	}
	if elems, ok := w.table.SetElems(r.Src); ok {
		if !w.probe.Src.IsValid() {
			// kube-proxy's session affinity: ip saddr @affinity-... goto
			// the endpoint the client had.
			w.assume("source set " + r.Src + " taken as not holding the client")
		}
		if (w.probe.Src.IsValid() && setContains(elems, w.probe.Src)) == r.NotSrc {
			return false
		}
	} else if strings.HasPrefix(r.Src, "@") {
		w.assume("set " + r.Src + " is not in the dump: taken as not matching")
		if !r.NotSrc {
			return false
		}
	} else if pf, ok := r.SrcPrefix(); ok {
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

// setContains says an address is in an nftables set of addresses,
// prefixes ("10.0.0.0/8") or ranges ("10.0.0.1-10.0.0.9").
func setContains(elems []string, a netip.Addr) bool {
	for _, e := range elems {
		if lo, hi, ok := strings.Cut(e, "-"); ok {
			l, err1 := netip.ParseAddr(strings.TrimSpace(lo))
			h, err2 := netip.ParseAddr(strings.TrimSpace(hi))
			if err1 == nil && err2 == nil && a.Compare(l) >= 0 && a.Compare(h) <= 0 {
				return true
			}
			continue
		}
		if pf, ok := (&model.Rule{Dst: e}).DstPrefix(); ok && pf.Contains(a) {
			return true
		}
	}
	return false
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
