#!/usr/bin/env bash
# composite_vs_flat.sh — CrossWOZ label sets: the step-by-step composite policy against a flat
# classifier over the label sets, in one run, medians over seeds.
#
# Data: ../shared/corpora/intent/crosswoz/val.json.zip, `gyro import --format crosswoz`, split by
# dialogue with `gyro split --seed 1 --dev 0.2` (the README's tour). Both sides train on the 80%
# and are scored on the 20% dev split, which neither sees while training (each holds out 10% of
# its training utterances for early stopping, by its own default).
#   flat       `gyro classify train` with its defaults; the label set joined by '+' is one class
#              (what tests/bench/intent_quality.sh's crosswoz set runs). Exact-set accuracy =
#              accuracy over all dev turns (a dev label set the training part lacks is an error).
#   composite  `gyro rl finetune --env composite --iterations $ITER` with its defaults (the same
#              transformer options, epochs, patience and held-out fraction as classify train; ITER
#              GRPO iterations after the supervised start, default 0), then `gyro rl eval --env
#              composite` on the dev split greedy (beam 1) and with beam width $BEAM.
#   from       (FROM=1, the default) the composite policy started from the same seed's flat
#              transformer (`gyro classify train --arch transformer`, then `rl finetune --env
#              composite --from FLAT`): its transformer, a fresh head over the atoms and STOP, then
#              supervised epochs; its CPU time includes the flat transformer's.
# Columns: exact-set accuracy in % (median over seeds, then the per-seed values) and training CPU
# seconds (user + system of the training process, median). Every number is measured in this run;
# the sides of a seed run side by side (JOBS processes at once), interleaved over the seeds.
#
#   tests/bench/composite_vs_flat.sh [BUILD_DIR]
#
# A rerun with the same OUT keeps the runs that finished (their .res files) and does the rest.
#
# env: GYRO=path (the binary; default BUILD_DIR/gyro)  SEEDS="1 2 3"  BEAM=4  ITER=0  FROM=1  JOBS=2  OUT=dir (default a fresh temporary dir)  SHARED=../shared
#      COMPOSITE_OPTS="" (more options of rl finetune --env composite)  FLAT_OPTS="" (of classify train)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
cd "$root"
G=${GYRO:-$root/$build/gyro}   # GYRO=path: a copy of the binary, so that rebuilding during the run is safe
[ -x "$G" ] || make -s BUILD="$build" "$build/gyro"
corp=${SHARED:-$root/../shared}/corpora/intent
SEEDS=${SEEDS:-1 2 3}
BEAM=${BEAM:-4}
ITER=${ITER:-0}
FROM=${FROM:-1}
JOBS=${JOBS:-2}
COMPOSITE_OPTS=${COMPOSITE_OPTS:-}
FLAT_OPTS=${FLAT_OPTS:-}
OUT=${OUT:-$(mktemp -d)}
export OPENBLAS_NUM_THREADS=1 G OUT ITER BEAM FROM COMPOSITE_OPTS FLAT_OPTS
mkdir -p "$OUT"

echo "composite_vs_flat: work dir $OUT; $(date -u); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "seeds: $SEEDS; beam $BEAM; GRPO iterations $ITER; $JOBS jobs"
echo "  flat: gyro classify train $FLAT_OPTS"
echo "  composite: gyro rl finetune --env composite --iterations $ITER $COMPOSITE_OPTS"
[ -s "$OUT/cw.pb" ] || "$G" import -q -f crosswoz -o "$OUT/cw.pb" "$corp/crosswoz/val.json.zip" 2>/dev/null
"$G" split -q --seed 1 --dev 0.2 -t "$OUT/cw.train.pb" -v "$OUT/cw.dev.pb" "$OUT/cw.pb"

# one task: SIDE SEED -> $OUT/SIDE.sSEED.res ("exact_greedy exact_beam cpu_s")
task() {
  local side=$1 seed=$2 m="$OUT/$1.s$2"
  if [ -s "$m.res" ]; then   # a rerun with the same OUT keeps the finished runs
    echo "  $side seed $seed: $(cat "$m.res") (kept from an earlier run)" >&2
    [ "$side" = flat ] && [ "$FROM" = 1 ] && task from "$seed"
    return 0
  fi
  case $side in
    flat)
      # shellcheck disable=SC2086
      /usr/bin/time -f "%U %S" -o "$m.time" "$G" classify train --quiet --seed "$seed" $FLAT_OPTS \
        -o "$m.clf" "$OUT/cw.train.pb" 2> "$m.log" || { echo "flat seed $seed failed: $(tail -1 "$m.log")" >&2; return 1; }
      "$G" classify eval -m "$m.clf" "$OUT/cw.dev.pb" > "$m.eval"
      local n unk acc
      n=$("$G" dump "$OUT/cw.dev.pb" 2>/dev/null | grep -c '"label"')
      acc=$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' "$m.eval")
      unk=$(awk '/^skipped: [0-9]+ examples whose label/ {print $2}' "$m.eval"); unk=${unk:-0}
      acc=$(awk -v a="$acc" -v n="$n" -v u="$unk" 'BEGIN{printf "%.2f", a * (n - u) / n}')
      echo "$acc $acc $(awk '{printf "%.1f", $1 + $2}' "$m.time")" > "$m.res"
      [ "$FROM" = 1 ] && task from "$seed" ;;
    from)   # the composite policy started from this seed's flat transformer (rl finetune --from)
      local f="$OUT/flattf.s$seed"
      [ -s "$f.clf" ] || /usr/bin/time -f "%U %S" -o "$f.time" "$G" classify train --quiet --arch transformer \
        --seed "$seed" -o "$f.clf" "$OUT/cw.train.pb" 2> "$f.log" \
        || { echo "flat transformer seed $seed failed: $(tail -1 "$f.log")" >&2; return 1; }
      # shellcheck disable=SC2086
      /usr/bin/time -f "%U %S" -o "$m.time" "$G" rl finetune --env composite -q --seed "$seed" \
        --iterations "$ITER" $COMPOSITE_OPTS --from "$f.clf" --train "$OUT/cw.train.pb" --out "$m.pol" > "$m.sum" 2> "$m.log" \
        || { echo "from seed $seed failed: $(tail -1 "$m.log")" >&2; return 1; }
      "$G" rl eval --env composite -m "$m.pol" --beam 1 "$OUT/cw.dev.pb" > "$m.eval1"
      "$G" rl eval --env composite -m "$m.pol" --beam "$BEAM" "$OUT/cw.dev.pb" > "$m.evalb"
      local e1 eb
      e1=$(tr ' ' '\n' < "$m.eval1" | sed -n 's/^exact=//p')
      eb=$(tr ' ' '\n' < "$m.evalb" | sed -n 's/^exact=//p')
      # CPU: the flat model's training plus this one's
      echo "$(awk -v x="$e1" 'BEGIN{printf "%.2f", 100 * x}') $(awk -v x="$eb" 'BEGIN{printf "%.2f", 100 * x}') $(cat "$f.time" "$m.time" | awk '{s += $1 + $2} END{printf "%.1f", s}')" > "$m.res" ;;
    composite)
      # shellcheck disable=SC2086
      /usr/bin/time -f "%U %S" -o "$m.time" "$G" rl finetune --env composite -q --seed "$seed" \
        --iterations "$ITER" $COMPOSITE_OPTS --train "$OUT/cw.train.pb" --out "$m.pol" > "$m.sum" 2> "$m.log" \
        || { echo "composite seed $seed failed: $(tail -1 "$m.log")" >&2; return 1; }
      "$G" rl eval --env composite -m "$m.pol" --beam 1 "$OUT/cw.dev.pb" > "$m.eval1"
      "$G" rl eval --env composite -m "$m.pol" --beam "$BEAM" "$OUT/cw.dev.pb" > "$m.evalb"
      local e1 eb
      e1=$(tr ' ' '\n' < "$m.eval1" | sed -n 's/^exact=//p')
      eb=$(tr ' ' '\n' < "$m.evalb" | sed -n 's/^exact=//p')
      echo "$(awk -v x="$e1" 'BEGIN{printf "%.2f", 100 * x}') $(awk -v x="$eb" 'BEGIN{printf "%.2f", 100 * x}') $(awk '{printf "%.1f", $1 + $2}' "$m.time")" > "$m.res" ;;
  esac
  echo "  $side seed $seed: $(cat "$m.res") ($(date -u +%H:%M:%S))" >&2
}
export -f task

# interleaved: composite and flat of a seed side by side, seed after seed
for s in $SEEDS; do printf 'composite %s\nflat %s\n' "$s" "$s"; done \
  | xargs -P "$JOBS" -L 1 bash -c 'task "$0" "$1"'

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END{if (NR) print v[int((NR+1)/2)]; else print "n/a"}'; }
col() { # SIDE COLUMN -> the values over the seeds
  for s in $SEEDS; do awk -v c="$2" '{print $c}' "$OUT/$1.s$s.res"; done | tr '\n' ' '
}
echo
echo "| model | dev exact-set accuracy % (median) | per seed | training CPU s (median) |"
echo "|---|---|---|---|"
echo "| flat classifier (classify train${FLAT_OPTS:+ $FLAT_OPTS}) | $(col flat 1 | median) | $(col flat 1) | $(col flat 3 | median) |"
echo "| composite policy, greedy | $(col composite 1 | median) | $(col composite 1) | $(col composite 3 | median) |"
echo "| composite policy, beam $BEAM | $(col composite 2 | median) | $(col composite 2) | $(col composite 3 | median) |"
if [ "$FROM" = 1 ]; then
  echo "| composite from the flat model (--from), greedy | $(col from 1 | median) | $(col from 1) | $(col from 3 | median) (flat + composite) |"
  echo "| composite from the flat model (--from), beam $BEAM | $(col from 2 | median) | $(col from 2) | $(col from 3 | median) (flat + composite) |"
fi
