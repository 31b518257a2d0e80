// Package dataplane builds, from a node's NAT rules or IPVS table, one model
// of what the node does with traffic to each Service port: the frontends it
// catches (ClusterIP, NodePort, external and load-balancer IPs) and the
// backends it sends that traffic to, each with the chance of being picked.
// The shape is the same whichever kube-proxy mode programmed the node, so
// rules can hold it against what Kubernetes says the Service's endpoints
// are.
package dataplane

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// Backend is one endpoint the dataplane sends a Service port's traffic to.
type Backend struct {
	// Addr is the DNAT target or IPVS real server. It is invalid when the
	// dump does not show it (an iptables listing that prints `to::0`);
	// Address then holds what is known, as text.
	Addr    netip.AddrPort `json:"addr,omitzero"`
	Address string         `json:"address"`
	// Probability is the chance that a new connection goes to this
	// backend: the statistic probabilities of the Service chain multiplied
	// out (kube-proxy writes 1/n, 1/(n-1) ... 1, which gives 1/n each), or
	// the IPVS weight over the weights' sum.
	Probability float64 `json:"probability"`
	// Chain is the endpoint chain: KUBE-SEP-... for iptables,
	// endpoint-... for nftables.
	Chain string    `json:"chain,omitempty"`
	Pos   model.Pos `json:"pos"` // the rule (or real server line) that sends traffic here
}

// ServicePort is one Service port as one node's dataplane implements it.
type ServicePort struct {
	Node string `json:"node,omitempty"`
	// Service is "namespace/name:port" as kube-proxy's comments write it
	// ("kube-system/kube-dns:dns-tcp"); "" when the dump does not say.
	Service string `json:"service,omitempty"`
	Proto   string `json:"proto,omitempty"`
	// Frontends are the addresses caught: "10.96.0.10:53" for a ClusterIP.
	Frontends []string  `json:"frontends"`
	Mode      string    `json:"mode"`            // iptables, nftables or ipvs
	Chain     string    `json:"chain,omitempty"` // KUBE-SVC-... for iptables, service-... for nftables
	Backends  []Backend `json:"backends"`
	Pos       model.Pos `json:"pos"`
}

// Namespace returns the Service's namespace.
func (sp *ServicePort) Namespace() string {
	ns, _, _ := strings.Cut(sp.Service, "/")
	return ns
}

// ServiceName returns the Service's name without namespace and port.
func (sp *ServicePort) ServiceName() string {
	_, rest, _ := strings.Cut(sp.Service, "/")
	name, _, _ := strings.Cut(rest, ":")
	return name
}

// PortName returns the Service port's name, "" when unnamed.
func (sp *ServicePort) PortName() string {
	_, port, _ := strings.Cut(sp.Service, ":")
	return port
}

// Build reads every ruleset and IPVS table of the snapshot.
func Build(s *model.Snapshot) []ServicePort {
	names := kubeNames(s)
	out := fromIPVS(s, names)
	seen := map[string]bool{} // node|chain: the same chain in two dumps of one node
	for _, rs := range s.Netfilter {
		for _, sp := range fromRuleset(rs, names) {
			k := sp.Node + "|" + sp.Chain
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, sp)
		}
	}
	return out
}

// serviceNames names Service ports from the Kubernetes objects: by
// "PROTO|IP:PORT" of a ClusterIP, external or load-balancer IP, and by
// "PROTO|NODEPORT".
type serviceNames struct {
	byAddr, byNodePort map[string]string
}

func kubeNames(s *model.Snapshot) serviceNames {
	n := serviceNames{byAddr: map[string]string{}, byNodePort: map[string]string{}}
	for _, svc := range s.Kube.Services {
		for _, p := range svc.Spec.Ports {
			name := svc.Namespace + "/" + svc.Name
			if p.Name != "" {
				name += ":" + p.Name
			}
			proto := string(p.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			ips := append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...)
			ips = append(ips, svc.Spec.ExternalIPs...)
			for _, ing := range svc.Status.LoadBalancer.Ingress {
				ips = append(ips, ing.IP)
			}
			for _, ip := range ips {
				if a, err := netip.ParseAddr(ip); err == nil {
					n.byAddr[proto+"|"+netip.AddrPortFrom(a, uint16(p.Port)).String()] = name
				}
			}
			if p.NodePort != 0 {
				n.byNodePort[fmt.Sprintf("%s|%d", proto, p.NodePort)] = name
			}
		}
	}
	return n
}

// lookup names the Service port a frontend ("10.96.0.10:53", "NodePort
// 30000") of protocol proto (tcp, TCP) belongs to, "" when no Service has it.
func (n serviceNames) lookup(proto, frontend string) string {
	proto = strings.ToUpper(proto)
	if port, ok := strings.CutPrefix(frontend, "NodePort "); ok {
		return n.byNodePort[proto+"|"+port]
	}
	return n.byAddr[proto+"|"+frontend]
}

// commentServiceRe reads kube-proxy's comments: "ns/name:port cluster IP",
// "ns/name:port -> 10.1.2.3:53", "ns/name:port".
var commentServiceRe = lazyre.New(`^([a-z0-9.-]+/[a-z0-9.-]+(?::[A-Za-z0-9._-]*)?)`)

func serviceOf(comment string) string {
	if m := commentServiceRe.FindStringSubmatch(comment); m != nil {
		return m[1]
	}
	return ""
}

// nftChainRe reads kube-proxy's nftables chain names:
// service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
// endpoint-5OJB2KTY-kube-system/kube-dns/tcp/dns-tcp__10.244.0.2/53 (the
// port name is empty for an unnamed port): the kind, the Service's
// namespace and name, the protocol and the port name.
var nftChainRe = lazyre.New(`^([a-z]+)-[A-Z0-9]+-([a-z0-9.-]+)/([a-z0-9.-]+)/([a-z]+)/([A-Za-z0-9._-]*)(?:__|$)`)

// nftChainServicePort returns the Service port, "ns/name:port" (or
// "ns/name" for an unnamed port), and the protocol an nftables chain name
// says; "" for other names.
func nftChainServicePort(chain string) (service, proto string) {
	m := nftChainRe.FindStringSubmatch(chain)
	if m == nil {
		return "", ""
	}
	service = m[2] + "/" + m[3]
	if m[5] != "" {
		service += ":" + m[5]
	}
	return service, m[4]
}

// Chain names kube-proxy gives in iptables mode, and the kinds of its
// nftables chain names (service-HASH-ns/name/proto/port ...).
var (
	// dispatchChains hold a rule per Service frontend.
	dispatchChains = []string{"KUBE-SERVICES", "KUBE-NODEPORTS", "services", "nodeports"}
	// serviceChains spread a Service port over its endpoints.
	serviceChains = chainNames{prefixes: []string{"KUBE-SVC-"}, kinds: []string{"service", "cluster", "local"}}
	// externalChains are between a frontend and the Service chain
	// (masquerade, source ranges, traffic policy).
	externalChains = chainNames{prefixes: []string{"KUBE-EXT-", "KUBE-FW-", "KUBE-XLB-"}, kinds: []string{"external", "firewall"}}
	// endpointChains DNAT to one endpoint.
	endpointChains = chainNames{prefixes: []string{"KUBE-SEP-"}, kinds: []string{"endpoint"}}
)

// chainNames are iptables chain name prefixes and the kinds (the word
// before the hash) of nftables chain names.
type chainNames struct {
	prefixes, kinds []string
}

func (n chainNames) match(name string) bool {
	for _, p := range n.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if m := nftChainRe.FindStringSubmatch(name); m != nil {
		return slices.Contains(n.kinds, m[1])
	}
	return false
}

// natTables returns the tables of rs that hold kube-proxy's NAT rules:
// the iptables nat table, or each nftables table with a nat base chain
// (table ip kube-proxy).
func natTables(rs *model.Ruleset) []*model.Table {
	if rs.Format != "nft" {
		if nat := natTable(rs); nat != nil {
			return []*model.Table{nat}
		}
		return nil
	}
	var out []*model.Table
	for _, t := range rs.Tables {
		if slices.ContainsFunc(t.Chains, func(c *model.Chain) bool { return c.Type == "nat" }) {
			out = append(out, t)
		}
	}
	return out
}

func fromRuleset(rs *model.Ruleset, names serviceNames) []ServicePort {
	var out []ServicePort
	for _, t := range natTables(rs) {
		out = append(out, fromTable(rs, t, names)...)
	}
	return out
}

// isEndpoint says chain c (listed or not) is an endpoint chain: kube-proxy
// names it KUBE-SEP- or endpoint-, and it ends in a DNAT.
func isEndpoint(name string, chains map[string]*model.Chain) bool {
	if endpointChains.match(name) {
		return true
	}
	c := chains[name]
	return c != nil && slices.ContainsFunc(c.Rules, func(r *model.Rule) bool { return r.Target == "DNAT" })
}

// isServiceChain says a chain spreads connections over endpoint chains.
func isServiceChain(name string, chains map[string]*model.Chain) bool {
	if serviceChains.match(name) {
		return true
	}
	c := chains[name]
	return c != nil && slices.ContainsFunc(c.Rules, func(r *model.Rule) bool { return r.Target != name && isEndpoint(r.Target, chains) })
}

func fromTable(rs *model.Ruleset, nat *model.Table, names serviceNames) []ServicePort {
	mode := "iptables"
	if rs.Format == "nft" && nat.Chain("KUBE-SERVICES") == nil {
		// Not the iptables-nft table of kube-proxy's iptables mode.
		mode = "nftables"
	}
	chains := map[string]*model.Chain{}
	for _, c := range nat.Chains {
		if _, dup := chains[c.Name]; !dup {
			chains[c.Name] = c
		}
	}
	var out []ServicePort
	done := map[string]bool{}
	add := func(svcChain string, frontend string, proto string, comment string, pos model.Pos) {
		c := chains[svcChain]
		if c == nil {
			return
		}
		for i := range out {
			if out[i].Chain == svcChain {
				if frontend != "" && !slices.Contains(out[i].Frontends, frontend) {
					out[i].Frontends = append(out[i].Frontends, frontend)
				}
				return
			}
		}
		sp := ServicePort{Node: rs.Node, Mode: mode, Chain: svcChain, Proto: proto, Service: serviceOf(comment),
			Frontends: []string{}, Pos: pos}
		if frontend != "" {
			sp.Frontends = append(sp.Frontends, frontend)
		}
		sp.Backends = backends(c, chains)
		if sp.Service == "" {
			for _, r := range c.Rules {
				if s := serviceOf(r.Comment); s != "" {
					sp.Service = s
					break
				}
			}
		}
		if sp.Service == "" {
			sp.Service, _ = nftChainServicePort(svcChain)
		}
		if sp.Service == "" && frontend != "" {
			sp.Service = names.lookup(proto, frontend)
		}
		if sp.Proto == "" {
			_, sp.Proto = nftChainServicePort(svcChain)
		}
		done[svcChain] = true
		out = append(out, sp)
	}
	// Services reached from KUBE-SERVICES or services (ClusterIPs, external
	// IPs, and NodePorts in nftables mode) and KUBE-NODEPORTS.
	for _, from := range dispatchChains {
		c := chains[from]
		if c == nil {
			continue
		}
		for _, r := range c.Rules {
			target := r.Target
			if externalChains.match(target) || (!isServiceChain(target, chains) && chains[target] != nil && !slices.Contains(dispatchChains, target)) {
				// Newer kube-proxy: external chains jump on to the
				// Service chain.
				if ext := chains[target]; ext != nil {
					for _, er := range ext.Rules {
						if er.Target != target && isServiceChain(er.Target, chains) {
							target = er.Target
						}
					}
				}
			}
			if !isServiceChain(target, chains) {
				continue
			}
			add(target, frontendOf(r, from), r.Proto, r.Comment, r.Pos)
		}
	}
	// Service chains listed on their own (a listing of one chain).
	for _, c := range nat.Chains {
		if serviceChains.match(c.Name) && !done[c.Name] {
			add(c.Name, "", "", "", c.Pos)
		}
	}
	return out
}

func frontendOf(r *model.Rule, from string) string {
	port := r.DPort
	if from == "KUBE-NODEPORTS" || from == "nodeports" || strings.HasPrefix(r.Dst, "@") || (r.Dst == "" && r.DstType == "LOCAL") {
		// nftables mode: `ip daddr @nodeport-ips` or `fib daddr type
		// local` with the service-nodeports map's port.
		return "NodePort " + port
	}
	dst := r.Dst
	if p, ok := r.DstPrefix(); ok && p.IsSingleIP() {
		dst = p.Addr().String()
	}
	if dst == "" {
		return ""
	}
	if n, ok := model.PortNumber(port); ok {
		return netip.AddrPortFrom(mustAddr(dst), uint16(n)).String()
	}
	return dst + ":" + port
}

func mustAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}

// backends walks a Service chain's jumps to endpoint chains (and the
// gotos of an nftables numgen map), multiplying out the statistic
// probabilities.
func backends(svc *model.Chain, chains map[string]*model.Chain) []Backend {
	out := []Backend{}
	remaining := 1.0
	for _, r := range svc.Rules {
		if r.Target == svc.Name || !isEndpoint(r.Target, chains) {
			continue
		}
		if (r.Recent != nil && !r.Recent.Set) || strings.HasPrefix(r.Src, "@") {
			// Session affinity: a returning client goes back to its
			// endpoint (-m recent --rcheck, ip saddr @affinity-...);
			// new connections are spread by the rules after it.
			continue
		}
		p := remaining
		if r.Statistic == "random" && r.Probability > 0 {
			p = remaining * r.Probability
			remaining -= p
		} else {
			remaining = 0
		}
		b := Backend{Chain: r.Target, Probability: p, Pos: r.Pos}
		sep := chains[r.Target]
		if sep != nil {
			for _, sr := range sep.Rules {
				if sr.Target == "DNAT" {
					b.Pos = sr.Pos
					b.Address = sr.ToDestination
					if ap, err := netip.ParseAddrPort(sr.ToDestination); err == nil {
						b.Addr = ap
					}
				}
			}
			if !b.Addr.IsValid() {
				// `to::0`: the endpoint's address is in the chain's
				// masquerade rule (-s ENDPOINT -j KUBE-MARK-MASQ).
				for _, sr := range sep.Rules {
					if sr.Target == "KUBE-MARK-MASQ" || sr.Target == "mark-for-masquerade" {
						if pf, ok := sr.SrcPrefix(); ok && pf.IsSingleIP() {
							b.Address = pf.Addr().String()
						}
					}
				}
			}
		}
		if b.Address == "" {
			// Newer kube-proxy names the endpoint in the jump's comment.
			if _, after, ok := strings.Cut(r.Comment, " -> "); ok {
				b.Address = after
				if ap, err := netip.ParseAddrPort(after); err == nil {
					b.Addr = ap
				}
			}
		}
		out = append(out, b)
	}
	return out
}

// Describe formats a backend for messages: "10.244.1.11:53 (25.0%)".
func (b Backend) Describe() string {
	a := b.Address
	if a == "" || a == ":0" {
		a = b.Chain
	}
	return fmt.Sprintf("%s (%s)", a, Percent(b.Probability))
}

// Percent formats a probability as a percentage with as many digits as it
// needs.
func Percent(p float64) string {
	s := strconv.FormatFloat(p*100, 'f', 1, 64)
	if p > 0 && p < 0.01 {
		s = strconv.FormatFloat(p*100, 'f', 2, 64)
	}
	return s + "%"
}

// fromIPVS turns IPVS virtual services into service ports: the real
// servers are the backends, each picked with its share of the weights.
// The Service is named from the Kubernetes objects when one has the virtual
// address (a ClusterIP, an external or load-balancer IP) or the port (a
// NodePort on a node address).
func fromIPVS(s *model.Snapshot, names serviceNames) []ServicePort {
	if len(s.IPVS) == 0 {
		return nil
	}
	var out []ServicePort
	for _, vs := range s.IPVS {
		front := vs.Addr.String()
		if vs.Proto == "FWM" {
			front = fmt.Sprintf("fwmark %d", vs.FWMark)
		}
		sp := ServicePort{Node: vs.Node, Mode: "ipvs", Proto: strings.ToLower(vs.Proto), Frontends: []string{front}, Pos: vs.Pos,
			Backends: []Backend{}}
		if n := names.lookup(vs.Proto, vs.Addr.String()); n != "" {
			sp.Service = n
		} else if n := names.lookup(vs.Proto, fmt.Sprintf("NodePort %d", vs.Addr.Port())); n != "" && vs.Addr.IsValid() {
			sp.Service = n
		}
		total := 0
		for _, r := range vs.Reals {
			total += max(r.Weight, 0)
		}
		for _, r := range vs.Reals {
			b := Backend{Addr: r.Addr, Address: r.Addr.String(), Pos: r.Pos}
			if total > 0 {
				b.Probability = float64(max(r.Weight, 0)) / float64(total)
			}
			sp.Backends = append(sp.Backends, b)
		}
		out = append(out, sp)
	}
	return out
}
