#!/usr/bin/env bash
# Makes the real iptables outputs the parser is tested on: kube-proxy-like
# chains (KUBE-SERVICES, KUBE-SVC-* with statistic jumps to KUBE-SEP-* DNAT
# chains, KUBE-MARK-MASQ, KUBE-POSTROUTING with MARK and MASQUERADE, session
# affinity, NodePorts, filter rules) loaded with iptables-restore -c from
# kube-proxy.rules.txt (IPv6: kube-proxy-v6.rules.txt) into a network
# namespace made for the purpose, then dumped with every command a support
# engineer runs. Needs root, iptables 1.8 (nft and legacy) and ip6tables;
# the namespace is removed (by exact name) on exit. The outputs are
# committed; tests never run this script.
#
# Usage: sudo bash parse/testdata/iptables/make.sh
set -euo pipefail
cd "$(dirname "$0")"

NS=nm-t-ipt
cleanup() { ip netns del "$NS" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add "$NS"
nsx() { ip netns exec "$NS" "$@"; }

nsx iptables-restore -c <kube-proxy.rules.txt
nsx ip6tables-restore <kube-proxy-v6.rules.txt

nsx iptables-save >iptables-save.txt
nsx iptables-save -c >iptables-save-c.txt
nsx iptables -t nat -nvL >iptables-nat-nvL.txt
nsx iptables -t nat -L -n --line-numbers >iptables-nat-L-n-line-numbers.txt
nsx iptables -t nat -nvxL --line-numbers >iptables-nat-nvxL-line-numbers.txt
nsx iptables -t nat -S >iptables-nat-S.txt
nsx iptables -S -v >iptables-S-v.txt
nsx iptables -vL >iptables-vL.txt
nsx ip6tables-save >ip6tables-save.txt
nsx ip6tables -t nat -nvL >ip6tables-nat-nvL.txt

# Several listings in one file, as a collector script or a pasted terminal
# session has them.
{
	for cmd in "iptables -t nat -nvL" "iptables -nvL" "iptables -t nat -S KUBE-SVC-TCOU7JCQXEZGVUNU" "iptables -t nat -L KUBE-SEP-YIL6JZP7A3QYXJU2"; do
		echo "root@node1:~# $cmd"
		# shellcheck disable=SC2086
		nsx $cmd
	done
	echo "root@node1:~# ip6tables -t nat -L KUBE-SVC-TCOU7JCQXEZGVUNU -n"
	nsx ip6tables -t nat -L KUBE-SVC-TCOU7JCQXEZGVUNU -n
} >session.txt

# The same rules in the legacy backend too: iptables-legacy-save has its own
# header, and iptables-nft then warns on standard error, which a collector
# that captures 2>&1 mixes into the middle of the dump.
nsx iptables-legacy-restore -c <kube-proxy.rules.txt
nsx iptables-legacy-save >iptables-legacy-save.txt
nsx iptables-save >iptables-save-with-warning.txt 2>&1
