#!/bin/sh
# make-client.sh writes parse/testdata/client/: curl and wget transcripts made on this machine
# against 127.0.0.1 (a port nothing listens on, and a python3 http.server it starts and stops).
# Usage: parse/testdata/make-client.sh
set -u
OUT=$(cd "$(dirname "$0")" && pwd)/client
mkdir -p "$OUT"
python3 -m http.server 18080 --bind 127.0.0.1 >/dev/null 2>&1 &
SRV=$!
trap 'kill $SRV' EXIT
sleep 1
{
	echo "$ curl -v http://127.0.0.1:18081/"
	curl -sS -v http://127.0.0.1:18081/ 2>&1
	echo "$ curl -sI http://127.0.0.1:18080/"
	curl -sI http://127.0.0.1:18080/ 2>&1
	echo "$ curl -v -o /dev/null http://127.0.0.1:18080/"
	curl -sS -v -o /dev/null http://127.0.0.1:18080/ 2>&1
} >"$OUT/curl-v.txt"
{
	echo "$ wget -O /dev/null http://127.0.0.1:18081/"
	wget -O /dev/null http://127.0.0.1:18081/ 2>&1
	echo "$ wget -O /dev/null http://127.0.0.1:18080/"
	wget -O /dev/null http://127.0.0.1:18080/ 2>&1
} >"$OUT/wget.txt"
