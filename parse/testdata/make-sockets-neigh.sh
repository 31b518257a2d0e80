#!/usr/bin/env bash
# make-sockets-neigh.sh - real ss, netstat, ip neigh and arp outputs for the
# socket and neighbor table parsers' tests.
#
# Needs root, iproute2, net-tools (netstat, arp), iptables, socat, curl and
# python3. Two network namespaces joined by a veth pair (nm-t-sock with
# 10.77.0.1 and fd77::1, nm-t-peer with 10.77.0.2 and fd77::2, fixed MACs
# so link-local addresses are stable):
#   nm-t-sock listens on 127.0.0.1:10257 (socat renamed kube-controller-manager,
#   so ss shows the kernel's 15-character name and netstat its 19-column cut),
#   10.77.0.1:9000 (socat), *:8080 dual-stack (python3 http.server), [::]:9090
#   v6only, UDP 10.77.0.1:5353, 0.0.0.0%nm-t-v0:68, *:5355,
#   [fd77:1234:5678:9abc::1]:5400 (netstat cuts it to 23 columns) and the link-local
#   [fe80::77:ff:fe00:1]%nm-t-v0:546, and has a connected UDP socket;
#   nm-t-peer holds connections to 9000 and to 8080 over IPv4 and IPv6, makes
#   six HTTP requests (the server closes first: TIME-WAIT on nm-t-sock), and
#   drops SYNs to 9001 (a SYN-SENT socket on nm-t-sock). 10.77.0.3 and
#   10.77.0.4 do not exist (FAILED and INCOMPLETE neighbors), 10.77.0.50 is a
#   permanent entry, nm-t-peer forwards IPv6 (its entry is flagged router).
# Everything is bounded; the namespaces are removed by exact name on exit.
#
# Usage: sudo bash parse/testdata/make-sockets-neigh.sh [OUT_DIR]
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}" # another folder to try it without touching the committed outputs
SOCK="$OUT/sockets"
NEIGH="$OUT/neigh"
PIDS=()

cleanup() {
  for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del nm-t-sock 2>/dev/null || true
  ip netns del nm-t-peer 2>/dev/null || true
  rm -rf /tmp/nm-t-bin
}
trap cleanup EXIT

for c in ip iptables socat curl python3 netstat arp; do
  command -v "$c" >/dev/null || { echo "make-sockets-neigh: $c is required" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "make-sockets-neigh: run as root" >&2; exit 1; }
ip netns del nm-t-sock 2>/dev/null || true
ip netns del nm-t-peer 2>/dev/null || true

S() { ip netns exec nm-t-sock "$@"; }
P() { ip netns exec nm-t-peer "$@"; }
bg() { local ns=$1; shift; setsid ip netns exec "$ns" "$@" >/dev/null 2>&1 & PIDS+=($!); }

ip netns add nm-t-sock
ip netns add nm-t-peer
ip link add nm-t-v0 address 02:77:00:00:00:01 type veth peer name nm-t-v1 address 02:77:00:00:00:02
ip link set nm-t-v0 netns nm-t-sock
ip link set nm-t-v1 netns nm-t-peer
P sysctl -qw net.ipv6.conf.all.forwarding=1
S ip addr add 10.77.0.1/24 dev nm-t-v0
S ip addr add fd77::1/64 dev nm-t-v0 nodad
S ip addr add fd77:1234:5678:9abc::1/64 dev nm-t-v0 nodad
P ip addr add 10.77.0.2/24 dev nm-t-v1
P ip addr add fd77::2/64 dev nm-t-v1 nodad
for n in nm-t-sock nm-t-peer; do ip -n "$n" link set lo up; done
S ip link set nm-t-v0 up
P ip link set nm-t-v1 up
P iptables -A INPUT -p tcp --dport 9001 -j DROP
for _ in $(seq 50); do # link-local address out of DAD
  S ip -6 addr show dev nm-t-v0 | grep -q 'fe80.*tentative' || break
  sleep 0.1
done

mkdir -p /tmp/nm-t-bin
cp "$(command -v socat)" /tmp/nm-t-bin/kube-controller-manager
cat >/tmp/nm-t-bin/ll.py <<'EOF'
import socket, time
idx = socket.if_nametoindex("nm-t-v0")
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u.bind(("fe80::77:ff:fe00:1", 546, 0, idx))
t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
t.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
t.bind(("::", 9090)); t.listen(5)
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.connect(("10.77.0.2", 53))
time.sleep(600)
EOF

bg nm-t-sock python3 -m http.server --bind :: 8080
bg nm-t-sock /tmp/nm-t-bin/kube-controller-manager TCP4-LISTEN:10257,bind=127.0.0.1,fork,reuseaddr EXEC:cat
bg nm-t-sock socat TCP4-LISTEN:9000,bind=10.77.0.1,fork,reuseaddr EXEC:cat
bg nm-t-sock socat -u UDP4-RECV:5353,bind=10.77.0.1 /dev/null
bg nm-t-sock socat -u UDP4-RECV:68,so-bindtodevice=nm-t-v0 /dev/null
bg nm-t-sock socat -u "UDP6-RECV:5355,bind=[::]" /dev/null
bg nm-t-sock socat -u "UDP6-RECV:5400,bind=[fd77:1234:5678:9abc::1]" /dev/null
bg nm-t-sock python3 /tmp/nm-t-bin/ll.py
S ping -6 -c1 -W2 fd77::2 >/dev/null # before the peer talks: the entry learns the router flag
sleep 1
bg nm-t-peer socat -u EXEC:"sleep 600" TCP4:10.77.0.1:9000
bg nm-t-peer socat -u EXEC:"sleep 600" "TCP6:[fd77::1]:8080"
bg nm-t-peer socat -u EXEC:"sleep 600" TCP4:10.77.0.1:8080
bg nm-t-sock socat -u EXEC:"sleep 600" TCP4:127.0.0.1:10257
bg nm-t-sock socat -u EXEC:"sleep 600" TCP4:10.77.0.2:9001,connect-timeout=120
S ip neigh add 10.77.0.50 lladdr 02:00:5e:00:00:50 dev nm-t-v0 nud permanent
S ping -c1 -W1 10.77.0.3 >/dev/null || true # FAILED after 3 probes
sleep 3
for i in 1 2 3 4 5; do P curl -s -o /dev/null --max-time 5 http://10.77.0.1:8080/; done
P curl -s -o /dev/null --max-time 5 "http://[fd77::1]:8080/"
S ping -c1 -W1 10.77.0.2 >/dev/null     # REACHABLE
S ping -c1 -W1 10.77.0.4 >/dev/null &  # INCOMPLETE while it resolves
PING=$!
sleep 0.3

mkdir -p "$SOCK" "$NEIGH"
S ip neigh >"$NEIGH/ip-neigh.txt"
S ip -s neigh >"$NEIGH/ip-s-neigh.txt"
S ip neigh show nud all >"$NEIGH/ip-neigh-nud-all.txt"
S arp -an >"$NEIGH/arp-an.txt"
S arp -n >"$NEIGH/arp-n.txt"
{
  echo "# ip -4 neigh show nud all | wc -l"
  S ip -4 neigh show nud all | wc -l
  echo "# ip neigh | wc -l"
  S ip neigh | wc -l
} >"$NEIGH/neigh-count.txt"
wait "$PING" || true
S ss -tanp >"$SOCK/ss-tanp.txt"
S ss -lntup >"$SOCK/ss-lntup.txt"
S ss -tan >"$SOCK/ss-tan.txt"
S ss -uanp >"$SOCK/ss-uanp.txt"
S ss -tano state time-wait >"$SOCK/ss-tano-state-time-wait.txt"
S ss -tanoeim >"$SOCK/ss-tanoeim.txt" 2>&1
{
  echo "# ss -tan | awk '{print \$1}' | sort | uniq -c"
  S ss -tan | awk '{print $1}' | sort | uniq -c
  echo "# ss -tan state time-wait | awk '{print \$4}' | sed 's/:[0-9]*\$//' | sort | uniq -c"
  S ss -tan state time-wait | awk '{print $4}' | sed 's/:[0-9]*$//' | sort | uniq -c
} >"$SOCK/ss-counts.txt"
S netstat -lntup >"$SOCK/netstat-lntup.txt"
S netstat -tan >"$SOCK/netstat-tan.txt"
S netstat -tuneopa >"$SOCK/netstat-tuneopa.txt"
{
  echo "# netstat -tan | awk '{print \$6}' | sort | uniq -c"
  S netstat -tan | awk '{print $6}' | sort | uniq -c
} >"$SOCK/netstat-counts.txt"
echo "make-sockets-neigh: wrote $SOCK and $NEIGH"
