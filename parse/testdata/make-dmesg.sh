#!/usr/bin/env bash
# make-dmesg.sh - real kernel log lines in each of dmesg's formats, for
# the dmesg log shape's tests.
#
# Needs root, iproute2 and util-linux's dmesg. One namespace, nm-t-dmesg,
# with a bridge nm-t-dmbr whose port nm-t-dm1 comes up and goes down: the
# kernel logs the port's state changes. Only those lines (grep nm-t-dm) are
# kept, printed by dmesg in its default, -T, -x, -r and --time-format iso
# formats. The namespace is removed by exact name on exit.
#
# logs/dmesg-conntrack-full.txt, nf_conntrack's "table full, dropping
# packet" lines with net_ratelimit's, is written by hand in dmesg's default
# format: filling the table would change this machine's global
# nf_conntrack_max.
#
# Usage: sudo bash parse/testdata/make-dmesg.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}/logs"
mkdir -p "$OUT"
cleanup() { ip netns del nm-t-dmesg 2>/dev/null || true; }
trap cleanup EXIT
cleanup

D="ip netns exec nm-t-dmesg"
ip netns add nm-t-dmesg
$D ip link add nm-t-dmbr type bridge
$D ip link set nm-t-dmbr up
$D ip link add nm-t-dm1 type veth peer name nm-t-dm2
$D ip link set nm-t-dm1 master nm-t-dmbr
$D ip link set nm-t-dm2 up
$D ip link set nm-t-dm1 up
sleep 1
$D ip link set nm-t-dm1 down
sleep 0.5
for fmt in "" "-T" "-x" "-r" "--time-format iso"; do
	name="dmesg${fmt// /}"
	# shellcheck disable=SC2086
	dmesg $fmt | grep 'nm-t-dm' | tail -6 >"$OUT/${name//--time-format/-time-format-}.txt"
done
