#!/usr/bin/env bash
# normalize.sh — throughput of `gyro normalize` in MB/s of input on the real text corpora.
#
#   tests/bench/normalize.sh [path/to/gyro] [runs]      (defaults: $GYRO or build/gyro, 5 runs)
#
# Inputs: every file under ../shared/corpora/text (chinese-poetry JSON — 全唐诗 is Traditional —,
# review CSVs, MSRA news, Tatoeba, fortunes-zh), about 74 MB, read as one run of the stage
# writing a Document stream to /dev/null; then the Traditional and the Simplified parts alone,
# and --text output. Each figure is the median of `runs` runs (MB = 10^6 bytes), by wall clock
# and by CPU time of the process (user + sys). Run it on a quiet machine; it is niced.
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

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# median MB/s of RUNS runs of: gyro normalize $opts files... > /dev/null, by wall clock and by
# CPU time (user + sys, less sensitive to other load on the machine)
measure() {
  local label=$1 opts=$2; shift 2
  local bytes; bytes=$(bytes_of "$@")
  local wall=() cpu=() i e u s
  for ((i = 0; i < RUNS; i++)); do
    # shellcheck disable=SC2086
    read -r e u s < <({ /usr/bin/time -f '%e %U %S' nice "$GYRO" normalize -q $opts "$@" > /dev/null; } 2>&1 | tail -n 1)
    wall+=("$(awk -v b="$bytes" -v t="$e" 'BEGIN{printf "%.2f", b / 1e6 / t}')")
    cpu+=("$(awk -v b="$bytes" -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", b / 1e6 / (u + s)}')")
  done
  printf '%-34s %6.1f MB %3d files  wall %6.2f MB/s  cpu %6.2f MB/s  (wall runs: %s)\n' \
    "$label" "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$#" \
    "$(printf '%s\n' "${wall[@]}" | median)" "$(printf '%s\n' "${cpu[@]}" | median)" "${wall[*]}"
}

echo "gyro normalize throughput, $RUNS runs each, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
measure "all text, Document stream" "" "${all[@]}"
measure "all text, --text" "--text" "${all[@]}"
measure "Traditional (全唐诗), stream" "" "${trad[@]}"
measure "Simplified (reviews, news), stream" "" "${simp[@]}"
measure "all text, --no-t2s, stream" "--no-t2s" "${all[@]}"
