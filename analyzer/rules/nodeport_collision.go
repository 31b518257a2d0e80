package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// NodePortCollision finds NodePorts that two Services, two ports of one
// Service or a Pod's hostPort claim, or that lie outside the NodePort range.
var NodePortCollision = &analyzer.Rule{
	Name:        "nodeport-collision",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindKube, model.KindLogs},
	Uses:        []model.Kind{model.KindSockets, model.KindComponents},
	Requires:    []analyzer.FactKey{facts.NodePortRange},
	SubjectKeys: []string{"port", "proto"},
	Run:         runNodePortCollision,
	Explains:    []*analyzer.Rule{SynAckReset},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(80)},
	Proof: "nothing in a bundle proves it: the objects and the apiserver's refusals point at it (a process " +
		"holding a NodePort on a node, which the node's sockets prove, is nodeport-held-by-process)",
	Unproven: "two Services with one nodePort, or a Pod's hostPort on it, are shown by the Kubernetes objects alone " +
		"(likely: the objects may have been read at different times, the Pod may run on other nodes); a NodePort outside " +
		"the default range without the apiserver's flag may be inside the range the cluster really has. A warning, " +
		"with the command that decides",
	Doc: `a NodePort is also claimed by a hostPort or another Service

A NodePort is the same port on every node, and belongs to one Service port.
When a Pod asks for it as a hostPort, or when two Services carry the same
nodePort (snapshots taken at different times, or a restore), traffic for
the Service goes to the wrong place on some nodes. A NodePort outside the
apiserver's range (--service-node-port-range, default 30000-32767) was set
by hand or comes from another cluster's configuration. A process of the node
holding the port is nodeport-held-by-process.

The apiserver's refusal printed by kubectl or helm ("spec.ports[0].nodePort:
Invalid value: N: provided port is already allocated") is likely when it
refuses an update of an existing Service (cannot patch, UPGRADE FAILED), and
of unknown cause, at info, for a create (the same Service may hold the port).

Evidence: the Services' nodePorts, Pods' hostPorts, the apiserver flag, the
apiserver's refusals.

Severity: a warning for two Services or a hostPort on one nodePort, seen in
the objects alone, for a NodePort outside the range, and for the apiserver
refusing an update.

Fix: move the hostPort off the NodePort range, give each Service its own
nodePort (or let the apiserver allocate it), and keep the range consistent
with net.ipv4.ip_local_reserved_ports.`,
}

func runNodePortCollision(p *analyzer.Pass) error {
	s := p.Snap
	nps := s.Kube.NodePorts()
	byPort := map[string][]model.NodePort{}
	var keys []string
	for _, np := range nps {
		k := fmt.Sprintf("%d/%s", np.Port, np.Protocol)
		if byPort[k] == nil {
			keys = append(keys, k)
		}
		byPort[k] = append(byPort[k], np)
	}
	// Two Services claiming one port do not rest on the range; a port
	// outside it, claimed by nothing else, does.
	rng := facts.NodePortRange.Partly(p)
	reported := map[string]bool{}
	for _, k := range keys {
		c := &portClaims{list: byPort[k], rng: rng}
		if f, ok := judgePortClaims(s, c); ok {
			if len(c.claims) == 0 {
				facts.NodePortRange.RestsOn(p, &f)
			}
			f.Title, f.Summary, f.Cause, f.Fix = portClaimWords(c)
			p.Report(f)
			reported[k] = true
		}
	}
	for _, a := range allocatedNodePorts(s) {
		if !reported[fmt.Sprintf("%d/TCP", a.port)] && !reported[fmt.Sprintf("%d/UDP", a.port)] {
			p.Report(judgeAllocated(a))
		}
	}
	return nil
}

// portClaims is a NodePort and what else claims it, and its judgement
// (judgePortClaims): the Services that give it, the host processes and
// hostPorts that take it, whether it is outside the NodePort range.
// portClaimWords words it.
type portClaims struct {
	list []model.NodePort // the Services' entries of the port
	rng  facts.NodePorts

	svcs, claims []string // the Services that give it; what else claims it
	outside      bool     // the port is outside the NodePort range
	twice        string   // the Service that gives it to two of its ports
}

// judgePortClaims judges c; ok is false when nothing else claims the port
// and it is in the range. It fills in c and returns the finding without its
// words.
func judgePortClaims(s *model.Snapshot, c *portClaims) (f analyzer.Finding, ok bool) {
	list, rng := c.list, c.rng
	np := list[0]
	var claims, supports, contradicts []string
	ev := []analyzer.Evidence{{Pos: np.Pos, Note: fmt.Sprintf("NodePort %d/%s of Service %s", np.Port, np.Protocol, objectName(np.Namespace, np.Service))}}
	// Two Services, one port.
	var svcs []string
	for _, x := range list {
		if n := objectName(x.Namespace, x.Service); !slices.Contains(svcs, n) {
			svcs = append(svcs, n)
			if len(svcs) > 1 {
				ev = append(ev, analyzer.Evidence{Pos: x.Pos, Note: fmt.Sprintf("NodePort %d/%s of Service %s", x.Port, x.Protocol, n)})
			}
		}
	}
	// One Service, one port given to two of its ports: the apiserver
	// allocates a nodePort once, and rejects the second port.
	twice := ""
	for i, x := range list {
		for _, y := range list[:i] {
			if twice == "" && x.Namespace == y.Namespace && x.Service == y.Service {
				twice = objectName(x.Namespace, x.Service)
				claims = append(claims, fmt.Sprintf("ports %s and %s of the same Service", portLabel(y), portLabel(x)))
				supports = append(supports, fmt.Sprintf("%s gives nodePort %d/%s to two ports of %s (%s and %s)", x.Pos,
					x.Port, x.Protocol, twice, portLabel(y), portLabel(x)))
			}
		}
	}
	if len(svcs) > 1 {
		claims = append(claims, "Services "+someOf(svcs, " and "))
		supports = append(supports, fmt.Sprintf("%s and %s give nodePort %d/%s to %s", np.Pos, list[len(list)-1].Pos,
			np.Port, np.Protocol, someOf(svcs, " and ")))
	}
	// A Pod's hostPort.
	for _, pod := range s.Kube.Pods {
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.HostPort == int32(np.Port) && strings.EqualFold(orTCP(string(cp.Protocol)), np.Protocol) {
					claims = append(claims, fmt.Sprintf("hostPort of Pod %s", objectName(pod.Namespace, pod.Name)))
					supports = append(supports, fmt.Sprintf("%s: Pod %s asks for hostPort %d", pod.Source.Pos,
						objectName(pod.Namespace, pod.Name), cp.HostPort))
					ev = append(ev, analyzer.Evidence{Pos: pod.Source.Pos, Note: fmt.Sprintf("hostPort %d of container %s", cp.HostPort, c.Name)})
				}
			}
		}
	}
	outside := !rng.Range.Contains(np.Port)
	if len(claims) == 0 && !outside {
		return f, false
	}
	var alternatives []string
	decide := ""
	switch {
	case len(claims) > 0:
		if !s.Has(model.KindSockets) && (twice == "" || len(claims) > 1) {
			contradicts = append(contradicts, "no listening sockets of the nodes in the bundle: whether the port is taken "+
				"on a node is not shown")
		}
		switch {
		case len(svcs) > 1:
			alternatives = append(alternatives, "the Services were read at different times (one since deleted, or a "+
				"restore not applied): the apiserver never gives one nodePort twice")
		case twice != "":
			alternatives = append(alternatives, "the manifest shown is not the one applied (other values): the Service in the "+
				"cluster may give each port its own nodePort")
		default:
			alternatives = append(alternatives, "the Pod with the hostPort runs on nodes where nothing else uses the port")
		}
		decide = fmt.Sprintf("kubectl get services,pods -A -o wide | grep %d", np.Port)
		if twice != "" && len(svcs) == 1 && len(claims) == 1 {
			decide = "# MANIFEST is the manifest of Service " + twice + "\nkubectl apply --dry-run=server -f MANIFEST"
		}
	case rng.Flag != nil:
		alternatives = []string{"the nodePort was allocated before the range was changed: the Service still works, " +
			"and new allocations avoid the port", "the nodePort was set by hand in the Service"}
		decide = fmt.Sprintf("%s get service %s -o yaml --show-managed-fields", kubectlIn(np.Namespace), shq.Quote(np.Service))
	default:
		contradicts = append(contradicts, "the apiserver's --service-node-port-range is not in the bundle: the range "+
			rng.Range.String()+" is the default")
		alternatives = []string{"the cluster's apiserver runs with a wider --service-node-port-range"}
		decide = "kubectl -n kube-system get pod -l component=kube-apiserver -o yaml | grep service-node-port-range"
	}
	if outside {
		ev = append(ev, rng.Evidence()...)
		supports = append(supports, fmt.Sprintf("%s: nodePort %d/%s of %s, outside %s (%s)", np.Pos, np.Port,
			np.Protocol, svcs[0], rng.Range, rng.Source()))
	}
	values := map[string]any{
		"nodeport":       fmt.Sprintf("%d/%s", np.Port, np.Protocol),
		"services":       svcs,
		"nodeport_range": rng.Range.String(),
	}
	if len(claims) > 0 {
		values["claimed_by"] = claims
	}
	if outside {
		values["outside_range"] = true
	}
	c.svcs, c.claims, c.outside, c.twice = svcs, claims, outside, twice
	return analyzer.Finding{
		Subject:      subject("port", fmt.Sprint(np.Port), "proto", strings.ToLower(np.Protocol)),
		Severity:     analyzer.Warning,
		Certainty:    analyzer.Likely,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Facts:        values,
		Evidence:     ev,
	}, true
}

// someOf joins names with sep, or, past four of them, names the first
// three and counts the others: "a, b, c and 297 more" (the facts list
// them all).
func someOf(names []string, sep string) string {
	if len(names) <= 4 {
		return strings.Join(names, sep)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// portClaimWords words the finding of c, as judgePortClaims judged it.
func portClaimWords(c *portClaims) (title, summary, cause, fix string) {
	np, rng := c.list[0], c.rng
	title = fmt.Sprintf("NodePort %d/%s of %s is also claimed by %s", np.Port, np.Protocol, c.svcs[0], strings.Join(c.claims, ", "))
	summary = fmt.Sprintf("NodePort %d/%s (Service %s) is claimed by %s too: on the nodes where both hold it, "+
		"traffic for the Service goes to the wrong place.", np.Port, np.Protocol, someOf(c.svcs, ", "), strings.Join(c.claims, ", "))
	if c.twice != "" && len(c.claims) == 1 {
		title = fmt.Sprintf("NodePort %d/%s is given to two ports of Service %s", np.Port, np.Protocol, c.twice)
		summary = fmt.Sprintf("Service %s gives nodePort %d/%s to two of its ports (%s): the apiserver allocates a "+
			"nodePort once and rejects the second port (\"provided port is already allocated\"), so the Service "+
			"is not created or updated.", c.twice, np.Port, np.Protocol, strings.TrimSuffix(strings.TrimPrefix(c.claims[0], "ports "), " of the same Service"))
	}
	if c.outside {
		if len(c.claims) == 0 {
			title = fmt.Sprintf("NodePort %d/%s of %s is outside the NodePort range %s", np.Port, np.Protocol, c.svcs[0], rng.Range)
			summary = ""
		}
		summary += fmt.Sprintf(" The port is outside the NodePort range %s (%s): it was set by hand, or the range "+
			"changed after it was allocated.", rng.Range, rng.Source())
	}
	cause = "Ports chosen by hand for Services, host processes or hostPorts, without regard for the NodePort range; " +
		"or objects restored from another cluster."
	if c.twice != "" && len(c.claims) == 1 {
		cause = "The Service's manifest (often a chart's template writing one nodePort value on every port) gives " +
			"the same nodePort to two of its ports."
	}
	fix = "Give the Service a nodePort that nothing else uses (or remove spec.ports[].nodePort so the apiserver " +
		"allocates one in the range), and move host processes and hostPorts out of the range."
	return title, strings.TrimSpace(summary), cause, fix
}

// portLabel names a Service port by its name, or by its nodePort when it
// has none.
func portLabel(np model.NodePort) string {
	if np.PortName != "" {
		return np.PortName
	}
	return fmt.Sprintf("%d/%s", np.Port, np.Protocol)
}

func orTCP(p string) string {
	if p == "" {
		return "TCP"
	}
	return p
}

// allocatedRe reads the apiserver refusing a Service's nodePort that
// another port holds ("Service "x" is invalid: spec.ports[0].nodePort:
// Invalid value: 30030: provided port is already allocated"), as kubectl,
// helm and operators print it.
var allocatedRe = lazyre.New(`(?:Service "([^"]+)" is invalid: )?spec\.ports\[(\d+)\]\.nodePort: Invalid value: (\d{1,5}): provided port is already allocated`)

// allocatedNodePort is an apiserver's refusal of a nodePort, and whether
// the request updated a Service that exists (patch, upgrade).
type allocatedNodePort struct {
	port    uint16
	service string
	line    *model.LogEvent
	update  bool
}

func allocatedNodePorts(s *model.Snapshot) []allocatedNodePort {
	var out []allocatedNodePort
	seen := map[uint16]bool{}
	for i := range s.Logs {
		le := &s.Logs[i]
		m := allocatedRe.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		port, err := strconv.ParseUint(m[3], 10, 16)
		if err != nil || port == 0 || seen[uint16(port)] {
			continue
		}
		seen[uint16(port)] = true
		msg, cmd := strings.ToLower(le.Message), " "+le.Fields["command"]+" "
		update := strings.Contains(msg, "cannot patch") || strings.Contains(msg, "upgrade failed") ||
			strings.Contains(cmd, " patch ") || strings.Contains(cmd, " replace ") || strings.Contains(cmd, " edit ")
		out = append(out, allocatedNodePort{port: uint16(port), service: m[1], line: le, update: update})
	}
	return out
}

// judgeAllocated judges the apiserver's refusal of a nodePort: an update of
// an existing Service is refused only for a port another Service (or another
// of its ports) holds, likely; a create may be refused for the port the same
// Service already holds (a create repeated), unknown and info.
func judgeAllocated(a allocatedNodePort) analyzer.Finding {
	svc := cmp.Or(a.service, "a Service")
	f := analyzer.Finding{
		Subject:  subject("port", fmt.Sprint(a.port), "proto", "tcp"),
		Severity: analyzer.Warning, Certainty: analyzer.Likely,
		Supports: []string{fmt.Sprintf("%s: the apiserver refuses nodePort %d for %s: provided port is already "+
			"allocated", a.line.Pos, a.port, svc)},
		Evidence: []analyzer.Evidence{{Pos: a.line.Pos, Note: fmt.Sprintf("nodePort %d of %s refused: already allocated", a.port, svc)}},
		Alternatives: []string{"another port of the same Service gives the same nodePort (a chart template writing " +
			"one value on every port)"},
		Decide: fmt.Sprintf("kubectl get svc -A -o 'custom-columns=NS:.metadata.namespace,NAME:.metadata.name,"+
			"NODEPORTS:.spec.ports[*].nodePort' | grep %d", a.port),
		Facts: map[string]any{"nodeport": a.port, "service": svc},
		Title: fmt.Sprintf("NodePort %d asked for by %s is already allocated to another Service port", a.port, svc),
		Summary: fmt.Sprintf("The apiserver refuses %s's nodePort %d: another Service (or another port of the same "+
			"Service) already holds it, so the change to %s is not made.", svc, a.port, svc),
		Cause: "A nodePort fixed by hand or by a chart's values that another Service port already holds (a NodePort " +
			"number belongs to one Service port, whatever the protocol).",
		Fix: "Give each Service port its own nodePort (or leave spec.ports[].nodePort out so the apiserver allocates one).",
	}
	if !a.update {
		f.Severity, f.Certainty = analyzer.Info, analyzer.Unknown
		f.Alternatives = append([]string{"the Service being created already exists and holds the port itself (a " +
			"create repeated): nothing else claims it"}, f.Alternatives...)
		f.Title = fmt.Sprintf("NodePort %d asked for by %s is already allocated", a.port, svc)
	}
	return f
}
