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
	Needs:    []model.Kind{model.KindCapture, model.KindNetfilter},
	Requires: []analyzer.FactKey{facts.Dataplanes},
	Run:      runConnectionSkew,
	Doc: `new connections spread unlike the NAT rules' weights

kube-proxy's NAT rules pick a backend for each new connection with the
probabilities of the Service chain (1/n each). A capture taken after NAT shows
which backend each new connection went to. When the counts are far from those
probabilities (a chi-square test, or the exact chance that every connection
hits one backend when there are too few for the test), something else decides:
session affinity (ClientIP), connections reused by the client (HTTP
keep-alive, a pooled gRPC channel), conntrack entries surviving a rule change,
or rules that are not the ones dumped.

Evidence: the capture's attempts to the backends, the Service chain's rules
with their probabilities. A backend on the client's own node is left out (its
connections stay on loopback, out of a capture on the wire) and the others'
probabilities scaled up.

Severity: warning. Parameter alpha (default 0.001): the chance below which the
counts are called skewed; min_attempts (default 10).

Fix: check the Service's sessionAffinity, whether clients reuse one long-lived
connection (then the load is spread per client, not per request), and whether
the node's rules changed since the capture (iptables-save at the time of the
capture).`,
}

func runConnectionSkew(p *analyzer.Pass) error {
	s := p.Snap
	alpha := p.Param("alpha", 0.001)
	minAttempts := int(p.Param("min_attempts", 10))
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
		counts := make([]int, len(sp.Backends))
		seen := map[string]bool{}
		var firstEv []analyzer.Evidence
		n := 0
		for i := range s.Attempts {
			a := &s.Attempts[i]
			j, ok := idx[a.Server.String()]
			if !ok || len(a.SYN) == 0 {
				continue
			}
			k := a.Client.String() + ">" + a.Server.String() // one connection seen on two nodes counts once
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
		// each).
		for _, st := range s.EndpointStats {
			j, ok := idx[st.Server.String()]
			if !ok || st.Attempts == 0 {
				continue
			}
			counts[j] += st.Attempts
			n += st.Attempts
			if len(firstEv) < maxGroupEvidence {
				firstEv = append(firstEv, analyzer.Evidence{Pos: model.Pos{File: st.File}, Note: fmt.Sprintf("%d %s %s to %s counted", st.Attempts, st.Outcome, plural(st.Attempts, "attempt", "attempts"), st.Server)})
			}
		}
		if n < minAttempts {
			continue
		}
		pval, test := skewPValue(counts, sp.Backends, n)
		if pval >= alpha {
			continue
		}
		var dist []string
		ev := []analyzer.Evidence{{Pos: sp.Pos, Note: fmt.Sprintf("%s -> %s", sp.Service, sp.Chain)}}
		for i, b := range sp.Backends {
			dist = append(dist, fmt.Sprintf("%s: %d of %d (expected %s)", b.Address, counts[i], n, dataplane.Percent(b.Probability)))
			ev = append(ev, analyzer.Evidence{Pos: b.Pos, Note: b.Describe()})
		}
		ev = append(ev, firstEv...)
		p.Report(analyzer.Finding{
			Severity: analyzer.Warning,
			Title:    fmt.Sprintf("%s: new connections skewed across its %d backends", sp.Service, len(sp.Backends)),
			Summary: fmt.Sprintf("The capture shows %d new connections to %s's backends: %s. With the NAT rules' "+
				"probabilities, counts this uneven have a chance of %.2g (%s).", n, sp.Service, strings.Join(dist, "; "), pval, test),
			Cause: "Something other than the NAT rules picks the backend: session affinity, clients reusing connections, " +
				"conntrack entries from before a rule change, or rules that differ from the dump.",
			Fix: "Check the Service's sessionAffinity and the clients' connection reuse; dump the node's rules at the time " +
				"of the capture.",
			Facts: map[string]any{
				"service":      sp.Service,
				"attempts":     n,
				"distribution": dist,
				"p_value":      fmt.Sprintf("%.2g", pval),
				"test":         test,
			},
			Sources:  []model.Kind{model.KindCapture, model.KindNetfilter},
			Evidence: ev,
		})
	}
	return nil
}

// skewPValue returns the chance of counts at least this uneven under the
// backends' probabilities: a chi-square test when every expected count is
// at least 5, else, when every connection went to one backend, the exact
// chance of that.
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
	if i := slices.IndexFunc(counts, func(c int) bool { return c == n }); i >= 0 {
		pAll := 0.0
		for _, b := range bs {
			pAll += math.Pow(b.Probability, float64(n))
		}
		return pAll, "exact chance that all connections go to one backend"
	}
	return 1, "too few connections to test"
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
