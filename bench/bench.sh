#!/bin/bash
# bench.sh: netmortem's capture reader side by side with the tools people
# would use instead, on the same large capture (see make-capture.sh).
#
# First it runs netmortem analyze and the bare gopacket decode loop
# (bench/decodeloop) in turn, PAIRS times, and prints each pair's ratio of
# wall times and their median: the machine is shared, so a ratio taken
# within a pair holds when its speed drifts. Then, for each command, it
# prints the median wall time and peak RSS of RUNS runs (GNU time), and
# each tool's time divided by netmortem's. The targets: at least 30x
# faster than tshark's TCP conversation table, at least 10x faster than
# tcpdump printing the SYNs and RSTs, and at most the decode loop's time
# (the median paired ratio at most 1.0x), with a peak RSS bounded by live
# connections, not by file size.
#
# Usage: bench/bench.sh [CAPTURE]   (default bench/out/big.pcap, built when
#        missing, which needs root). RUNS=3 and PAIRS=9 by default.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CAP="${1:-$HERE/out/big.pcap}"
RUNS="${RUNS:-3}"
PAIRS="${PAIRS:-9}"
BIN="$HERE/out/bin"

if [ ! -f "$CAP" ]; then
	echo "bench: $CAP missing; building it (needs root)" >&2
	bash "$HERE/make-capture.sh" "$CAP"
fi
mkdir -p "$BIN"
(cd "$ROOT" && go build -o "$BIN/netmortem" ./cmd/netmortem && go build -o "$BIN/decodeloop" ./bench/decodeloop)

# NETMORTEM_CMD is what netmortem runs: the connection table when the
# flows command exists, else a full analysis of the capture.
# netmortem's job: read every packet, fold every connection attempt, run
# every rule, print the findings. The second row lists every attempt (as
# tshark's conversation table does), in CSV.
NM=("$BIN/netmortem" analyze -q -o json "$CAP")
NM_FLOWS=("$BIN/netmortem" flows -q -o csv "$CAP")

# wall CMD...: run CMD once and print its wall time in seconds.
wall() {
	/usr/bin/time -o "$BIN/time.out" -f '%e' "$@" >/dev/null 2>&1 || true
	tail -1 "$BIN/time.out"
}
if [ "$PAIRS" -gt 0 ]; then
	echo "paired runs: netmortem analyze against the decode loop, $PAIRS pairs" >&2
	ratios=()
	for i in $(seq "$PAIRS"); do
		a=$(wall "${NM[@]}"); b=$(wall "$BIN/decodeloop" "$CAP")
		r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print 0 }')
		ratios+=("$r")
		printf '  pair %d: analyze %s s, loop %s s, %sx\n' "$i" "$a" "$b" "$r" >&2
	done
	printf 'median paired ratio, analyze / decode loop: %sx\n' \
		"$(printf '%s\n' "${ratios[@]}" | sort -g | sed -n "$(( (PAIRS + 1) / 2 ))p")"
fi

# measure NAME CMD...: run RUNS times, print "NAME median_wall median_rss_kb".
# Tools run in turn, round after round (netmortem, decode loop, tcpdump,
# tshark, netmortem again ...), so that a machine whose speed drifts slows
# them all alike; each tool's figure is its median over the rounds.
names=(netmortem netmortem-flows-csv decodeloop)
cmds=("${NM[*]}" "${NM_FLOWS[*]}" "$BIN/decodeloop $CAP")
if command -v tcpdump >/dev/null; then
	names+=(tcpdump-syn-rst)
	cmds+=("tcpdump -nn -r $CAP tcp[tcpflags]&(tcp-syn|tcp-rst)!=0")
fi
if command -v tshark >/dev/null; then
	names+=(tshark-conv-tcp)
	cmds+=("tshark -n -q -z conv,tcp -r $CAP")
fi
declare -A walls rsss
for _ in $(seq "$RUNS"); do
	for i in "${!names[@]}"; do
		read -r -a cmd <<<"${cmds[$i]}"
		/usr/bin/time -o "$BIN/time.out" -f '%e %M' "${cmd[@]}" >/dev/null 2>&1 || true
		read -r w r < <(tail -1 "$BIN/time.out")
		walls[$i]+="$w "; rsss[$i]+="$r "
	done
done
median() { tr ' ' '\n' | grep . | sort -g | sed -n "$(( (RUNS + 1) / 2 ))p"; }

echo "capture: $CAP ($(du -h "$CAP" | cut -f1), $(capinfos -M -c "$CAP" 2>/dev/null | sed -n 's/^Number of packets: *//p') packets), median of $RUNS rounds" >&2
results=()
for i in "${!names[@]}"; do
	results+=("${names[$i]} $(median <<<"${walls[$i]}") $(median <<<"${rsss[$i]}")")
done

nm_wall=$(echo "${results[0]}" | cut -d' ' -f2)
printf '%-18s %10s %12s %22s\n' TOOL WALL_S PEAK_RSS_MB "TIME / NETMORTEM TIME"
for r in "${results[@]}"; do
	read -r name wall rss <<<"$r"
	ratio=$(awk -v a="$wall" -v b="$nm_wall" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
	printf '%-18s %10s %12s %22s\n' "$name" "$wall" "$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')" "$ratio"
done
