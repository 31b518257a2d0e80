#!/bin/sh
# make-arping.sh writes parse/testdata/client/arping-two-macs.txt: an iputils arping transcript in
# which one address (10.99.0.10) is answered from two MACs, as when every node answers ARP for a
# LoadBalancer address; and one to an address nothing holds. Network namespaces nmt4-a (client),
# nmt4-s1 and nmt4-s2 (both holding 10.99.0.10) and nmt4-br (the bridge) are created and removed by
# name. Needs root, iproute2 and iputils-arping. Usage: sudo parse/testdata/make-arping.sh
set -eu
OUT=$(cd "$(dirname "$0")" && pwd)/client/arping-two-macs.txt
NSS="nmt4-a nmt4-s1 nmt4-s2 nmt4-br"
cleanup() { for ns in $NSS; do ip netns del "$ns" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM
for ns in $NSS; do ip netns add "$ns"; done
ip -n nmt4-br link add br0 type bridge
ip -n nmt4-br link set br0 up
for ns in nmt4-a nmt4-s1 nmt4-s2; do
	ip link add eth0 netns "$ns" type veth peer name "p-$ns" netns nmt4-br
	ip -n nmt4-br link set "p-$ns" master br0 up
	ip -n "$ns" link set eth0 up
done
ip -n nmt4-a addr add 10.99.0.2/24 dev eth0
ip -n nmt4-s1 addr add 10.99.0.10/24 dev eth0
ip -n nmt4-s2 addr add 10.99.0.10/24 dev eth0
sleep 2
{
	echo "root@client:~# arping -c 2 -I eth0 10.99.0.10"
	ip netns exec nmt4-a arping -c 2 -I eth0 10.99.0.10 2>&1 || true
	echo "root@client:~# arping -c 2 -w 3 -I eth0 10.99.0.77"
	ip netns exec nmt4-a arping -c 2 -w 3 -I eth0 10.99.0.77 2>&1 || true
} >"$OUT"
