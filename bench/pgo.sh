#!/bin/bash
# pgo.sh: cmd/netmortem/default.pgo, the CPU profile that go build and go
# install use to optimize netmortem (profile-guided optimization: the Go
# toolchain inlines the calls the profile shows hot, past its usual size
# limit, and turns the hot interface calls into direct ones). The profile
# is RUNS runs each of analyze -o json and flows -o csv on the bench
# capture (see make-capture.sh), merged: the paths every capture takes
# (the reading, the tracking, the writing of attempts); netmortem's other
# work (parsing command outputs, the rules) takes little time and is built
# as without a profile.
#
# A profile a little older than the code still applies (the toolchain
# matches it by function and line offsets within functions); it is
# made again after changes to the capture path, and the commit says by
# how much the build's instructions moved (make bench, part 4).
#
# Usage: bench/pgo.sh [CAPTURE]   (default bench/out/big.pcap, built when
#        missing, which needs root). RUNS=5 by default.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CAP="${1:-$HERE/out/big.pcap}"
RUNS="${RUNS:-5}"

if [ ! -f "$CAP" ]; then
	echo "pgo: $CAP missing; building it (needs root)" >&2
	bash "$HERE/make-capture.sh" "$CAP"
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$TMP/netmortem" ./cmd/netmortem)
for i in $(seq "$RUNS"); do
	# analyze exits 1 when it finds something, as it does here.
	NETMORTEM_CPUPROFILE="$TMP/analyze.$i.prof" "$TMP/netmortem" analyze -q -o json "$CAP" >/dev/null || [ $? -eq 1 ]
	NETMORTEM_CPUPROFILE="$TMP/flows.$i.prof" "$TMP/netmortem" flows -q -o csv "$CAP" >/dev/null
done
go tool pprof -proto "$TMP"/*.prof >"$TMP/default.pgo" 2>/dev/null
mv "$TMP/default.pgo" "$ROOT/cmd/netmortem/default.pgo"
echo "pgo: cmd/netmortem/default.pgo from $RUNS runs each of analyze and flows -o csv on $CAP" >&2
