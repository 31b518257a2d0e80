package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// ProbeRestartLoop finds containers restarted over and over by their own
// liveness probe while the container itself is healthy.
var ProbeRestartLoop = &analyzer.Rule{
	Name:     "probe-restart-loop",
	Severity: analyzer.Error,
	Needs:    []model.Kind{model.KindKube},
	Uses:     []model.Kind{model.KindContainers, model.KindLogs},
	Params: []analyzer.Param{{Name: "min_restarts", Type: analyzer.Integer, Default: 5, Range: analyzer.AtLeast(1),
		Doc: "the fewest restarts of a container that make a restart loop"}},
	SubjectKeys: []string{"object", "container"},
	ObjectKinds: []string{"Pod"},
	Run:         runProbeRestartLoop,
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(10)},
	Plot: analyzer.Plot{
		Parts: []analyzer.PlotPart{analyzer.PlotRestarts},
	},
	Proof: "the restarts and the liveness probe (the Pod and its spec) with a clean kill shown by another source: an " +
		"exit status 0 in a container listing, the container's log ending on a terminated signal, the kubelet's " +
		"restart lines or its Unhealthy/Killing events",
	Unproven: "restarts and a liveness probe alone do not tell a probe that kills a healthy container from one that " +
		"crashes: the symptom with its cause unknown, a warning, with kubectl describe pod to decide",
	Doc: `a liveness probe restarts a healthy container over and over

A container has restarted many times, it has a liveness probe, and what is
known of its runs says it was killed rather than crashed: it exited with
status 0 or its log ends with "received terminated signal" (SIGTERM from the
kubelet), and the kubelet logs the restart. Each run lasts about the probe's
window: initialDelaySeconds + failureThreshold x the probe interval (the
period, or the timeout when the timeout is longer, since a probe waits for its
timeout before the next one). The probe fails although the service answers:
a wrong address or port, a check command that does not work in that image, or
a timeout shorter than the check takes.

Evidence: Pods (RESTARTS from kubectl get pods, or container statuses), the
probe from the Pod spec or the static pod manifest, container listings
(docker ps -a, crictl ps -a: exit codes and attempts), the container's and
the kubelet's logs.

Without the Pod's spec (a kubectl get pods row), the events' liveness
failures of a Pod of the same workload name the probe: likely when it timed
out (the check outlasts its timeout), unknown otherwise.

Severity: error when the restarts, the probe and a clean kill (exit 0,
terminated signal, kubelet restart lines) are all shown; warning from restarts
and the probe alone. Parameter min_restarts (default 5).

Fix: run the probe's check by hand inside the container and see why it fails;
give it the timeout it needs; prefer an HTTP check of the component's health
endpoint (etcd: httpGet /health on its metrics port, as current kubeadm writes
it) over a command.`,
}

// killedPatterns are log lines of a process stopped from outside.
var killedPatterns = []string{"received terminated signal", "received signal; shutting down", "exiting on signal", "received sigterm", "signal: terminated", "caught signal", "shutting down on signal"}

// kubeletRestartPatterns are kubelet log lines about restarting a container.
var kubeletRestartPatterns = []string{"is dead, but restartpolicy says that we should restart it", "liveness probe failed",
	"failed liveness probe", "container will be killed and recreated", "unhealthy"}

func runProbeRestartLoop(p *analyzer.Pass) error {
	s := p.Snap
	minRestarts := int32(p.Param("min_restarts", 5))
	// Static pod manifests: Pods whose name is the prefix of their mirror
	// pod's name ("etcd" for "etcd-node1").
	var manifests []*model.Pod
	for i := range s.Kube.Pods {
		pod := &s.Kube.Pods[i]
		if len(pod.Spec.Containers) > 0 && !pod.Source.FromTable {
			manifests = append(manifests, pod)
		}
	}
	for i := range s.Kube.Pods {
		pod := &s.Kube.Pods[i]
		restarts := int32(0)
		for _, cs := range pod.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
		if restarts < minRestarts {
			continue
		}
		spec, specPod := probedContainer(pod, manifests)
		if spec == nil {
			if f, ok := judgeProbeEvents(s, pod, restarts); ok {
				p.Report(f)
			}
			continue
		}
		g := &probeLoop{pod: pod, specPod: specPod, c: spec, restarts: restarts}
		f := judgeProbeLoop(p, g)
		f.Title, f.Summary, f.Cause, f.Fix = probeWords(g)
		p.Report(f)
	}
	return nil
}

// probedContainer finds the container with a liveness probe of pod, in its
// own spec or in the static pod manifest it mirrors.
func probedContainer(pod *model.Pod, manifests []*model.Pod) (*corev1.Container, *model.Pod) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].LivenessProbe != nil {
			return &pod.Spec.Containers[i], pod
		}
	}
	for _, m := range manifests {
		if m == pod || m.Name == "" || !(strings.HasPrefix(pod.Name, m.Name+"-") || pod.Name == m.Name) {
			continue
		}
		if pod.Namespace != "" && m.Namespace != "" && pod.Namespace != m.Namespace {
			continue
		}
		for i := range m.Spec.Containers {
			if m.Spec.Containers[i].LivenessProbe != nil {
				return &m.Spec.Containers[i], m
			}
		}
	}
	return nil, nil
}

// probeTiming returns how long a failing liveness probe lets a container
// live (the initial delay plus failureThreshold probe intervals), how long
// the failures take, the interval between checks and the failure
// threshold, defaults applied.
func probeTiming(pr *corev1.Probe) (window, failing, interval time.Duration, threshold int32) {
	period := int32(10)
	if pr.PeriodSeconds > 0 {
		period = pr.PeriodSeconds
	}
	timeout := int32(1)
	if pr.TimeoutSeconds > 0 {
		timeout = pr.TimeoutSeconds
	}
	threshold = 3
	if pr.FailureThreshold > 0 {
		threshold = pr.FailureThreshold
	}
	interval = time.Duration(max(period, timeout)) * time.Second
	failing = time.Duration(threshold) * interval
	return time.Duration(pr.InitialDelaySeconds)*time.Second + failing, failing, interval, threshold
}

func probeCheck(pr *corev1.Probe) string {
	switch {
	case pr.Exec != nil:
		return "exec: " + strings.Join(pr.Exec.Command, " ")
	case pr.HTTPGet != nil:
		return fmt.Sprintf("httpGet %s:%s%s", pr.HTTPGet.Host, pr.HTTPGet.Port.String(), pr.HTTPGet.Path)
	case pr.TCPSocket != nil:
		return "tcpSocket " + pr.TCPSocket.Port.String()
	case pr.GRPC != nil:
		return fmt.Sprintf("grpc port %d", pr.GRPC.Port)
	}
	return "unknown check"
}

// probeLoop is a container restarted under a liveness probe, and its
// judgement (judgeProbeLoop): whether the bundle shows the container stopped
// from outside, how long its runs lasted, a probe aimed at a port it does
// not listen on. probeWords words it.
type probeLoop struct {
	pod, specPod *model.Pod // the Pod, and the one whose spec holds the probe
	c            *corev1.Container
	restarts     int32

	killed    bool     // the runs end cleanly: stopped from outside
	lifetimes []string // how long the runs seen in logs lasted
	wrongPort string   // the probe checks a port the container does not listen on, in words; "" when not
}

// judgeProbeLoop judges g from the container listings, the Pod's status,
// the events and the logs. It fills in g and returns the finding without
// its words.
func judgeProbeLoop(p *analyzer.Pass, g *probeLoop) analyzer.Finding {
	s, pod, specPod, c, restarts := p.Snap, g.pod, g.specPod, g.c, g.restarts
	pr := c.LivenessProbe
	window, failing, _, threshold := probeTiming(pr)
	name := objectName(pod.Namespace, pod.Name)
	ev := []analyzer.Evidence{{Pos: pod.Source.Pos, Note: fmt.Sprintf("%d restarts", restarts)}}
	ci := slices.IndexFunc(specPod.Spec.Containers, func(x corev1.Container) bool { return x.Name == c.Name })
	ev = append(ev, analyzer.Evidence{Pos: specPod.Source.FieldPos(fmt.Sprintf("spec.containers[%d].livenessProbe", ci)),
		Note: fmt.Sprintf("liveness probe of container %s: %s", c.Name, probeCheck(pr))})
	facts := map[string]any{
		"pod":               name,
		"container":         c.Name,
		"restarts":          restarts,
		"probe":             probeCheck(pr),
		"initial_delay_s":   pr.InitialDelaySeconds,
		"failure_threshold": threshold,
		"timeout_s":         pr.TimeoutSeconds,
		"period_s":          pr.PeriodSeconds,
		"probe_window_s":    int(window.Seconds()),
		"failing_window_s":  int(failing.Seconds()),
	}
	supports := []string{
		fmt.Sprintf("%s: %s restarted %d times", pod.Source.Pos, name, restarts),
		fmt.Sprintf("%s: liveness probe of %s: %s", ev[1].Pos, c.Name, probeCheck(pr)),
	}
	var contradicts []string

	// Container runs: exit codes from container listings.
	base := specPod.Name
	for _, ct := range s.Containers {
		if ct.KubeContainer != c.Name || !(ct.Pod == pod.Name || strings.HasPrefix(ct.Pod, base+"-")) {
			continue
		}
		if ct.State == "exited" && ct.ExitCode != 0 {
			contradicts = append(contradicts, fmt.Sprintf("%s: attempt %d exited with status %d: a crash, not a kill",
				ct.Pos, ct.Attempt, ct.ExitCode))
		}
		if ct.State == "exited" && ct.ExitCode == 0 {
			g.killed = true
			supports = append(supports, fmt.Sprintf("%s: attempt %d exited with status 0", ct.Pos, ct.Attempt))
			facts["exit_code"] = 0
			ev = append(ev, analyzer.Evidence{Pos: ct.Pos, Note: fmt.Sprintf("attempt %d exited with status 0: stopped, not crashed", ct.Attempt)})
		}
	}
	// The Pod's own status: the last run ended with status 0.
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.LastTerminationState.Terminated; cs.Name == c.Name && t != nil && t.ExitCode != 0 {
			contradicts = append(contradicts, fmt.Sprintf("%s: the last run of %s ended with status %d (%s)", pod.Source.Pos,
				c.Name, t.ExitCode, t.Reason))
		}
		if cs.Name == c.Name && cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.ExitCode == 0 {
			g.killed = true
			supports = append(supports, fmt.Sprintf("%s: the last run of %s ended with status 0 (%s)", pod.Source.Pos, c.Name,
				cs.LastTerminationState.Terminated.Reason))
			facts["exit_code"] = 0
			ev = append(ev, analyzer.Evidence{Pos: pod.Source.Pos, Note: fmt.Sprintf("last run of %s ended with status 0 (%s)", c.Name,
				cs.LastTerminationState.Terminated.Reason)})
		}
	}
	// Events: the kubelet's liveness probe failures and kills.
	probeEvents := int32(0)
	for _, e := range s.Kube.Events {
		if e.InvolvedObject.Name != pod.Name || e.InvolvedObject.Namespace != pod.Namespace {
			continue
		}
		msg := strings.ToLower(e.Message)
		if e.Reason == "Unhealthy" && strings.Contains(msg, "liveness") || e.Reason == "Killing" && strings.Contains(msg, "liveness") {
			g.killed = true
			if probeEvents == 0 {
				supports = append(supports, fmt.Sprintf("%s: event %s: %s", e.Source.Pos, e.Reason, e.Message))
			}
			probeEvents += max(e.Count, 1)
			if len(ev) < 12 {
				ev = append(ev, analyzer.Evidence{Pos: e.Source.Pos, Note: fmt.Sprintf("event %s: %s", e.Reason, e.Message)})
			}
		}
	}
	if probeEvents > 0 {
		facts["probe_events"] = probeEvents
	}
	// Logs: the container stopped by a signal; the kubelet restarting it.
	for i, le := range s.Logs {
		msg := strings.ToLower(le.Message)
		switch {
		case containsAny(msg, killedPatterns) && (le.Source == "" || strings.Contains(strings.ToLower(le.Source), strings.ToLower(c.Name)) ||
			strings.Contains(strings.ToLower(le.Pos.File), strings.ToLower(c.Name))):
			g.killed = true
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "stopped by a signal"})
			supports = append(supports, fmt.Sprintf("%s: %s stopped by a signal", le.Pos, c.Name))
			if start := firstLogOfFile(s.Logs[:i], le.Pos.File); start != nil && !start.Time.IsZero() && le.Time.After(start.Time) {
				g.lifetimes = append(g.lifetimes, le.Time.Sub(start.Time).Round(time.Second).String())
				ev = append(ev, analyzer.Evidence{Pos: start.Pos, Note: "running"})
			}
		case containsAny(msg, kubeletRestartPatterns) && (strings.Contains(msg, strings.ToLower(c.Name)) || strings.Contains(msg, "liveness")):
			g.killed = true
			ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "kubelet restarts the container"})
			supports = append(supports, fmt.Sprintf("%s: the kubelet restarts the container", le.Pos))
		}
	}
	if len(g.lifetimes) > 0 {
		facts["observed_run"] = g.lifetimes
	}
	// A probe aimed at a port the component does not listen on, by its
	// own flags (--listen-*-urls, --port, --secure-port).
	if port := probePort(pr); port != "" {
		if listens := listenPorts(c); len(listens) > 0 && !slices.Contains(listens, port) {
			g.wrongPort = fmt.Sprintf("The probe checks port %s, but %s listens on %s by its flags.", port, c.Name, strings.Join(listens, ", "))
			facts["probe_port"] = port
			facts["listen_ports"] = listens
		}
	}
	if g.wrongPort != "" {
		supports = append(supports, g.wrongPort)
	}
	sev, certainty := analyzer.Warning, analyzer.Unknown
	var alternatives []string
	decide := ""
	switch {
	case g.killed && p.Joins(ev):
		sev, certainty = analyzer.Error, analyzer.Proven
	case g.killed:
		certainty = analyzer.Likely
		alternatives = []string{"the container's process ends on its own with status 0"}
		decide = fmt.Sprintf("# the Unhealthy and Killing events\n%s describe pod %s", kubectlIn(pod.Namespace), shq.Quote(pod.Name))
	default:
		alternatives = []string{
			"the liveness probe fails while the container works (a wrong port, a check that fails, a timeout too short)",
			"the container crashes on its own", "the node kills it (OOMKilled)",
		}
		decide = fmt.Sprintf("# Last State, exit code, events\n%s describe pod %s", kubectlIn(pod.Namespace), shq.Quote(pod.Name))
	}
	return analyzer.Finding{
		Subject:      subject("object", object("Pod", pod.Namespace, pod.Name), "container", c.Name),
		Severity:     sev,
		Certainty:    certainty,
		Supports:     supports,
		Contradicts:  contradicts,
		Alternatives: alternatives,
		Decide:       decide,
		Facts:        facts,
		Evidence:     ev,
	}
}

// probeWords words the finding of g, as judgeProbeLoop judged it.
func probeWords(g *probeLoop) (title, summary, cause, fix string) {
	pod, c, restarts, wrongPort := g.pod, g.c, g.restarts, g.wrongPort
	pr := c.LivenessProbe
	window, failing, interval, threshold := probeTiming(pr)
	name := objectName(pod.Namespace, pod.Name)
	summary = fmt.Sprintf("Container %s of %s restarted %d times. Its liveness probe (%s) waits %s, then allows %d failed "+
		"checks %s apart (%s): a probe that always fails kills the container about %s after each start.",
		c.Name, name, restarts, probeCheck(pr), time.Duration(pr.InitialDelaySeconds)*time.Second,
		threshold, interval, failing, window)
	if g.killed {
		summary += " The runs end cleanly (exit status 0, a terminated signal, or the kubelet restarting it): the container " +
			"is stopped from outside, not crashing."
	}
	if len(g.lifetimes) > 0 {
		summary += fmt.Sprintf(" A run seen in its log lasted %s.", strings.Join(g.lifetimes, ", "))
	}
	cause = "The liveness probe fails while the container works: the check targets the wrong address or port, " +
		"runs a command that fails in this image, or needs longer than timeoutSeconds. The kubelet then kills the " +
		"container after failureThreshold failures, and the next run meets the same probe."
	if wrongPort != "" {
		summary += " " + wrongPort
		cause = wrongPort + " Every check fails, and the kubelet kills the container after failureThreshold failures."
	}
	title = fmt.Sprintf("%s restarted %d times by its liveness probe every ~%s", name, restarts, window.Round(time.Second))
	if !g.killed { // what stops it is not shown: the certainty is Unknown
		title = fmt.Sprintf("%s restarted %d times; it has a liveness probe, what stops it is not shown", name, restarts)
		cause = "Not shown: the restarts and a liveness probe are in the bundle, but nothing says whether the kubelet " +
			"kills the container or it crashes."
		if wrongPort != "" {
			cause += " " + wrongPort
		}
	}
	fix = fmt.Sprintf("Run the probe by hand in the container (`%s exec %s -c %s -- %s`) and fix what fails; "+
		"raise timeoutSeconds if the check is slow; prefer an HTTP probe of the component's health endpoint "+
		"(for etcd: httpGet /health on the metrics port, as current kubeadm writes it).",
		kubectlIn(pod.Namespace), pod.Name, c.Name, probeCommand(pr))
	return title, summary, cause, fix
}

// probePort returns the port an httpGet or tcpSocket probe checks, "" for
// other checks or named ports.
func probePort(pr *corev1.Probe) string {
	switch {
	case pr.HTTPGet != nil && pr.HTTPGet.Port.IntValue() > 0:
		return pr.HTTPGet.Port.String()
	case pr.TCPSocket != nil && pr.TCPSocket.Port.IntValue() > 0:
		return pr.TCPSocket.Port.String()
	}
	return ""
}

var listenURLPortRe = lazyre.New(`:(\d+)(?:/|,|$)`)

// listenPorts reads the ports a container listens on from its flags.
func listenPorts(c *corev1.Container) []string {
	var out []string
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(name, "listen-") && strings.HasSuffix(name, "-urls"):
			for _, m := range listenURLPortRe.FindAllStringSubmatch(value, -1) {
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
		case name == "port" || name == "secure-port" || name == "healthz-port":
			if !slices.Contains(out, value) {
				out = append(out, value)
			}
		}
	}
	return out
}

func probeCommand(pr *corev1.Probe) string {
	if pr.Exec != nil {
		return shq.Command(pr.Exec.Command...)
	}
	return "CHECK"
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// firstLogOfFile returns the first timed event of file among events.
func firstLogOfFile(events []model.LogEvent, file string) *model.LogEvent {
	for i := range events {
		if events[i].Pos.File == file && !events[i].Time.IsZero() {
			return &events[i]
		}
	}
	return nil
}

// workloadOf is the name a Pod's controller gives its Pods, without the
// ReplicaSet's hash and the Pod's suffix ("web-74c9f6b5d8-k2pnz" is "web"),
// or without the suffix alone ("web-k2pnz", a DaemonSet's Pod).
func workloadOf(pod string) string {
	parts := strings.Split(pod, "-")
	switch {
	case len(parts) > 2 && len(parts[len(parts)-2]) >= 8 && len(parts[len(parts)-1]) == 5:
		return strings.Join(parts[:len(parts)-2], "-")
	case len(parts) > 1 && len(parts[len(parts)-1]) == 5:
		return strings.Join(parts[:len(parts)-1], "-")
	}
	return pod
}

// judgeProbeEvents judges a restarted Pod whose spec the bundle does not
// hold (a kubectl get pods row) from the liveness probe failures the events
// show for Pods of its workload: likely when the probe timed out (the check
// outlasts its timeout while the app runs), unknown otherwise; nothing
// without liveness failures.
func judgeProbeEvents(s *model.Snapshot, pod *model.Pod, restarts int32) (analyzer.Finding, bool) {
	name, wl := objectName(pod.Namespace, pod.Name), workloadOf(pod.Name)
	var evs []model.Event
	timedOut := false
	for _, e := range s.Kube.Events {
		o := e.InvolvedObject
		if e.Reason != "Unhealthy" || !strings.HasPrefix(e.Message, "Liveness probe failed") || o.Kind != "" && o.Kind != "Pod" ||
			workloadOf(o.Name) != wl || pod.Namespace != "" && o.Namespace != "" && o.Namespace != pod.Namespace {
			continue
		}
		evs = append(evs, e)
		timedOut = timedOut || strings.Contains(e.Message, "timed out") || strings.Contains(e.Message, "context deadline exceeded")
	}
	if len(evs) == 0 {
		return analyzer.Finding{}, false
	}
	last := evs[len(evs)-1]
	for _, e := range evs {
		if strings.Contains(e.Message, "timed out") || strings.Contains(e.Message, "deadline exceeded") {
			last = e
		}
	}
	f := analyzer.Finding{
		Subject:   subject("object", object("Pod", pod.Namespace, pod.Name)),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Unknown,
		Supports: []string{fmt.Sprintf("%s: %s restarted %d times", pod.Source.Pos, name, restarts),
			fmt.Sprintf("%s: event %s of Pod %s: %s", last.Source.Pos, last.Reason, last.InvolvedObject.Name, last.Message)},
		Evidence: []analyzer.Evidence{{Pos: pod.Source.Pos, Note: fmt.Sprintf("%d restarts", restarts)},
			{Pos: last.Source.Pos, Note: fmt.Sprintf("event %s: %s", last.Reason, last.Message)}},
		Contradicts: []string{"the Pod's spec is not in the bundle: its liveness probe's timeout and check are not shown"},
		Alternatives: []string{"the container hangs or crashes on its own, and the probe only sees it",
			"the node kills it (OOMKilled)"},
		Decide: fmt.Sprintf("# the probe's timeout against how long the check takes, and the container's Last State\n"+
			"%s get pod %s -o jsonpath='{.spec.containers[*].livenessProbe}'\n%s describe pod %s",
			kubectlIn(pod.Namespace), shq.Quote(pod.Name), kubectlIn(pod.Namespace), shq.Quote(pod.Name)),
		Facts: map[string]any{"pod": name, "restarts": restarts, "probe_events": len(evs), "probe_timed_out": timedOut},
		Title: fmt.Sprintf("Pod %s restarted %d times, and its workload's liveness probe fails", name, restarts),
		Summary: fmt.Sprintf("%s restarted %d times; the events show the liveness probe of Pods of %s failing (%s). The "+
			"kubelet restarts a container whose liveness probe fails.", name, restarts, wl, last.Message),
		Cause: "Not shown: the liveness probe fails, but whether the container was healthy is not in the bundle.",
		Fix: "Run the probe's check by hand in the container and time it; give the probe the timeoutSeconds (and " +
			"failureThreshold) the check needs, or a lighter check.",
	}
	if timedOut {
		f.Certainty = analyzer.Likely
		f.Alternatives = f.Alternatives[:1]
		f.Title = fmt.Sprintf("The liveness probe of %s times out: the kubelet restarted it %d times", name, restarts)
		f.Cause = "The liveness probe's check takes longer than its timeout (timeoutSeconds, 1 second by default), so " +
			"the kubelet counts a running container as failing and restarts it."
	}
	return f, true
}
