package facts

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// Shadow is a rule outside kube-proxy's chains that catches a share of the
// new connections to a Service frontend before kube-proxy's rules see
// them.
type Shadow struct {
	// Port is the Service port kube-proxy's chains implement on the node.
	Port *dataplane.ServicePort
	// Frontend is the address caught: "10.43.0.1:443", "NodePort 30080".
	Frontend string
	// Dst is the frontend as an address (invalid for a NodePort).
	Dst netip.AddrPort
	// NodeTraffic says the rule catches the connections the node itself
	// opens (nat OUTPUT, raw OUTPUT, the output hook); otherwise those
	// that arrive from pods and elsewhere (PREROUTING).
	NodeTraffic bool
	// Hook names the table and chain: "nat OUTPUT", "raw PREROUTING",
	// "nft output".
	Hook string
	// Rule is the rule that catches the connections, Chain and Table where
	// it is.
	Rule  *model.Rule
	Chain string
	Table string
	// Family is the ruleset's address family (ipv4, ipv6, inet; nft's
	// ip, ip6, inet for its tables).
	Family string
	// Action says what the rule does: "DNAT to 10.150.81.3:6443",
	// "REDIRECT", "DROP", "REJECT", "ACCEPT (not translated)",
	// "NOTRACK (no NAT at all)".
	Action string
	// Target is the DNAT target, when the rule translates.
	Target netip.AddrPort
	// Share is the part of the new connections the rule catches (1 for a
	// rule without a statistic match).
	Share float64
}

// Shadows are the rules of every ruleset that catch a Service frontend
// before kube-proxy does.
type Shadows []Shadow

// ShadowedServices walks, in each ruleset that holds kube-proxy's chains,
// the first packet to each Service frontend those chains catch, once as
// traffic from pods and elsewhere and once as the node's own (TraceNAT,
// and TraceTable for the raw table), and keeps the rules outside
// kube-proxy's chains that translate, redirect, drop, accept or untrack
// some of it before kube-proxy's chains do.
var ShadowedServices = &analyzer.Fact[Shadows]{
	Name: "shadowed-services",
	Doc: "rules outside kube-proxy's chains (nat PREROUTING and OUTPUT, raw, nftables tables of other tools) that " +
		"catch a Service frontend before kube-proxy does, for pod and for node traffic",
	Compute: func(fs *analyzer.FactSet) Shadows { return shadows(fs.Snapshot(), Dataplanes.Get(fs)) },
}

// kubeProxyChain says a chain is kube-proxy's: its iptables chains are
// named KUBE-..., its nftables chains are in the table kube-proxy.
func kubeProxyChain(table, chain string) bool {
	return strings.HasPrefix(chain, "KUBE-") || table == "kube-proxy"
}

// ruleAt locates a ruleset's rules by position.
type ruleAt struct {
	table, chain string
	rule         *model.Rule
}

func shadows(s *model.Snapshot, sps ServicePorts) Shadows {
	var out Shadows
	for _, rs := range s.Netfilter {
		at := map[model.Pos]ruleAt{}
		for _, t := range rs.Tables {
			for _, c := range t.Chains {
				for _, r := range c.Rules {
					at[r.Pos] = ruleAt{t.Name, c.Name, r}
				}
			}
		}
		for i := range sps {
			sp := &sps[i]
			if sp.Mode == "ipvs" || sp.Pos.File != rs.Pos.File || sp.Node != rs.Node {
				continue
			}
			for _, fe := range sp.Frontends {
				for _, output := range []bool{false, true} {
					out = append(out, shadowsOf(rs, sp, fe, output, at)...)
				}
			}
		}
	}
	return out
}

func shadowsOf(rs *model.Ruleset, sp *dataplane.ServicePort, fe string, output bool, at map[model.Pos]ruleAt) Shadows {
	proto := strings.ToLower(sp.Proto)
	if proto == "" {
		proto = "tcp"
	}
	probe := dataplane.Probe{Proto: proto, Output: output}
	if port, ok := strings.CutPrefix(fe, "NodePort "); ok {
		n, ok := model.PortNumber(port)
		if !ok {
			return nil
		}
		probe.Dst = netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(n))
		probe.Local = true
	} else {
		ap, err := netip.ParseAddrPort(fe)
		if err != nil {
			return nil
		}
		probe.Dst = ap
	}
	var out Shadows
	add := func(hook string, r ruleAt, action string, target netip.AddrPort, share float64) {
		sh := Shadow{Port: sp, Frontend: fe, NodeTraffic: output, Hook: hook, Rule: r.rule, Chain: r.chain, Table: r.table,
			Family: rs.Family, Action: action, Target: target, Share: share}
		if probe.Local {
			sh.Dst = netip.AddrPort{}
		} else {
			sh.Dst = probe.Dst
		}
		out = append(out, sh)
	}
	chain := "PREROUTING"
	if output {
		chain = "OUTPUT"
	}
	if rs.Format != "nft" {
		// The raw table runs before connection tracking, so before NAT.
		if tr, err := dataplane.TraceTable(rs, "raw", chain, probe); err == nil {
			caught := 0.0
			for _, st := range tr.Steps {
				if st.Rule != nil && untracks(st.Rule) && !kubeProxyChain("raw", st.Chain) {
					add("raw "+chain, ruleAt{"raw", st.Chain, st.Rule}, "NOTRACK (no NAT at all)", netip.AddrPort{}, st.Probability)
					caught += st.Probability
				}
			}
			for _, d := range tr.Destinations {
				if r, ok := at[d.Pos]; ok && d.Verdict != "" && !kubeProxyChain(r.table, r.chain) {
					add("raw "+chain, r, d.Verdict, netip.AddrPort{}, d.Probability)
				}
			}
			if caught >= 1-1e-9 {
				return out
			}
		}
	}
	tr, err := dataplane.TraceNAT(rs, probe)
	if err != nil {
		return out
	}
	hook := "nat " + chain
	if rs.Format == "nft" {
		hook = "nft " + strings.ToLower(chain)
	}
	for _, d := range tr.Destinations {
		r, ok := at[d.Pos]
		if !ok || kubeProxyChain(r.table, r.chain) || slices.ContainsFunc(d.Via, func(c string) bool { return kubeProxyChain("", c) }) {
			continue
		}
		switch {
		case d.Verdict != "":
			add(hook, r, d.Verdict, netip.AddrPort{}, d.Probability)
		case d.Translated:
			target, _ := netip.ParseAddrPort(d.Addr)
			add(hook, r, "DNAT to "+d.Addr, target, d.Probability)
		case r.rule.Target == "ACCEPT" || r.rule.Target == "RETURN":
			add(hook, r, r.rule.Target+" (not translated)", netip.AddrPort{}, d.Probability)
		}
	}
	for _, st := range tr.Steps {
		if st.Rule == nil || kubeProxyChain("", st.Chain) {
			continue
		}
		if r, ok := at[st.Rule.Pos]; ok && !kubeProxyChain(r.table, r.chain) && redirects(st.Rule) {
			add(hook, r, fmt.Sprintf("%s (to a local port)", st.Rule.Target), netip.AddrPort{}, st.Probability)
		}
	}
	return out
}

// untracks says a raw-table rule takes connections out of connection
// tracking: -j NOTRACK, -j CT --notrack, nft's notrack.
func untracks(r *model.Rule) bool {
	return r.Target == "NOTRACK" || (r.Target == "CT" && strings.Contains(r.Raw, "--notrack")) || strings.Contains(r.Raw, " notrack")
}

// redirects says a nat rule sends connections to a local port (REDIRECT,
// TPROXY), which the trace walks past.
func redirects(r *model.Rule) bool {
	return r.Target == "REDIRECT" || r.Target == "TPROXY"
}

// ForService returns the shadows of the Service port named service
// ("default/kubernetes:https"), on every node.
func (ss Shadows) ForService(service string) Shadows {
	var out Shadows
	for _, s := range ss {
		if s.Port.Service == service {
			out = append(out, s)
		}
	}
	return out
}
