#!/usr/bin/env bash
# make-addr-route-ct.sh - real ip addr, ip route and conntrack outputs for the
# address, route and conntrack parsers' tests.
#
# Needs root, iproute2, iptables, conntrack and python3. Three namespaces:
#   nm-t-addr: a veth pair (nm-t-a0/nm-t-a1 inside), 10.78.0.1/24, a
#     secondary 10.78.0.9/24 labelled nm-t-a0:vip, IPv6 fd78::1/64, and a
#     dummy interface kube-ipvs0 holding /32 VIPs, as kube-proxy's IPVS mode does;
#   nm-t-route: a veth pair, a default route, a static route with src and
#     metric, blackhole/unreachable/prohibit routes, a multipath route, IPv6;
#   nm-t-ct: iptables nat OUTPUT DNAT of 10.96.0.10:53 to 127.0.0.53, UDP
#     and TCP to it, a TCP connection to a listener, a ping in conntrack zone 7, the connection to 8080 marked 42, then conntrack -L.
# The namespaces are removed by exact name on exit.
#
# Usage: sudo bash parse/testdata/make-addr-route-ct.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}"
mkdir -p "$OUT/addr" "$OUT/route" "$OUT/conntrack"
cleanup() {
	for ns in nm-t-addr nm-t-route nm-t-ct; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup

A="ip netns exec nm-t-addr"
ip netns add nm-t-addr
$A ip link set lo up
$A ip link add nm-t-a0 address 02:78:00:00:00:01 type veth peer name nm-t-a1 address 02:78:00:00:00:02
$A ip addr add 10.78.0.1/24 dev nm-t-a0
$A ip addr add 10.78.0.9/24 dev nm-t-a0 label nm-t-a0:vip
$A ip -6 addr add fd78::1/64 dev nm-t-a0 nodad
$A ip link set nm-t-a0 up
$A ip link set nm-t-a1 up
$A ip link add kube-ipvs0 address 02:78:00:00:00:99 type veth peer name nm-t-k1
$A ip addr add 10.96.0.1/32 dev kube-ipvs0
$A ip addr add 10.96.0.10/32 dev kube-ipvs0
sleep 1
$A ip addr >"$OUT/addr/ip-addr.txt"
$A ip -4 addr >"$OUT/addr/ip-4-addr.txt"
$A ip -br addr >"$OUT/addr/ip-br-addr.txt"
$A ip -o addr >"$OUT/addr/ip-o-addr.txt"

R="ip netns exec nm-t-route"
ip netns add nm-t-route
$R ip link set lo up
$R ip link add nm-t-r0 type veth peer name nm-t-r1
$R ip addr add 10.79.0.1/24 dev nm-t-r0
$R ip addr add 10.79.1.1/24 dev nm-t-r1
$R ip -6 addr add fd79::1/64 dev nm-t-r0 nodad
$R ip link set nm-t-r0 up
$R ip link set nm-t-r1 up
$R ip route add default via 10.79.0.254 dev nm-t-r0 proto static metric 100
$R ip route add 10.80.0.0/16 via 10.79.0.2 dev nm-t-r0 src 10.79.0.1 metric 50
$R ip route add blackhole 10.81.0.0/16
$R ip route add unreachable 10.82.0.0/16
$R ip route add prohibit 10.83.0.0/16
$R ip route add 10.84.0.0/16 nexthop via 10.79.0.2 dev nm-t-r0 weight 1 nexthop via 10.79.1.2 dev nm-t-r1 weight 2
$R ip -6 route add default via fd79::fe dev nm-t-r0 metric 1024
sleep 1
$R ip route >"$OUT/route/ip-route.txt"
$R ip -6 route >"$OUT/route/ip-6-route.txt"
$R ip route show table all >"$OUT/route/ip-route-table-all.txt"

C="ip netns exec nm-t-ct"
ip netns add nm-t-ct
$C ip link set lo up
$C ip link add nm-t-c0 type veth peer name nm-t-c1
$C ip link set nm-t-c1 up
$C ip addr add 10.85.0.1/24 dev nm-t-c0
$C ip link set nm-t-c0 up
$C ip route add default via 10.85.0.254 dev nm-t-c0 onlink
$C sysctl -qw net.ipv4.conf.all.route_localnet=1
$C iptables -t nat -A OUTPUT -d 10.96.0.10/32 -p udp --dport 53 -j DNAT --to-destination 127.0.0.53:53
$C iptables -t nat -A OUTPUT -d 10.96.0.10/32 -p tcp --dport 53 -j DNAT --to-destination 127.0.0.53:53
$C iptables -t mangle -A OUTPUT -p tcp --dport 8080 -j CONNMARK --set-mark 42
$C iptables -t raw -A OUTPUT -p icmp -j CT --zone 7
$C timeout 20 python3 -c '
import socket,threading
u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);u.bind(("127.0.0.53",53))
t=socket.socket();t.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);t.bind(("127.0.0.53",53));t.listen()
h=socket.socket();h.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);h.bind(("10.85.0.1",8080));h.listen()
def udp():
    while True:
        d,a=u.recvfrom(512);u.sendto(d,a)
def acc(s):
    while True:
        c,_=s.accept();threading.Thread(target=lambda c=c:(c.recv(10),c.sendall(b"x")),daemon=True).start()
for f in (udp,lambda:acc(t),lambda:acc(h)):
    threading.Thread(target=f,daemon=True).start()
threading.Event().wait(19)
' &
SRV=$!
sleep 1
$C python3 -c '
import socket,time
u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);u.settimeout(2);u.sendto(b"q",("10.96.0.10",53));u.recv(512)
x=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);x.sendto(b"q",("10.85.0.77",9999))
t=socket.create_connection(("10.96.0.10",53));t.sendall(b"q");t.recv(1)
h=socket.create_connection(("10.85.0.1",8080));h.sendall(b"q");h.recv(1);h.close()
time.sleep(0.5)
' &
CLI=$!
$C ping -c1 -W1 10.85.0.1 >/dev/null
wait $CLI
$C conntrack -L >"$OUT/conntrack/conntrack-L.txt" 2>/dev/null || true
$C conntrack -L -p tcp >"$OUT/conntrack/conntrack-L-p-tcp.txt" 2>/dev/null || true
kill "$SRV" 2>/dev/null || true
wait "$SRV" 2>/dev/null || true
