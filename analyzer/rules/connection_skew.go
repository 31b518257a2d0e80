package rules

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// ConnectionSkew finds Services whose new connections, in a capture, land
// on their backends unlike the dataplane's weights.
var ConnectionSkew = &analyzer.Rule{
	Name:     "connection-skew",
	Severity: analyzer.Warning,
	NeedsAny: []model.Kind{model.KindNetfilter, model.KindIPVS},
	Uses:     []model.Kind{model.KindCapture},
	Requires: []analyzer.FactKey{facts.Dataplanes, facts.CaptureNodes},
	Params: []analyzer.Param{
		{Name: "alpha", Type: analyzer.Number, Default: 0.001, Range: analyzer.Between(0, 1),
			Doc: "the significance level: a Service port's spread over its backends is reported when a spread as uneven would happen by chance with a probability below it"},
		{Name: "min_attempts", Type: analyzer.Integer, Default: 1, Range: analyzer.AtLeast(1),
			Doc: "the fewest connections to a Service port that are tested for skew"},
	},
	SubjectKeys: append(slices.Clip(servicePortSubjectKeys), "virtual_service"),
	ObjectKinds: []string{"Service"},
	Run:         runConnectionSkew,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(160), LoadBalancer502.At(90)},
	Plot: analyzer.Plot{
		Servers: []analyzer.Selector{analyzer.InFacts("distribution")},
	},
	Proof: "none: the counts show that something other than the dumped rules picked the backends, never what",
	Unproven: "the counts per backend and their chance under the rules' probabilities, with the causes not ruled out " +
		"(rules in force during the capture other than those dumped, a proxy or persistence picking the backend, " +
		"conntrack entries from before a rule change; for an IPVS table alone, long-lived connections opened while a " +
		"real server was away) and the command that would decide",
	Doc: `connections spread unlike the NAT rules' or IPVS weights

kube-proxy's NAT rules pick a backend for each new connection with the
probabilities of the Service chain (1/n each). A capture taken after NAT shows
which backend each new connection went to. When the counts are far from those
probabilities, something else decided: rules in force during the capture that
are not the ones dumped (kube-proxy caught up with an endpoint change after
it), a proxy or IPVS persistence choosing the backend, or conntrack entries
that survived a rule change.

The chance of counts at least this uneven is a chi-square test when every
backend expects at least 5 connections, else the exact multinomial test
(8 of 8 connections on one of three equal backends has a chance of
3 x (1/3)^8 = 0.00046). With ClientIP session affinity in the rules (-m
recent, an affinity set) a client stays on its backend by design: the clients
are counted, each once, instead of the connections. A capture is judged
against the rules of its own node (from the bundle's layout, the interface
addresses or the traffic; see the capture-nodes fact).

Evidence: the capture's attempts to the backends, the Service chain's rules
with their probabilities. A backend on the client's own node is left out (its
connections stay on loopback, out of a capture on the wire) and the others'
probabilities scaled up.

Without a capture of a Service port, an IPVS table (ipvsadm -Ln) is the
evidence: its ActiveConn column counts the connections open to each real
server, held to the real servers' weights by the same test. Open
connections are not new ones: IPVS spreads new connections by weight, and
long-lived ones (HTTP/2 such as every apiserver client's, gRPC, keep-alive)
stay on the real server they were opened on, so a real server that was
away (restarted, not ready) or added after its clients connected keeps few
of them until they reconnect. That is the first candidate named; a virtual
service with persistence (ClientIP session affinity) or a scheduler that
picks by address (sh, dh, mh, lblc) is not tested, and a real server of
weight 0 (draining) is left out.

Severity: warning, with the cause unknown: the counts show that the rules
dumped did not decide, not what did. Parameter alpha (default 0.001): the
chance below which the counts are called skewed; min_attempts (default 1).

Fix: dump the node's rules while the traffic runs (iptables-save -t nat) and
compare; check for a proxy or persistence choosing backends, and for
conntrack entries from before the rules changed (conntrack -L). For
long-lived connections, make the clients reconnect now and then (the
apiserver's --goaway-chance, a gRPC client's max connection age) or
balance requests rather than connections (a client-side or L7 balancer).`,
}

func runConnectionSkew(p *analyzer.Pass) error {
	s := p.Snap
	alpha := p.Param("alpha", 0.001)
	minAttempts := int(p.Param("min_attempts", 1))
	nodes := facts.CaptureNodes.Of(p)
	nodeOf := func(node, file string) string {
		if node != "" {
			return node
		}
		if cn, ok := nodes.Of(file); ok {
			return cn.Node
		}
		return ""
	}
	// The clients' own addresses: a backend on the client's node is
	// reached over loopback, which a capture on the wire does not see, so
	// it is not tested and the others' probabilities are scaled up.
	local := map[string]bool{}
	for _, a := range s.Attempts {
		local[a.Client.Addr().String()] = true
	}
	for _, st := range s.EndpointStats {
		for _, c := range st.ClientAddrs {
			local[c.String()] = true
		}
	}
	counted := map[model.Pos]bool{} // the service ports a capture counted, by their position
	for _, sp := range facts.Dataplanes.Of(p) {
		var seenBackends []dataplane.Backend
		total := 0.0
		for _, b := range sp.Backends {
			if b.Addr.IsValid() && !local[b.Addr.Addr().String()] {
				seenBackends = append(seenBackends, b)
				total += b.Probability
			}
		}
		if len(seenBackends) < 2 || total <= 0 {
			continue
		}
		for i := range seenBackends {
			seenBackends[i].Probability /= total
		}
		sp.Backends = seenBackends
		idx := map[string]int{}
		for i, b := range sp.Backends {
			if b.Addr.IsValid() {
				idx[b.Addr.String()] = i
			}
		}
		if len(idx) < 2 {
			continue
		}
		affinity, affPos := chainAffinity(s, sp)
		sameNode := func(node string) bool { return sp.Node == "" || node == "" || node == sp.Node }
		counts := make([]int, len(sp.Backends))
		seen := map[string]bool{}
		var firstEv []analyzer.Evidence
		n := 0
		for i := range s.Attempts {
			a := &s.Attempts[i]
			j, ok := idx[a.Server.String()]
			if !ok || len(a.SYN) == 0 || !sameNode(nodeOf(a.Node, a.Pos.File)) {
				continue
			}
			k := a.Client.String() + ">" + a.Server.String() // one connection seen on two nodes counts once
			if affinity {
				k = a.Client.Addr().String() // a client stays on its backend: counted once
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			counts[j]++
			n++
			if len(firstEv) < maxGroupEvidence {
				firstEv = append(firstEv, analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s", a.Client, a.Server)})
			}
		}
		// Attempts a capture read in summary mode folded into per-server
		// counters count too (a connection seen on two nodes counts on
		// each); with affinity, their clients.
		for _, st := range s.EndpointStats {
			j, ok := idx[st.Server.String()]
			if !ok || st.Attempts == 0 || !sameNode(nodeOf(st.Node, st.File)) {
				continue
			}
			add := st.Attempts
			if affinity {
				add = 0
				for _, c := range st.ClientAddrs {
					if !seen[c.String()] {
						seen[c.String()] = true
						add++
					}
				}
			}
			counts[j] += add
			n += add
			if len(firstEv) < maxGroupEvidence {
				firstEv = append(firstEv, analyzer.Evidence{Pos: model.Pos{File: st.File}, Note: fmt.Sprintf("%d %s %s to %s counted", st.Attempts, st.Outcome, plural(st.Attempts, "attempt", "attempts"), st.Server)})
			}
		}
		if n > 0 {
			counted[sp.Pos] = true
		}
		if n < minAttempts || n == 0 {
			continue
		}
		pval, test := skewPValue(counts, sp.Backends, n)
		if pval >= alpha {
			continue
		}
		p.Report(skewFinding(sp, counts, n, pval, test, affinity, affPos, firstEv))
	}
	for _, sp := range facts.Dataplanes.Of(p) {
		if sp.Mode != "ipvs" || counted[sp.Pos] {
			continue
		}
		if t, ok := openConnsOf(s, sp); ok && t.n >= minAttempts {
			if t.pval, t.test = skewPValue(t.counts, t.reals, t.n); t.pval < alpha {
				p.Report(openSkewFinding(t))
			}
		}
	}
	return nil
}

// openConns is what an IPVS table shows of one virtual service's open
// connections: the ActiveConn of each real server of non-zero weight,
// with the weights' shares.
type openConns struct {
	sp     dataplane.ServicePort
	vs     *model.IPVSService
	reals  []dataplane.Backend // Address as printed, Probability the weight's share
	counts []int
	n      int
	pval   float64
	test   string
}

// byWeight are the IPVS schedulers that give each real server new
// connections in proportion to its weight (round robin, least connection
// and their kin); the hashing and locality schedulers (sh, dh, mh, lblc,
// lblcr) pick by address, so a few clients land where they hash, and the
// failover ones (fo, ovf) fill the heaviest real server first.
var byWeight = []string{"rr", "wrr", "lc", "wlc", "sed", "nq", "twos"}

// openConnsOf reads the open connections of sp's IPVS virtual service;
// ok is false when there is nothing to test: persistence (a client stays
// on its real server by design), a scheduler that does not pick by
// weight, fewer than two real servers of non-zero weight (a real server of
// weight 0 is draining: it gets no new connections), or no open
// connection.
func openConnsOf(s *model.Snapshot, sp dataplane.ServicePort) (openConns, bool) {
	t := openConns{sp: sp}
	for i := range s.IPVS {
		if vs := &s.IPVS[i]; vs.Pos == sp.Pos && vs.Node == sp.Node {
			t.vs = vs
			break
		}
	}
	if t.vs == nil || t.vs.Persistent > 0 || !slices.Contains(byWeight, t.vs.Scheduler) {
		return t, false
	}
	total := 0
	for _, r := range t.vs.Reals {
		total += max(r.Weight, 0)
	}
	for _, r := range t.vs.Reals {
		if r.Weight <= 0 {
			continue
		}
		t.reals = append(t.reals, dataplane.Backend{Addr: r.Addr, Address: realName(r), Pos: r.Pos,
			Probability: float64(r.Weight) / float64(total)})
		t.counts = append(t.counts, r.ActiveConn)
		t.n += r.ActiveConn
	}
	return t, len(t.reals) >= 2 && t.n > 0
}

// realName is a real server as ipvsadm printed it: its address, or the
// host name a listing without -n gave (the address is then unknown).
func realName(r model.IPVSReal) string {
	if r.Addr.Addr().IsValid() {
		return r.Addr.String()
	}
	for _, n := range strings.Split(r.Note, "; ") {
		if h, ok := strings.CutPrefix(n, "host name "); ok {
			return strings.TrimSuffix(h, " not resolved") + ":" + fmt.Sprint(r.Addr.Port())
		}
	}
	return r.Addr.String()
}

// openSkewFinding reports the open connections of an IPVS virtual service
// spread unlike its real servers' weights.
func openSkewFinding(t openConns) analyzer.Finding {
	sp, vs := t.sp, t.vs
	name := sp.Service
	if name == "" {
		name = strings.Join(sp.Frontends, ", ")
	}
	var dist []string
	ev := []analyzer.Evidence{{Pos: vs.Pos, Note: fmt.Sprintf("%s %s %s", vs.Proto, strings.Join(sp.Frontends, ", "), vs.Scheduler)}}
	least := 0
	for i, b := range t.reals {
		dist = append(dist, fmt.Sprintf("%s: %d of %d (expected %s)", b.Address, t.counts[i], t.n, dataplane.Percent(b.Probability)))
		ev = append(ev, analyzer.Evidence{Pos: b.Pos, Note: fmt.Sprintf("%s: %d active", b.Address, t.counts[i])})
		if float64(t.counts[i])/b.Probability < float64(t.counts[least])/t.reals[least].Probability {
			least = i
		}
	}
	values := map[string]any{
		"service":      name,
		"active":       t.n,
		"distribution": dist,
		"p_value":      fmt.Sprintf("%.2g", t.pval),
		"test":         t.test,
		"scheduler":    vs.Scheduler,
	}
	if sp.Node != "" {
		values["node"] = sp.Node
	}
	subj := servicePortSubject(&sp)
	if sp.Service == "" {
		subj = subject("node", sp.Node, "virtual_service", vs.Proto+" "+strings.Join(sp.Frontends, ", "), "proto", strings.ToLower(vs.Proto))
	}
	low := t.reals[least].Address
	return analyzer.Finding{
		Subject:   subj,
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Title:     fmt.Sprintf("%s: open connections skewed across its %d real servers", name, len(t.reals)),
		Summary: fmt.Sprintf("The IPVS table shows %d open connections (ActiveConn) to %s's real servers: %s. With the "+
			"real servers' weights, counts this uneven have a chance of %.2g (%s).", t.n, name, strings.Join(dist, "; "), t.pval, t.test),
		Cause: fmt.Sprintf("Not shown: the table counts the connections open now, not how IPVS scheduled them. The "+
			"likeliest: long-lived connections (HTTP/2, gRPC, keep-alive) opened while %s was away (restarted, not "+
			"ready) or before it was added stay on the real servers they were opened on; IPVS balances new "+
			"connections, not requests.", low),
		Fix: "Make the clients reconnect now and then (kube-apiserver --goaway-chance for its clients, a gRPC " +
			"server's max connection age) or balance requests instead of connections (client-side or L7 balancing); " +
			"restarting the clients spreads them again.",
		Facts: values,
		Supports: []string{fmt.Sprintf("%s: %s", vs.Pos, strings.Join(dist, "; ")),
			fmt.Sprintf("%s: scheduler %s, the weights give %s", vs.Pos, vs.Scheduler, strings.TrimSuffix(probList(t.reals), ", "))},
		Contradicts: []string{fmt.Sprintf("no persistence on %s: a client's new connections should spread", strings.Join(sp.Frontends, ", "))},
		Alternatives: []string{
			fmt.Sprintf("long-lived connections opened while %s was away or before it was added stay where they were opened", low),
			"new connections follow old ones: clients reusing source ports with net.ipv4.vs.conn_reuse_mode=0 are " +
				"kept on the real server of the port's previous connection",
			"a few clients each hold many connections, opened together",
		},
		Decide: fmt.Sprintf("# the Pods behind the real servers: %s started after its clients connected if it is the "+
			"youngest\nkubectl get pods -A -o wide --sort-by=.status.startTime", low),
		Evidence: ev,
	}
}

func skewFinding(sp dataplane.ServicePort, counts []int, n int, pval float64, test string, affinity bool, affPos model.Pos,
	firstEv []analyzer.Evidence) analyzer.Finding {
	what := "new connections"
	if affinity {
		what = "clients"
	}
	var dist []string
	ev := []analyzer.Evidence{{Pos: sp.Pos, Note: fmt.Sprintf("%s -> %s", sp.Service, sp.Chain)}}
	for i, b := range sp.Backends {
		dist = append(dist, fmt.Sprintf("%s: %d of %d (expected %s)", b.Address, counts[i], n, dataplane.Percent(b.Probability)))
		ev = append(ev, analyzer.Evidence{Pos: b.Pos, Note: b.Describe()})
	}
	ev = append(ev, firstEv...)
	values := map[string]any{
		"service":      sp.Service,
		"attempts":     n,
		"distribution": dist,
		"p_value":      fmt.Sprintf("%.2g", pval),
		"test":         test,
	}
	if sp.Node != "" {
		values["node"] = sp.Node
	}
	f := analyzer.Finding{
		Subject:   servicePortSubject(&sp),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Title:     fmt.Sprintf("%s: %s skewed across its %d backends", sp.Service, what, len(sp.Backends)),
		Summary: fmt.Sprintf("The capture shows %d %s to %s's backends: %s. With the NAT rules' "+
			"probabilities, counts this uneven have a chance of %.2g (%s).", n, what, sp.Service, strings.Join(dist, "; "), pval, test),
		Cause: "Something other than the NAT rules dumped picked the backends; the bundle does not show what.",
		Fix: "Dump the node's rules while the traffic runs (`iptables-save -t nat`) and compare them with this dump; " +
			"check for a proxy or persistence choosing the backend, and for conntrack entries from before a rule change.",
		Facts: values,
		Supports: []string{fmt.Sprintf("the capture: %s", strings.Join(dist, "; ")),
			fmt.Sprintf("%s: the rules dumped give %s", sp.Pos, strings.TrimSuffix(probList(sp.Backends), ", "))},
		Alternatives: []string{
			"the rules in force during the capture were not those dumped: kube-proxy caught up with an endpoint change after it",
			"a proxy, a mesh sidecar or IPVS persistence chose the backends, not these rules",
			"conntrack entries from before a rule change kept connections on their old backend",
		},
		Decide:   collected("iptables-save", "on the node, while the traffic runs"),
		Evidence: ev,
	}
	if affinity {
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: ClientIP session affinity (-m recent): each client was counted once", affPos))
	} else {
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("no session affinity in %s's rules: a client's connections should spread", sp.Chain))
	}
	return f
}

// probList lists the backends' probabilities: "10.0.0.1:80 33%, ...".
func probList(bs []dataplane.Backend) string {
	var b strings.Builder
	for _, x := range bs {
		fmt.Fprintf(&b, "%s %s, ", x.Address, dataplane.Percent(x.Probability))
	}
	return b.String()
}

// chainAffinity reports whether the Service chain of sp has ClientIP
// session affinity (an -m recent check, an nftables affinity set), and
// the rule that shows it.
func chainAffinity(s *model.Snapshot, sp dataplane.ServicePort) (bool, model.Pos) {
	if sp.Chain == "" {
		return false, model.Pos{}
	}
	for _, rs := range s.Netfilter {
		if rs.Node != sp.Node && sp.Node != "" && rs.Node != "" {
			continue
		}
		for _, t := range rs.Tables {
			c := t.Chain(sp.Chain)
			if c == nil {
				continue
			}
			for _, r := range c.Rules {
				if r.Recent != nil && !r.Recent.Set || strings.HasPrefix(r.Src, "@") {
					return true, r.Pos
				}
			}
		}
	}
	return false, model.Pos{}
}

// skewPValue returns the chance of counts at least this uneven under the
// backends' probabilities: a chi-square test when every expected count is
// at least 5; else the exact multinomial test (the chance of every
// outcome no more likely than counts) when the outcomes are few enough to
// sum, or, when every connection went to one backend, the exact chance of
// that.
func skewPValue(counts []int, bs []dataplane.Backend, n int) (float64, string) {
	enough := true
	for _, b := range bs {
		if b.Probability*float64(n) < 5 {
			enough = false
		}
	}
	if enough {
		x2 := 0.0
		for i, b := range bs {
			e := b.Probability * float64(n)
			d := float64(counts[i]) - e
			x2 += d * d / e
		}
		df := float64(len(bs) - 1)
		return gammaQ(df/2, x2/2), fmt.Sprintf("chi-square %.1f with %d degrees of freedom", x2, len(bs)-1)
	}
	probs := make([]float64, len(bs))
	for i, b := range bs {
		probs[i] = b.Probability
	}
	if pv, ok := exactMultinomial(counts, probs, n); ok {
		return pv, "exact multinomial test"
	}
	if i := slices.IndexFunc(counts, func(c int) bool { return c == n }); i >= 0 {
		pAll := 0.0
		for _, b := range bs {
			pAll += math.Pow(b.Probability, float64(n))
		}
		return pAll, "exact chance that all connections go to one backend"
	}
	return 1, "too few connections to test"
}

// maxMultinomialOutcomes bounds how many outcomes the exact test sums.
const maxMultinomialOutcomes = 200000

// exactMultinomial returns the chance, under probs, of the outcomes of n
// draws no more likely than counts; ok is false when there are too many
// outcomes to sum.
func exactMultinomial(counts []int, probs []float64, n int) (float64, bool) {
	k := len(probs)
	// The outcomes are the compositions of n into k parts: C(n+k-1, k-1).
	outcomes := 1.0
	for i := 1; i < k; i++ {
		outcomes = outcomes * float64(n+i) / float64(i)
	}
	if outcomes > maxMultinomialOutcomes {
		return 0, false
	}
	lf := make([]float64, n+1) // log(i!)
	for i := 2; i <= n; i++ {
		lf[i] = lf[i-1] + math.Log(float64(i))
	}
	logP := func(c []int) float64 {
		l := lf[n]
		for i, x := range c {
			if x > 0 && probs[i] <= 0 {
				return math.Inf(-1)
			}
			l -= lf[x]
			if x > 0 {
				l += float64(x) * math.Log(probs[i])
			}
		}
		return l
	}
	// Outcomes within a hundredth of a percent count as equally likely:
	// kube-proxy writes 1/3 as 0.3333333333, which tells apart outcomes
	// that are the same.
	limit := logP(counts) + 1e-4
	sum := 0.0
	c := make([]int, k)
	var walk func(i, left int)
	walk = func(i, left int) {
		if i == k-1 {
			c[i] = left
			if l := logP(c); l <= limit {
				sum += math.Exp(l)
			}
			return
		}
		for x := 0; x <= left; x++ {
			c[i] = x
			walk(i+1, left-x)
		}
	}
	walk(0, n)
	return min(sum, 1), true
}

// gammaQ is the regularized upper incomplete gamma function Q(a, x), the
// chi-square survival function at 2x with 2a degrees of freedom.
func gammaQ(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		// Series for P(a, x).
		sum, term := 1/a, 1/a
		for n := 1; n < 500; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-x+a*math.Log(x)-lg)
	}
	// Continued fraction for Q(a, x) (modified Lentz).
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 500; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lg) * h
}
