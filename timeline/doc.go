// Package timeline builds, from the model, what the HTML report draws and
// quotes: per finding, a report.Timeline of what happened over time behind
// it (Build), and the text at each of the findings' evidence positions
// (Quotes).
//
// A finding's timeline is drawn from the records its evidence cites and
// from those its subject names, never from the whole snapshot. What is
// drawn, and which records its subject and facts name, is its rule's
// analyzer.Plot (Build is given the rules that ran; the package knows no
// rule by name); netmortem's rules draw:
//
//   - connection attempts by outcome, one lane per server, for the attempts
//     to the servers the subject names (address, vip, backend, source), from
//     the clients it names (client, destination), on its node, and those
//     whose frames the evidence cites; attempts a capture read in summary
//     mode only counted (model.EndpointStats) are drawn as one event with
//     their count. synack-reset, syn-unanswered, syn-refused,
//     nat-reply-untranslated, hairpin-drop, network-policy-deny,
//     rp-filter-drop, snat-port-exhaustion and mtu-blackhole take their
//     servers from the subject; stale-dnat from its stale targets and
//     frontends, connection-skew from its backends, ephemeral-nodeport-overlap
//     the attempts whose source port is an allocated NodePort, and
//     timewait-churn the attempts of its churning clients;
//   - ARP owners, one lane per address, with a span per owning MAC and the
//     requests nobody answered: arp-flap, arp-unanswered, ipvs-strict-arp
//     (its flapping addresses) and lb-controller-conflict (its LoadBalancer
//     addresses);
//   - ICMP errors, one lane per sender: icmp-unreachable (its sender, kind
//     and destination) and mtu-blackhole (the frag-needed errors about its
//     flow);
//   - a container's runs and restarts against its liveness probe's window
//     (the pod's status, the kubelet's Unhealthy and Killing events and
//     "Liveness probe failed" log lines, the logs the finding cites), a
//     window of failureThreshold × periodSeconds after the initial delay
//     from each run's start: probe-restart-loop;
//   - log errors against the first stale DNAT (a mark at the first failed
//     attempt to a stale target): kube-proxy-sync-errors, stale-dnat,
//     conntrack-stale-udp;
//   - for every finding, the timed log lines its evidence cites, one lane
//     per log source.
//
// A timeline has at most MaxLanes lanes and a lane at most MaxLaneEvents
// events: beyond, events of one kind close in time are folded into one
// that stands for their Count.
//
// A finding whose evidence has no time gets no timeline. The rules whose
// evidence is only dumps and objects never have one: iptables-backend-split,
// nodeport-collision, service-rule-shadowed, version-skew
// and apiserver-affinity; connection-skew without a capture, timewait-churn
// without a capture of its clients, conntrack-drops and apiserver-unreachable
// without timed log lines, rp-filter-drop without a capture or timed log
// lines, and conntrack-stale-udp without kube-proxy's errors have none
// either.
//
// Times of one timeline are of one clock: log lines without a year (klog,
// syslog) are drawn with dated records only when, given the year of those
// records, they fall within a day of them; otherwise the part of the
// timeline that came second is left out.
package timeline
