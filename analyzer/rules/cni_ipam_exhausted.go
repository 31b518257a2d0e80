package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// CNIIPAMExhausted finds nodes whose CNI IPAM has no address left for new
// Pods.
var CNIIPAMExhausted = &analyzer.Rule{
	Name:        "cni-ipam-exhausted",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLogs, model.KindKube},
	SubjectKeys: []string{"node", "ipam", "range"},
	Run:         runCNIIPAMExhausted,
	Symptoms:    []analyzer.SymptomRef{PodsStuckCreating.At(110), ProbesTimeOut.At(110), ServiceUnreachable.At(240)},
	Proof: "not from a bundle's logs alone: the IPAM's \"no IP addresses available\" line names exhaustion as likely; " +
		"whether the addresses are held by Pods that are gone (a leak) or by running Pods (max-pods above what the " +
		"range or the ENIs hold) takes the IPAM's store against the Pods running on the node",
	Unproven: "the exhaustion line is a warning of likely cause, with the command that compares the IPAM's " +
		"reservations with the Pods running; ipamd's pool statistics close to full while it asks for more addresses " +
		"are a warning of unknown cause (the pool may yet grow)",
	Doc: `the CNI's IPAM has no Pod address left on a node

Every Pod gets its address from the CNI plugin's IPAM. When the node's range
or pool is used up, new Pod sandboxes fail ("Failed to create pod sandbox
... failed to set up pod network") and the Pods stay in ContainerCreating:

- host-local (bridge, flannel, kube-router, many others): "failed to allocate
  for range 0: no IP addresses available in range set: 10.244.1.1-10.244.1.254"
  (older: "no IP addresses available in network: cbr0"). Its store
  (/var/lib/cni/networks/NETWORK/, one file per address) keeps the
  reservations of sandboxes that were never torn down, so the range can be
  full of Pods that are gone;
- the AWS VPC CNI's ipamd: "DataStore has no available IP addresses",
  "AssignPodIPv4Address: no available IP addresses", and the plugin's
  "failed to assign an IP address to container": the addresses of the
  node's ENIs are all assigned, because max-pods exceeds ENIs x addresses per
  ENI, the node is at its ENI limit, or addresses were not released; and
  EC2's refusals it logs, "InsufficientFreeAddressesInSubnet" and, with
  prefix delegation, "InsufficientCidrBlocks": the node's subnet itself is
  used up, whatever the node holds;
- Calico IPAM ("IPAM allocated only 0") and Cilium ("range is full").

Evidence: those lines in the kubelet's, the container runtime's or the
plugin's log, or in a Pod's FailedCreatePodSandBox events (kubectl describe
pod, kubectl get events); ipamd's "IP pool stats: total = N, used = M"
lines.

Severity: warning. One log line names the exhaustion as likely; ipamd's
statistics show a pool close to full (90% or more, and ipamd asking for
more) as a warning of unknown cause. The VPC CNI plugin's own "failed to
assign an IP address to container" says that ipamd gave no address, not
why (a branch ENI for security groups for Pods not ready, ipamd not ready
fail the same way): alone it is of unknown cause, exhaustion first among
the alternatives; beside ipamd's statistics of a pool used up, likely.

Fix: for a leak, remove the reservations of containers that no longer exist
from /var/lib/cni/networks/NETWORK/ (or upgrade the runtime and CNI that
leaked them); for a range too small, lower the kubelet's max-pods to what
the range or the ENIs hold (the AWS eni-max-pods.txt value, or prefix
delegation), or give the nodes larger Pod CIDRs (--node-cidr-mask-size).`,
}

// ipamLine is one line of an IPAM saying it has no address left.
type ipamLine struct {
	pos        model.Pos
	node       string
	ipam       string // host-local, aws-vpc-cni, calico, cilium
	rng        string // the range, for host-local
	text, note string
	count      int // the times it was said: an event's count, or 1
}

var (
	hostLocalRangeRe = lazyre.New(`no IP addresses available in (?:range set|network): ?([^\s"\\]+)`)
	// ipamd's pool statistics: "IP pool stats: total = 56, used = 51,
	// c.maxIPsPerENI = 14" (before 1.7), "IP/Prefix Address Pool stats:
	// total: 18, assigned: 1, cooldownIPs: 0" (JSON logs, later).
	ipamdPoolStatsRe = lazyre.New(`(?:IP pool stats: total = (\d+), used = (\d+)(?:, c\.maxIPsPerENI = (\d+))?|Pool stats: total: (\d+), assigned: (\d+))`)
)

// calicoBlockLimitNote is the note of Calico IPAM's refusal of a new
// block to a node that holds as many as it may.
const calicoBlockLimitNote = "Calico IPAM: cannot allocate new block due to per host block limit"

// pluginAssignNote is the note of the VPC CNI plugin's own error, which
// says ipamd gave no address, not why.
const pluginAssignNote = "CNI: failed to assign an IP address to container"

// subnetNote starts the note of EC2's refusal of an address for the
// node's subnet: the VPC's exhaustion, not the node's.
const subnetNote = "EC2: "

// ipamExhaustedLine reads what the IPAM says in one log line, if it says it
// has no address left.
func ipamExhaustedLine(msg string) (ipam, rng, note string, ok bool) {
	switch {
	case hostLocalRangeRe.MatchString(msg):
		m := hostLocalRangeRe.FindStringSubmatch(msg)
		return "host-local", m[1], "no IP addresses available in " + m[1], true
	case strings.Contains(msg, "DataStore has no available IP addresses"):
		return "aws-vpc-cni", "", "ipamd: DataStore has no available IP addresses", true
	case strings.Contains(msg, "AssignPodIPv4Address") && strings.Contains(msg, "no available IP"):
		return "aws-vpc-cni", "", "ipamd: no available IP addresses", true
	case strings.Contains(msg, "InsufficientFreeAddressesInSubnet"):
		return "aws-vpc-cni", "", subnetNote + "InsufficientFreeAddressesInSubnet (the subnet has no free address)", true
	case strings.Contains(msg, "InsufficientCidrBlocks"):
		return "aws-vpc-cni", "", subnetNote + "InsufficientCidrBlocks (the subnet has no free /28 for a prefix)", true
	case strings.Contains(msg, "failed to assign an IP address to container"):
		return "aws-vpc-cni", "", pluginAssignNote, true
	case strings.Contains(msg, "IPAM allocated only 0"):
		return "calico", "", "Calico IPAM allocated no address", true
	case strings.Contains(msg, "cannot allocate new block due to per host block limit"):
		return "calico", "", calicoBlockLimitNote, true
	case strings.Contains(msg, "range is full") && strings.Contains(strings.ToLower(msg), "allocat"):
		return "cilium", "", "IPAM: range is full", true
	}
	return "", "", "", false
}

// ipamPool is the last "IP pool stats" line of an ipamd log.
type ipamPool struct {
	pos                 model.Pos
	node                string
	total, used, perENI int
	low                 []model.Pos // "IP pool is too low" lines after it
	maxENI              []model.Pos // "Skipping ENI allocation due to max ENI already attached" lines after it
}

func runCNIIPAMExhausted(p *analyzer.Pass) error {
	type group struct {
		node, ipam, rng string
		lines           []ipamLine
	}
	var groups []*group
	byKey := map[string]*group{}
	pools := map[string]*ipamPool{} // by node and file
	var poolOrder []string
	skipped := map[string][]model.Pos{} // ipamd's ENIs without a free address, by node
	add := func(l ipamLine) {
		k := l.node + "|" + l.ipam + "|" + l.rng
		g := byKey[k]
		if g == nil {
			g = &group{node: l.node, ipam: l.ipam, rng: l.rng}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.lines = append(g.lines, l)
	}
	for _, le := range p.Snap.Logs {
		if strings.Contains(le.Message, "skip ENI") && strings.Contains(le.Message, "does not have available addresses") {
			skipped[le.Node] = append(skipped[le.Node], le.Pos)
			continue
		}
		if ipam, rng, note, ok := ipamExhaustedLine(le.Message); ok {
			add(ipamLine{pos: le.Pos, node: le.Node, ipam: ipam, rng: rng, text: le.Message, note: note, count: 1})
			continue
		}
		k := le.Node + "|" + le.Pos.File
		if m := ipamdPoolStatsRe.FindStringSubmatch(le.Message); m != nil {
			total, _ := strconv.Atoi(m[1] + m[4])
			used, _ := strconv.Atoi(m[2] + m[5])
			per, _ := strconv.Atoi(m[3])
			if pools[k] == nil {
				poolOrder = append(poolOrder, k)
			}
			pools[k] = &ipamPool{pos: le.Pos, node: le.Node, total: total, used: used, perENI: per}
		} else if pl := pools[k]; pl != nil && strings.Contains(le.Message, "IP pool is too low") {
			pl.low = append(pl.low, le.Pos)
		} else if pl != nil && strings.Contains(le.Message, "max ENI already attached") {
			pl.maxENI = append(pl.maxENI, le.Pos)
		}
	}
	// A Pod's FailedCreatePodSandBox events carry the same error as the
	// kubelet's log line, counted.
	for i := range p.Snap.Kube.Events {
		e := &p.Snap.Kube.Events[i]
		if ipam, rng, note, ok := ipamExhaustedLine(e.Message); ok {
			add(ipamLine{pos: e.Source.Pos, node: e.Source.Node, ipam: ipam, rng: rng, text: e.Message, note: note,
				count: max(int(e.Count), 1)})
		}
	}
	named := map[string]bool{} // nodes whose exhaustion a line names
	for _, g := range groups {
		var skips []model.Pos
		if g.ipam == "aws-vpc-cni" {
			skips = skipped[g.node]
		}
		var full *ipamPool // ipamd's last statistics on the node, when they say the pool is used up
		for _, k := range poolOrder {
			if pl := pools[k]; pl.node == g.node && pl.total > 0 && pl.used >= pl.total {
				full = pl
			}
		}
		p.Report(ipamExhaustedFinding(g.node, g.ipam, g.rng, g.lines, skips, full))
		if g.ipam == "aws-vpc-cni" {
			named[g.node] = true
		}
	}
	for _, k := range poolOrder {
		if pl := pools[k]; !named[pl.node] {
			if f, ok := ipamPoolFinding(pl); ok {
				p.Report(f)
			}
		}
	}
	return nil
}

// ipamExhaustedFinding judges the exhaustion lines of one node's IPAM (and
// range), then words them.
func ipamExhaustedFinding(node, ipam, rng string, lines []ipamLine, skips []model.Pos, full *ipamPool) analyzer.Finding {
	first := lines[0]
	var ev []analyzer.Evidence
	for i, l := range lines {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: l.pos, Note: l.note})
	}
	for i, pos := range skips {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: pos, Note: "ipamd: ENI without an available address"})
	}
	c := analyzer.Finding{Certainty: analyzer.Likely, Severity: analyzer.Warning,
		Supports: []string{fmt.Sprintf("%s: %s", first.pos, first.note)},
		Alternatives: []string{
			"reservations of Pods that are gone fill the range (sandboxes never torn down: a leak)",
			"more Pods are scheduled on the node than its range or ENIs hold (max-pods too high)",
		},
	}
	switch ipam {
	case "aws-vpc-cni":
		c.Decide = "# on the node: ipamd's addresses and the Pods they are assigned to, against the Pods of the node\n" +
			"curl -s http://localhost:61679/v1/enis\nkubectl get pods -A -o wide --field-selector spec.nodeName=NODE"
		c.Alternatives = append(c.Alternatives, "the node is at its instance type's ENI limit, or the subnet has no free address")
	default:
		c.Decide = "# on the node: the reservations against the Pods running there; reservations of containers " +
			"that no longer exist are a leak\nls /var/lib/cni/networks/*/ | wc -l\ncrictl pods --state ready"
	}

	where := "this node"
	if node != "" {
		where = node
	}
	said := 0
	for _, l := range lines {
		said += l.count
	}
	values := map[string]any{"lines": len(lines), "ipam": ipam}
	if len(skips) > 0 {
		values["enis_without_address"] = len(skips)
		c.Supports = append(c.Supports, fmt.Sprintf("%s: ipamd skips %d %s without an available address",
			skips[0], len(skips), plural(len(skips), "ENI", "ENIs")))
	}
	if node != "" {
		values["node"] = node
	}
	what := "the node's Pod address pool"
	if rng != "" {
		values["range"] = rng
		what = "the node's Pod range " + rng
	}
	summary := fmt.Sprintf("The CNI's IPAM (%s) on %s has no address left for new Pods: %s (%s). Every new Pod "+
		"sandbox there fails to set up its network, and its Pod stays in ContainerCreating.", ipam, where, first.note,
		times(said))
	cause := fmt.Sprintf("Every address of %s is reserved: by Pods that are gone and whose reservations were never "+
		"released (a sandbox that failed or was killed before its teardown), or by more Pods than it holds (the "+
		"kubelet's max-pods above the range's size).", what)
	fix := "Remove the reservations of containers that no longer exist from /var/lib/cni/networks/NETWORK/ (each file " +
		"is an address, holding its container's ID) and fix what leaks them (the runtime's teardown, the CNI version); " +
		"if running Pods hold them all, lower the kubelet's max-pods or give the nodes larger Pod CIDRs."
	if ipam == "aws-vpc-cni" {
		cause = "Every secondary address of the node's ENIs is assigned: to more Pods than ENIs x addresses per ENI " +
			"allow (the kubelet's max-pods above the instance type's limit), to Pods that are gone (addresses not " +
			"released: VPC CNI before 1.2.1 leaked them), or the node cannot attach another ENI (its limit, or no free " +
			"address in the subnet)."
		fix = "Compare the node's allocatable pods with ENIs x (addresses per ENI - 1) of its instance type and set " +
			"max-pods to it (eni-max-pods.txt), or turn on prefix delegation (ENABLE_PREFIX_DELEGATION); if the " +
			"addresses are held by Pods that are gone, upgrade the VPC CNI and restart aws-node on the node."
		if strings.HasPrefix(first.note, subnetNote) {
			// EC2 refused the address: the subnet is used up, whatever
			// the node holds.
			cause = "The node's subnet has no free address left (or, with prefix delegation, no free /28): EC2 " +
				"refuses ipamd every new address or ENI, whatever the node's own pool and limits."
			fix = "Free or add addresses in the subnet: remove ENIs no instance uses (leaked by older VPC CNI " +
				"versions), give the nodes a larger subnet or a secondary CIDR (custom networking), or lower " +
				"WARM_IP_TARGET and WARM_ENI_TARGET so idle nodes hold fewer."
			c.Alternatives = []string{"ENIs of deleted instances or of an older VPC CNI hold the subnet's addresses " +
				"(a leak)", "warm pools of many nodes (WARM_ENI_TARGET) hold addresses no Pod uses"}
			c.Decide = "# the subnet's free addresses (0 decides), then the ENIs holding them that no instance uses\n" +
				"aws ec2 describe-subnets --subnet-ids SUBNET --query 'Subnets[].AvailableIpAddressCount'\n" +
				"aws ec2 describe-network-interfaces --filters Name=subnet-id,Values=SUBNET Name=status,Values=available"
		}
	}
	if full != nil {
		c.Supports = append(c.Supports, fmt.Sprintf("%s: ipamd's pool on the node holds %d addresses, all used",
			full.pos, full.total))
		ev = append(ev, analyzer.Evidence{Pos: full.pos, Note: fmt.Sprintf("ipamd: IP pool stats: total = %d, used = %d",
			full.total, full.used)})
	}
	if ipam == "aws-vpc-cni" && full == nil && len(skips) == 0 &&
		!slices.ContainsFunc(lines, func(l ipamLine) bool { return l.note != pluginAssignNote }) {
		// The plugin's own error says ipamd gave no address, not that
		// none was left: ipamd fails the same way for other reasons.
		c.Certainty = analyzer.Unknown
		summary = fmt.Sprintf("The AWS VPC CNI on %s gave new Pods no address (%s, %s): their sandboxes fail to "+
			"set up their network, and the Pods stay in ContainerCreating. The plugin's error says that ipamd "+
			"gave none, not why.", where, first.note, times(said))
		cause = "Not established by the evidence: ipamd had no address to give (the node's ENIs used up) or could " +
			"not give one for another reason."
		fix = "If ipamd's pool is used up, set the node's max-pods to ENIs x (addresses per ENI - 1) of its instance " +
			"type or turn on prefix delegation (ENABLE_PREFIX_DELEGATION); if ipamd logs a branch ENI error, check " +
			"the Pod's SecurityGroupPolicy and the VPC resource controller; if aws-node was not ready, the Pods " +
			"recreated after it is get addresses."
		c.Alternatives = []string{
			"every address of the node's ENIs is assigned (max-pods above the instance type's limit, addresses in " +
				"their cooldown, or not released)",
			"ipamd could not give this Pod an address for another reason: security groups for Pods' branch ENI not " +
				"ready (\"failed to get Branch ENI resource\"), ipamd not ready (aws-node restarting), its IAM " +
				"permissions",
		}
		c.Decide = "# on the node: ipamd's pool and what it answered the Pod (used equal to total decides " +
			"exhaustion; a branch ENI error, security groups for Pods)\n" +
			"grep -E 'IP pool stats|Branch ENI|AssignPodIPv4Address' /var/log/aws-routed-eni/ipamd.log | tail -5"
	}
	if first.note == calicoBlockLimitNote {
		// The node holds as many blocks as Calico lets it: the pool is
		// not used up, the node's share of it is.
		cause = "The node holds as many IPAM blocks as Calico lets one node hold (IPAMConfig maxBlocksPerHost, 20 " +
			"when left at 0 since Calico 3.18) and they are full: of a small block size (a blockSize of 30 to 32 " +
			"holds 1 to 4 addresses), or held by Pods that are gone (IPAM handles leaked by sandboxes never torn " +
			"down)."
		fix = "If the pool's blockSize is small, give the Pods a pool of a larger one (26, Calico's default, holds 64 " +
			"addresses; blockSize cannot be changed in place) or raise maxBlocksPerHost in Calico's IPAMConfig; if " +
			"calicoctl ipam check finds leaked addresses, release them (calicoctl ipam release) and fix what leaks them."
		c.Alternatives = []string{"more Pods are scheduled on the node than its blocks hold (max-pods above " +
			"maxBlocksPerHost x the block's addresses)"}
		c.Decide = "# the pools' block size, the node's blocks and the per-host limit, then the leaked addresses\n" +
			"calicoctl get ippool -o wide; calicoctl ipam show --show-blocks; calicoctl get ipamconfig default -o yaml\n" +
			"calicoctl ipam check"
	}
	title := fmt.Sprintf("no Pod address left on %s: %s", where, first.note)
	if c.Certainty == analyzer.Unknown {
		title = fmt.Sprintf("new Pods on %s get no address: %s", where, first.note)
	}
	return withFinding(c, analyzer.Finding{
		Subject:  subject("node", node, "ipam", ipam, "range", rng),
		Title:    title,
		Summary:  summary,
		Cause:    cause,
		Fix:      fix,
		Facts:    values,
		Evidence: dedupEvidence(ev),
	})
}

// ipamPoolFinding judges ipamd's last pool statistics: a pool 90% used or
// more while ipamd says it is too low, or a pool used up.
func ipamPoolFinding(pl *ipamPool) (analyzer.Finding, bool) {
	if pl.total == 0 || pl.used*10 < pl.total*9 || pl.used < pl.total && len(pl.low) == 0 {
		return analyzer.Finding{}, false
	}
	ev := []analyzer.Evidence{{Pos: pl.pos, Note: fmt.Sprintf("ipamd: IP pool stats: total = %d, used = %d", pl.total, pl.used)}}
	if len(pl.low) > 0 {
		ev = append(ev, analyzer.Evidence{Pos: pl.low[0], Note: "ipamd: IP pool is too low"})
	}
	if len(pl.maxENI) > 0 {
		ev = append(ev, analyzer.Evidence{Pos: pl.maxENI[0], Note: "ipamd: max ENI already attached"})
	}
	full := pl.used >= pl.total
	c := analyzer.Finding{Certainty: analyzer.Unknown, Severity: analyzer.Warning,
		Supports: []string{fmt.Sprintf("%s: ipamd's pool holds %d addresses, %d of them used", pl.pos, pl.total, pl.used)},
		Contradicts: []string{"ipamd asks for more addresses (another ENI) when its pool is low: a later \"IP pool stats\" " +
			"line with a larger total would show that it got them"},
		Alternatives: []string{
			"the node is at its ENI limit: max-pods above ENIs x addresses per ENI, so the last Pods get no address",
			"ipamd is about to attach another ENI (its pool grows as Pods come)",
			"addresses are held by Pods that are gone",
		},
		Decide: "# against ipamd's \"IP pool stats: total\" on that node: pods allocatable above the total is the cause\n" +
			"kubectl get node NODE -o jsonpath='{.status.allocatable.pods}'",
	}
	atLimit := len(pl.maxENI) > 0
	if full || atLimit {
		c.Certainty = analyzer.Likely
		c.Contradicts = nil
		c.Alternatives = []string{c.Alternatives[0], c.Alternatives[2]}
	}
	if atLimit {
		c.Supports = append(c.Supports, fmt.Sprintf("%s: ipamd cannot attach another ENI: the instance has its "+
			"maximum attached", pl.maxENI[0]))
		c.Alternatives = []string{c.Alternatives[1]}
	}
	where := "this node"
	if pl.node != "" {
		where = pl.node
	}
	values := map[string]any{"total": pl.total, "used": pl.used, "available": pl.total - pl.used}
	if pl.perENI > 0 {
		values["ips_per_eni"] = pl.perENI
		values["enis"] = pl.total / pl.perENI
	}
	if pl.node != "" {
		values["node"] = pl.node
	}
	enis := ""
	if pl.perENI > 0 {
		enis = fmt.Sprintf(" (%d ENIs of %d addresses)", pl.total/pl.perENI, pl.perENI)
	}
	title := fmt.Sprintf("ipamd's Pod address pool on %s is nearly used up: %d of %d used", where, pl.used, pl.total)
	cause := "Not established by the evidence: a node whose max-pods exceeds what its ENIs can hold fills its pool " +
		"this way; so does a node still growing its pool."
	if full {
		title = fmt.Sprintf("ipamd's Pod address pool on %s is used up: %d of %d used", where, pl.used, pl.total)
		cause = "Every address of the pool is assigned: to more Pods than the node's ENIs hold (max-pods above ENIs x " +
			"addresses per ENI), or to Pods that are gone."
	}
	if atLimit {
		cause = "The node has attached as many ENIs as its instance type allows, and their addresses are nearly all " +
			"used: its max-pods is above ENIs x addresses per ENI, so the last Pods scheduled get no address."
	}
	return withFinding(c, analyzer.Finding{
		Subject: subject("node", pl.node, "ipam", "aws-vpc-cni"),
		Title:   title,
		Summary: fmt.Sprintf("The AWS VPC CNI's ipamd on %s holds %d Pod addresses%s and %d are used, %d left; it says "+
			"the pool is too low and tries to grow it. When the node cannot attach another ENI, the next Pods get "+
			"no address and stay in ContainerCreating.", where, pl.total, enis, pl.used, pl.total-pl.used),
		Cause: cause,
		Fix: "Set the node's max-pods to ENIs x (addresses per ENI - 1) of its instance type (eni-max-pods.txt), or " +
			"turn on prefix delegation (ENABLE_PREFIX_DELEGATION) for more addresses per ENI.",
		Facts:    values,
		Evidence: ev,
	}), true
}
