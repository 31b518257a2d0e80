package rules

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// PodCIDROverlap finds a Pod or Service network that overlaps a node's own
// network or a route its nodes need.
var PodCIDROverlap = &analyzer.Rule{
	Name:        "pod-cidr-overlap",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindComponents, model.KindKube, model.KindSettings, model.KindCNI, model.KindLogs, model.KindRoutes},
	Uses:        []model.Kind{model.KindAddrs, model.KindResolvConf},
	SubjectKeys: []string{"network", "setting", "with", "node", "interface"},
	Run:         runPodCIDROverlap,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(275), ControlPlaneUnhealthy.At(95)},
	Proof: "the Pod or Service network as the cluster sets it (kube-controller-manager's --cluster-cidr, " +
		"kube-apiserver's --service-cluster-ip-range, kubeadm's podSubnet, the CNI's pool) and a node's own address " +
		"or route inside it (ip addr, ip route, or the Node's InternalIP), from two kinds of evidence; weave's " +
		"refusal to start (\"Network 10.32.0.0/12 overlaps with existing route 10.0.0.0/8 on host\") with the route " +
		"in the node's ip route",
	Unproven: "the setting and the node's address from one kind of evidence (a ConfigMap and the Node objects of " +
		"one dump, weave's log line alone), or ip route alone with a container bridge's route holding the overlay's routes " +
		"to other nodes' Pod subnets, are a warning of likely cause: ip addr and ip route on the node, and the CNI's " +
		"Pod network, decide",
	Doc: `the Pod or Service network overlaps a node's own network

Every Pod address comes out of the Pod network (kubeadm's podSubnet,
kube-controller-manager's --cluster-cidr, the CNI's pool: Calico's IPPool or
CALICO_IPV4POOL_CIDR, flannel's Network, weave's IPALLOC_RANGE) and every
Service address out of the Service network (--service-cluster-ip-range).
When either overlaps the network the nodes live on (Calico's default
192.168.0.0/16 on hosts in 192.168.1.0/24; a VPC in 10.96.0.0/12) or a route
they need (a VPN's 10.0.0.0/8, docker0's 172.17.0.0/16), addresses mean two
things: the CNI routes a node's neighbours into its tunnel or to a Pod,
kube-proxy translates a host's address as a Service's, masquerading takes
the hosts for Pods. Pods cannot reach the apiserver or other nodes, calico
or weave refuse to start, nodes go NotReady, DNS times out.

The Pod network overlapping the Service network fails the same way: a Pod
gets a Service's address, and kube-proxy translates traffic to it as the
Service's. It is read from the two settings, or from the Pod network and
the Services' addresses (their ClusterIPs, the cluster DNS a Pod's
resolv.conf names); from a Pod network inside kubeadm's default Service
network (10.96.0.0/12) alone, it is a warning whose cause stays unknown.

Evidence: the CIDR settings (static pod manifests, ps of the components,
the kubeadm-config, kube-proxy and kube-flannel-cfg ConfigMaps, the CNI's
DaemonSet env CALICO_IPV4POOL_CIDR or IPALLOC_RANGE, the IPAM subnets of
the CNI's configuration in /etc/cni/net.d, kubespray's group_vars, weave's
log line that names both its range and the route;
Calico's IPPool objects are not read) against the node's addresses (ip
addr), routes (ip route; the CNI's own interfaces and routes, and routes to
other nodes' Pod ranges, are the Pod network's, not an overlap) and the
Node objects' InternalIP and ExternalIP. Without a setting, a route of a
container engine's bridge (docker0's 172.17.0.0/16) holding, in the same
routing table, narrower routes the CNI's overlay carries to other nodes'
Pod subnets
(flannel.1, vxlan.calico, tunl0) shows the overlap from ip route alone;
docker0 inside the Pod network, flannel's classic design (docker
--bip=FLANNEL_SUBNET, flannel.1 holding the whole network), is not one.

Severity: error when the setting and the node's address or route come from
two kinds of evidence; a warning of likely cause from one.

Fix: choose Pod and Service networks disjoint from every network the nodes
use or route to, and set them everywhere alike (kubeadm init
--pod-network-cidr and --service-cidr, the CNI's pool); the Pod network of
a running cluster changes only with a new IP pool and the Pods recreated,
the Service network only with a new cluster.`,
}

// cidrSetting is one place that sets the Pod or Service network.
type cidrSetting struct {
	service bool // the Service network; the Pod network otherwise
	name    string
	prefix  netip.Prefix
	pos     model.Pos
}

// cidrOverlap is what of the nodes lies in one network.
type cidrOverlap struct {
	nodes    []string // the nodes named, in the order found
	prefix   netip.Prefix
	service  bool
	settings []cidrSetting
	ev       []analyzer.Evidence
	what     []string // the node's networks and addresses found inside, as said
}

// cniDevRe matches the interfaces a CNI, kube-proxy or the node-local DNS
// cache creates: their addresses and routes are the Pod or Service
// network's own.
var cniDevRe = lazyre.New(`^(cni\d*|cbr0|cali|flannel|tunl\d|vxlan[.-]|vxlan_sys|weave|vethwe|datapath|cilium_|lxc|` +
	`kube-ipvs0|kube-bridge|kube-dummy-if|nodelocaldns|genev_sys|antrea-|ovn-k8s|br-int|egress\.calico|wireguard\.cali|` +
	`veth|lo$)`)

// podRouteProtos are the routing daemons a CNI programs Pod routes with.
var podRouteProtos = []string{"bird", "zebra", "bgp", "12", "186"}

func runPodCIDROverlap(p *analyzer.Pass) error {
	s := p.Snap
	settings := cidrSettings(s)
	if len(settings) == 0 {
		// No setting names the Pod network: the routes a CNI's overlay
		// carries to other nodes' Pod subnets still show part of it.
		for _, o := range overlaysInside(s.Routes) {
			p.Report(overlayInsideFinding(o))
		}
		return nil
	}
	var groups []*cidrOverlap
	byKey := map[string]*cidrOverlap{}
	add := func(node string, st []cidrSetting, ev analyzer.Evidence, what string) {
		key := fmt.Sprint(st[0].prefix, "|", st[0].service)
		g := byKey[key]
		if g == nil {
			g = &cidrOverlap{prefix: st[0].prefix, service: st[0].service, settings: st}
			byKey[key] = g
			groups = append(groups, g)
		}
		if node != "" && !slices.Contains(g.nodes, node) {
			g.nodes = append(g.nodes, node)
		}
		g.ev = append(g.ev, ev)
		if !slices.Contains(g.what, what) {
			g.what = append(g.what, what)
		}
	}
	for _, st := range groupSettings(settings) {
		pr := st[0].prefix
		for _, a := range s.Addrs {
			if cniDevRe.MatchString(a.Dev) || a.Scope == "host" || a.Scope == "link" || !a.Prefix.IsValid() ||
				a.Prefix.Addr().Is4() != pr.Addr().Is4() || !a.Prefix.Masked().Overlaps(pr) {
				continue
			}
			what := fmt.Sprintf("%s on %s", a.Prefix, a.Dev)
			add(a.Node, st, analyzer.Evidence{Pos: a.Pos, Note: fmt.Sprintf("%s on %s", a.Prefix, a.Dev)}, what)
		}
		for _, r := range s.Routes {
			if !overlapRoute(r, pr, st[0].service) {
				continue
			}
			what := fmt.Sprintf("route %s", strings.TrimSpace(r.Raw))
			add(r.Node, st, analyzer.Evidence{Pos: r.Pos, Note: "route " + r.Dst.String() + " dev " + r.Dev}, what)
		}
		for _, n := range s.Kube.Nodes {
			for _, na := range n.Status.Addresses {
				if na.Type != "InternalIP" && na.Type != "ExternalIP" {
					continue
				}
				ip, err := netip.ParseAddr(na.Address)
				if err != nil || !pr.Contains(ip) {
					continue
				}
				add(n.Name, st, analyzer.Evidence{Pos: n.Source.Pos, Note: fmt.Sprintf("%s %s", na.Type, ip)},
					fmt.Sprintf("%s %s", na.Type, ip))
			}
		}
	}
	for _, ev := range s.Logs {
		// weave's launch script names its range and the host's route.
		if ev.Source != "weave" || ev.Fields["route"] == "" {
			continue
		}
		for _, st := range groupSettings(settings) {
			if st[0].pos == ev.Pos {
				add(ev.Node, st, analyzer.Evidence{Pos: ev.Pos, Note: "weave: route " + ev.Fields["route"] + " on host"},
					"route "+ev.Fields["route"]+" (weave's check)")
			}
		}
	}
	reported := map[netip.Prefix]bool{}
	for _, g := range groups {
		p.Report(cidrOverlapFinding(p, g))
		reported[g.prefix] = true
	}
	podServiceOverlaps(p, settings, reported)
	return nil
}

// overlapRoute reports whether route r lies in (or over) the network pr
// without being the Pod network's own: a unicast route of the main table
// on an interface of the node, not the default route, not a route to
// another node's Pod range (via a gateway, inside the Pod network) and
// not one a CNI's routing daemon programmed.
func overlapRoute(r model.Route, pr netip.Prefix, service bool) bool {
	if r.Type != "" || (r.Table != "" && r.Table != "main") || !r.Dst.IsValid() || r.Dst.Bits() == 0 ||
		r.Dst.Addr().Is4() != pr.Addr().Is4() || cniDevRe.MatchString(r.Dev) || slices.Contains(podRouteProtos, r.Proto) {
		return false
	}
	if !r.Dst.Overlaps(pr) {
		return false
	}
	if !service && r.Via.IsValid() && pr.Bits() < r.Dst.Bits() && pr.Contains(r.Dst.Addr()) {
		return false // another node's Pod range, routed through it (host-gw, kube-router, cloud routes)
	}
	return true
}

// overlayDevRe matches the interfaces a CNI's overlay carries other
// nodes' Pod subnets on: flannel's VXLAN device, Calico's VXLAN and IPIP
// ones.
var overlayDevRe = lazyre.New(`^(flannel\.\d+|vxlan[.-]calico|vxlan-v6\.calico|tunl0)$`)

// overlayInside is a route of a node's own interface that holds Pod
// subnets its CNI's overlay routes to other nodes.
type overlayInside struct {
	route   model.Route   // the node's own route (docker0's 172.17.0.0/16)
	overlay []model.Route // the overlay's routes inside it
}

// bridgeDevRe matches the bridges container engines make on a node
// (docker's, podman's, libvirt's, LXC's): their networks are chosen by
// the engine, by default in ranges a Pod network may take.
var bridgeDevRe = lazyre.New(`^(docker\d+|br-[0-9a-f]{12}|podman\d+|cni-podman\d+|virbr\d+|lxcbr\d+|lxdbr\d+)$`)

// overlaysInside finds, on each node, the routes of a container engine's
// bridge (docker0) whose prefix holds, and is wider than,
// routes the CNI's overlay carries to other nodes' Pod subnets: the
// kernel picks the narrower route while it is there, and sends the rest
// of the wider one (a node not yet routed, its own Pod subnet on another
// device gone) to the wrong interface. (docker0 inside the Pod network,
// as docker --bip=FLANNEL_SUBNET sets it, is flannel's classic design,
// and not this: the overlay's route is then the wider one.)
func overlaysInside(routes []model.Route) []overlayInside {
	var out []overlayInside
	for _, r := range routes {
		if r.Type != "" || (r.Table != "" && r.Table != "main") || !r.Dst.IsValid() || r.Dst.Bits() < 8 ||
			r.Via.IsValid() || !bridgeDevRe.MatchString(r.Dev) {
			continue
		}
		o := overlayInside{route: r}
		for _, ov := range routes {
			// One routing table: the same node, or, of no node, the
			// same file.
			same := ov.Node == r.Node && (r.Node != "" || ov.Pos.File == r.Pos.File)
			if same && overlayDevRe.MatchString(ov.Dev) && ov.Dst.IsValid() && ov.Type == "" &&
				(ov.Table == "" || ov.Table == "main") && ov.Dst.Bits() > r.Dst.Bits() && r.Dst.Contains(ov.Dst.Addr()) {
				o.overlay = append(o.overlay, ov)
			}
		}
		if len(o.overlay) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// overlayInsideFinding reports a node's route holding its overlay's Pod
// subnets.
func overlayInsideFinding(o overlayInside) analyzer.Finding {
	r, dev := o.route, o.overlay[0].Dev
	var subnets []string
	for _, ov := range o.overlay {
		subnets = append(subnets, ov.Dst.String())
	}
	ev := []analyzer.Evidence{{Pos: r.Pos, Note: "route " + r.Dst.String() + " dev " + r.Dev},
		{Pos: o.overlay[0].Pos, Note: "route " + o.overlay[0].Dst.String() + " dev " + dev}}
	return analyzer.Finding{
		Subject:   subject("node", r.Node, "interface", r.Dev, "network", r.Dst.String()),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title: fmt.Sprintf("%s's %s holds the Pod subnets %s routes to other nodes (%s)", r.Dev, r.Dst, dev,
			listSome(subnets, false)),
		Summary: fmt.Sprintf("On %s, %s's route %s holds %d %s that %s carries to other nodes' Pods (%s): the Pod "+
			"network and %s's network overlap. The kernel sends to the narrower routes while they are there; a Pod "+
			"subnet not routed (a node just added, the node's own on another device) goes to %s, and replies to "+
			"Pods there are lost.", nodeName(r.Node), r.Dev, r.Dst, len(o.overlay), plural(len(o.overlay), "Pod subnet",
			"Pod subnets"), dev, listSome(subnets, false), r.Dev, r.Dev),
		Supports: []string{fmt.Sprintf("%s: %s", r.Pos, strings.TrimSpace(r.Raw)),
			fmt.Sprintf("%s: %s", o.overlay[0].Pos, strings.TrimSpace(o.overlay[0].Raw))},
		Cause: fmt.Sprintf("%s's network was chosen inside the Pod network (docker's default 172.17.0.0/16 under a "+
			"Pod network of 172.17.0.0/16 or wider), or the Pod network inside it.", r.Dev),
		Alternatives: []string{fmt.Sprintf("%s is a route the node needs (a VPN's) and the Pod network was chosen "+
			"over it", r.Dst)},
		Fix: fmt.Sprintf("Give %s a network outside the Pod network (docker's --bip or bip in daemon.json, then restart "+
			"docker), or choose a Pod network outside %s.", r.Dev, r.Dst),
		Decide:   overlayDecide(r, dev),
		Facts:    map[string]any{"network": r.Dst.String(), "interface": r.Dev, "pod_subnets": len(o.overlay)},
		Evidence: ev,
	}
}

// overlayDecide is the command that shows the Pod network beside the
// bridge's: flannel's subnet file, or Calico's IP pools.
func overlayDecide(r model.Route, dev string) string {
	pods := "cat /run/flannel/subnet.env"
	if !strings.HasPrefix(dev, "flannel") {
		pods = "kubectl get ippools.crd.projectcalico.org -o yaml | grep cidr"
	}
	return fmt.Sprintf("# on %s: the Pod network, against %s's %s\n%s\nip -4 addr show %s", nodeName(r.Node), r.Dev,
		r.Dst, pods, r.Dev)
}

// groupSettings groups the settings by network (Pod or Service) and
// prefix, in the order first set.
func groupSettings(settings []cidrSetting) [][]cidrSetting {
	var out [][]cidrSetting
	for _, st := range settings {
		i := slices.IndexFunc(out, func(g []cidrSetting) bool {
			return g[0].prefix == st.prefix && g[0].service == st.service
		})
		if i < 0 {
			out = append(out, []cidrSetting{st})
			continue
		}
		out[i] = append(out[i], st)
	}
	return out
}

// cidrSettings reads where the cluster sets its Pod and Service networks.
func cidrSettings(s *model.Snapshot) []cidrSetting {
	var out []cidrSetting
	addAll := func(service bool, name, value string, pos model.Pos) {
		for _, v := range strings.Split(value, ",") {
			if pr, err := netip.ParsePrefix(strings.Trim(strings.TrimSpace(v), `"'`)); err == nil {
				out = append(out, cidrSetting{service: service, name: name, prefix: pr.Masked(), pos: pos})
			}
		}
	}
	flags := map[string][][2]string{
		"kube-controller-manager": {{"cluster-cidr", "pod"}, {"service-cluster-ip-range", "service"}},
		"kube-apiserver":          {{"service-cluster-ip-range", "service"}},
		"kube-proxy":              {{"cluster-cidr", "pod"}},
	}
	for i := range s.Components {
		c := &s.Components[i]
		for _, f := range flags[c.Name] {
			if a, ok := c.Flag(f[0]); ok {
				addAll(f[1] == "service", fmt.Sprintf("%s --%s", c.Name, f[0]), a.Value, a.Pos)
			}
		}
	}
	for _, cm := range s.Kube.ConfigMaps {
		pos := cm.Source.Pos
		switch {
		case cm.Name == "kubeadm-config":
			cc := cm.Data["ClusterConfiguration"]
			addAll(false, "kubeadm-config podSubnet", yamlValue(cc, "podSubnet"), pos)
			addAll(true, "kubeadm-config serviceSubnet", yamlValue(cc, "serviceSubnet"), pos)
		case cm.Name == "kube-proxy":
			addAll(false, "kube-proxy clusterCIDR", yamlValue(cm.Data["config.conf"], "clusterCIDR"), pos)
		case strings.Contains(cm.Name, "flannel"):
			var nc struct{ Network string }
			if json.Unmarshal([]byte(cm.Data["net-conf.json"]), &nc) == nil {
				addAll(false, cm.Name+" net-conf.json Network", nc.Network, pos)
			}
		}
	}
	for _, ds := range s.Kube.DaemonSets {
		for _, c := range ds.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == "CALICO_IPV4POOL_CIDR" || e.Name == "IPALLOC_RANGE" {
					addAll(false, fmt.Sprintf("%s of DaemonSet %s", e.Name, ds.Name), e.Value, ds.Source.Pos)
				}
			}
		}
	}
	for _, ev := range s.Logs {
		if ev.Source == "weave" && ev.Fields["network"] != "" {
			addAll(false, "weave's IP range", ev.Fields["network"], ev.Pos)
		}
	}
	ipamType := map[string]string{} // a CNI configuration file's plugin's IPAM, by file and key prefix
	for _, st := range s.Settings {
		if st.Tool == "cni" {
			if plugin, ok := strings.CutSuffix(st.Key, ".ipam.type"); ok {
				ipamType[st.Pos.File+"\x00"+plugin] = st.Value
			}
			// A subnet is the IPAM's range for host-local (and the IPAMs
			// that read it as it does); calico-ipam and the others take
			// theirs from their pools and ignore it.
			plugin, ok := strings.CutSuffix(st.Key, ".ipam.subnet")
			if t := ipamType[st.Pos.File+"\x00"+plugin]; ok && (t == "" || t == "host-local" || t == "whereabouts") {
				addAll(false, fmt.Sprintf("the CNI's %s (%s)", st.Key, path.Base(st.Pos.File)), st.Value, st.Pos)
			}
			continue
		}
		switch st.Key {
		case "kube_pods_subnet":
			addAll(false, st.Key, st.Value, st.Pos)
		case "kube_service_addresses":
			addAll(true, st.Key, st.Value, st.Pos)
		}
	}
	return out
}

// yamlValue returns the value of key in a YAML document held as a
// string (a ConfigMap's ClusterConfiguration), or "".
func yamlValue(doc, key string) string {
	for _, l := range strings.Split(doc, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cidrOverlapFinding judges an overlap from the kinds of its evidence,
// then words it.
func cidrOverlapFinding(p *analyzer.Pass, g *cidrOverlap) analyzer.Finding {
	network, setting := "Pod network", "pod"
	if g.service {
		network, setting = "Service network", "service"
	}
	var ev []analyzer.Evidence
	var names []string
	for _, st := range g.settings {
		ev = append(ev, analyzer.Evidence{Pos: st.pos, Note: fmt.Sprintf("%s %s", st.name, st.prefix)})
		names = append(names, st.name)
	}
	ev = dedupEvidence(append(ev, g.ev...))
	values := map[string]any{"network": g.prefix.String(), "set_by": strings.Join(names, ", "),
		"overlaps": listSome(g.what, false)}
	c := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely,
		Supports: []string{fmt.Sprintf("%s: %s sets the %s to %s", g.settings[0].pos, g.settings[0].name, network, g.prefix),
			fmt.Sprintf("%s: %s lies in it", g.ev[0].Pos, g.what[0])},
		Decide: collected("ip-route", "the node's own networks and routes against "+g.prefix.String()),
	}
	if p.Joins(ev) {
		c.Severity, c.Certainty, c.Decide = analyzer.Error, analyzer.Proven, ""
	}
	where := "a node"
	if len(g.nodes) > 0 {
		where = listSome(g.nodes, false)
		values["nodes"] = where
	}
	return withFinding(c, analyzer.Finding{
		Subject: subject("network", g.prefix.String(), "setting", setting),
		Title:   fmt.Sprintf("the %s %s overlaps the nodes' own network (%s)", network, g.prefix, g.what[0]),
		Summary: fmt.Sprintf("The %s is %s (%s), and %s has %s inside it: its addresses mean a Pod or Service "+
			"and a host at once, so packets for the hosts are routed into the Pod network or translated as a "+
			"Service's, and Pods cannot reach the nodes or what lies behind them.", network, g.prefix,
			strings.Join(names, ", "), where, listSome(g.what, false)),
		Cause: fmt.Sprintf("The %s was chosen without regard to the networks the nodes use (a default such as "+
			"Calico's 192.168.0.0/16 or kubeadm's 10.96.0.0/12).", network),
		Fix: fmt.Sprintf("Choose a %s disjoint from every network the nodes use or route to and set it everywhere "+
			"alike (kubeadm's --pod-network-cidr or --service-cidr, the CNI's pool); a Pod network changes with a new "+
			"IP pool and the Pods recreated, a Service network only with a new cluster.", network),
		Facts:    values,
		Evidence: ev,
	})
}
