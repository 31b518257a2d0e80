#!/bin/bash
# bench.sh: netmortem's capture reader side by side with the tools people
# would use instead, on the same large capture (see make-capture.sh).
#
# 1. Paired runs. Each pair runs two commands in turn (which goes first
#    alternates) and takes the ratio of their wall times; the median of
#    PAIRS ratios, their quartiles and their range are printed. On a shared
#    machine whose speed drifts, a ratio taken within a pair holds where
#    separate medians do not. Pairs: netmortem analyze against tcpdump's
#    bare filter pass (reading and BPF filtering, nothing printed: how fast
#    one core reads the capture), against the bare decode loop, and
#    netmortem flows -o csv against analyze (time and peak RSS). The
#    median ratio of CPU times (user plus system) is printed too: on a
#    loaded machine it is steadier than the wall times'.
# 2. Every tool in turn, RUNS rounds: median wall time, its range, and peak
#    RSS (GNU time), and each tool's time divided by analyze's.
# 3. With PROFILE=N (default 5; 0 skips it), N CPU profiles of analyze
#    (NETMORTEM_CPUPROFILE) summed by stage: where the time goes.
# 4. With INSTR=N (default 200000; 0 skips it) and valgrind installed, the
#    instructions analyze and flows -o csv execute on the capture's first N
#    packets (cachegrind, GOMAXPROCS=2), a packet's share by stage for
#    analyze: figures that the machine's drift does not move, for telling
#    apart two builds whose times differ by less than the noise.
#
# Targets: analyze at most the bare tcpdump pass's time (median paired
# ratio at most 1.0x) with a peak RSS of at most 128 MB; flows -o csv
# within 1.2x of analyze's time and peak RSS.
#
# Usage: bench/bench.sh [CAPTURE]   (default bench/out/big.pcap, built when
#        missing, which needs root). RUNS=3, PAIRS=9, PROFILE=5 and
#        INSTR=200000 by default.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CAP="${1:-$HERE/out/big.pcap}"
RUNS="${RUNS:-3}"
PAIRS="${PAIRS:-9}"
PROFILE="${PROFILE:-5}"
INSTR="${INSTR:-200000}"
BIN="$HERE/out/bin"

if [ ! -f "$CAP" ]; then
	echo "bench: $CAP missing; building it (needs root)" >&2
	bash "$HERE/make-capture.sh" "$CAP"
fi
mkdir -p "$BIN"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN/netmortem" ./cmd/netmortem && go build -o "$BIN/decodeloop" ./bench/decodeloop)
echo "capture: $CAP ($(du -h "$CAP" | cut -f1), $(capinfos -M -c "$CAP" 2>/dev/null | sed -n 's/^Number of packets: *//p') packets)" >&2

# The commands. netmortem's job: read every packet, fold every connection
# attempt, run every rule, print the findings; flows lists every attempt
# (as tshark's conversation table does), in CSV.
FILTER='tcp[tcpflags] & (tcp-syn|tcp-rst) != 0'
declare -A CMD=(
	[analyze]="$BIN/netmortem analyze -q -o json $CAP"
	[flows-csv]="$BIN/netmortem flows -q -o csv $CAP"
	[flows-table]="$BIN/netmortem flows -q $CAP"
	[flows-json]="$BIN/netmortem flows -q -o json $CAP"
	[decodeloop]="$BIN/decodeloop $CAP"
	[tcpdump-bare]="tcpdump -nn -r $CAP -w /dev/null '$FILTER'"
	[tcpdump-print]="tcpdump -nn -r $CAP '$FILTER'"
	[tshark-conv]="tshark -n -q -z conv,tcp -r $CAP"
)
names=(analyze flows-csv flows-table flows-json decodeloop)
command -v tcpdump >/dev/null && names+=(tcpdump-bare tcpdump-print)
command -v tshark >/dev/null && names+=(tshark-conv)

# run NAME: run NAME's command once, its output to /dev/null; print its
# wall seconds, peak RSS in kB and CPU seconds (user plus system).
run() {
	/usr/bin/time -o "$BIN/time.out" -f '%e %M %U %S' sh -c "${CMD[$1]} >/dev/null 2>&1" || true
	tail -1 "$BIN/time.out" | awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }'
}

# stats: read numbers, one a line; print "median q1-q3 min-max".
stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "- - -"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		q1 = v[int((NR + 3) / 4)]; q3 = v[int((3 * NR + 3) / 4)]
		printf "%.3f %.3f-%.3f %.3f-%.3f\n", m, q1, q3, v[1], v[NR] }'
}

# pair A B: PAIRS paired runs of A and B; print the median ratio of wall
# times (A/B) with quartiles and range, of peak RSS, and of CPU times.
pair() {
	local a=$1 b=$2 i x y ta tb ma mb ca cb ratios=() mems=() cpus=()
	for i in $(seq "$PAIRS"); do
		if [ $((i % 2)) = 1 ]; then x=$(run "$a"); y=$(run "$b"); else y=$(run "$b"); x=$(run "$a"); fi
		read -r ta ma ca <<<"$x"; read -r tb mb cb <<<"$y"
		ratios+=("$(awk -v a="$ta" -v b="$tb" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "" }')")
		mems+=("$(awk -v a="$ma" -v b="$mb" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "" }')")
		cpus+=("$(awk -v a="$ca" -v b="$cb" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "" }')")
		printf '  pair %d: %s %s s %s MB %s s CPU, %s %s s %s MB %s s CPU\n' "$i" "$a" "$ta" "$((ma / 1024))" "$ca" \
			"$b" "$tb" "$((mb / 1024))" "$cb" >&2
	done
	read -r m q r < <(printf '%s\n' "${ratios[@]}" | grep . | stats)
	read -r mm _ _ < <(printf '%s\n' "${mems[@]}" | grep . | stats)
	read -r cm _ _ < <(printf '%s\n' "${cpus[@]}" | grep . | stats)
	printf '%-26s %8sx %14s %14s %10sx %10sx\n' "$a / $b" "$m" "$q" "$r" "$mm" "$cm"
}

if [ "$PAIRS" -gt 0 ]; then
	echo "paired runs, $PAIRS pairs each: ratio of wall times (median, quartiles, range), of peak RSS and of CPU times (medians)"
	printf '%-26s %9s %14s %14s %11s %11s\n' PAIR WALL QUARTILES RANGE RSS CPU
	command -v tcpdump >/dev/null && pair analyze tcpdump-bare
	pair analyze decodeloop
	pair flows-csv analyze
fi

if [ "$RUNS" -gt 0 ]; then
	# Tools run in turn, round after round, so that a machine whose speed
	# drifts slows them all alike; each tool's figure is its median.
	declare -A walls rsss
	for _ in $(seq "$RUNS"); do
		for n in "${names[@]}"; do
			read -r w r _ < <(run "$n")
			walls[$n]+="$w "; rsss[$n]+="$r "
		done
	done
	echo
	echo "every tool in turn, $RUNS rounds: median wall time (range) and peak RSS"
	nm_wall=$(tr ' ' '\n' <<<"${walls[analyze]}" | grep . | stats | cut -d' ' -f1)
	printf '%-14s %8s %12s %12s %16s\n' TOOL WALL_S RANGE PEAK_RSS_MB "TIME / ANALYZE"
	for n in "${names[@]}"; do
		read -r w _ r < <(tr ' ' '\n' <<<"${walls[$n]}" | grep . | stats)
		rss=$(tr ' ' '\n' <<<"${rsss[$n]}" | grep . | stats | cut -d' ' -f1)
		printf '%-14s %8s %12s %12.0f %16s\n' "$n" "$w" "$r" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
			"$(awk -v a="$w" -v b="$nm_wall" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')"
	done
fi

if [ "$PROFILE" -gt 0 ]; then
	# Where analyze's CPU time goes, over PROFILE runs: each stage's
	# cumulative samples (capture/track/pipeline.go has the stages).
	rm -f "$BIN"/cpu.*.prof
	for i in $(seq "$PROFILE"); do
		NETMORTEM_CPUPROFILE="$BIN/cpu.$i.prof" "$BIN/netmortem" analyze -q -o json "$CAP" >/dev/null 2>&1 || true
	done
	top=$(cd "$ROOT" && go tool pprof -top -cum -nodecount=100000 "$BIN/netmortem" "$BIN"/cpu.*.prof 2>/dev/null)
	total=$(sed -n 's/.*Total samples = \([0-9.]*\)\(m\{0,1\}\)s.*/\1 \2/p' <<<"$top" | awk '{ print ($2 == "m") ? $1 / 1000 : $1 }')
	cum() { # cum FUNC: FUNC's cumulative seconds
		awk -v f="$1" '$6 == f { v = $4; sub(/s$/, "", v); if (v ~ /m$/) { sub(/m$/, "", v); v /= 1000 }; print v; exit }' <<<"$top"
	}
	echo
	echo "analyze's CPU time by stage, $PROFILE profiled runs: seconds a run (share)"
	for st in "reading and decoding:github.com/netmortem/netmortem/capture/track.(*Tracker).readStage" \
		"tracking, the shards:github.com/netmortem/netmortem/capture/track.(*Tracker).track.func1" \
		"settling in capture order:github.com/netmortem/netmortem/capture/track.(*Tracker).track.func2" \
		"finishing the live streams:github.com/netmortem/netmortem/capture/track.(*Tracker).Finish" \
		"read syscalls (in reading):syscall.Syscall" \
		"kernel zeroing new streams:github.com/netmortem/netmortem/capture/track.(*streamStore).alloc" \
		"parking closed streams:github.com/netmortem/netmortem/capture/track.(*parkStore).park" \
		"garbage collector:runtime.gcBgMarkWorker" \
		"rules:github.com/netmortem/netmortem/analyzer.Run"; do
		s=$(cum "${st#*:}")
		printf '  %-30s %6.3f s (%s)\n' "${st%%:*}" "$(awk -v s="${s:-0}" -v n="$PROFILE" 'BEGIN { print s / n }')" \
			"$(awk -v s="${s:-0}" -v t="$total" 'BEGIN { if (t > 0) printf "%.0f%%", 100 * s / t; else print "-" }')"
	done
	printf '  %-30s %6.3f s\n' "all samples" "$(awk -v t="$total" -v n="$PROFILE" 'BEGIN { print t / n }')"
fi

if [ "$INSTR" -gt 0 ] && command -v valgrind >/dev/null && command -v cg_annotate >/dev/null && command -v editcap >/dev/null; then
	# Instructions, counted by cachegrind on the first INSTR packets (a
	# copy cut by editcap), GOMAXPROCS=2. Under cachegrind the Go
	# scheduler's spinning and preemptions follow the (slowed) clock, and
	# once in a while take hundreds of millions of instructions: each
	# command runs three times and its run with the fewest is kept, and the
	# scheduler's instructions are shown apart from the packets'.
	head="$BIN/first.pcap"
	editcap -F pcap -r "$CAP" "$head" "1-$INSTR" >/dev/null
	instr() { # instr NAME ARGS...: run netmortem ARGS on $head under cachegrind 3 times; keep the fewest
		local name=$1 i n best=
		shift
		for i in 1 2 3; do
			GOMAXPROCS=2 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$BIN/cg.$name.$i.out" \
				"$BIN/netmortem" "$@" "$head" >/dev/null 2>"$BIN/cg.$name.err" || true
			n=$(sed -n 's/.*I *refs: *//p' "$BIN/cg.$name.err" | tr -d ,)
			if [ -n "$n" ] && { [ -z "$best" ] || [ "$n" -lt "$best" ]; }; then
				best=$n
				cp "$BIN/cg.$name.$i.out" "$BIN/cg.$name.out"
			fi
		done
		echo "$best"
	}
	# stages FILE: a cachegrind file's instructions by stage, a packet's.
	stages() {
		cg_annotate --auto=no --threshold=0 "$1" 2>/dev/null | sed -n '/file:function/,$p' |
			awk -v p="$INSTR" '$1 ~ /^[0-9,]+$/ && NF >= 2 {
				n = $1; gsub(",", "", n); f = $0; sub(/^[^)]*\) */, "", f); total += n
				path = f; sub(/:[^:]*$/, "", path); sub(/^[^:]*:/, "", f) # the file, and the function named by f
				if (path ~ /runtime\/(proc|lock_spinbit|lock_futex|os_linux|signal_unix|preempt|sys_linux_amd64)\./) s = "Go scheduler (timing-dependent)"
				else if (f ~ /capture\/decode/) s = "decoding headers"
				else if (f ~ /pcapfile|capture\.feed|Stage\)\.(Hot|Add|send)|plain(Record|Unix)|prepareHot|Tracker\)\.(own|seal|prepare)|nextSeg|syscall/) s = "walking records, handing them on"
				else if (f ~ /streamTable|shard\)\.get|streamStore\)\.at|Key\)\.Equal/) s = "finding the stream"
				else if (f ~ /park|encodeStream|decodeStream|transform/) s = "parking closed streams"
				else if (f ~ /capture\/track\.\(\*shard\)|addHistory|retransmitted|dataSizes|segAt|Tracker\)\.track\.func1$/) s = "folding into the stream"
				else if (f ~ /finishStreams|endFeed|streamEndOf|ended\)|connState|attempt|modelSeg|historyLetters|Tracker\)\.time$|CloneInto|handOn|handedOn|flows|jsontime|strconv|netip|^time\./) s = "finishing streams, building attempts, writing rows"
				else if (f ~ /settle|noteSYN|isnTable|keyStore|keepKey|forget|finalize|foldInto|Tracker\)\.acc|maps|aeshash|statKey|Tracker\)\.track\.func2$/) s = "settling"
				else if (path ~ /runtime\/(mgc|mbitmap|mheap|mwbbuf)/ || f ~ /^runtime\.(scan|gc|greyobject|findObject|typePointers|bulkBarrier|tryDefer|runGCProg)/) s = "garbage collector"
				else s = "the rest (start-up, rules, report)"
				by[s] += n
			} END {
				for (s in by) printf "%.0f\t%s\n", by[s] / p, s
			}' | sort -rn | awk -F'\t' '{ printf "  %-52s %6s\n", $2, $1 }'
	}
	echo
	echo "instructions (cachegrind, GOMAXPROCS=2, the fewest of 3 runs) on the first $INSTR packets, a packet's by stage"
	for run in "analyze:analyze -q -o json" "flows-csv:flows -q -o csv"; do
		# shellcheck disable=SC2086 # the arguments are words
		n=$(instr "${run%%:*}" ${run#*:})
		printf '%s: %s in all, %s a packet\n' "${run%%:*}" "$n" "$(awk -v n="${n:-0}" -v p="$INSTR" 'BEGIN { printf "%.0f", n / p }')"
		stages "$BIN/cg.${run%%:*}.out"
	done
fi
