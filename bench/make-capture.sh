#!/bin/bash
# make-capture.sh: build the large benchmark capture from real kernel traffic.
#
# Two network namespaces joined by a veth pair exchange, in bounded loops:
# many short HTTP-like connections (SYN, SYN/ACK, ACK, data, FIN), connections
# refused by a closed port (RST), SYNs dropped by an iptables rule (unanswered,
# retransmitted), and one bulk transfer. tcpdump records the client side with
# a 128-byte snap length, as people capture headers in production. The base
# capture is then replicated with `tcprewrite --seed` (distinct addresses and
# ports per copy, so every copy's flows are new flows) and concatenated with
# mergecap until it holds at least $MIN_PACKETS packets and $MIN_BYTES bytes.
#
# By default every copy keeps the base capture's timestamps, so all the
# flows of all the copies are live at once: the worst case for memory. With
# SPREAD=N each copy is shifted N seconds after the one before (editcap -t),
# as a capture of a busy node over a longer time looks: connections close
# and leave TIME-WAIT as the capture goes. `make bench-memory` builds a 1 GB
# one that way to show peak memory following the live connections.
#
# Needs root, ip, ethtool, tcpdump, tcprewrite, mergecap, python3. Removes what it
# made (namespaces nm-bench-a and nm-bench-b) on exit.
#
# Usage: bench/make-capture.sh [OUT]   (default bench/out/big.pcap)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/out/big.pcap}"
CONNS="${CONNS:-20000}"          # short connections in the base capture
REFUSED="${REFUSED:-3000}"       # refused connections
UNANSWERED="${UNANSWERED:-200}"  # SYNs dropped (each retransmitted once or twice)
BULK_MB="${BULK_MB:-64}"         # one bulk transfer
MIN_PACKETS="${MIN_PACKETS:-3000000}"
MIN_BYTES="${MIN_BYTES:-314572800}"
SPREAD="${SPREAD:-0}"            # seconds between copies (0: all copies overlap)
A=nm-bench-a B=nm-bench-b
WORK="$(mktemp -d)"

cleanup() {
	ip netns pids "$A" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns pids "$B" 2>/dev/null | xargs -r kill 2>/dev/null || true
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "make-capture.sh: needs root (network namespaces)" >&2; exit 1; }
for t in ip ethtool tcpdump tcprewrite mergecap capinfos editcap python3; do
	command -v "$t" >/dev/null || { echo "make-capture.sh: $t not found" >&2; exit 1; }
done

ip netns add "$A"; ip netns add "$B"
ip link add nm-bench-va netns "$A" type veth peer name nm-bench-vb netns "$B"
ip -n "$A" addr add 10.231.0.1/24 dev nm-bench-va
ip -n "$B" addr add 10.231.0.2/24 dev nm-bench-vb
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set nm-bench-va up; ip -n "$B" link set nm-bench-vb up
# Real segment sizes on the wire: no TSO/GSO/GRO super-packets in the
# capture. With them the bulk transfer takes a varying, smaller number of
# packets, so that more copies are needed to reach MIN_PACKETS: a capture
# of more connections than the one the figures in docs/performance.md are
# from (17 copies and 394,417 attempts rather than 13 and 301,613).
for end in "$A nm-bench-va" "$B nm-bench-vb"; do
	set -- $end
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null ||
		{ echo "make-capture.sh: cannot turn segmentation offloads off on $2" >&2; exit 1; }
done
ip netns exec "$A" sysctl -qw net.ipv4.ip_local_port_range="10000 60999"
ip netns exec "$A" sysctl -qw net.ipv4.tcp_tw_reuse=1
ip netns exec "$B" iptables -A INPUT -p tcp --dport 9999 -j DROP

# Server: answers each request line with a small response and closes; a
# second port sinks the bulk transfer.
cat > "$WORK/server.py" <<'PY'
import socket, threading
def serve(port, handler):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.231.0.2", port)); s.listen(4096)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handler, args=(c,), daemon=True).start()
def http(c):
    try:
        c.recv(4096); c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    finally:
        c.close()
def sink(c):
    try:
        while c.recv(1 << 16): pass
    finally:
        c.close()
threading.Thread(target=serve, args=(8081, sink), daemon=True).start()
serve(8080, http)
PY
ip netns exec "$B" python3 "$WORK/server.py" &
sleep 1

ip netns exec "$A" tcpdump -i nm-bench-va -s 128 -w "$WORK/base.pcap" -U 2>/dev/null &
TCPDUMP=$!
sleep 1

cat > "$WORK/client.py" <<PY
import socket, time
conns, refused, unanswered, bulk = $CONNS, $REFUSED, $UNANSWERED, $BULK_MB
for i in range(conns):
    s = socket.socket()
    s.connect(("10.231.0.2", 8080)); s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    s.recv(4096); s.close()
for i in range(refused):
    s = socket.socket()
    try: s.connect(("10.231.0.2", 7))
    except OSError: pass
    s.close()
# Unanswered SYNs in parallel: non-blocking connects, then one wait long
# enough for the first retransmission.
pending = []
for i in range(unanswered):
    s = socket.socket(); s.setblocking(False)
    s.connect_ex(("10.231.0.2", 9999)); pending.append(s)
time.sleep(1.5)
for s in pending: s.close()
s = socket.socket(); s.connect(("10.231.0.2", 8081))
chunk = b"x" * (1 << 20)
for i in range(bulk): s.sendall(chunk)
s.close()
PY
ip netns exec "$A" timeout 900 python3 "$WORK/client.py"
sleep 1
kill "$TCPDUMP"; wait "$TCPDUMP" 2>/dev/null || true

base_packets=$(capinfos -M -c "$WORK/base.pcap" | sed -n 's/^Number of packets: *//p')
echo "base capture: $base_packets packets" >&2
parts=("$WORK/base.pcap")
i=1
total_packets=$base_packets
total_bytes=$(stat -c %s "$WORK/base.pcap")
while [ "$total_packets" -lt "$MIN_PACKETS" ] || [ "$total_bytes" -lt "$MIN_BYTES" ]; do
	tcprewrite --seed="$i" --infile="$WORK/base.pcap" --outfile="$WORK/copy$i.pcap" 2>/dev/null
	if [ "$SPREAD" != 0 ]; then
		editcap -F pcap -t "$((i * SPREAD))" "$WORK/copy$i.pcap" "$WORK/shifted.pcap"
		mv "$WORK/shifted.pcap" "$WORK/copy$i.pcap"
	fi
	parts+=("$WORK/copy$i.pcap")
	total_packets=$((total_packets + base_packets))
	total_bytes=$((total_bytes + $(stat -c %s "$WORK/copy$i.pcap")))
	i=$((i + 1))
	[ "$i" -le 400 ] || { echo "make-capture.sh: too many copies" >&2; exit 1; }
done
mkdir -p "$(dirname "$OUT")"
mergecap -a -F pcap -w "$OUT" "${parts[@]}"
capinfos -c -s "$OUT" >&2
