#!/usr/bin/env bash
# normalize.sh — throughput of `gyro normalize` in MB/s of input on the real text corpora.
#
#   tests/bench/normalize.sh [path/to/gyro] [runs]      (defaults: $GYRO or build/gyro, 5 runs)
#
# Inputs: every file under ../shared/corpora/text (chinese-poetry JSON — 全唐诗 is Traditional —,
# review CSVs, MSRA news, Tatoeba, fortunes-zh), about 74 MB, read as one run of the stage
# writing a Document stream to /dev/null; then the Traditional and the Simplified parts alone,
# and --text output. Each figure is the median of `runs` runs (MB = 10^6 bytes). Run it on a
# quiet machine; it is niced.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
GYRO=${1:-${GYRO:-$root/build/gyro}}
RUNS=${2:-5}
TEXT=${SHARED:-$root/../shared}/corpora/text
[ -d "$TEXT" ] || { echo "no corpus at $TEXT" >&2; exit 1; }

mapfile -t all < <(find "$TEXT" -type f ! -name LICENSE ! -name copyright | sort)
mapfile -t trad < <(find "$TEXT/chinese-poetry/全唐诗" -type f -name '*.json' | sort)
mapfile -t simp < <(find "$TEXT/reviews" "$TEXT/news" -type f | sort)

bytes_of() { cat "$@" | wc -c; }

# median MB/s of RUNS runs of: gyro normalize $opts files... > /dev/null
measure() {
  local label=$1 opts=$2; shift 2
  local bytes; bytes=$(bytes_of "$@")
  local rates=() i t0 t1
  for ((i = 0; i < RUNS; i++)); do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    nice "$GYRO" normalize -q $opts "$@" > /dev/null
    t1=$(date +%s.%N)
    rates+=("$(awk -v b="$bytes" -v s="$t0" -v e="$t1" 'BEGIN{printf "%.2f", b / 1e6 / (e - s)}')")
  done
  local med; med=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
  printf '%-34s %7.1f MB in %2d files  median %6.2f MB/s  (runs: %s)\n' \
    "$label" "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$#" "$med" "${rates[*]}"
}

echo "gyro normalize throughput, $RUNS runs each, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
measure "all text, Document stream" "" "${all[@]}"
measure "all text, --text" "--text" "${all[@]}"
measure "Traditional (全唐诗), stream" "" "${trad[@]}"
measure "Simplified (reviews, news), stream" "" "${simp[@]}"
measure "all text, --no-t2s, stream" "--no-t2s" "${all[@]}"
