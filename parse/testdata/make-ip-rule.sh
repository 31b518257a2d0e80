#!/bin/sh
# make-ip-rule.sh writes parse/testdata/rule/: ip rule and ip -6 rule output of a fresh network
# namespace (unshare -n, as root) holding policy rules of the kinds CNIs and cloud agents add.
# Usage: sudo parse/testdata/make-ip-rule.sh
set -eu
OUT=$(cd "$(dirname "$0")" && pwd)/rule
mkdir -p "$OUT"
unshare -n sh -c '
ip link set lo up
ip rule add from 10.1.0.0/16 lookup 100 pref 100
ip rule add fwmark 0x4000/0x4000 lookup 200 pref 90
ip rule add not from all iif lo lookup 300 pref 110
ip rule add to 10.9.0.0/16 unreachable pref 120
ip rule add iif eth0 oif eth1 table main pref 130
ip rule add from 10.0.1.23 to 10.0.0.0/16 lookup 2 pref 1536
ip rule add to 10.0.1.23 lookup main pref 512
ip -6 rule add from fd00::/64 lookup 400 pref 140
echo "root@node-1:~# ip rule"
ip rule
echo "root@node-1:~# ip -6 rule"
ip -6 rule
' >"$OUT/ip-rule.txt"
