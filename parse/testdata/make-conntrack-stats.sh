#!/usr/bin/env bash
# make-conntrack-stats.sh - real conntrack -S and /proc/net/stat/nf_conntrack
# outputs for the conntrack-stats parser's and the conntrack-drops rule's
# tests.
#
# Needs root, iproute2, iptables, conntrack and python3. One namespace,
# nm-t-ctstat: a DNAT of 10.96.0.10:53 to two local "DNS servers" chosen at
# random, as kube-proxy spreads kube-dns, and 3,000 pairs of UDP datagrams
# sent at once from two threads on one socket, as glibc sends the A and
# AAAA queries of one lookup. Their conntrack entries race: this kernel
# resolves the clashes (clash_resolve); kernels before 5.x failed the
# insert instead (insert_failed), dropping a query. The namespace is
# removed by exact name on exit.
#
# conntrack/conntrack-S-insert-failed.txt (conntrack-tools 1.4.4 on a 4.x
# kernel, whose -S prints searched, new, delete and delete_list too) and
# conntrack/proc-stat-nf_conntrack-full.txt (the /proc table of a 4.x kernel
# whose table is full: entries at nf_conntrack_max, drops and early drops)
# are written by hand in those versions' exact formats: this kernel neither
# fails the inserts nor lets a test fill the table in reasonable time.
#
# Usage: sudo bash parse/testdata/make-conntrack-stats.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}/conntrack"
mkdir -p "$OUT"
cleanup() { ip netns del nm-t-ctstat 2>/dev/null || true; }
trap cleanup EXIT
cleanup

C="ip netns exec nm-t-ctstat"
ip netns add nm-t-ctstat
$C ip link set lo up
$C ip link add nm-t-s0 type veth peer name nm-t-s1
$C ip addr add 10.86.0.1/24 dev nm-t-s0
$C ip link set nm-t-s0 up
$C ip link set nm-t-s1 up
$C ip route add default via 10.86.0.254 dev nm-t-s0 onlink
$C sysctl -qw net.ipv4.conf.all.route_localnet=1
$C conntrack -S >"$OUT/conntrack-S-idle.txt"
$C iptables -t nat -A OUTPUT -d 10.96.0.10/32 -p udp --dport 53 -m statistic --mode random --probability 0.5 -j DNAT --to-destination 127.0.0.53:53
$C iptables -t nat -A OUTPUT -d 10.96.0.10/32 -p udp --dport 53 -j DNAT --to-destination 127.0.0.54:53
timeout 60 $C python3 - <<'PY'
import socket, threading
for a in ("127.0.0.53", "127.0.0.54"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((a, 53))
    def serve(s=s):
        s.settimeout(3)
        try:
            while True:
                d, addr = s.recvfrom(512); s.sendto(d, addr)
        except OSError:
            pass
    threading.Thread(target=serve, daemon=True).start()
for _ in range(3000):
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); c.connect(("10.96.0.10", 53))
    b = threading.Barrier(2)
    def send(q):
        b.wait(); c.send(q)
    ts = [threading.Thread(target=send, args=(q,)) for q in (b"A", b"AAAA")]
    for t in ts: t.start()
    for t in ts: t.join()
    c.close()
PY
$C conntrack -S >"$OUT/conntrack-S-races.txt"
$C cat /proc/net/stat/nf_conntrack >"$OUT/proc-stat-nf_conntrack.txt"
