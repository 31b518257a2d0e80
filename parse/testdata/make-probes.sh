#!/usr/bin/env bash
# make-probes.sh - real nc connect loops for the connect-loop parser's tests.
#
# Needs root, iproute2, iptables, python3, netcat-traditional and
# netcat-openbsd. Two namespaces joined by a veth pair: nm-t-probe-s
# (10.79.0.2) listens on TCP 53; nm-t-probe-c (10.79.0.1) DNATs the
# "ClusterIP" 10.96.0.10:53 to it, a quarter of the connections (statistic
# random) to the closed port 54 instead, as a stale NAT rule would. The loops
# run in nm-t-probe-c and are written as a pasted terminal session (prompt,
# command, output). The namespaces are removed by exact name on exit.
#
# Usage: sudo bash parse/testdata/make-probes.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/probes}"
mkdir -p "$OUT"
C=nm-t-probe-c S=nm-t-probe-s
cleanup() {
	ip netns pids "$S" 2>/dev/null | xargs -r kill 2>/dev/null || true
	for ns in "$C" "$S"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup
ip netns add "$C"; ip netns add "$S"
ip link add nm-t-pc netns "$C" type veth peer name nm-t-ps netns "$S"
ip -n "$C" addr add 10.79.0.1/24 dev nm-t-pc
ip -n "$S" addr add 10.79.0.2/24 dev nm-t-ps
for ns in "$C" "$S"; do ip -n "$ns" link set lo up; done
ip -n "$C" link set nm-t-pc up; ip -n "$S" link set nm-t-ps up
ip -n "$C" route add default via 10.79.0.2
ip netns exec "$C" iptables -t nat -A OUTPUT -d 10.96.0.10/32 -p tcp --dport 53 -m statistic --mode random --probability 0.25 -j DNAT --to-destination 10.79.0.2:54
ip netns exec "$C" iptables -t nat -A OUTPUT -d 10.96.0.10/32 -p tcp --dport 53 -j DNAT --to-destination 10.79.0.2:53
ip netns exec "$S" timeout 120 python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.79.0.2", 53)); s.listen(128)
while True:
    c, _ = s.accept(); c.close()
' &
sleep 1

session() { # session FILE PROMPT_HOST COMMAND
	{ echo "root@$2:~# $3"; ip netns exec "$C" bash -c "$3" 2>&1 || true; } >"$1"
}
session "$OUT/nc-traditional-count.txt" toolbox \
	'for x in $(seq 1 200); do nc.traditional 10.96.0.10 53 -nvz -w 1 2>&1 | grep -v open; done | wc -l'
session "$OUT/nc-openbsd-lines.txt" toolbox \
	'for i in {1..24}; do nc.openbsd -zv -w 1 10.96.0.10 53; done'
session "$OUT/nc-openbsd-succeeded-count.txt" node1 \
	'for i in $(seq 100); do nc.openbsd -z -v -w 1 10.96.0.10 53 2>&1; done | grep -c succeeded'
