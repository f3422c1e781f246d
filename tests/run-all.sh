#!/usr/bin/env bash
# run-all.sh — run every Check suite, then every end-to-end script; print a summary.
#   tests/run-all.sh BIN... -- SCRIPT...
# Each end-to-end script gets GYRO (the binary under test), GYRO_BUILD and SHARED (../shared) in
# its environment and its own scratch directory in TMPDIR; exit status 77 means "skipped".
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GYRO_BUILD:-build}
export GYRO="$here/$build/gyro" GYRO_BUILD="$build" SHARED="${SHARED:-$here/../shared}"
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-600}
pass=0; fail=0; skip=0; failed=()
bins=(); scripts=(); seen_sep=0
for a in "$@"; do
  if [ "$a" = "--" ]; then seen_sep=1; continue; fi
  if [ $seen_sep = 0 ]; then bins+=("$a"); else scripts+=("$a"); fi
done
for b in "${bins[@]}"; do
  start=$(date +%s.%N)
  if (cd "$here" && "./$b"); then rc=0; else rc=$?; fi
  t=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
  if [ $rc = 0 ]; then pass=$((pass+1)); echo "PASS  $b (${t}s)"; else fail=$((fail+1)); failed+=("$b"); echo "FAIL  $b (exit $rc)"; fi
done
for s in "${scripts[@]}"; do
  tmp=$(mktemp -d)
  start=$(date +%s.%N)
  if (cd "$here" && TMPDIR="$tmp" bash "$s" > "$tmp/log" 2>&1); then rc=0; else rc=$?; fi
  t=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
  if [ $rc = 0 ]; then pass=$((pass+1)); echo "PASS  $s (${t}s)"
  elif [ $rc = 77 ]; then skip=$((skip+1)); echo "SKIP  $s: $(tail -n 1 "$tmp/log")"
  else fail=$((fail+1)); failed+=("$s"); echo "FAIL  $s (exit $rc)"; tail -n 40 "$tmp/log" | sed 's/^/    /'; fi
  rm -rf "$tmp"
done
echo "== $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ] || { printf 'failed: %s\n' "${failed[@]}"; exit 1; }
