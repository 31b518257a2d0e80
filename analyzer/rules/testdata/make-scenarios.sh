#!/bin/bash
# Makes the evidence of the rules' scenario directories (see README.md):
# the use.txt files that name the fixtures (and other scenarios' files) a
# scenario shares instead of copying them, the files derived from them,
# and the outputs of sysctl and ss taken in network namespaces of this
# machine's kernel. Needs root (unshare -n) for those.
# The want.yaml files are written by `go test ./analyzer/rules -update`.
set -euo pipefail
cd "$(dirname "$0")"
fx=../../../fixtures
find . -name use.txt -delete

# use DEST SRC: the scenario that holds DEST (its file, or a directory of
# it ending in /, as cp takes them) names SRC, a file of the repository, in
# its use.txt (see package analyzertest) rather than holding a copy.
use() {
	local dest=$1 src=$2 scen name line
	scen=$(echo "$dest" | cut -d/ -f1-2)
	name=${dest#"$scen"}
	name=${name#/}
	case $dest in */) name=$name$(basename "$src") ;; esac
	[ -f "$src" ] || { echo "use: no file $src" >&2; exit 1; }
	mkdir -p "$scen"
	[ -e "$scen/use.txt" ] || echo "# The evidence of $scen kept elsewhere (written by make-scenarios.sh)." >"$scen/use.txt"
	line=$(realpath -m --relative-to="$scen" "$src")
	[ "$(basename "$src")" = "$name" ] || line="$line as $name"
	echo "$line" >>"$scen/use.txt"
}

share() { # share DIR FILE... : fixture files the scenario DIR holds, by use
	local dir=$1; shift
	for f in "$@"; do use "$dir/" "$fx/$f"; done
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
share $e/hit-ipvs-nodeports $inc/sysctl.txt $inc/kube-apiserver.yaml $inc/ipvsadm.txt $inc/services.json
sysctl_ports $e/hit-sysctl-only/sysctl.txt "1024 65000"
sysctl_ports $e/hit-partly-reserved/sysctl.txt "1024 65000" "30000-31000,32000"
sysctl_ports $e/hit-latent/sysctl.txt "1024 65000" "30000-31999"
share $e/hit-latent incidents/vip-unannounced/service-ingress-nginx.json
share $e/miss-control $inc-control/sysctl.txt $inc-control/kube-apiserver.yaml $inc-control/ipvsadm.txt $inc-control/services.json
sysctl_ports $e/miss-reserved-covers/sysctl.txt "1024 65000" "20000-40000"
share $e/miss-reserved-covers $inc/kube-apiserver.yaml
sysctl_ports $e/miss-range-above-nodeports/sysctl.txt "40001 65000"
share $e/miss-range-above-nodeports $inc/kube-apiserver.yaml
mkdir -p $e/miss-other-sysctls
unshare -n sysctl net.ipv4.tcp_tw_reuse net.ipv4.tcp_fin_timeout >$e/miss-other-sysctls/sysctl.txt
share $e/miss-no-sysctl $inc/services.json
share $e/hit-field-pipedrive field/ephemeral-nodeport-overlap--pipedrive-blog-2023/sysctl.conf

# synack-reset
s=synack-reset
share $s/hit-ipvs-nodeports $inc/capture.pcap $inc/sysctl.txt $inc/kube-apiserver.yaml $inc/ipvsadm.txt $inc/services.json
share $s/hit-capture-only $inc/capture.pcap
share $s/hit-ports-not-owned $inc/capture.pcap incidents/vip-unannounced/service-ingress-nginx.json
share $s/hit-seed-002-text seeds/002-synack-reset/{ipvsadm.txt,kube-apiserver-flags.txt,probe-failure.tshark.txt,svc.txt,sysctl.txt,tcpdump-lo.txt}
share $s/miss-control $inc-control/capture.pcap $inc-control/sysctl.txt $inc-control/ipvsadm.txt $inc-control/services.json
share $s/miss-no-capture $inc/sysctl.txt $inc/ipvsadm.txt

# stale-dnat
d=stale-dnat
sd=incidents/stale-dnat
share $d/hit-iptables $sd/{capture.pcap,endpoints-kube-dns.json,iptables-save.txt,kube-proxy.log,service-kube-dns.json}
share $d/hit-seed-004-text seeds/004-stale-dnat/{endpoints-count.txt,iptables-nat-kube-dns.txt,kube-proxy.log,nc-loop.txt,svc-kube-dns.txt}
mkdir -p $d/hit-nftables
use $d/hit-nftables/nft-list-ruleset.txt ../../../dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt
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
share $d/miss-control $sd-control/{capture.pcap,endpoints-kube-dns.json,iptables-save.txt,kube-proxy.log,service-kube-dns.json}
share $d/miss-no-endpoints $sd/iptables-save.txt

# nodeport-held-by-process
np=nodeport-held-by-process
share $np/hit-host-process $inc/services.json $inc/kube-apiserver.yaml
# haproxy listens on the NodePort 32080; kube-proxy (iptables mode) holds
# the NodePort 32443 open, which is no collision.
tmp=$(mktemp -d)
cp "$(command -v nc)" "$tmp/haproxy"
cp "$(command -v nc)" "$tmp/kube-proxy"
unshare -n sh -c "ip link set lo up
	$tmp/haproxy -l -p 32080 >/dev/null 2>&1 & h=\$!
	$tmp/kube-proxy -l -p 32443 >/dev/null 2>&1 & k=\$!
	sleep 0.5; ss -lntp; kill \$h \$k; wait" >$np/hit-host-process/ss-lntp.txt
rm -rf "$tmp"

# nodeport-collision
n=nodeport-collision
# The host process on the NodePort is nodeport-held-by-process's, not a
# second claim of the Services.
share $n/miss-host-process $inc/services.json $inc/kube-apiserver.yaml
use $n/miss-host-process/ $np/hit-host-process/ss-lntp.txt
share $n/hit-outside-default-range $inc/services.json
share $n/miss-in-range $inc/services.json $inc/kube-apiserver.yaml
share $n/miss-range-by-hand $inc/services.json
# A Service restored from another cluster's backup carries the NodePort
# 32080 of traefik-ingress; the apiserver's range was narrowed since.
share $n/hit-restored-service $inc/services.json
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
use $n/miss-no-kube/ $np/hit-host-process/ss-lntp.txt

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
# with TOOL COMMANDS: COMMANDS written for iptables, run with TOOL
# (iptables-legacy or iptables-nft).
with() { echo "$2" | sed "s/^\s*iptables /$1 /"; }
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
split_dumps $b/hit-kube-proxy-legacy-calico-nft "$(with iptables-legacy "$kube_proxy")
	$(with iptables-nft "$calico")"
# Docker (legacy) set FORWARD's policy to DROP; kube-proxy writes with iptables-nft.
split_dumps $b/hit-docker-drop-legacy "iptables-legacy -N DOCKER-USER
	iptables-legacy -P FORWARD DROP
	iptables-legacy -A FORWARD -j DOCKER-USER
	$(with iptables-nft "$kube_proxy")"
# kube-proxy's Service rules in both: a stale DNAT left in legacy.
share $b/hit-kube-proxy-in-both real/local/iptables/local_legacy-and-nft-save-side-by-side_nat.txt
# Only iptables-nft's dump, which warns that legacy tables are present.
share $b/hit-legacy-unseen real/local/iptables/local_iptables-nft-save-c_with-legacy-warning.txt
# The legacy nat table exists (listed once) but holds no rule: the warning
# without the split.
# Its nft dump is hit-docker-drop-legacy's: the same rules, the same warning.
split_dumps $b/miss-empty-legacy "iptables-legacy -t nat -L >/dev/null
	$(with iptables-nft "$kube_proxy")" legacy
use $b/miss-empty-legacy/ $b/hit-docker-drop-legacy/iptables-nft-save.txt
split_dumps $b/miss-nft-only "$(with iptables-nft "$kube_proxy")
	$(with iptables-nft "$calico")" nft
# The legacy dump of kube-proxy's rules is hit-kube-proxy-legacy-calico-nft's.
use $b/miss-legacy-only/ $b/hit-kube-proxy-legacy-calico-nft/iptables-legacy-save.txt
# Dumps of two network namespaces, unnamed: the legacy one of the first, and
# the nft one of the second (no legacy tables there, so no warning).
use $b/hit-two-namespaces-unnamed/ $b/hit-kube-proxy-legacy-calico-nft/iptables-legacy-save.txt
split_dumps $b/hit-two-namespaces-unnamed "$(with iptables-nft "$calico")" nft
# rp-filter-drop: the incident made by fixtures/scenarios/rp-filter-drop.sh,
# with parts of its evidence left out.
r=rp-filter-drop
ri=incidents/rp-filter-drop
share $r/hit-strict $ri/{capture.pcap,ip-addr.txt,ip-route.txt,sysctl.txt,nstat.txt}
# Without ip addr: the interface of the server's address is the one of the
# connected route whose src it is.
share $r/hit-routes-only $ri/{capture.pcap,ip-route.txt,sysctl.txt}
# Only the first line of the node's sysctl output: what
# `sysctl net.ipv4.conf.all.rp_filter` prints.
share $r/hit-likely-all-only $ri/{capture.pcap,ip-addr.txt,ip-route.txt}
head -n 1 "$fx/$ri/sysctl.txt" >$r/hit-likely-all-only/sysctl.txt
share $r/hit-symptom-no-sysctl $ri/{capture.pcap,ip-addr.txt,ip-route.txt}
share $r/miss-loose incidents/rp-filter-drop-loose/{capture.pcap,ip-addr.txt,ip-route.txt,sysctl.txt,nstat.txt}
share $r/miss-control incidents/rp-filter-drop-control/{capture.pcap,ip-addr.txt,ip-route.txt,sysctl.txt,nstat.txt}
# No rp_filter value, but the kernel's count of the packets the filter
# dropped (nstat -az TcpExtIPReversePathFilter): 7 in the incident, 0 in
# its loose variant, whose SYNs the filter let in.
share $r/hit-likely-nstat-no-sysctl $ri/{capture.pcap,ip-addr.txt,ip-route.txt,nstat.txt}
share $r/hit-symptom-nstat-zero incidents/rp-filter-drop-loose/{capture.pcap,ip-addr.txt,ip-route.txt,nstat.txt}
# The incident with the healthy control's counter (0), as when nstat ran on
# another node or before the SYNs: a strict filter that counted nothing is
# likely, not proven; with only all.rp_filter shown, the cause is unknown.
share $r/hit-likely-strict-nstat-zero $ri/{capture.pcap,ip-addr.txt,ip-route.txt,sysctl.txt} incidents/rp-filter-drop-control/nstat.txt
share $r/hit-symptom-all-only-nstat-zero $ri/{capture.pcap,ip-addr.txt,ip-route.txt} incidents/rp-filter-drop-control/nstat.txt
use $r/hit-symptom-all-only-nstat-zero/ $r/hit-likely-all-only/sysctl.txt
# The capture alone: no route says the path is asymmetric.
share $r/miss-capture-only $ri/capture.pcap

# snat-port-exhaustion: the incident made by fixtures/scenarios/snat-port-exhaustion.sh,
# with parts of its evidence left out, its control and a variant where the
# server drops SYNs beyond 10 connections (the same symptom, another cause).
sn=snat-port-exhaustion
si=incidents/snat-port-exhaustion
share $sn/hit-proven $si/{capture.pcap,conntrack-L.txt,conntrack-S.txt,iptables-save.txt}
share $sn/hit-likely-no-conntrack-list $si/{capture.pcap,conntrack-S.txt,iptables-save.txt}
share $sn/hit-likely-capture-only $si/{capture.pcap,iptables-save.txt}
share $sn/hit-full-no-failures $si/{conntrack-L.txt,iptables-save.txt}
share $sn/miss-no-snat-rule $si/{capture.pcap,conntrack-L.txt,conntrack-S.txt}
share $sn/miss-control incidents/snat-port-exhaustion-control/{capture.pcap,conntrack-L.txt,conntrack-S.txt,iptables-save.txt}
share $sn/miss-server-limit incidents/snat-port-exhaustion-server-limit/{capture.pcap,conntrack-L.txt,conntrack-S.txt,iptables-save.txt}

# network-policy-deny: the incident made by fixtures/scenarios/network-policy-deny.sh,
# its control, and the variant whose SYNs are dropped while the policies allow them.
np=network-policy-deny
share $np/hit-denied incidents/network-policy-deny/{capture.pcap,kube.json}
share $np/miss-control incidents/network-policy-deny-control/{capture.pcap,kube.json}
share $np/miss-allowed-other-cause incidents/network-policy-deny-other-cause/{capture.pcap,kube.json}
# The incident's objects without the Namespaces (kubectl get pods,networkpolicies):
# the namespaceSelector of the nearest rule cannot be judged.
mkdir -p $np/hit-likely-no-namespaces
use $np/hit-likely-no-namespaces/ "$fx/incidents/network-policy-deny/capture.pcap"
python3 - "$fx/incidents/network-policy-deny/kube.json" >$np/hit-likely-no-namespaces/kube.json <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l["items"] = [o for o in l["items"] if o["kind"] != "Namespace"]
print(json.dumps(l, indent=4, sort_keys=True))
PY
# The incident's objects without the NetworkPolicies: nothing isolates the Pods.
mkdir -p $np/miss-no-policies
use $np/miss-no-policies/ "$fx/incidents/network-policy-deny/capture.pcap"
python3 - "$fx/incidents/network-policy-deny/kube.json" >$np/miss-no-policies/kube.json <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l["items"] = [o for o in l["items"] if o["kind"] != "NetworkPolicy"]
print(json.dumps(l, indent=4, sort_keys=True))
PY
# rp-filter-drop with the values from `head /proc/sys/net/ipv4/conf/*/rp_filter`.
share $r/hit-head-dump $ri/{capture.pcap,ip-addr.txt,ip-route.txt,rp_filter-head.txt}
# rp-filter-drop: Felix's refusal of a loose filter, from real logs
# (fixtures/real/incident-evidence), alone and with the sysctl output of a
# network namespace of this machine set loose, or set strict since.
share $r/hit-felix-go-wrapped real/incident-evidence/image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log
share $r/hit-felix-python-traceback real/incident-evidence/calicoctl-issue1082_felix-python-2016_rpf-loose-traceback.log
share $r/hit-felix-sysctl-loose real/incident-evidence/image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log
unshare -n sh -c "sysctl -q -w net.ipv4.conf.all.rp_filter=2 && sysctl net.ipv4.conf.all.rp_filter" \
	>$r/hit-felix-sysctl-loose/sysctl.txt
share $r/hit-felix-sysctl-strict real/incident-evidence/image-builder-pr536_calico-felix-FATAL-loose-rpf_hard-wrapped.log
unshare -n sh -c "sysctl -q -w net.ipv4.conf.all.rp_filter=1 && sysctl net.ipv4.conf.all.rp_filter" \
	>$r/hit-felix-sysctl-strict/sysctl.txt
# service-rule-shadowed
r=service-rule-shadowed
rs=incidents/service-rule-shadowed
share $r/hit-node-dnat $rs/{capture.pcap,iptables-save-node1.txt,service-kubernetes.json}
share $r/hit-rules-only $rs/iptables-save-node1.txt
share $r/hit-raw-notrack $rs-raw/iptables-save.txt
share $r/hit-nft-other-table $rs-nft/nft-list-ruleset.txt
share $r/miss-control $rs-control/{capture.pcap,iptables-save-node1.txt,service-kubernetes.json}
# The symptom without the cause: the capture of connections pinned to one
# apiserver beside rules that hold no rule before kube-proxy's.
share $r/miss-pinned-without-rule $rs/capture.pcap $rs-control/{iptables-save-node1.txt,service-kubernetes.json}
share $r/miss-apiserver-affinity incidents/apiserver-affinity/{capture.pcap,iptables-save-node1.txt}
share $r/miss-stale-dnat $sd/{iptables-save.txt,service-kube-dns.json}
mkdir -p $r/miss-nftables-mode
use $r/miss-nftables-mode/nft-list-ruleset.txt ../../../dataplane/testdata/nft/kube-proxy-nodeport-list-ruleset.txt

# stale-dnat: the symptom without the cause
# Seed 004's counts and connect loop without kube-proxy's log: the rules
# and the endpoints differ in number, nothing says why.
share $d/hit-symptom-counts-only seeds/004-stale-dnat/{endpoints-count.txt,iptables-nat-kube-dns.txt,nc-loop.txt,svc-kube-dns.txt}
# The incident's failing connections to 10.244.2.7 with Endpoints that
# still list it (the Pod is there but does not answer): not stale rules.
share $d/miss-failing-endpoint-listed $sd/{capture.pcap,iptables-save.txt,kube-proxy.log,service-kube-dns.json}
python3 - "$fx/$sd/endpoints-kube-dns.json" >$d/miss-failing-endpoint-listed/endpoints-kube-dns.json <<'PY'
import json, sys
ep = json.load(open(sys.argv[1]))
addrs = ep["subsets"][0]["addresses"]
pod = dict(addrs[-1], ip="10.244.2.7", nodeName="node-c")
pod["targetRef"] = dict(pod["targetRef"], name="coredns-5d78c9869d-x7k2p", uid="3f9a2c71-0b4e-4d8a-9c55-7e1d2f6a8b90")
addrs.append(pod)
json.dump(ep, sys.stdout, indent=4)
print()
PY

# nodeport-held-by-process: the symptom without the cause
# haproxy listens on 32080, a port of the NodePort range, but no Service
# has it (ingress-nginx's NodePorts are 31080 and 31443).
nh=nodeport-held-by-process
share $nh/miss-listener-not-a-nodeport incidents/vip-unannounced/service-ingress-nginx.json
use $nh/miss-listener-not-a-nodeport/ $nh/hit-host-process/ss-lntp.txt

# ephemeral-nodeport-overlap: the symptom without the cause
# The incident's SYN/ACKs reset on source ports that are NodePorts, beside
# the control node's sysctls (ephemeral ports 32768-60999, the NodePort range
# reserved): the ranges do not overlap.
share $e/miss-resets-ranges-apart $inc/{capture.pcap,ipvsadm.txt,services.json} $inc-control/sysctl.txt

# apiserver-affinity
a=apiserver-affinity
af=incidents/apiserver-affinity
share $a/hit-incident $af/{capture.pcap,componentstatuses.json,iptables-save-node1.txt,leases-kube-system.json,ss-lntp.txt}
share $a/hit-seed-000-text seeds/000-apiserver-affinity/{cs.txt,describe-endpoints.txt,docker-ps.txt,iptables-nat.txt,netstat.txt,tcpdump-syn-6443.txt}
share $a/hit-leases-only $af/{componentstatuses.json,leases-kube-system.json}
# The symptom without the cause: ComponentStatus refused, nothing says where
# the components run.
share $a/hit-symptom-componentstatus-only $af/componentstatuses.json
# node1's connections to the kubernetes Service pinned to node3's apiserver
# by a rule outside kube-proxy's chains, beside the ComponentStatus answer.
share $a/hit-pinned-by-rule $rs/{capture.pcap,iptables-save-node1.txt,service-kubernetes.json} $af/{componentstatuses.json,leases-kube-system.json}
share $a/miss-control $af-control/{capture.pcap,componentstatuses.json,iptables-save-node1.txt,leases-kube-system.json,ss-lntp.txt}

# version-skew
v=version-skew
share $v/hit-seed-001-nodes seeds/001-probe-restart-loop/nodes.txt
share $v/hit-incident incidents/probe-restart-loop/{nodes.json,pods-kube-system.json}
# The seed's nodes beside an apiserver manifest whose image is v1.11.5:
# three kubelets are newer than the apiserver.
share $v/hit-kubelet-newer seeds/001-probe-restart-loop/nodes.txt
sed 's#kube-apiserver:v1.24.6#kube-apiserver:v1.11.5#' "$fx/$inc/kube-apiserver.yaml" >$v/hit-kubelet-newer/kube-apiserver.yaml
share $v/miss-control incidents/probe-restart-loop-control/nodes.json
# The symptom without the cause: versions that differ in the patch only.
mkdir -p $v/miss-patch-versions
sed 's/v1\.11\.3$/v1.12.3/' "$fx/seeds/001-probe-restart-loop/nodes.txt" >$v/miss-patch-versions/nodes.txt
# kubernetes#127316: the upgraded control-plane node runs a newer kubelet
# than the other nodes; the way forward is the apiservers, not a downgrade.
share $v/hit-upgrade-under-way field/version-skew--k8s-127316/kubectl-get-node.txt

# kube-proxy-sync-errors
k=kube-proxy-sync-errors
share $k/hit-stale-dnat $sd/{kube-proxy.log,iptables-save.txt,endpoints-kube-dns.json,service-kube-dns.json}
# The symptom without the cause: the failures alone, which name no reason.
share $k/hit-symptom-seed-004-log seeds/004-stale-dnat/kube-proxy.log
# The failures beside rules that still match the endpoints.
share $k/hit-rules-in-sync $sd/kube-proxy.log $sd-control/{iptables-save.txt,endpoints-kube-dns.json,service-kube-dns.json}
share $k/miss-control $sd-control/{kube-proxy.log,iptables-save.txt,endpoints-kube-dns.json}

# probe-restart-loop
pr=probe-restart-loop
share $pr/hit-incident incidents/probe-restart-loop/{etcd.log,etcd.yaml,events-kube-system.json,pods-kube-system.json}
share $pr/hit-seed-001-text seeds/001-probe-restart-loop/{docker-ps-a.txt,etcd.log,etcd.yaml,kubelet.log,pods.txt}
# The Pod's status alone says its last run ended with status 0.
share $pr/hit-status-only incidents/probe-restart-loop/{etcd.yaml,pods-kube-system.json}
# The symptom without the cause: 183 restarts and a liveness probe, nothing
# about how the runs end.
share $pr/hit-symptom-restarts-only seeds/001-probe-restart-loop/{etcd.yaml,pods.txt}
share $pr/miss-control incidents/probe-restart-loop-control/{etcd.yaml,pods-kube-system.json}
# The seed's table with etcd restarted twice: too few to call a loop.
share $pr/miss-few-restarts seeds/001-probe-restart-loop/etcd.yaml
sed 's/^\(etcd-antidote-controller-4m3j 1\/1 Running\) 183 /\1 2 /' "$fx/seeds/001-probe-restart-loop/pods.txt" >$pr/miss-few-restarts/pods.txt

# lb-controller-conflict
l=lb-controller-conflict
lb=incidents/lb-conflict
share $l/hit-incident $lb/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,metallb-controller.log,service-ingress-nginx.json}
share $l/hit-seed-003-text seeds/003-lb-controller-conflict/{ingress-nginx-controller.log,ingress.txt,ip-neigh-after.txt,ip-neigh-before.txt,kube-vip-settings.yml,metallb-controller.log,tcpdump-icmp-redirect.txt,tcpdump-icmp-unreachable.txt}
share $l/hit-marks-only $lb/service-ingress-nginx.json
# The symptom without the cause: the VIP changes ARP owner in the capture,
# but the Service and the log show MetalLB alone.
share $l/miss-vip-flaps-one-controller $lb/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt} $lb-control/{metallb-controller.log,service-ingress-nginx.json}
share $l/miss-control $lb-control/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,metallb-controller.log,service-ingress-nginx.json}
# Seed 003's inventory with kube-vip's services mode on, beside MetalLB's
# log rewriting Services: both controllers at work.
share $l/hit-controllers-services-on seeds/003-lb-controller-conflict/metallb-controller.log
sed 's/^kube_vip_services_enabled: false/kube_vip_services_enabled: true/' \
	"$fx/seeds/003-lb-controller-conflict/kube-vip-settings.yml" >$l/hit-controllers-services-on/kube-vip-settings.yml

# apiserver-unreachable
# Published logs kept in fixtures/real (its README gives their sources:
# the troubleshoot project's test bundle, traefik's previous log;
# inquisitivefrog/kubernetes, CoreDNS timing out on 10.96.0.1) and
# parse/testdata/logs (CoreDNS refused on 127.0.0.1:6443).
u=apiserver-unreachable
traefik=$fx/real/kubectl-logs/troubleshoot-testdata_traefik-previous-log_failed-to-watch-io-timeout.log
# endpoints_kubernetes PORT IP...: kubectl get endpoints kubernetes -o json
# of a cluster whose apiservers are IP...
endpoints_kubernetes() {
	python3 - "$@" <<'PY'
import json, sys
port, ips = int(sys.argv[1]), sys.argv[2:]
ep = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {
    "creationTimestamp": "2026-11-02T08:41:17Z",
    "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
    "name": "kubernetes", "namespace": "default", "resourceVersion": "203",
    "uid": "1c6b0a4d-3e2f-4f7a-9d85-6b2e0c9a7f14"}}
if ips:
    ep["subsets"] = [{"addresses": [{"ip": ip} for ip in ips],
                      "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]
json.dump(ep, sys.stdout, indent=4)
print()
PY
}
mkdir -p $u/hit-symptom-traefik-timeout $u/hit-stale-target $u/hit-rules-match $u/hit-no-rule $u/hit-ipvs-stale-target \
	$u/hit-no-endpoints $u/hit-refused-apiserver-address $u/miss-steady-kube-proxy
use $u/hit-symptom-traefik-timeout/traefik.log "$traefik"
# The k3s Service beside node1's real nat table of the apiserver-affinity
# incident (10.43.0.1:443 to 10.150.79.149-151).
for sc in hit-stale-target hit-rules-match hit-no-rule; do
	use $u/$sc/traefik.log "$traefik"
	use $u/$sc/ $fx/incidents/service-rule-shadowed/service-kubernetes.json
done
use $u/hit-stale-target/ $fx/incidents/apiserver-affinity/iptables-save-node1.txt
endpoints_kubernetes 6443 10.150.79.149 10.150.79.150 >$u/hit-stale-target/endpoints-kubernetes.json
use $u/hit-rules-match/ $fx/incidents/apiserver-affinity/iptables-save-node1.txt
endpoints_kubernetes 6443 10.150.79.149 10.150.79.150 10.150.79.151 >$u/hit-rules-match/endpoints-kubernetes.json
# A k3s node's nat table with kube-dns's three ports and no rule for the
# kubernetes Service, loaded with iptables-restore in a namespace and saved.
unshare -n sh -c 'iptables-restore && iptables-save -t nat' <<'NAT' | grep -v '^#' >$u/hit-no-rule/iptables-save.txt
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
:KUBE-SVC-ERIFXISQEP7F7OF4 - [0:0]
:KUBE-SVC-JD5MR3NA4I4DYORP - [0:0]
:KUBE-SEP-IT2ZTR26TO4XFPTO - [0:0]
:KUBE-SEP-YIL6JZP7A3QYXJU2 - [0:0]
:KUBE-SEP-ZP3FB6NMPNCO4VBJ - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.43.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SERVICES -d 10.43.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp cluster IP" -m tcp --dport 53 -j KUBE-SVC-ERIFXISQEP7F7OF4
-A KUBE-SERVICES -d 10.43.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:metrics cluster IP" -m tcp --dport 9153 -j KUBE-SVC-JD5MR3NA4I4DYORP
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.42.0.4:53" -j KUBE-SEP-IT2ZTR26TO4XFPTO
-A KUBE-SVC-ERIFXISQEP7F7OF4 -m comment --comment "kube-system/kube-dns:dns-tcp -> 10.42.0.4:53" -j KUBE-SEP-YIL6JZP7A3QYXJU2
-A KUBE-SVC-JD5MR3NA4I4DYORP -m comment --comment "kube-system/kube-dns:metrics -> 10.42.0.4:9153" -j KUBE-SEP-ZP3FB6NMPNCO4VBJ
-A KUBE-SEP-IT2ZTR26TO4XFPTO -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.42.0.4:53
-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp" -m tcp -j DNAT --to-destination 10.42.0.4:53
-A KUBE-SEP-ZP3FB6NMPNCO4VBJ -p tcp -m comment --comment "kube-system/kube-dns:metrics" -m tcp -j DNAT --to-destination 10.42.0.4:9153
COMMIT
NAT
endpoints_kubernetes 6443 10.150.79.149 >$u/hit-no-rule/endpoints-kubernetes.json
# IPVS: the ephemeral-nodeport incident's real ipvsadm -Ln sends 10.23.0.1:443
# to three apiservers; the traefik log's address is moved to that range.
use $u/hit-ipvs-stale-target/ $fx/$inc/ipvsadm.txt
sed 's/10\.43\.0\.1/10.23.0.1/g' "$traefik" >$u/hit-ipvs-stale-target/traefik.log
endpoints_kubernetes 6443 10.10.85.231 10.10.85.232 >$u/hit-ipvs-stale-target/endpoints-kubernetes.json
# CoreDNS timing out on 10.96.0.1 while the kubernetes Service has no endpoints.
use $u/hit-no-endpoints/coredns.log $fx/real/kubectl-logs/inquisitivefrog_kubectl-logs-coredns_failed-to-list-10.96.0.1-io-timeout.txt
sed 's/10\.43\.0\.1/10.96.0.1/g' $fx/incidents/service-rule-shadowed/service-kubernetes.json >$u/hit-no-endpoints/service-kubernetes.json
endpoints_kubernetes 6443 >$u/hit-no-endpoints/endpoints-kubernetes.json
use $u/hit-refused-apiserver-address/ ../../../parse/testdata/logs/coredns-1.11.1.log
use $u/miss-steady-kube-proxy/kube-proxy.log $fx/real/kubectl-logs/kubernetes-pr90031_kube-proxy-steady-state-log_7-digit-tid.log

# conntrack-drops
# Counters and kernel lines of parse/testdata (conntrack, logs; their
# READMEs say how they were made), and an application's DNS lookups timing
# out: dnslookup.go.txt run in a namespace whose DNS server (10.96.0.10)
# drops the queries.
c=conntrack-drops
pt=../../../parse/testdata
mkdir -p $c/hit-insert-failed $c/hit-insert-failed-dns-timeouts $c/hit-table-full $c/hit-kernel-log-only \
	$c/hit-kernel-log-and-counters $c/miss-races-resolved $c/miss-idle $c/miss-dns-timeouts-no-drops
use $c/hit-insert-failed/conntrack-S.txt $pt/conntrack/conntrack-S-insert-failed.txt
use $c/hit-insert-failed-dns-timeouts/conntrack-S.txt $pt/conntrack/conntrack-S-insert-failed.txt
tmp=$(mktemp -d)
cp $c/dnslookup.go.txt "$tmp/main.go"
(cd "$tmp" && printf 'module dnslookup\n\ngo 1.26\n' >go.mod && go build -o dnslookup .)
unshare -n sh -c "ip link set lo up; ip addr add 10.96.0.10/32 dev lo; iptables -A INPUT -p udp --dport 53 -j DROP
	$tmp/dnslookup 10.96.0.10:53 api.example.com kubernetes.default.svc.cluster.local" >$c/hit-insert-failed-dns-timeouts/app.log
use $c/miss-dns-timeouts-no-drops/ $c/hit-insert-failed-dns-timeouts/app.log
use $c/miss-dns-timeouts-no-drops/conntrack-S.txt $pt/conntrack/conntrack-S-races.txt
rm -rf "$tmp"
use $c/hit-table-full/nf_conntrack.txt $pt/conntrack/proc-stat-nf_conntrack-full.txt
unshare -n sysctl net.netfilter.nf_conntrack_max >$c/hit-table-full/sysctl.txt
use $c/hit-kernel-log-only/dmesg.txt $pt/logs/dmesg-conntrack-full.txt
use $c/hit-kernel-log-and-counters/dmesg.txt $pt/logs/dmesg-conntrack-full.txt
use $c/hit-kernel-log-and-counters/nf_conntrack.txt $pt/conntrack/proc-stat-nf_conntrack-full.txt
use $c/miss-races-resolved/conntrack-S.txt $pt/conntrack/conntrack-S-races.txt
use $c/miss-idle/conntrack-S.txt $pt/conntrack/conntrack-S-idle.txt
use $c/miss-idle/nf_conntrack.txt $pt/conntrack/proc-stat-nf_conntrack.txt

# ipvs-strict-arp
# kube-proxy's ConfigMap as kubectl printed it in kubeadm issue 2205
# (fixtures/real/troubleshoot), its mode set to ipvs (strictARP is false in
# it) or, for the control, strictARP set to true; the lb-conflict
# incident's Service and MetalLB's log, and the client's neighbor
# table before and after the VIP moved.
i=ipvs-strict-arp
# The issue shows config.conf only: the ConfigMap's kubeconfig.conf and
# metadata follow as kubectl prints those of a kubeadm cluster.
cm=$(mktemp)
{ sed 1d $fx/real/troubleshoot/kubeadm-issue2205_kubectl-get-cm-kube-proxy-oyaml_dualstack-mode-empty.yaml.txt
	cat <<'CM'
    udpIdleTimeout: 0s
    winkernel:
      enableDSR: false
      networkName: ""
      sourceVip: ""
  kubeconfig.conf: |-
    apiVersion: v1
    kind: Config
    clusters:
    - cluster:
        certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
        server: https://192.168.200.60:6443
      name: default
    contexts:
    - context:
        cluster: default
        namespace: default
        user: default
      name: default
    current-context: default
    users:
    - name: default
      user:
        tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
kind: ConfigMap
metadata:
  annotations:
    kubeadm.kubernetes.io/component-config.hash: sha256:1b1e5a4d3f0c9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f40
  creationTimestamp: "2021-06-21T09:18:44Z"
  labels:
    app: kube-proxy
  name: kube-proxy
  namespace: kube-system
  resourceVersion: "244"
  uid: 8f3c1d2e-5b6a-4c7d-9e8f-0a1b2c3d4e5f
CM
} >"$cm"
mkdir -p $i/hit-neighbors-two-macs $i/hit-config-only $i/miss-strict-arp-on $i/miss-iptables-mode $i/miss-no-arp-controller
sed 's/^    mode: ""$/    mode: "ipvs"/' "$cm" >$i/hit-neighbors-two-macs/kube-proxy-cm.yaml
for sc in hit-config-only miss-no-arp-controller; do
	use $i/$sc/ $i/hit-neighbors-two-macs/kube-proxy-cm.yaml
done
sed 's/^    mode: ""$/    mode: "ipvs"/; s/^      strictARP: false$/      strictARP: true/' "$cm" >$i/miss-strict-arp-on/kube-proxy-cm.yaml
cp "$cm" $i/miss-iptables-mode/kube-proxy-cm.yaml
for sc in hit-neighbors-two-macs miss-strict-arp-on miss-iptables-mode; do
	share $i/$sc $lb/{service-ingress-nginx.json,ip-neigh-before.txt,ip-neigh-after.txt,metallb-controller.log}
done
share $i/hit-config-only $lb/{service-ingress-nginx.json,metallb-controller.log}
rm -f "$cm"
# kubespray's inventory alone (group_vars/k8s_cluster/k8s-cluster.yml and
# addons.yml as kubespray's sample writes them): IPVS, MetalLB, strict ARP
# left to its default (off).
mkdir -p $i/hit-kubespray-inventory
cat >$i/hit-kubespray-inventory/k8s-cluster.yml <<'YML'
# Kube-proxy proxyMode configuration.
# Can be ipvs, iptables
kube_proxy_mode: ipvs
kube_network_plugin: calico
# MetalLB deployment
metallb_enabled: true
metallb_speaker_enabled: true
YML

# conntrack-stale-udp
cs=conntrack-stale-udp
ci=incidents/conntrack-stale-udp
share $cs/hit-incident $ci/{conntrack-L.txt,endpoints-kube-dns.json,iptables-save.txt,service-kube-dns.json}
share $cs/hit-without-rules $ci/{conntrack-L.txt,endpoints-kube-dns.json,service-kube-dns.json}
share $cs/miss-control $ci-control/{conntrack-L.txt,endpoints-kube-dns.json,iptables-save.txt,service-kube-dns.json}
# The symptom without the cause: DNS lookups time out (the resolver's log of
# conntrack-drops), but every entry replies from the current endpoint.
share $cs/miss-dns-timeouts-entries-current $ci-control/{conntrack-L.txt,endpoints-kube-dns.json,service-kube-dns.json}
use $cs/miss-dns-timeouts-entries-current/ conntrack-drops/hit-insert-failed-dns-timeouts/app.log
# The entries without the Endpoints: not judged.
share $cs/miss-no-endpoints $ci/{conntrack-L.txt,service-kube-dns.json}
# The entries beside rules that still DNAT to the old pod, as before the
# rewrite (the incident's rules with the old target): stale-dnat's finding,
# not this rule's.
share $cs/miss-rules-stale-too $ci/{conntrack-L.txt,endpoints-kube-dns.json,service-kube-dns.json}
sed 's/10\.244\.3\.8/10.244.2.7/g; s/KUBE-SEP-7HMZFN2LQ3WUKR5D/KUBE-SEP-2Q4QFQYRYWJ3N4XQ/g' $fx/$ci/iptables-save.txt \
	>$cs/miss-rules-stale-too/iptables-save.txt

# nodeport-collision: a Service from a kubectl table without a NAMESPACE
# column (kubectl get svc, in the current namespace): the seed's
# kubernetes-dashboard row without its namespace. It is named without "/".
mkdir -p $n/hit-table-without-namespace
{ echo 'NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE'
	grep '^kube-system kubernetes-dashboard ' $fx/seeds/002-synack-reset/svc.txt | cut -d' ' -f2-; } >$n/hit-table-without-namespace/svc.txt

# service-rule-shadowed: a DNAT of the NodePort 30080 left in nat PREROUTING
share $r/hit-nodeport-leftover-dnat incidents/service-rule-shadowed-nodeport/iptables-save.txt
# The same beside the Service that owns the NodePort (kubectl get service
# web -o json, written in its exact format from the kubernetes Service's).
share $r/hit-nodeport-with-service incidents/service-rule-shadowed-nodeport/iptables-save.txt
python3 - "$fx/incidents/service-rule-shadowed/service-kubernetes.json" >$r/hit-nodeport-with-service/service-web.json <<'PY'
import json, sys
svc = json.load(open(sys.argv[1]))
svc["metadata"] = {"creationTimestamp": "2026-11-10T14:02:51Z", "labels": {"app": "web"}, "name": "web",
                   "namespace": "default", "resourceVersion": "48117", "uid": "a3c1f2e4-6b7d-4e8f-9a0b-1c2d3e4f5a6b"}
svc["spec"].update({"clusterIP": "10.96.100.10", "clusterIPs": ["10.96.100.10"], "externalTrafficPolicy": "Cluster",
                    "ports": [{"name": "http", "nodePort": 30080, "port": 80, "protocol": "TCP", "targetPort": 8080}],
                    "selector": {"app": "web"}, "type": "NodePort"})
json.dump(svc, sys.stdout, indent=4)
print()
PY
# version-skew/hit-reported-version: the nodes of hit-kubelet-newer beside a
# cluster_version.json in troubleshoot's format (cluster-info/), for an
# apiserver v1.11.5.
mkdir -p $v/hit-reported-version
share $v/hit-reported-version seeds/001-probe-restart-loop/nodes.txt
# nat-reply-untranslated (fixtures/scenarios/nat-reply-untranslated.sh)
r=nat-reply-untranslated
nr=incidents/nat-reply-untranslated
share $r/hit-bridge-nf-off $nr/{capture.pcap,proc-sys-net-bridge.txt,iptables-save.txt}
share $r/hit-symptom-capture-only $nr/capture.pcap
share $r/miss-control $nr-control/{capture.pcap,proc-sys-net-bridge.txt,iptables-save.txt}
share $r/miss-no-capture $nr/{proc-sys-net-bridge.txt,iptables-save.txt}
share $r/hit-symptom-pod-capture $nr-pod/capture.pcap
share $r/miss-control-pod-capture $nr-control-pod/capture.pcap
share $s/hit-symptom-nat-untranslated $nr/{capture.pcap,proc-sys-net-bridge.txt}

# connection-skew (fixtures/scenarios/connection-skew.sh)
k=connection-skew
ks=incidents/connection-skew
share $k/hit-stale-rules $ks/{capture.pcap,iptables-save.txt}
share $k/miss-affinity $ks-affinity/{capture.pcap,iptables-save.txt}
share $k/miss-control $ks-control/{capture.pcap,iptables-save.txt}
share $k/miss-no-rules $ks/capture.pcap
# Two nodes' dumps in a kubectl cluster-info dump's layout (its nodes.json
# and kube-system/pods.json are the probe-restart-loop incident's, whose
# Nodes name the folders): the capture is judged against its own node's
# rules only.
for sc in hit-node-own-rules miss-node-own-rules; do
	share $k/$sc incidents/probe-restart-loop/nodes.json
	mkdir -p $k/$sc/kube-system
	use $k/$sc/kube-system/pods.json $fx/incidents/probe-restart-loop/pods-kube-system.json
done
share $k/hit-node-own-rules/worker-1 $ks/{capture.pcap,iptables-save.txt}
share $k/hit-node-own-rules/worker-2 $ks-during-capture/iptables-save.txt
share $k/miss-node-own-rules/worker-1 $ks/capture.pcap $ks-during-capture/iptables-save.txt
share $k/miss-node-own-rules/worker-2 $ks/iptables-save.txt

# syn-unanswered, syn-refused
u=syn-unanswered
share $u/hit-symptom-capture-only captures/handshakes.pcap
share $u/hit-service-endpoint $sd/{capture.pcap,endpoints-kube-dns.json,service-kube-dns.json}
share $u/miss-answered-after-nat $nr/capture.pcap
share $u/miss-control $sd-control/capture.pcap
rf=syn-refused
share $rf/hit-symptom-capture-only captures/handshakes.pcap
share $rf/miss-control $inc-control/capture.pcap

# icmp-unreachable, arp-flap, arp-unanswered, timewait-churn
lb=incidents/lb-conflict
vu=incidents/vip-unannounced
share icmp-unreachable/hit-symptom-capture-only captures/handshakes.pcap
share icmp-unreachable/hit-lb-conflict $lb/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
share icmp-unreachable/miss-control $lb-control/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
share arp-flap/hit-symptom-capture-only captures/arp.pcapng
share arp-flap/hit-lb-conflict $lb/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
share arp-flap/miss-control $lb-control/{capture.pcap,ip-neigh-after.txt,ip-neigh-before.txt,service-ingress-nginx.json}
share arp-unanswered/hit-vip $vu/{capture.pcap,ip-neigh.txt,service-ingress-nginx.json}
share arp-unanswered/hit-symptom-capture-only $vu/capture.pcap
share arp-unanswered/miss-control $vu-control/{capture.pcap,ip-neigh.txt,service-ingress-nginx.json}
share timewait-churn/hit-seed-002 seeds/002-synack-reset/{ss-timewait.txt,sysctl.txt,ipvsadm.txt,svc.txt,kube-apiserver-flags.txt}
share timewait-churn/hit-symptom-sockets-only seeds/002-synack-reset/ss-timewait.txt
share timewait-churn/miss-no-sockets seeds/002-synack-reset/{sysctl.txt,ipvsadm.txt}

# server_timewait OUT N: ss -tan in a network namespace after N HTTP/1.0
# requests from 10.99.0.2 to a server on 10.99.0.1:8080 that closes each
# connection: about half the TIME-WAIT sockets are the server's, on its
# listening port, the others the client's, each on an ephemeral port.
server_timewait() {
	local out=$1 n=$2
	mkdir -p "$(dirname "$out")"
	unshare -n bash -c "ip link set lo up &&
		ip addr add 10.99.0.1/32 dev lo && ip addr add 10.99.0.2/32 dev lo &&
		{ python3 -m http.server --bind 10.99.0.1 8080 >/dev/null 2>&1 & pid=\$!; } &&
		for i in \$(seq 50); do curl -s -o /dev/null --interface 10.99.0.2 http://10.99.0.1:8080/ && break; sleep 0.1; done &&
		for i in \$(seq $n); do curl -s -o /dev/null --interface 10.99.0.2 http://10.99.0.1:8080/; done &&
		ss -tan; kill \$pid" >"$out"
}
server_timewait timewait-churn/hit-client-and-server/ss-tan.txt 150

# mtu-blackhole (fixtures/scenarios/mtu-blackhole.sh)
mb=incidents/mtu-blackhole
share mtu-blackhole/hit-icmp-dropped $mb/{capture.pcap,router-iptables-save.txt,router-ip6tables-save.txt,router-ip-d-link.txt}
share mtu-blackhole/hit-symptom-capture-only $mb/capture.pcap
share mtu-blackhole/hit-symptom-link-mtu $mb/{capture.pcap,router-ip-d-link.txt}
share mtu-blackhole/miss-pmtud-working $mb-control/{capture.pcap,router-iptables-save.txt,router-ip6tables-save.txt,router-ip-d-link.txt}
share mtu-blackhole/miss-handshakes captures/handshakes.pcap
share icmp-unreachable/hit-pmtud-info $mb-control/capture.pcap
share $u/hit-scan captures/portscan.pcap
share $u/hit-sweep captures/sweep.pcap
share $rf/hit-scan captures/portscan.pcap
# A capture outside the nodes' folders whose file name names its node.
# Copies, not use: analyzer/facts reads this scenario as a bundle directory.
sc=miss-node-from-file-name
mkdir -p $k/$sc/kube-system $k/$sc/worker-1 $k/$sc/worker-2
cp $fx/incidents/probe-restart-loop/nodes.json $k/$sc/
cp $fx/incidents/probe-restart-loop/pods-kube-system.json $k/$sc/kube-system/pods.json
cp $fx/$ks/capture.pcap $k/$sc/tcpdump-worker-1.pcap
cp $fx/$ks-during-capture/iptables-save.txt $k/$sc/worker-1/
cp $fx/$ks/iptables-save.txt $k/$sc/worker-2/

# network-policy-deny with cilium monitor's drop lines, written in the exact
# format of the real line of cilium issue #5496 (fixtures/real/incident-evidence)
# with the TCP flags cilium prints, for the incident's addresses: one line per
# SYN the capture shows (the SYN and its two retransmissions per connection,
# one flow hash per connection).
# cilium_drops OUT SPORT... : drops of 10.86.1.10:SPORT -> 10.86.2.20:8080.
cilium_drops() {
	local out=$1; shift
	local flow=$((0x5c3e91a4)) sport i
	for sport in "$@"; do
		for i in 1 2 3; do
			printf 'xx drop (Policy denied (L3)) flow 0x%x to endpoint 1846, identity 51236->40963: 10.86.1.10:%s -> 10.86.2.20:8080 tcp SYN\n' $flow "$sport"
		done
		flow=$((flow + 0x1f3b7))
	done >"$out"
}
# The incident with the drops of its two connections: three sources agree.
share $np/hit-denied-cilium-drops incidents/network-policy-deny/{capture.pcap,kube.json}
cilium_drops $np/hit-denied-cilium-drops/cilium-monitor.txt 37596 37608
# The objects and the drops, no capture: proven by the two.
share $np/hit-cilium-drops-only incidents/network-policy-deny/kube.json
use $np/hit-cilium-drops-only/ $np/hit-denied-cilium-drops/cilium-monitor.txt
# The variant whose objects admit the client while its SYNs are lost, with
# drop lines saying a policy denied them: the contradiction, cause unknown.
share $np/hit-symptom-drops-admitted incidents/network-policy-deny-other-cause/{capture.pcap,kube.json}
cilium_drops $np/hit-symptom-drops-admitted/cilium-monitor.txt 35144 56718
# The incident's objects and the kernel's lines of Felix's LOG rule
# --log-prefix "calico-drop: " (the rules of felix issue #1118 in
# fixtures/real/incident-evidence) for its SYNs, in the syslog form of the
# kernel's real lines of kubernetes issue #107965 (fixtures/real/syslog): the
# packet as nf_log prints it, arriving from the IP-in-IP tunnel (no MAC) for
# the server's workload interface, at the times of the capture's SYNs.
mkdir -p $np/hit-calico-drops-only
share $np/hit-calico-drops-only incidents/network-policy-deny/kube.json
while read -r t up id sport; do
	printf 'Nov 24 %s node-2 kernel: [%s] calico-drop: IN=tunl0 OUT=cali3f9c1e52d07 MAC= SRC=10.86.1.10 DST=10.86.2.20 LEN=60 TOS=0x00 PREC=0x00 TTL=63 ID=%s DF PROTO=TCP SPT=%s DPT=8080 WINDOW=64240 RES=0x00 SYN URGP=0\n' "$t" "$up" "$id" "$sport"
done >$np/hit-calico-drops-only/kern.log <<'T'
19:18:23 88211.409385 41203 37596
19:18:24 88212.433937 41204 37596
19:18:26 88213.462053 41205 37596
19:18:26 88214.418768 2208 37608
19:18:27 88215.441908 2209 37608
19:18:29 88216.465967 2210 37608
T
# The incident's objects beside the real drop line of cilium issue #5496,
# whose addresses no Pod of the bundle has: nothing to judge.
share $np/miss-drops-of-other-pods incidents/network-policy-deny/kube.json \
	real/incident-evidence/cilium-issue5496_monitor-drop-line_policy-denied-L3_identity.txt
# hairpin-drop (fixtures/scenarios/nat-hairpin.sh)
hp=incidents/nat-hairpin
share hairpin-drop/hit-hairpin-off $hp/{capture.pcap,bridge-d-link.txt,brport-hairpin.txt,iptables-save.txt,proc-sys-net-bridge.txt}
share hairpin-drop/hit-hairpin-files-only $hp/{capture.pcap,brport-hairpin.txt}
share hairpin-drop/hit-symptom-capture-only $hp/capture.pcap
share hairpin-drop/miss-hairpin-on-unmasqueraded $hp-nomasq/{capture.pcap,bridge-d-link.txt,brport-hairpin.txt,iptables-save.txt,proc-sys-net-bridge.txt}
share hairpin-drop/miss-control $hp-control/{capture.pcap,bridge-d-link.txt,brport-hairpin.txt,iptables-save.txt,proc-sys-net-bridge.txt}
share nat-reply-untranslated/miss-hairpin-off $hp/{capture.pcap,bridge-d-link.txt,proc-sys-net-bridge.txt}
share hairpin-drop/hit-mixed-ports $hp-mixed/{capture.pcap,bridge-d-link.txt,brport-hairpin.txt,iptables-save.txt,proc-sys-net-bridge.txt}
# apiserver-unreachable/hit-symptom-table-of-another-cluster: CoreDNS's
# timeouts beside kube-router's published ipvsadm -L, whose Services are in
# another range: no proof that no rule catches 10.96.0.1.
u=apiserver-unreachable
use $u/hit-symptom-table-of-another-cluster/coredns.log $fx/real/kubectl-logs/inquisitivefrog_kubectl-logs-coredns_failed-to-list-10.96.0.1-io-timeout.txt
use $u/hit-symptom-table-of-another-cluster/ipvsadm.txt $fx/real/ipvsadm/kube-router-issue415_ipvsadm-L_no-n_service-names-as-ports.txt
# conntrack-drops: the kernel's "table full" lines as pasted in starphleet
# #352 (fixtures/real/incident-evidence), each hard-wrapped after "table
# full,", without the paste's first line, cut before its host (a warning).
mkdir -p conntrack-drops/hit-kernel-log-wrapped
tail -n +2 "$fx/real/incident-evidence/starphleet-pr352_kernel-nf_conntrack-table-full_wrapped.log" \
	>conntrack-drops/hit-kernel-log-wrapped/kernel.log
# filter-forward-drop: the field cases' FORWARD chains and kernel lines; two
# cases' evidence together for the proven cause (firewalld's catch-all
# REJECT, and its kernel log of rejected flannel traffic); the idle DROP
# policy of parse's iptables -vL; Calico's chain before Docker's DROP
# policy; Docker's DROP without Kubernetes; a FORWARD policy ACCEPT.
fd=filter-forward-drop
ff=$fx/field/filter-forward-drop-
use $fd/hit-admin-reject-counted/ $ff-flannel-issue-1619/iptables-nvL-FORWARD.txt
use $fd/hit-firewalld-log/ $ff-flannel-issue-2055/journal.log
use $fd/hit-docker-policy-no-cni/ $ff-kube-arm-issue-62/iptables-save.txt
share $fd/hit-firewalld-reject field/filter-forward-drop--kubeadm-issue-139/{iptables-save.txt,kubectl-get-services.txt}
use $fd/hit-policy-counted-after-calico/ $ff-rke-issue-485/iptables-vL-FORWARD.txt
use $fd/hit-reject-and-kernel-log/ $ff-kubeadm-issue-139/iptables-save.txt
use $fd/hit-reject-and-kernel-log/ $ff-flannel-issue-2055/journal.log
use $fd/hit-symptom-idle-chain/ ../../../parse/testdata/iptables/iptables-vL.txt
use $fd/miss-calico-first/ $fx/seeds/004-stale-dnat/iptables-filter-forward.txt
use $fd/miss-docker-drop-without-kubernetes/ iptables-backend-split/hit-docker-drop-legacy/iptables-legacy-save.txt
use $fd/miss-policy-accept/ iptables-backend-split/hit-kube-proxy-legacy-calico-nft/iptables-nft-save.txt
# ipvs-stale-realserver: the field cases' ipvsadm listings; the TCP case's
# listing with its weight-0 real server draining (no active connection,
# fewer entries than the server in use); a listing without weight 0.
iv=ipvs-stale-realserver
ivf=$fx/field/ipvs-stale-realserver-
share $iv/hit-udp-entry-refreshed field/ipvs-stale-realserver--k8s-issue-76664/{ipvsadm-Ln.txt,ipvsadm-Lnc.txt}
use $iv/hit-tcp-weight-0-active/ $ivf-k8s-issue-81775/ipvsadm-Ln.txt
mkdir -p $iv/miss-tcp-draining
sed 's/Masq    0      12         13917/Masq    0      0          13/' $ivf-k8s-issue-81775/ipvsadm-Ln.txt >$iv/miss-tcp-draining/ipvsadm-Ln.txt
use $iv/miss-all-weighted/ $fx/incidents/ephemeral-nodeport-control/ipvsadm.txt
# hit-proven-endpoints: 81775's listing moved onto the stale-dnat incident's
# kube-dns (VIP 10.96.0.10:53, the weight-0 real server its gone Pod
# 10.244.2.7, the other a live one), beside that incident's Service and
# Endpoints, which no longer list 10.244.2.7.
mkdir -p $iv/hit-proven-endpoints
sed -e 's/172\.19\.254\.237:80/10.96.0.10:53/; s/172\.19\.6\.114:80  /10.244.2.7:53    /; s/172\.19\.6\.115:80  /10.244.1.11:53   /' \
	$ivf-k8s-issue-81775/ipvsadm-Ln.txt >$iv/hit-proven-endpoints/ipvsadm-Ln.txt
share $iv/hit-proven-endpoints incidents/stale-dnat/{service-kube-dns.json,endpoints-kube-dns.json}
# iptables-version-skew: kubernetes#71305's kube-proxy error (its iptables
# 1.6.0 finds no nat table), alone and beside an iptables-nft dump not tied
# to its node; kube-proxy logs without it (seed 004's apiserver errors, the
# stale-dnat control's healthy log).
vs=iptables-version-skew
vsf=$fx/field/iptables-version-skew--k8s-issue-71305
share $vs/hit-kube-proxy-iptables-1.6 field/iptables-version-skew--k8s-issue-71305/{kube-proxy.log,iptables-version.txt}
use $vs/hit-beside-nft-dump-of-no-node/ $vsf/kube-proxy.log
use $vs/hit-beside-nft-dump-of-no-node/ $fx/real/local/iptables/local_iptables-nft-save-c_with-legacy-warning.txt
use $vs/miss-other-kube-proxy-errors/ $fx/seeds/004-stale-dnat/kube-proxy.log
use $vs/miss-control/ $fx/incidents/stale-dnat-control/kube-proxy.log
# ipvs-strict-arp: antrea#3785's transcript (the LoadBalancer IP refused,
# the ClusterIP answering) beside its Service row, alone (the symptom, of
# unknown cause) and beside a kube-proxy ConfigMap in iptables mode.
sa=ipvs-strict-arp
saf=$fx/field/ipvs-strict-arp--antrea-3785
use $sa/hit-symptom-field-lb-refused/ $saf/curl.txt
use $sa/hit-symptom-field-lb-refused/ $saf/kubectl-get-svc.txt
use $sa/miss-field-lb-refused-iptables-mode/ $saf/curl.txt
use $sa/miss-field-lb-refused-iptables-mode/ $saf/kubectl-get-svc.txt
use $sa/miss-field-lb-refused-iptables-mode/ $sa/miss-iptables-mode/kube-proxy-cm.yaml
# vxlan-port-blocked: cloud-api-adaptor#244's Calico allow-list drop of
# VXLAN beside its curl that got no route to the Pod (a warning, still of
# unknown cause), and beside antrea#3785's curl that connected and was
# refused (answered: info, as without a transcript); the same curl beside
# the stale-dnat incident's ruleset, which drops no VXLAN.
vb=vxlan-port-blocked
vbf=$fx/field/vxlan-port-blocked--cloud-api-adaptor-issue-244
use $vb/hit-symptom-field-client-no-route/ $vbf/iptables-save.txt
use $vb/hit-symptom-field-client-no-route/ $vbf/curl.txt
use $vb/hit-symptom-field-client-answered/ $vbf/iptables-save.txt
use $vb/hit-symptom-field-client-answered/ $fx/field/ipvs-strict-arp--antrea-3785/curl.txt
use $vb/miss-field-client-no-route-no-drop/ $vbf/curl.txt
use $vb/miss-field-client-no-route-no-drop/ $fx/incidents/stale-dnat/iptables-save.txt
# filter-forward-drop: kube-router#316's dig, the DNS Service hanging and
# the CoreDNS Pod answering (the symptom alone, of unknown cause), and the
# same dig beside a FORWARD chain whose policy accepts (the cause ruled out).
use $fd/hit-symptom-field-dig-service-hangs/ $ff-kube-router-issue-316/dig.txt
use $fd/miss-field-dig-forward-accepts/ $ff-kube-router-issue-316/dig.txt
use $fd/miss-field-dig-forward-accepts/ iptables-backend-split/hit-kube-proxy-legacy-calico-nft/iptables-nft-save.txt
# conntrack-stale-udp: kubernetes#125467's one entry, its ClusterIP hidden
# by the paste ("<clusterIp>"), DNATed to a Pod that never answered; the
# same entry answered (the backend is there: nothing stale).
cs=conntrack-stale-udp
use $cs/hit-field-hidden-service/ $fx/field/conntrack-stale-udp--k8s-125467/conntrack-L.txt
mkdir -p $cs/miss-field-hidden-service-answered
sed 's/ \[UNREPLIED\]//' $fx/field/conntrack-stale-udp--k8s-125467/conntrack-L.txt >$cs/miss-field-hidden-service-answered/conntrack-L.txt
# vxlan-checksum-offload: calico#4865's capture on the receiving node
# (tcpdump -e -v: a VXLAN packet with a bad outer UDP checksum), and the
# same packet with its checksum right.
vc=vxlan-checksum-offload
vcf=$fx/field/vxlan-checksum-offload--calico-issue-4865/tcpdump.txt
use $vc/hit-field-capture-bad-cksum/ $vcf
mkdir -p $vc/miss-field-capture-sum-ok
sed 's/\[bad udp cksum 0x9c31 -> 0x2f5a!\]/[udp sum ok]/' $vcf >$vc/miss-field-capture-sum-ok/tcpdump.txt
# mtu-blackhole: cilium#27758's one tcpdump line, cut before its addresses:
# a fragmentation-needed with MTU 1320 and no connection (the symptom, of
# unknown cause); the same line as a host unreachable, which gives no MTU.
mb=mtu-blackhole
mbf=$fx/field/mtu-blackhole--cilium-27758/tcpdump.txt
use $mb/hit-symptom-field-frag-needed-alone/ $mbf
mkdir -p $mb/miss-field-host-unreachable-alone
sed 's/ICMP 10.68.5.41 unreachable - need to frag (mtu 1320)/ICMP host 10.68.5.41 unreachable/' $mbf >$mb/miss-field-host-unreachable-alone/tcpdump.txt
# conntrack-invalid-reset (fixtures/scenarios/conntrack-invalid-reset.sh):
# the run without kube-proxy's INVALID drop, its capture alone, its dumps
# alone; the runs with the drop and with be_liberal = 1; an untranslated
# SYN/ACK reset by its client (nat-reply-untranslated's incident).
ci=conntrack-invalid-reset
cin=incidents/conntrack-invalid-reset
share $ci/hit-reset $cin/{capture.pcap,iptables-save.txt,conntrack-S.txt,sysctl.txt}
share $ci/hit-capture-only $cin/capture.pcap
share $ci/hit-counters $cin/{iptables-save.txt,conntrack-S.txt,sysctl.txt}
share $ci/miss-drop-rule $cin-control/{capture.pcap,iptables-save.txt,conntrack-S.txt,sysctl.txt}
share $ci/miss-liberal $cin-liberal/{capture.pcap,iptables-save.txt,conntrack-S.txt,sysctl.txt}
share $ci/miss-synack-untranslated incidents/nat-reply-untranslated/{capture.pcap,iptables-save.txt}
# pod-cidr-overlap (fixtures/scenarios/pod-cidr-overlap.sh): a node in
# 192.168.1.0/24 under Calico's 192.168.0.0/16, with the manifest, then with
# kubectl's objects alone; a node in 10.100.0.0/16 under the Service network
# 10.96.0.0/12; the control (a host-gw route to another node's Pods); the
# first node under the control's manifest.
co=pod-cidr-overlap
con=incidents/pod-cidr-overlap
share $co/hit-calico-default $con/{kube-controller-manager.yaml,ip-addr.txt,ip-route.txt}
share $co/hit-objects-only $con/kubectl-get-cm-nodes.json
share $co/hit-service-network $con-service/{kube-controller-manager.yaml,ip-addr.txt,ip-route.txt}
share $co/miss-control $con-control/{kube-controller-manager.yaml,ip-addr.txt,ip-route.txt}
share $co/miss-other-pod-network $con/{ip-addr.txt,ip-route.txt}
share $co/miss-other-pod-network $con-control/kube-controller-manager.yaml
use $co/hit-weave-log/ $fx/field/pod-cidr-overlap--kubevirt-site-issue-138/weave.log
# hit-input-drop-only: the run's filter table with a drop of INVALID packets
# in INPUT (moby/libnetwork#1090's workaround), which forwarded ones never meet.
mkdir -p $ci/hit-input-drop-only
sed 's/^-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD$/-A INPUT -m conntrack --ctstate INVALID -j DROP\n&/' \
	$fx/$cin/iptables-save.txt >$ci/hit-input-drop-only/iptables-save.txt
share $ci/hit-input-drop-only $cin/capture.pcap
# service-no-endpoints: ingress-nginx's line of a Service without endpoints,
# with the configuration diff that follows it (rancher/rancher#16052), and
# cut to its message (helm/charts#21515); kube-dns's Endpoints, every
# address not ready (kubernetes#83063); a Service with a ready endpoint the
# controller says has none (kubernetes-retired/contrib#781); the Service
# shop/cart of network-policy-clusterip with a selector that matches no
# Pod, and with its Pod not ready, its Endpoints empty, beside the
# controller's line for it; the same objects unchanged, and the seed's
# ingress-nginx log, without the line.
se=service-no-endpoints
sef=$fx/field/service-no-endpoints
use $se/hit-config-diff/ $sef--rancher-16052/ingress-nginx-controller.log
use $se/hit-bare-line/ $sef--helm-charts-21515/ingress-nginx-controller.log
use $se/hit-not-ready/ $sef--k8s-83063/describe-ep-kube-dns.txt
use $se/hit-ready-endpoints/ $fx/field/ingress-named-port-bug--k8s-contrib-issue-781/ingress-controller.log
use $se/hit-ready-endpoints/ $fx/field/ingress-named-port-bug--k8s-contrib-issue-781/kubectl-get-ep.txt
# The objects of network-policy-clusterip, changed for each scenario
# (serviceobjects.py says how), beside the controller's line for shop/cart.
line=$(sed -n '1s#"portal/ingress-5b1f0c7a9d3e4b6f8a2c1e7d9b0a4f63"#"shop/cart"#p' $sef--rancher-16052/ingress-nginx-controller.log)
for s in selector-matches-no-pod pods-not-ready pod-manifest-no-status one-pod-by-name not-ready-pod-ready \
	two-namespaces kic-port-the-service-has placeholder-one-backend placeholder-two-backends external-name; do
	mkdir -p $se/hit-$s
	python3 $se/serviceobjects.py "$fx/incidents/network-policy-clusterip/kube.json" $s $se/hit-$s/pod.json >$se/hit-$s/kube.json
	case $s in
	not-ready-pod-ready) ;;
	two-namespaces) echo "$line" | sed 's#"shop/cart"#"cart"#' >$se/hit-$s/ingress-nginx-controller.log ;;
	kic-port-the-service-has)
		sed -n '3s/jenkins: No port {0 8080 } in service jenkins/cart: No port {0 80 } in service cart/p' \
			$se/hit-kic-no-port/nginx-ingress.log >$se/hit-$s/nginx-ingress.log ;;
	placeholder-*)
		sed -n '1s#http://127.0.0.1:9/#http://127.0.0.1:8181/#; 1s/example\.com/shop.example.com/gp' \
			../../../parse/testdata/logs/nginx-error.log >$se/hit-$s/ingress-nginx-controller.log ;;
	*) echo "$line" >$se/hit-$s/ingress-nginx-controller.log ;;
	esac
done
# The same line of a plain nginx, whose upstream 127.0.0.1:8181 is its own.
mkdir -p $se/miss-plain-nginx
sed -n '1s#http://127.0.0.1:9/#http://127.0.0.1:8181/#; 1s/example\.com/shop.example.com/gp' \
	../../../parse/testdata/logs/nginx-error.log >$se/miss-plain-nginx/error.log
share $se/miss-ready-no-line incidents/network-policy-clusterip/kube.json
share $se/miss-seed-log seeds/003-lb-controller-conflict/ingress-nginx-controller.log
# pod-cidr-overlap, no setting: ip route in a network namespace with
# docker's bridge at its default 172.17.0.1/16 and flannel's VXLAN device
# routing three other nodes' Pod subnets of 172.17.0.0/16 (flannel#844);
# then flannel's classic design, docker0 inside the Pod network with
# flannel.1 holding the whole of it (docker --bip=FLANNEL_SUBNET).
po=pod-cidr-overlap
mkdir -p $po/hit-docker0-over-flannel-routes $po/miss-docker0-inside-flannel
unshare -n sh -c 'ip link add eth0 type veth peer name eth0p && ip addr add 10.240.0.12/24 dev eth0 &&
	ip link set eth0 up && ip link set eth0p up &&
	ip link add docker0 type bridge && ip addr add 172.17.0.1/16 dev docker0 && ip link set docker0 up &&
	ip link add flannel.1 type vxlan id 1 dstport 8472 local 10.240.0.12 dev eth0 nolearning &&
	ip addr add 172.17.3.0/32 dev flannel.1 && ip link set flannel.1 up &&
	for n in 1 2 4; do ip route add 172.17.$n.0/24 via 172.17.$n.0 dev flannel.1 onlink; done && ip route' \
	>$po/hit-docker0-over-flannel-routes/ip-route.txt
unshare -n sh -c 'ip link add eth0 type veth peer name eth0p && ip addr add 10.240.0.12/24 dev eth0 &&
	ip link set eth0 up && ip link set eth0p up &&
	ip link add flannel.1 type vxlan id 1 dstport 8472 local 10.240.0.12 dev eth0 nolearning &&
	ip addr add 172.17.3.0/16 dev flannel.1 && ip link set flannel.1 up &&
	ip link add docker0 type bridge && ip addr add 172.17.3.1/24 dev docker0 && ip link set docker0 up && ip route' \
	>$po/miss-docker0-inside-flannel/ip-route.txt
# cni-plugin-missing: the field cases' evidence (rancher/rke2#7981's Events
# rows without their header, flannel-io/flannel#890's kubelet lines cut
# before their caller, coreos/coreos-kubernetes#874's Events of kubectl
# before 1.10); rke2#7981's rows with the sandbox's error replaced by
# host-local's exhaustion, another CNI failure.
cp=cni-plugin-missing
cpf=$fx/field/cni-plugin-missing
use $cp/hit-events-rows/ $cpf--rke2-issue-7981/kubectl-describe-pod.txt
use $cp/hit-kubelet-cut-klog/ $cpf--flannel-issue-890/journalctl-kubelet.txt
use $cp/hit-events-before-110/ $cpf--coreos-kubernetes-issue-874/kubectl-describe-pod.txt
mkdir -p $cp/miss-other-sandbox-error
sed 's|plugin type="loopback" failed (add): failed to find plugin "loopback" in path \[/opt/cni/bin\]|plugin type="host-local" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.244.1.1-10.244.1.254|' \
	$cpf--rke2-issue-7981/kubectl-describe-pod.txt >$cp/miss-other-sandbox-error/kubectl-describe-pod.txt
# pod-cidr-overlap, no setting, not an overlap: a VPN's 10.0.0.0/8 (on a
# device named wg0) holding flannel.1's routes to Pod subnets of
# 10.244.0.0/16, which the Pod network may lie under; the docker0 and
# flannel.1 routes of hit-docker0-over-flannel-routes in two files, two
# routing tables.
mkdir -p $po/miss-vpn-over-flannel-routes $po/miss-two-files
unshare -n sh -c 'ip link add eth0 type veth peer name eth0p && ip addr add 10.240.0.12/24 dev eth0 &&
	ip link set eth0 up && ip link set eth0p up &&
	ip link add wg0 type veth peer name wg0p && ip addr add 10.0.0.1/8 dev wg0 && ip link set wg0 up && ip link set wg0p up &&
	ip link add flannel.1 type vxlan id 1 dstport 8472 local 10.240.0.12 dev eth0 nolearning &&
	ip addr add 10.244.3.0/32 dev flannel.1 && ip link set flannel.1 up &&
	for n in 1 2 4; do ip route add 10.244.$n.0/24 via 10.244.$n.0 dev flannel.1 onlink; done && ip route' \
	>$po/miss-vpn-over-flannel-routes/ip-route.txt
grep -v flannel.1 $po/hit-docker0-over-flannel-routes/ip-route.txt >$po/miss-two-files/ip-route-a.txt
grep flannel.1 $po/hit-docker0-over-flannel-routes/ip-route.txt >$po/miss-two-files/ip-route-b.txt
