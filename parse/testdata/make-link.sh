#!/usr/bin/env bash
# make-link.sh - real link listings for the link parsers' tests: ip link,
# ip -d link, ip -j link, bridge -d link show and the bridge ports'
# hairpin_mode files as `grep . /sys/class/net/*/brport/hairpin_mode` prints
# them.
#
# Needs root, iproute2 and the vxlan and bridge modules (this kernel has no
# geneve or wireguard). One namespace, nmg1-link, holds: nmg1-eth0 (a veth
# with MTU 1500, its peer nmg1-peer), a VXLAN nmg1-vx (id 1, dstport 4789,
# MTU 1450) over it (lowered to MTU 1460 for ip-d-link-underlay-1460.txt),
# and a bridge
# nmg1-br with two veth ports: nmg1-v1 with hairpin on and nmg1-v2 with
# hairpin off (their peers nmg1-p1, nmg1-p2 outside the bridge). It is
# removed by exact name on exit.
#
# Usage: sudo bash parse/testdata/make-link.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}/link"
mkdir -p "$OUT"
NS=nmg1-link
cleanup() { ip netns del "$NS" 2>/dev/null || true; }
trap cleanup EXIT
cleanup

N="ip netns exec $NS"
ip netns add "$NS"
$N ip link set lo up
$N ip link add nmg1-eth0 address 02:71:00:00:00:01 type veth peer name nmg1-peer address 02:71:00:00:00:02
$N ip addr add 10.71.0.1/24 dev nmg1-eth0
$N ip link add nmg1-vx address 02:71:00:00:00:0a mtu 1450 type vxlan id 1 dstport 4789 local 10.71.0.1 dev nmg1-eth0
$N ip link add nmg1-br address 02:71:00:00:00:0c type bridge
$N ip link add nmg1-v1 address 02:71:00:00:00:11 type veth peer name nmg1-p1 address 02:71:00:00:00:21
$N ip link add nmg1-v2 address 02:71:00:00:00:12 type veth peer name nmg1-p2 address 02:71:00:00:00:22
$N ip link set nmg1-v1 master nmg1-br
$N ip link set nmg1-v2 master nmg1-br
$N bridge link set dev nmg1-v1 hairpin on
$N bridge link set dev nmg1-v2 hairpin off
for d in nmg1-eth0 nmg1-peer nmg1-vx nmg1-br nmg1-v1 nmg1-v2 nmg1-p1 nmg1-p2; do
	$N ip link set "$d" up
done
sleep 1
$N ip link >"$OUT/ip-link.txt"
$N ip -d link >"$OUT/ip-d-link.txt"
$N ip -j link >"$OUT/ip-j-link.txt"
$N ip -j -d link >"$OUT/ip-j-d-link.txt"
$N bridge link show >"$OUT/bridge-link.txt"
$N bridge -d link show >"$OUT/bridge-d-link.txt"
# The link the VXLAN runs over lowered to 1460 (a cloud network's MTU),
# which leaves the VXLAN's 1450 no room for its 50 bytes: the listing then.
$N ip link set nmg1-eth0 mtu 1460
$N ip -d link >"$OUT/ip-d-link-underlay-1460.txt"
# /sys/class/net is the namespace's own only in a mount namespace that
# remounts sysfs.
$N unshare -m sh -c 'umount -l /sys && mount -t sysfs sysfs /sys && cd / && grep . /sys/class/net/*/brport/hairpin_mode' >"$OUT/brport-hairpin-grep.txt"
