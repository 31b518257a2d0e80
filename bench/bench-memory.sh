#!/bin/bash
# bench-memory.sh: peak memory of `netmortem analyze` on a large capture
# whose flows come and go over time, against the same capture's size.
#
# The capture (bench/out/spread-1g.pcap, about 1 GB and 12 M packets) is
# built by make-capture.sh with SPREAD=60: the base traffic replicated with
# tcprewrite --seed, each copy a minute after the one before, so that
# connections close and leave TIME-WAIT as the capture goes. Peak RSS should
# follow the connections live at once, not the file's size (the target is
# 128 MB; docs/performance.md has the measured table). flows -o csv, which
# lists every attempt, is measured beside it.
#
# Usage: bench/bench-memory.sh [CAPTURE]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CAP="${1:-$HERE/out/spread-1g.pcap}"
BIN="$HERE/out/bin"
if [ ! -f "$CAP" ]; then
	echo "bench-memory: $CAP missing; building it (needs root)" >&2
	SPREAD=60 MIN_BYTES=1073741824 MIN_PACKETS=10000000 bash "$HERE/make-capture.sh" "$CAP"
fi
mkdir -p "$BIN"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN/netmortem" ./cmd/netmortem)
echo "capture: $CAP ($(du -h "$CAP" | cut -f1), $(capinfos -M -c "$CAP" 2>/dev/null | sed -n 's/^Number of packets: *//p') packets, $(capinfos -M -u "$CAP" 2>/dev/null | sed -n 's/^Capture duration: *//p'))" >&2
printf '%-28s %10s %12s\n' RUN WALL_S PEAK_RSS_MB
for mode in analyze "analyze (GOMEMLIMIT=off)" "flows -o csv"; do
	env=() cmd=(analyze -q -o json)
	[ "$mode" != "analyze (GOMEMLIMIT=off)" ] || env=(GOMEMLIMIT=off)
	[ "$mode" != "flows -o csv" ] || cmd=(flows -q -o csv)
	env "${env[@]}" /usr/bin/time -o "$BIN/time.out" -f '%e %M' "$BIN/netmortem" "${cmd[@]}" "$CAP" >/dev/null 2>&1 || true
	read -r wall rss < <(tail -1 "$BIN/time.out")
	printf '%-28s %10s %12s\n' "$mode" "$wall" "$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')"
done
