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

# iptables-backend-split: both backends of one network namespace dumped as a
# node's bundle holds them (iptables-nft-save with 2>&1, as its warning
# goes to standard error).
b=iptables-backend-split
split_dumps() { # split_dumps DIR COMMANDS [legacy|nft|both]: COMMANDS in a new netns, then the dumps
	local dir=$1 cmds=$2 which=${3:-both}
	mkdir -p "$dir"
	unshare -n sh -c "$cmds
		if [ $which != nft ]; then iptables-legacy-save >'$dir/iptables-legacy-save.txt'; fi
		if [ $which != legacy ]; then iptables-nft-save >'$dir/iptables-nft-save.txt' 2>&1; fi"
}
kube_proxy='iptables -t nat -N KUBE-SERVICES
	iptables -t nat -N KUBE-SVC-NMSPLIT00000001
	iptables -t nat -N KUBE-SEP-NMSPLIT00000001
	iptables -t nat -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
	iptables -t nat -A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
	iptables -t nat -A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-NMSPLIT00000001
	iptables -t nat -A KUBE-SVC-NMSPLIT00000001 -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.5:53" -j KUBE-SEP-NMSPLIT00000001
	iptables -t nat -A KUBE-SEP-NMSPLIT00000001 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.5:53'
calico='iptables -N cali-FORWARD
	iptables -A FORWARD -m comment --comment "cali:wUHhoiAYhphO9Mso" -j cali-FORWARD
	iptables -A cali-FORWARD -m comment --comment "cali:vjrMJCRpqwy5oRoX" -m mark --mark 0x10000/0x10000 -j ACCEPT
	iptables -A cali-FORWARD -m comment --comment "cali:A_sPAO0mcxbT9mOV" -m mark --mark 0x0/0x10000 -j MARK --set-xmark 0x0/0xe0000'
# kube-proxy writes with iptables-legacy, Calico with iptables-nft.
split_dumps $b/hit-kube-proxy-legacy-calico-nft "$(echo "$kube_proxy" | sed 's/^\s*iptables /iptables-legacy /')
	$(echo "$calico" | sed 's/^\s*iptables /iptables-nft /')"
# Docker (legacy) set FORWARD's policy to DROP; kube-proxy writes with iptables-nft.
split_dumps $b/hit-docker-drop-legacy "iptables-legacy -N DOCKER-USER
	iptables-legacy -P FORWARD DROP
	iptables-legacy -A FORWARD -j DOCKER-USER
	$(echo "$kube_proxy" | sed 's/^\s*iptables /iptables-nft /')"
# kube-proxy's Service rules in both: a stale DNAT left in legacy.
copy $b/hit-kube-proxy-in-both real/local/iptables/local_legacy-and-nft-save-side-by-side_nat.txt
# Only iptables-nft's dump, which warns that legacy tables are present.
copy $b/hit-legacy-unseen real/local/iptables/local_iptables-nft-save-c_with-legacy-warning.txt
# The legacy nat table exists (listed once) but holds no rule: the warning
# without the split.
split_dumps $b/miss-empty-legacy "iptables-legacy -t nat -L >/dev/null
	$(echo "$kube_proxy" | sed 's/^\s*iptables /iptables-nft /')"
split_dumps $b/miss-nft-only "$(echo "$kube_proxy" | sed 's/^\s*iptables /iptables-nft /')
	$(echo "$calico" | sed 's/^\s*iptables /iptables-nft /')" nft
split_dumps $b/miss-legacy-only "$(echo "$kube_proxy" | sed 's/^\s*iptables /iptables-legacy /')" legacy
# Dumps of two network namespaces, unnamed: the legacy one of the first, and
# the nft one of the second (no legacy tables there, so no warning).
split_dumps $b/hit-two-namespaces-unnamed "$(echo "$kube_proxy" | sed 's/^\s*iptables /iptables-legacy /')" legacy
split_dumps $b/hit-two-namespaces-unnamed "$(echo "$calico" | sed 's/^\s*iptables /iptables-nft /')" nft
# rp-filter-drop: the incident made by fixtures/scenarios/rp-filter-drop.sh,
# with parts of its evidence left out.
r=rp-filter-drop
ri=incidents/rp-filter-drop
copy $r/hit-strict $ri/{capture.pcap,ip-addr.txt,ip-route.txt,sysctl.txt}
# Without ip addr: the interface of the server's address is the one of the
# connected route whose src it is.
copy $r/hit-routes-only $ri/{capture.pcap,ip-route.txt,sysctl.txt}
# Only the first line of the node's sysctl output: what
# `sysctl net.ipv4.conf.all.rp_filter` prints.
copy $r/hit-likely-all-only $ri/{capture.pcap,ip-addr.txt,ip-route.txt}
head -n 1 "$fx/$ri/sysctl.txt" >$r/hit-likely-all-only/sysctl.txt
copy $r/hit-symptom-no-sysctl $ri/{capture.pcap,ip-addr.txt,ip-route.txt}
copy $r/miss-loose incidents/rp-filter-drop-loose/{capture.pcap,ip-addr.txt,ip-route.txt,sysctl.txt}
copy $r/miss-control incidents/rp-filter-drop-control/{capture.pcap,ip-addr.txt,ip-route.txt,sysctl.txt}
# The capture alone: no route says the path is asymmetric.
copy $r/miss-capture-only $ri/capture.pcap

# snat-port-exhaustion: the incident made by fixtures/scenarios/snat-port-exhaustion.sh,
# with parts of its evidence left out, its control and a variant where the
# server drops SYNs beyond 10 connections (the same symptom, another cause).
sn=snat-port-exhaustion
si=incidents/snat-port-exhaustion
copy $sn/hit-proven $si/{capture.pcap,conntrack-L.txt,conntrack-S.txt,iptables-save.txt}
copy $sn/hit-likely-no-conntrack-list $si/{capture.pcap,conntrack-S.txt,iptables-save.txt}
copy $sn/hit-likely-capture-only $si/{capture.pcap,iptables-save.txt}
copy $sn/hit-full-no-failures $si/{conntrack-L.txt,iptables-save.txt}
copy $sn/miss-no-snat-rule $si/{capture.pcap,conntrack-L.txt,conntrack-S.txt}
copy $sn/miss-control incidents/snat-port-exhaustion-control/{capture.pcap,conntrack-L.txt,conntrack-S.txt,iptables-save.txt}
copy $sn/miss-server-limit incidents/snat-port-exhaustion-server-limit/{capture.pcap,conntrack-L.txt,conntrack-S.txt,iptables-save.txt}

# network-policy-deny: the incident made by fixtures/scenarios/network-policy-deny.sh,
# its control, and the variant whose SYNs are dropped while the policies allow them.
np=network-policy-deny
copy $np/hit-denied incidents/network-policy-deny/{capture.pcap,kube.json}
copy $np/miss-control incidents/network-policy-deny-control/{capture.pcap,kube.json}
copy $np/miss-allowed-other-cause incidents/network-policy-deny-other-cause/{capture.pcap,kube.json}
# The incident's objects without the Namespaces (kubectl get pods,networkpolicies):
# the namespaceSelector of the nearest rule cannot be judged.
mkdir -p $np/hit-likely-no-namespaces
cp "$fx/incidents/network-policy-deny/capture.pcap" $np/hit-likely-no-namespaces/
python3 - "$fx/incidents/network-policy-deny/kube.json" >$np/hit-likely-no-namespaces/kube.json <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l["items"] = [o for o in l["items"] if o["kind"] != "Namespace"]
print(json.dumps(l, indent=4, sort_keys=True))
PY
# The incident's objects without the NetworkPolicies: nothing isolates the Pods.
mkdir -p $np/miss-no-policies
cp "$fx/incidents/network-policy-deny/capture.pcap" $np/miss-no-policies/
python3 - "$fx/incidents/network-policy-deny/kube.json" >$np/miss-no-policies/kube.json <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l["items"] = [o for o in l["items"] if o["kind"] != "NetworkPolicy"]
print(json.dumps(l, indent=4, sort_keys=True))
PY
# rp-filter-drop with the values from `head /proc/sys/net/ipv4/conf/*/rp_filter`.
copy $r/hit-head-dump $ri/{capture.pcap,ip-addr.txt,ip-route.txt,rp_filter-head.txt}
# rp-filter-drop: Felix's refusal of a loose filter, from real logs
# (fixtures/real/incident-evidence), alone and with the sysctl output of a
# network namespace of this machine set loose, or set strict since.
copy $r/hit-felix-go-wrapped real/incident-evidence/image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log
copy $r/hit-felix-python-traceback real/incident-evidence/calicoctl-issue1082_felix-python-2016_rpf-loose-traceback.log
copy $r/hit-felix-sysctl-loose real/incident-evidence/image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log
unshare -n sh -c "sysctl -q -w net.ipv4.conf.all.rp_filter=2 && sysctl net.ipv4.conf.all.rp_filter" \
	>$r/hit-felix-sysctl-loose/sysctl.txt
copy $r/hit-felix-sysctl-strict real/incident-evidence/image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log
unshare -n sh -c "sysctl -q -w net.ipv4.conf.all.rp_filter=1 && sysctl net.ipv4.conf.all.rp_filter" \
	>$r/hit-felix-sysctl-strict/sysctl.txt
