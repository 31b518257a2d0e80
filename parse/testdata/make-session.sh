#!/usr/bin/env bash
# make-session.sh - a real terminal session (several commands and their
# output, pasted as one file) for the terminal-session parser's tests.
#
# Needs root, iproute2, iptables, python3, netcat-openbsd. Two namespaces
# joined by a veth pair: nm-t-sess-s (10.81.0.2) listens on TCP 8080;
# nm-t-sess-c (10.81.0.1) holds one connection to it open while the session
# runs ip addr, ip route, ss, sysctl, an nc loop and ip neigh. A second
# session of two commands (ss, and a curl refused on port 8081) is written
# beside it, as two-commands.txt. The namespaces are removed by exact name
# on exit.
#
# Usage: sudo bash parse/testdata/make-session.sh [OUT_FILE]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/session/node-session.txt}"
C=nm-t-sess-c S=nm-t-sess-s
cleanup() {
	for ns in "$C" "$S"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true; done
	for ns in "$C" "$S"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup
ip netns add "$C"; ip netns add "$S"
ip link add nm-t-sc netns "$C" address 02:81:00:00:00:01 type veth peer name nm-t-ss netns "$S" address 02:81:00:00:00:02
ip -n "$C" addr add 10.81.0.1/24 dev nm-t-sc
ip -n "$S" addr add 10.81.0.2/24 dev nm-t-ss
for ns in "$C" "$S"; do ip -n "$ns" link set lo up; done
ip -n "$C" link set nm-t-sc up; ip -n "$S" link set nm-t-ss up
ip -n "$C" route add default via 10.81.0.2
ip netns exec "$S" timeout 60 python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.81.0.2", 8080)); s.listen(16)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' &
sleep 1
ip netns exec "$C" timeout 30 python3 -c '
import socket, time
s = socket.create_connection(("10.81.0.2", 8080), timeout=5)
time.sleep(25)
' &
sleep 1
mkdir -p "$(dirname "$OUT")"
: >"$OUT"
for cmd in "ip -4 addr" "ip route" "ss -tan" "sysctl net.ipv4.ip_local_port_range" \
	'for i in $(seq 1 5); do nc -zv -w 1 10.81.0.2 8081; done' "ip neigh"; do
	{ echo "root@worker-1:~# $cmd"; ip netns exec "$C" bash -c "$cmd" 2>&1 || true; } >>"$OUT"
done
TWO="$(dirname "$OUT")/two-commands.txt"
: >"$TWO"
for cmd in "ss -tn" "curl -v http://10.81.0.2:8081/"; do
	{ echo "root@worker-1:~# $cmd"; ip netns exec "$C" bash -c "$cmd" 2>&1 || true; } >>"$TWO"
done
