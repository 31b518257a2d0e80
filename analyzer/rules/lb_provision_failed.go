package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// LBProvisionFailed finds LoadBalancer Services whose cloud load balancer
// the service controller cannot create or update, and names the cloud's
// refusal.
var LBProvisionFailed = &analyzer.Rule{
	Name:        "lb-provision-failed",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindKube, model.KindLogs},
	SubjectKeys: []string{"object"},
	ObjectKinds: []string{"Service"},
	Run:         runLBProvisionFailed,
	Symptoms:    []analyzer.SymptomRef{LoadBalancerPending.At(10), LoadBalancer502.At(120)},
	Proof: "the service controller's own word that it failed to ensure the Service's load balancer (a " +
		"CreatingLoadBalancerFailed, SyncLoadBalancerFailed or UpdateLoadBalancerFailed event, or its log line), " +
		"with the cloud's refusal in it that names a cause: several security groups tagged for the cluster on an " +
		"instance, a security group's rule limit, no subnet tagged for load balancers, an account quota, a " +
		"permission the cloud credentials lack, no node to put behind it. The refusal is the cloud's, so the cause " +
		"is likely; the cloud's own listing of what it names decides",
	Unproven: "a failure whose message names no cause netmortem knows is reported with the message quoted, " +
		"cause unknown, and the cloud controller's log as what decides; a controller that retried and then " +
		"ensured the load balancer (EnsuredLoadBalancer after the failure events, or any when the failures are " +
		"log lines, which cannot be ordered against events), or a Service that shows its load balancer's address " +
		"with only creations failed, is not reported",
	Doc: `the cloud refuses a LoadBalancer Service's load balancer

For a Service of type LoadBalancer, the service controller (in
kube-controller-manager or the cloud-controller-manager) asks the cloud
for a load balancer and keeps the Service's EXTERNAL-IP pending until it
has one. When the cloud refuses, the controller records why in a
CreatingLoadBalancerFailed (or SyncLoadBalancerFailed,
UpdateLoadBalancerFailed) event on the Service and in its log, and
retries with a growing delay: the Service stays pending, or an existing
load balancer stops following the nodes.

Evidence: the Service's events (kubectl describe svc, kubectl get
events) and the controller's log lines ("Error syncing load balancer",
"failed to ensure load balancer", "Failed to create load balancer for
service"). The cloud's message names the cause; those it knows:
- AWS: "Multiple tagged security groups found for instance" (more than
  one of an instance's security groups carries the cluster's tag
  kubernetes.io/cluster/NAME), RulesPerSecurityGroupLimitExceeded (the
  nodes' security group is full of the load balancers' rules),
  SecurityGroupLimitExceeded, TooManyLoadBalancers, "could not find any
  suitable subnets for creating the ELB" (no subnet tagged
  kubernetes.io/role/elb, or kubernetes.io/role/internal-elb for an
  internal one), and UnauthorizedOperation or AccessDenied (the
  controller's IAM role lacks a permission);
- GCE: "Quota 'X' exceeded"; Azure: PublicIPCountLimitReached;
- any cloud: "There are no available nodes for LoadBalancer" (no Ready
  node the load balancer could send to).

Severity: a warning of likely cause when the message names one of those,
of unknown cause otherwise, with the message quoted. A failure followed
by EnsuredLoadBalancer on the same Service is not reported (a log line
cannot be ordered against the events: it never undoes a success they
show), nor a failed creation of a Service that shows its load balancer's
address (LoadBalancer Ingress, EXTERNAL-IP). Reasons read:
CreatingLoadBalancerFailed, SyncLoadBalancerFailed,
UpdateLoadBalancerFailed and UnAvailableLoadBalancer.

Fix: what the cloud names: tag a single security group per instance for
the cluster (or set the service.beta.kubernetes.io/aws-load-balancer-
security-groups annotation), free or raise the quota, tag the subnets
for load balancers, grant the controller's role the permission, or make
a node Ready and eligible (without the label
node.kubernetes.io/exclude-from-external-load-balancers).`,
}

// lbRefusal is a cause a cloud's refusal names.
type lbRefusal struct {
	needles []string // any of them in the message, case-insensitively
	cloud   string
	cause   string
	fix     string
	decide  string
}

// lbRefusals are the refusals lb-provision-failed knows, the most
// specific first.
var lbRefusals = []lbRefusal{
	{[]string{"multiple tagged security groups found for instance"}, "AWS",
		"more than one security group of the nodes' instances carries the cluster's tag (kubernetes.io/cluster/NAME), " +
			"and the AWS cloud provider does not guess which one the load balancer's rules go in",
		"Keep the cluster's tag on one security group per instance (remove kubernetes.io/cluster/NAME from the others), " +
			"or name the security groups with the service.beta.kubernetes.io/aws-load-balancer-security-groups annotation.",
		"# the instance's security groups, then each one's tags\n" +
			"aws ec2 describe-instances --instance-ids INSTANCE --query 'Reservations[].Instances[].SecurityGroups'\n" +
			"aws ec2 describe-security-groups --group-ids SG --query 'SecurityGroups[].Tags'"},
	{[]string{"rulespersecuritygrouplimitexceeded"}, "AWS",
		"the nodes' security group has reached its limit of rules: each Classic or Network load balancer adds rules " +
			"to it, and this one's do not fit",
		"Delete the load balancers and Services no longer used (their rules stay until then), raise the rules-per-" +
			"security-group quota, or give load balancers their own security groups (the " +
			"service.beta.kubernetes.io/aws-load-balancer-security-groups annotation, or the AWS Load Balancer " +
			"Controller's shared backend security group).",
		"# the nodes' security group: how many rules it holds, against the account's rules-per-group quota\n" +
			"aws ec2 describe-security-groups --group-ids NODE_SG --query 'SecurityGroups[].IpPermissions | length(@[])'"},
	{[]string{"securitygrouplimitexceeded"}, "AWS",
		"the account has reached its limit of security groups, and each Classic load balancer gets one",
		"Delete unused security groups (of load balancers already gone) or raise the VPC security-group quota.",
		"aws ec2 describe-security-groups --query 'length(SecurityGroups)'"},
	{[]string{"toomanyloadbalancers"}, "AWS",
		"the account has reached its limit of load balancers in the region",
		"Delete unused load balancers (of Services already gone), raise the quota, or serve Services through one " +
			"Ingress or Gateway instead of a load balancer each.",
		"aws elb describe-load-balancers --query 'length(LoadBalancerDescriptions)'"},
	{[]string{"could not find any suitable subnets for creating the elb"}, "AWS",
		"no subnet of the cluster's VPC is tagged for load balancers: kubernetes.io/role/elb (public) or " +
			"kubernetes.io/role/internal-elb (internal), with the cluster's tag kubernetes.io/cluster/NAME",
		"Tag the subnets the load balancers belong in: kubernetes.io/role/elb=1 on the public ones (internal-elb on the " +
			"private ones) and kubernetes.io/cluster/NAME=shared (or owned).",
		"aws ec2 describe-subnets --filters Name=vpc-id,Values=VPC --query 'Subnets[].[SubnetId,Tags]'"},
	{[]string{"unauthorizedoperation", "accessdenied"}, "AWS",
		"the controller's credentials (the control plane's IAM role) lack a permission the load balancer needs",
		"Grant the controller's IAM role the permission the message names (the cloud provider's documented policy).",
		"# the message names the action; then the role's policies\naws iam list-attached-role-policies --role-name ROLE"},
	{[]string{"publicipcountlimitreached"}, "Azure",
		"the subscription has reached its limit of public IP addresses in the region",
		"Delete unused public IPs (of Services already gone) or raise the quota.",
		"az network public-ip list --query 'length(@)'"},
	{[]string{"there are no available nodes for loadbalancer"}, "",
		"no node can be put behind the load balancer: none is Ready, or all carry the label " +
			"node.kubernetes.io/exclude-from-external-load-balancers (or are control-plane nodes where that excludes them)",
		"Make a node Ready and eligible for load balancers (remove node.kubernetes.io/exclude-from-external-load-balancers).",
		"kubectl get nodes -L node.kubernetes.io/exclude-from-external-load-balancers"},
}

var (
	// lbQuotaRe is GCE's quota refusal: Quota 'FORWARDING_RULES' exceeded.
	lbQuotaRe = lazyre.New(`(?i)\bquota '([A-Z_]+)' exceeded`)
	// lbInstanceRe is the EC2 instance a refusal names.
	lbInstanceRe = lazyre.New(`\binstance (i-[0-9a-f]+)\b`)
	// lbServiceRe names the Service a controller's line is about.
	lbServiceRe = lazyre.New(`(?i)\b(?:for service|service)[ =]"?([a-z0-9][a-z0-9-]*)/([a-z0-9][a-z0-9.-]*)"?`)
	// lbUpdateRe is a controller's line about an update, not a creation.
	lbUpdateRe = lazyre.New(`(?i)error syncing load ?balancer|failed to update load ?balancer`)
	// lbFailRe is the controller's own word that it failed.
	lbFailRe = lazyre.New(`(?i)error syncing load ?balancer|failed to ensure load ?balancer|(?:failed to|error) creating load ?balancer|failed to create load ?balancer|failed to update load ?balancer`)
)

// lbFailReasons are the events of a failed load balancer.
var lbFailReasons = map[string]bool{"CreatingLoadBalancerFailed": true, "SyncLoadBalancerFailed": true,
	"UpdateLoadBalancerFailed": true, "UnAvailableLoadBalancer": true}

// lbFailure is the failures of one Service's load balancer.
type lbFailure struct {
	ns, name string
	first    string // the first failure's message
	pos      []model.Pos
	count    int
	ensured  bool   // an EnsuredLoadBalancer event came after the last failure event
	update   bool   // a failure was of an update (SyncLoadBalancerFailed ...), not a creation
	ingress  string // the Service's load balancer address, when the bundle shows one
}

func runLBProvisionFailed(p *analyzer.Pass) error {
	var order []*lbFailure
	byKey := map[string]*lbFailure{}
	get := func(ns, name string) *lbFailure {
		k := ns + "/" + name
		if byKey[k] == nil {
			byKey[k] = &lbFailure{ns: ns, name: name}
			order = append(order, byKey[k])
		}
		return byKey[k]
	}
	// The events of one Service come in the order they happened (a
	// description's table): an EnsuredLoadBalancer after the last
	// failure means the retry succeeded.
	for i := range p.Snap.Kube.Events {
		e := &p.Snap.Kube.Events[i]
		if e.InvolvedObject.Kind != "" && e.InvolvedObject.Kind != "Service" {
			continue
		}
		ns, name := e.InvolvedObject.Namespace, e.InvolvedObject.Name
		if m := lbServiceRe.FindStringSubmatch(e.Message); m != nil && (name == "" || ns == "" && m[2] == name) {
			ns, name = m[1], m[2] // kubectl get events names the object without its namespace
		}
		switch {
		case lbFailReasons[e.Reason]:
			f := get(ns, name)
			f.note(e.Message, e.Source.Pos, max(int(e.Count), 1), e.Reason != "CreatingLoadBalancerFailed")
			f.ensured = false
		case e.Reason == "EnsuredLoadBalancer" || e.Reason == "UpdatedLoadBalancer":
			get(ns, name).ensured = true
		}
	}
	// A log line cannot be ordered against the events: it adds a
	// failure, never undoes a success the events show.
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		text := le.Message + " " + le.Fields["err"] + " " + le.Fields["error"]
		if !lbFailRe.MatchString(text) {
			continue
		}
		m := lbServiceRe.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		get(m[1], m[2]).note(strings.TrimSpace(text), le.Pos, 1, lbUpdateRe.MatchString(text))
	}
	for _, f := range order {
		for _, svc := range p.Snap.Kube.Services {
			if svc.Namespace == f.ns && svc.Name == f.name && len(svc.Status.LoadBalancer.Ingress) > 0 {
				in := svc.Status.LoadBalancer.Ingress[0]
				f.ingress = in.IP + in.Hostname
			}
		}
		// A load balancer the Service shows was made after all, unless
		// an update failed since.
		if f.ensured || f.count == 0 || (f.ingress != "" && !f.update) {
			continue
		}
		p.Report(lbFailureFinding(f))
	}
	return nil
}

// note adds one failure; update says the controller failed to update a
// load balancer it had made, not to create one.
func (f *lbFailure) note(msg string, pos model.Pos, n int, update bool) {
	if f.first == "" {
		f.first = msg
	}
	f.pos = append(f.pos, pos)
	f.count += n
	f.update = f.update || update
}

// lbFailureFinding words the failures of one Service.
func lbFailureFinding(f *lbFailure) analyzer.Finding {
	svc := f.name
	if f.ns != "" {
		svc = f.ns + "/" + f.name
	}
	fd := analyzer.Finding{
		Subject:   subject("object", object("Service", f.ns, f.name)),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Facts:     map[string]any{"service": svc, "failures": f.count, "message": f.first},
		Supports: []string{fmt.Sprintf("%s: the service controller failed to ensure the load balancer: %q", f.pos[0],
			f.first)},
		Contradicts: []string{"an EnsuredLoadBalancer event on the Service after these failures, or an EXTERNAL-IP " +
			"in kubectl get svc " + f.name},
	}
	for i, pos := range f.pos {
		if i == maxGroupEvidence {
			break
		}
		fd.Evidence = append(fd.Evidence, analyzer.Evidence{Pos: pos, Note: "service controller: load balancer failed"})
	}
	lower := strings.ToLower(f.first)
	var known *lbRefusal
	needle := ""
	for i := range lbRefusals {
		for _, n := range lbRefusals[i].needles {
			if known == nil && strings.Contains(lower, n) {
				known, needle = &lbRefusals[i], n
			}
		}
	}
	if known == nil {
		if m := lbQuotaRe.FindStringSubmatch(f.first); m != nil {
			needle = m[0]
			known = &lbRefusal{cloud: "GCE", cause: "the project has reached its quota " + m[1] +
				" in the region", fix: "Free " + m[1] + " (load balancers of Services already gone) or raise the quota.",
				decide: "gcloud compute project-info describe --format='value(quotas)' # and the region's: " +
					"gcloud compute regions describe REGION"}
		}
	}
	times := plural(f.count, "time", "times")
	verb, effect := "create", "its EXTERNAL-IP stays pending while it retries"
	switch {
	case f.ingress != "":
		verb, effect = "update", fmt.Sprintf("the load balancer it made (%s) stops following the nodes while it "+
			"retries", f.ingress)
		fd.Facts["load_balancer"] = f.ingress
		fd.Contradicts = []string{"an UpdatedLoadBalancer or EnsuredLoadBalancer event on the Service after these failures"}
	case f.update:
		verb, effect = "create or update", "its EXTERNAL-IP stays pending, or an existing load balancer stops "+
			"following the nodes, while it retries"
	}
	fd.Title = fmt.Sprintf("the service controller cannot %s the load balancer of Service %s", verb, svc)
	fd.Summary = fmt.Sprintf("The service controller failed %d %s to ensure the cloud load balancer of Service %s: %s.",
		f.count, times, svc, effect)
	if known == nil {
		fd.Cause = fmt.Sprintf("Not established: the cloud's answer, %q, names no cause netmortem knows.", f.first)
		fd.Fix = "Read the cloud's answer in the controller's log and fix what it names; the Service's events show " +
			"whether a retry succeeded."
		fd.Alternatives = []string{"a cloud quota or limit", "the controller's cloud credentials or permissions",
			"the cloud's tags on subnets or security groups", "no eligible node"}
		fd.Decide = "# the cloud's whole answer, from the controller that manages load balancers\n" +
			"kubectl -n kube-system logs -l component=kube-controller-manager | grep -i 'load balancer'"
		return fd
	}
	fd.Certainty = analyzer.Likely
	fd.Facts["refusal"] = needle
	fd.Supports = append(fd.Supports, fmt.Sprintf("the refusal names the cause: %s", needle))
	if known.cloud == "" { // the controller's own refusal, before any cloud call
		fd.Title = fmt.Sprintf("the service controller cannot %s the load balancer of Service %s: %s", verb, svc,
			lbShort(known))
		fd.Cause = fmt.Sprintf("The service controller finds that %s.", known.cause)
	} else {
		fd.Facts["cloud"] = known.cloud
		fd.Title = fmt.Sprintf("%s refuses to %s the load balancer of Service %s: %s", known.cloud, verb, svc,
			lbShort(known))
		fd.Cause = fmt.Sprintf("%s refuses it: %s.", known.cloud, known.cause)
	}
	fd.Fix = known.fix
	fd.Decide = known.decide
	if m := lbInstanceRe.FindStringSubmatch(f.first); m != nil {
		fd.Decide = strings.ReplaceAll(fd.Decide, "INSTANCE", m[1])
	}
	return fd
}

// lbShort is a refusal's cause cut to a title's length: up to its first
// comma or colon.
func lbShort(r *lbRefusal) string {
	c := r.cause
	if i := strings.IndexAny(c, ",:("); i > 0 {
		c = c[:i]
	}
	return strings.TrimSpace(c)
}
