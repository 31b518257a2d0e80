#!/usr/bin/env bash
# make-nstat.sh - real nstat outputs for the nstat parser's tests, taken in
# a node whose strict reverse-path filter has dropped packets, so that
# TcpExtIPReversePathFilter is not zero: nstat (the increments since its
# first run), nstat -a, nstat -az, nstat -az TcpExtIPReversePathFilter, and
# netstat -s of the same node (another format, which nstat must not take).
#
# Needs root, iproute2, nstat and netstat. Namespaces nmg4-c (client,
# 10.97.0.1 and 10.98.0.1 on nmg4-c0), nmg4-n (node, 10.97.0.2 on nmg4-n0,
# 10.96.0.2 on nmg4-d1) and nmg4-o (behind nmg4-d1). The node routes
# 10.98.0.0/24 by nmg4-d1 and filters strictly (rp_filter 1), so the
# client's pings from 10.98.0.1, arriving on nmg4-n0, are dropped. nstat's
# history is kept in a file of its own. Everything is removed by exact name
# on exit.
#
# Usage: sudo bash parse/testdata/make-nstat.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}/nstat"
mkdir -p "$OUT"
NS=(nmg4-c nmg4-n nmg4-o)
cleanup() { for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null || true; done; rm -f "$NSTAT_HISTORY"; }
export NSTAT_HISTORY
NSTAT_HISTORY="$(mktemp /tmp/nmg4-nstat.XXXXXX)"
rm -f "$NSTAT_HISTORY"
trap cleanup EXIT
cleanup
for n in "${NS[@]}"; do ip netns add "$n"; ip -n "$n" link set lo up; done
ip link add nmg4-c0 netns nmg4-c type veth peer name nmg4-n0 netns nmg4-n
ip link add nmg4-d1 netns nmg4-n type veth peer name nmg4-o0 netns nmg4-o
ip -n nmg4-c addr add 10.97.0.1/24 dev nmg4-c0
ip -n nmg4-c addr add 10.98.0.1/24 dev nmg4-c0
ip -n nmg4-n addr add 10.97.0.2/24 dev nmg4-n0
ip -n nmg4-n addr add 10.96.0.2/24 dev nmg4-d1
ip -n nmg4-c link set nmg4-c0 up
ip -n nmg4-n link set nmg4-n0 up
ip -n nmg4-n link set nmg4-d1 up
ip -n nmg4-o link set nmg4-o0 up
ip -n nmg4-c route add default via 10.97.0.2
ip -n nmg4-n route add 10.98.0.0/24 via 10.96.0.1 dev nmg4-d1
ip netns exec nmg4-n sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.nmg4-n0.rp_filter=1
ip netns exec nmg4-c ping -c 1 -W 1 -I 10.97.0.1 10.97.0.2 >/dev/null
# The first run starts nstat's history; the second prints the increments.
ip netns exec nmg4-n nstat >/dev/null
ip netns exec nmg4-c timeout 4 bash -c 'echo >/dev/tcp/10.97.0.2/8080' 2>/dev/null || true
ip netns exec nmg4-c ping -c 3 -W 1 -I 10.98.0.1 10.97.0.2 >/dev/null || true
ip netns exec nmg4-n nstat >"$OUT/nstat.txt"
ip netns exec nmg4-n nstat -az >"$OUT/nstat-az.txt"
ip netns exec nmg4-n nstat -a >"$OUT/nstat-a.txt"
ip netns exec nmg4-n nstat -az TcpExtIPReversePathFilter >"$OUT/nstat-az-rpf.txt"
ip netns exec nmg4-n netstat -s >"$OUT/netstat-s.txt"
