#!/usr/bin/env bash
# Builds the sosreport-, Rancher- and EKS-style bundle trees under this
# folder from real command outputs: ip, ss, sysctl, iptables-save, iptables
# -L and nft run inside two network namespaces made for the purpose
# (nm-bdl-a and nm-bdl-b, joined by a veth pair), the way each collector
# runs them on a node. Needs root; the namespaces are removed (by exact
# name) on exit. The trees are committed; tests never run this script.
#
# Usage: sudo bash parse/testdata/bundles/make-trees.sh
set -euo pipefail
cd "$(dirname "$0")"

A=nm-bdl-a
B=nm-bdl-b
cleanup() {
	ip netns pids "$A" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns pids "$B" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
}
trap cleanup EXIT
cleanup

ip netns add "$A"
ip netns add "$B"
ip link add nmbdl-a type veth peer name nmbdl-b
ip link set nmbdl-a netns "$A"
ip link set nmbdl-b netns "$B"
ip -n "$A" addr add 10.77.0.1/24 dev nmbdl-a
ip -n "$B" addr add 10.77.0.2/24 dev nmbdl-b
for ns in "$A" "$B"; do
	ip -n "$ns" link set lo up
done
ip -n "$A" link set nmbdl-a up
ip -n "$B" link set nmbdl-b up
ip netns exec "$A" sysctl -q -w net.ipv4.ip_local_port_range="30000 60999"
ip netns exec "$B" sysctl -q -w net.ipv4.ip_local_reserved_ports="30000-32767"
# Nodes route their Pods' traffic: forwarding on, as on a Kubernetes node.
for ns in "$A" "$B"; do
	ip netns exec "$ns" sysctl -q -w net.ipv4.ip_forward=1
done

# kube-proxy-like NAT rules: a ClusterIP Service and a NodePort.
for ns in "$A" "$B"; do
	ip netns exec "$ns" iptables -t nat -N KUBE-SERVICES
	ip netns exec "$ns" iptables -t nat -N KUBE-SVC-DEMO
	ip netns exec "$ns" iptables -t nat -N KUBE-SEP-DEMO
	ip netns exec "$ns" iptables -t nat -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
	ip netns exec "$ns" iptables -t nat -A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
	ip netns exec "$ns" iptables -t nat -A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/demo:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-DEMO
	ip netns exec "$ns" iptables -t nat -A KUBE-SVC-DEMO -m comment --comment "default/demo:http -> 10.77.0.2:8080" -j KUBE-SEP-DEMO
	ip netns exec "$ns" iptables -t nat -A KUBE-SEP-DEMO -p tcp -m comment --comment "default/demo:http" -m tcp -j DNAT --to-destination 10.77.0.2:8080
done

# A listener on B and an established connection from A, for ss.
ip netns exec "$B" socat TCP-LISTEN:8080,reuseaddr,fork SYSTEM:'sleep 5' &
sleep 0.3
ip netns exec "$A" socat -T 5 - TCP:10.77.0.2:8080 </dev/zero >/dev/null &
sleep 0.5

nsx() { ip netns exec "$1" "${@:2}"; }
sysctl_net() { nsx "$1" sysctl -a 2>/dev/null | grep -E '^net\.ipv4\.(ip_local_port_range|ip_local_reserved_ports|ip_forward|tcp_tw_reuse|conf\.all\.rp_filter) ' ; }

# --- sosreport of node-a --------------------------------------------------
S=sosreport-node-a-2026-11-22-nmbdlaa
rm -rf "$S"
mkdir -p "$S/sos_commands/networking/namespaces/$B" "$S/sos_commands/firewall_tables" "$S/sos_commands/kernel" "$S/sos_commands/kubernetes"
echo node-a >"$S/hostname"
nsx "$A" ip -d address >"$S/sos_commands/networking/ip_-d_address"
nsx "$A" ip route show table all >"$S/sos_commands/networking/ip_route_show_table_all"
nsx "$A" ss -peaonmi >"$S/sos_commands/networking/ss_-peaonmi" || true
nsx "$A" iptables-save | sed -E 's/^# (Generated|Completed) on .*/# \1 on Sun Nov 22 00:00:00 2026/' >"$S/sos_commands/firewall_tables/iptables-save"
nsx "$A" iptables -vnxL >"$S/sos_commands/firewall_tables/iptables_-vnxL"
nsx "$A" nft list ruleset >"$S/sos_commands/firewall_tables/nft_list_ruleset"
sysctl_net "$A" >"$S/sos_commands/kernel/sysctl_-a"
# the sos networking plugin also runs commands inside each network namespace
nsx "$B" iptables-save | sed -E 's/^# (Generated|Completed) on .*/# \1 on Sun Nov 22 00:00:00 2026/' >"$S/sos_commands/networking/namespaces/$B/ip_netns_exec_${B}_iptables-save"
nsx "$B" ss -peaonmi >"$S/sos_commands/networking/namespaces/$B/ip_netns_exec_${B}_ss_-peaonmi" || true
cp kubectl-services.json "$S/sos_commands/kubernetes/kubectl_--kubeconfig_.etc.kubernetes.admin.conf_get_-o_json_services"

# --- Rancher logs collector of node-b ---------------------------------------
R=node-b-2026-11-22_10_11_12
rm -rf "$R"
mkdir -p "$R/networking" "$R/systeminfo" "$R/k3s/kubectl"
echo node-b >"$R/systeminfo/hostname"
nsx "$B" iptables-save | sed -E 's/^# (Generated|Completed) on .*/# \1 on Sun Nov 22 00:00:00 2026/' >"$R/networking/iptablessave"
nsx "$B" iptables --wait 1 --numeric --verbose --list --table nat >"$R/networking/iptablesnat"
nsx "$B" ss -anp >"$R/networking/ssanp"
nsx "$B" ip addr show >"$R/networking/ipaddrshow"
nsx "$B" ip route show table all >"$R/networking/iproute"
sysctl_net "$B" >"$R/systeminfo/sysctla"
cp kubectl-services.json "$R/k3s/kubectl/services.json"

# --- EKS log collector of instance i-0nmbdl0000000000a ----------------------
E=eks_i-0nmbdl0000000000a_2026-11-22_1011-UTC_0.7.3
rm -rf "$E"
mkdir -p "$E/networking" "$E/sysctls" "$E/system" "$E/ipamd"
echo i-0nmbdl0000000000a >"$E/system/instance-id.txt"
nsx "$A" iptables-save | sed -E 's/^# (Generated|Completed) on .*/# \1 on Sun Nov 22 00:00:00 2026/' >"$E/networking/iptables-save.txt"
# as eks-log-collector.sh writes it: the listing, then a banner and a count
nsx "$A" iptables --wait 1 --numeric --verbose --list --table nat | tee "$E/networking/iptables-nat.txt" |
	sed '/^num\|^$\|^Chain\|^\ pkts.*.destination/d' | echo -e "=======\nTotal Number of Rules: $(wc -l)" >>"$E/networking/iptables-nat.txt"
nsx "$A" ip rule show >"$E/networking/iprule.txt"
nsx "$A" ip route show table all >"$E/networking/iproute.txt"
sysctl_net "$A" >"$E/sysctls/sysctl_all.txt"

echo "trees written: $S $R $E"
