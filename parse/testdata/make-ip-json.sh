#!/usr/bin/env bash
# make-ip-json.sh - real `ip -j` (JSON) outputs of ip neigh, ip addr and ip
# route for the ip-json parsers' tests.
#
# Needs root and iproute2. Two namespaces: nm-t-json holds nm-t-j0 with
# 10.77.0.1/24 (and a secondary labelled VIP, IPv6 fd77::1/64) and a veth
# pair nm-t-jd/nm-t-je with 10.77.1.1/24 on nm-t-jd; nm-t-json2 holds the
# veth peer nm-t-j1 with 10.77.0.2. nm-t-json's neighbors: 10.77.0.2 reachable, a permanent one, one
# being resolved (INCOMPLETE) and one that failed (FAILED); its routes: a
# default route, a static route with src and metric, a blackhole route, a
# multipath route and an IPv6 default route. They are removed by exact name
# on exit.
#
# Usage: sudo bash parse/testdata/make-ip-json.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}/ipjson"
mkdir -p "$OUT"
cleanup() { for ns in nm-t-json nm-t-json2; do ip netns del "$ns" 2>/dev/null || true; done; }
trap cleanup EXIT
cleanup

J="ip netns exec nm-t-json"
K="ip netns exec nm-t-json2"
ip netns add nm-t-json
ip netns add nm-t-json2
$J ip link set lo up
$J ip link add nm-t-j0 address 02:77:00:00:00:01 type veth peer name nm-t-j1 address 02:77:00:00:00:02 netns nm-t-json2
$J ip link add nm-t-jd address 02:77:00:00:00:0d type veth peer name nm-t-je
$J ip addr add 10.77.0.1/24 dev nm-t-j0
$J ip addr add 10.77.0.9/24 dev nm-t-j0 label nm-t-j0:vip
$J ip -6 addr add fd77::1/64 dev nm-t-j0 nodad
$J ip addr add 10.77.1.1/24 dev nm-t-jd
$J ip link set nm-t-j0 up
$J ip link set nm-t-jd up
$J ip link set nm-t-je up
$K ip addr add 10.77.0.2/24 dev nm-t-j1
$K ip link set nm-t-j1 up
$J ip route add default via 10.77.0.254 dev nm-t-j0 proto static metric 100
$J ip route add 10.78.0.0/16 via 10.77.0.2 dev nm-t-j0 src 10.77.0.1 metric 50
$J ip route add blackhole 10.79.0.0/16
$J ip route add 10.80.0.0/16 nexthop via 10.77.0.2 dev nm-t-j0 weight 1 nexthop via 10.77.1.2 dev nm-t-jd weight 2
$J ip -6 route add default via fd77::fe dev nm-t-j0 metric 1024
$J ip neigh add 10.77.0.50 lladdr 02:77:00:00:00:50 dev nm-t-j0 nud permanent
sleep 1
$J ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1 || true # REACHABLE
$J ping -c 1 -W 1 10.77.0.99 >/dev/null 2>&1 || true # nobody: FAILED after three probes
sleep 3
$J ping -c 1 -W 4 10.77.0.98 >/dev/null 2>&1 & # being resolved: INCOMPLETE
sleep 0.5
# Each JSON output with its text form, taken right after it, which the
# tests hold it equal to.
$J ip -j neigh >"$OUT/ip-j-neigh.txt"
$J ip neigh >"$OUT/ip-neigh.txt"
$J ip -j -p neigh >"$OUT/ip-j-p-neigh.txt"
$J ip -j addr >"$OUT/ip-j-addr.txt"
$J ip addr >"$OUT/ip-addr.txt"
$J ip -j route >"$OUT/ip-j-route.txt"
$J ip route >"$OUT/ip-route.txt"
$J ip -6 -j route >"$OUT/ip-6-j-route.txt"
$J ip -6 route >"$OUT/ip-6-route.txt"
wait
