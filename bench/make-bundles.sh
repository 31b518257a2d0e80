#!/usr/bin/env bash
# make-bundles.sh - write N small evidence bundles for `netmortem batch`
# tests and benchmarks: copies of the committed incident bundles and their
# controls, round robin, each in its own directory.
#
# Usage: bash bench/make-bundles.sh OUTDIR [N]   (N defaults to 1000)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:?usage: make-bundles.sh OUTDIR [N]}"
N="${2:-1000}"
SRC=(ephemeral-nodeport ephemeral-nodeport-control stale-dnat stale-dnat-control lb-conflict lb-conflict-control probe-restart-loop probe-restart-loop-control apiserver-affinity apiserver-affinity-control)
mkdir -p "$OUT"
for ((i = 0; i < N; i++)); do
  s="${SRC[$((i % ${#SRC[@]}))]}"
  d="$OUT/$(printf 'bundle-%05d' "$i")-$s"
  mkdir -p "$d"
  cp "$HERE/../fixtures/incidents/$s"/* "$d/"
done
echo "$N bundles in $OUT"
