#!/bin/bash
# Makes the evidence of the rules' scenario directories (see README.md):
# copies of the fixtures, and the outputs of sysctl and ss taken in network
# namespaces of this machine's kernel. Needs root (unshare -n) for those.
# The want.yaml files are written by `go test ./analyzer/rules -update`.
set -euo pipefail
cd "$(dirname "$0")"
fx=../../../fixtures

copy() { # copy DIR FILE... : fixture files into a scenario
	local dir=$1; shift
	mkdir -p "$dir"
	for f in "$@"; do cp "$fx/$f" "$dir/"; done
}

# sysctl OUT RANGE [RESERVED]: the two sysctls of a node whose kernel has
# that ephemeral range and those reserved ports.
sysctl_ports() {
	local out=$1 range=$2 reserved=${3:-}
	mkdir -p "$(dirname "$out")"
	unshare -n sh -c "sysctl -q -w net.ipv4.ip_local_port_range='$range' &&
		sysctl -q -w net.ipv4.ip_local_reserved_ports='$reserved' &&
		sysctl net.ipv4.ip_local_port_range net.ipv4.ip_local_reserved_ports" >"$out"
}

# ephemeral-nodeport-overlap
e=ephemeral-nodeport-overlap
inc=incidents/ephemeral-nodeport
copy $e/hit-ipvs-nodeports $inc/sysctl.txt $inc/kube-apiserver.yaml $inc/ipvsadm.txt $inc/services.json
sysctl_ports $e/hit-sysctl-only/sysctl.txt "1024 65000"
sysctl_ports $e/hit-partly-reserved/sysctl.txt "1024 65000" "30000-31000,32000"
sysctl_ports $e/hit-latent/sysctl.txt "1024 65000" "30000-31999"
copy $e/hit-latent incidents/vip-unannounced/service-ingress-nginx.json
copy $e/miss-control $inc-control/sysctl.txt $inc-control/kube-apiserver.yaml $inc-control/ipvsadm.txt $inc-control/services.json
sysctl_ports $e/miss-reserved-covers/sysctl.txt "1024 65000" "20000-40000"
copy $e/miss-reserved-covers $inc/kube-apiserver.yaml
sysctl_ports $e/miss-range-above-nodeports/sysctl.txt "40001 65000"
copy $e/miss-range-above-nodeports $inc/kube-apiserver.yaml
mkdir -p $e/miss-other-sysctls
unshare -n sysctl net.ipv4.tcp_tw_reuse net.ipv4.tcp_fin_timeout >$e/miss-other-sysctls/sysctl.txt
copy $e/miss-no-sysctl $inc/services.json

# synack-reset
s=synack-reset
copy $s/hit-ipvs-nodeports $inc/capture.pcap $inc/sysctl.txt $inc/kube-apiserver.yaml $inc/ipvsadm.txt $inc/services.json
copy $s/hit-capture-only $inc/capture.pcap
copy $s/hit-ports-not-owned $inc/capture.pcap incidents/vip-unannounced/service-ingress-nginx.json
copy $s/hit-seed-002-text seeds/002-synack-reset/{ipvsadm.txt,kube-apiserver-flags.txt,probe-failure.tshark.txt,svc.txt,sysctl.txt,tcpdump-lo.txt}
copy $s/miss-control $inc-control/capture.pcap $inc-control/sysctl.txt $inc-control/ipvsadm.txt $inc-control/services.json
copy $s/miss-no-capture $inc/sysctl.txt $inc/ipvsadm.txt

# stale-dnat
d=stale-dnat
sd=incidents/stale-dnat
copy $d/hit-iptables $sd/{capture.pcap,endpoints-kube-dns.json,iptables-save.txt,kube-proxy.log,service-kube-dns.json}
copy $d/hit-seed-004-text seeds/004-stale-dnat/{endpoints-count.txt,iptables-nat-kube-dns.txt,kube-proxy.log,nc-loop.txt,svc-kube-dns.txt}
mkdir -p $d/hit-nftables
cp ../../../dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt $d/hit-nftables/nft-list-ruleset.txt
# kubectl get endpoints web -o json after the Pod at 10.244.2.6 was
# replaced by one at 10.244.3.8: the rules' endpoint chain to 10.244.2.6 is
# stale, and 10.244.3.8 gets no traffic from this node.
cat >$d/hit-nftables/endpoints-web.json <<'JSON'
{
    "apiVersion": "v1",
    "kind": "Endpoints",
    "metadata": {
        "annotations": {
            "endpoints.kubernetes.io/last-change-trigger-time": "2026-11-20T09:14:02Z"
        },
        "creationTimestamp": "2026-11-18T16:40:11Z",
        "labels": {
            "app": "web"
        },
        "name": "web",
        "namespace": "default",
        "resourceVersion": "48213",
        "uid": "5b0f3f3e-2d64-4a53-9b43-6a8f1f0c2d11"
    },
    "subsets": [
        {
            "addresses": [
                {
                    "ip": "10.244.1.5",
                    "nodeName": "kind-worker",
                    "targetRef": {
                        "kind": "Pod",
                        "name": "web-7c9d8f5b6d-h2x4q",
                        "namespace": "default",
                        "uid": "0c6d2a51-7f2e-4b8e-a1d4-3e9b5c7a8f20"
                    }
                },
                {
                    "ip": "10.244.3.8",
                    "nodeName": "kind-worker3",
                    "targetRef": {
                        "kind": "Pod",
                        "name": "web-7c9d8f5b6d-q8m2z",
                        "namespace": "default",
                        "uid": "9e4b7c12-5a3d-4f6e-8b2c-1d0a9f8e7c63"
                    }
                }
            ],
            "ports": [
                {
                    "name": "http",
                    "port": 8080,
                    "protocol": "TCP"
                }
            ]
        }
    ]
}
JSON
copy $d/miss-control $sd-control/{capture.pcap,endpoints-kube-dns.json,iptables-save.txt,kube-proxy.log,service-kube-dns.json}
copy $d/miss-no-endpoints $sd/iptables-save.txt

# nodeport-collision
n=nodeport-collision
copy $n/hit-host-process $inc/services.json $inc/kube-apiserver.yaml
# haproxy listens on the NodePort 32080; kube-proxy (iptables mode) holds
# the NodePort 32443 open, which is no collision.
tmp=$(mktemp -d)
cp "$(command -v nc)" "$tmp/haproxy"
cp "$(command -v nc)" "$tmp/kube-proxy"
unshare -n sh -c "ip link set lo up
	$tmp/haproxy -l -p 32080 >/dev/null 2>&1 & h=\$!
	$tmp/kube-proxy -l -p 32443 >/dev/null 2>&1 & k=\$!
	sleep 0.5; ss -lntp; kill \$h \$k; wait" >$n/hit-host-process/ss-lntp.txt
rm -rf "$tmp"
copy $n/hit-outside-default-range $inc/services.json
copy $n/miss-in-range $inc/services.json $inc/kube-apiserver.yaml
copy $n/miss-range-by-hand $inc/services.json
# A Service restored from another cluster's backup carries the NodePort
# 32080 of traefik-ingress; the apiserver's range was narrowed since.
copy $n/hit-restored-service $inc/services.json
python3 - "$fx/$inc/services.json" >$n/hit-restored-service/services-restored.json <<'PY'
import json, sys
svc = json.load(open(sys.argv[1]))["items"][1]  # kube-system/traefik-ingress
svc["metadata"] = {"name": "traefik-ingress-restored", "namespace": "kube-system",
                   "labels": svc["metadata"].get("labels", {})}
svc["spec"]["ports"] = [p for p in svc["spec"]["ports"] if p["nodePort"] == 32080]
svc["spec"]["clusterIP"] = svc["spec"]["clusterIPs"][0] = "10.23.201.17"
json.dump(svc, sys.stdout, indent=4)
print()
PY
sed 's/--service-node-port-range=20000-40000/--service-node-port-range=20000-29999/' "$fx/$inc/kube-apiserver.yaml" \
	>$n/hit-restored-service/kube-apiserver.yaml
mkdir -p $n/miss-no-kube
cp $n/hit-host-process/ss-lntp.txt $n/miss-no-kube/

# nat-reply-untranslated (fixtures/scenarios/nat-reply-untranslated.sh)
r=nat-reply-untranslated
nr=incidents/nat-reply-untranslated
copy $r/hit-bridge-nf-off $nr/{capture.pcap,proc-sys-net-bridge.txt,iptables-save.txt}
copy $r/hit-symptom-capture-only $nr/capture.pcap
copy $r/miss-control $nr-control/{capture.pcap,proc-sys-net-bridge.txt,iptables-save.txt}
copy $r/miss-no-capture $nr/{proc-sys-net-bridge.txt,iptables-save.txt}
copy $r/hit-symptom-pod-capture $nr-pod/capture.pcap
copy $r/miss-control-pod-capture $nr-control-pod/capture.pcap
copy $s/hit-symptom-nat-untranslated $nr/{capture.pcap,proc-sys-net-bridge.txt}

# connection-skew (fixtures/scenarios/connection-skew.sh)
k=connection-skew
ks=incidents/connection-skew
copy $k/hit-stale-rules $ks/{capture.pcap,iptables-save.txt}
copy $k/miss-affinity $ks-affinity/{capture.pcap,iptables-save.txt}
copy $k/miss-control $ks-control/{capture.pcap,iptables-save.txt}
copy $k/miss-no-rules $ks/capture.pcap
# Two nodes' dumps in a kubectl cluster-info dump's layout (its nodes.json
# and kube-system/pods.json are the probe-restart-loop incident's, whose
# Nodes name the folders): the capture is judged against its own node's
# rules only.
for sc in hit-node-own-rules miss-node-own-rules; do
	copy $k/$sc incidents/probe-restart-loop/nodes.json
	mkdir -p $k/$sc/kube-system
	cp $fx/incidents/probe-restart-loop/pods-kube-system.json $k/$sc/kube-system/pods.json
done
copy $k/hit-node-own-rules/worker-1 $ks/{capture.pcap,iptables-save.txt}
copy $k/hit-node-own-rules/worker-2 $ks-during-capture/iptables-save.txt
copy $k/miss-node-own-rules/worker-1 $ks/capture.pcap $ks-during-capture/iptables-save.txt
copy $k/miss-node-own-rules/worker-2 $ks/iptables-save.txt

# syn-unanswered, syn-refused
u=syn-unanswered
copy $u/hit-symptom-capture-only captures/handshakes.pcap
copy $u/hit-service-endpoint $sd/{capture.pcap,endpoints-kube-dns.json,service-kube-dns.json}
copy $u/miss-answered-after-nat $nr/capture.pcap
copy $u/miss-control $sd-control/capture.pcap
rf=syn-refused
copy $rf/hit-symptom-capture-only captures/handshakes.pcap
copy $rf/miss-control $inc-control/capture.pcap

# icmp-unreachable, arp-flap, arp-unanswered, timewait-churn
lb=incidents/lb-conflict
vu=incidents/vip-unannounced
copy icmp-unreachable/hit-symptom-capture-only captures/handshakes.pcap
copy icmp-unreachable/hit-lb-conflict $lb/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
copy icmp-unreachable/miss-control $lb-control/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
copy arp-flap/hit-symptom-capture-only captures/arp.pcapng
copy arp-flap/hit-lb-conflict $lb/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
copy arp-flap/miss-control $lb-control/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
copy arp-unanswered/hit-vip $vu/{capture.pcap,ip-neigh.txt,service-ingress-nginx.json}
copy arp-unanswered/hit-symptom-capture-only $vu/capture.pcap
copy arp-unanswered/miss-control $vu-control/{capture.pcap,ip-neigh.txt,service-ingress-nginx.json}
copy timewait-churn/hit-seed-002 seeds/002-synack-reset/{ss-timewait.txt,sysctl.txt,ipvsadm.txt,svc.txt,kube-apiserver-flags.txt}
copy timewait-churn/hit-symptom-sockets-only seeds/002-synack-reset/ss-timewait.txt
copy timewait-churn/miss-no-sockets seeds/002-synack-reset/{sysctl.txt,ipvsadm.txt}

# mtu-blackhole (fixtures/scenarios/mtu-blackhole.sh)
mb=incidents/mtu-blackhole
copy mtu-blackhole/hit-icmp-dropped $mb/{capture.pcap,router-iptables-save.txt,router-ip6tables-save.txt}
copy mtu-blackhole/hit-symptom-capture-only $mb/capture.pcap
copy mtu-blackhole/miss-pmtud-working $mb-control/{capture.pcap,router-iptables-save.txt,router-ip6tables-save.txt}
copy mtu-blackhole/miss-handshakes captures/handshakes.pcap
copy icmp-unreachable/hit-pmtud-info $mb-control/capture.pcap
copy $u/hit-scan captures/portscan.pcap
copy $u/hit-sweep captures/sweep.pcap
copy $rf/hit-scan captures/portscan.pcap
# A capture outside the nodes' folders whose file name names its node.
sc=miss-node-from-file-name
copy $k/$sc incidents/probe-restart-loop/nodes.json
mkdir -p $k/$sc/kube-system
cp $fx/incidents/probe-restart-loop/pods-kube-system.json $k/$sc/kube-system/pods.json
cp $fx/$ks/capture.pcap $k/$sc/tcpdump-worker-1.pcap
copy $k/$sc/worker-1 $ks-during-capture/iptables-save.txt
copy $k/$sc/worker-2 $ks/iptables-save.txt
