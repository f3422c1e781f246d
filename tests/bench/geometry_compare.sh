#!/usr/bin/env bash
# geometry_compare.sh — one model, three geometries: the Euclidean, Poincaré ("hyperbolic") and
# Lorentz (HyboNet, fully hyperbolic) character transformers at equal width and depth (DIM,
# LAYERS, HEADS, FFN, the same dropout, batch 32), each with its own defaults otherwise (the
# trainer's: Poincaré tangent residual + LayerNorm + ReLU at c = 0.1, RMSProp 1e-3, RSGD 0.05 on
# the ball rows; Lorentz no LayerNorm, RMSProp 5e-4, Riemannian Adam 0.03 on the hyperboloid
# rows; Euclidean residual + LayerNorm + ReLU at RMSProp EU_LR = 1e-3, its 1e-4 default being
# meant for 20 epochs), trained by `gyro classify train --geometry G` on
#   nlpcc  NLPCC 2018 task 4: corpus.train.txt split by session (gyro split --seed 1 --dev 0.1),
#          scored on the session dev split;
#   smp    SMP2020-ECDT, 5-fold cross-validation (gyro split --folds 5), mean over the folds;
#   music  `gyro generate music` (the seed's 125 intents), split --seed 1 --dev 0.1.
# For every (set, geometry) and seed: accuracy and macro-F1 on the dev side, training steps per
# CPU-second (steps from the trainer's summary, CPU = user + sys of the whole `classify train`
# process, evaluation and data preparation included); the table prints the median over SEEDS.
# Stability: a run is "nan" when the trainer stopped on a non-finite value, "div" when its last
# epoch's training loss is above its first epoch's; the table counts the runs that were neither.
# Parameters come from the model file (tests/bench/model_params.c); single-utterance CPU µs is
# tests/bench/classify_latency.c's bench (thread CPU clock, raw text → top 5) on NLPCC
# utterances with each geometry's NLPCC model of the first seed, RUNS runs interleaved over the
# geometries, median of the runs' medians. Seeds and geometries are interleaved in one run; with
# JOBS > 1 that many trainings run at once (each on one thread), so the geometries share the
# machine alike.
#
#   tests/bench/geometry_compare.sh [BUILD_DIR]
#   env: SETS="nlpcc smp music"  GEOS="euclidean hyperbolic lorentz"  SEEDS="1 2 3"
#        EPOCHS=5 PATIENCE=3 FOLDS=5 (folds to run of 5) DIM=100 LAYERS=3 HEADS=16 FFN=4·DIM
#        DROPOUT=0.2 EU_LR=1e-3 JOBS=1  N=1000 REPS=3 RUNS=3 (latency)  OUT=work dir
#        NICE=10 (niceness of the training runs; 0 on a machine whose other jobs run at normal
#        priority, or the runs starve)
# Needs ../shared/corpora. Every number printed is measured in this run; the table is also
# written to $OUT/table.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
cd "$root"
G="$root/$build/gyro"
make -s BUILD="$build" "$build/gyro" "$build/libgyro.a" >/dev/null
corp=${SHARED:-$root/../shared}/corpora/intent
[ -f "$corp/nlpcc2018/corpus.train.txt" ] || { echo "no $corp"; exit 77; }
SETS=${SETS:-nlpcc smp music} GEOS=${GEOS:-euclidean hyperbolic lorentz} SEEDS=${SEEDS:-1 2 3}
EPOCHS=${EPOCHS:-5} PATIENCE=${PATIENCE:-3} FOLDS=${FOLDS:-5} DIM=${DIM:-100} LAYERS=${LAYERS:-3}
HEADS=${HEADS:-16} FFN=${FFN:-$((4 * DIM))} DROPOUT=${DROPOUT:-0.2} EU_LR=${EU_LR:-1e-3} JOBS=${JOBS:-1}
N=${N:-1000} REPS=${REPS:-3} RUNS=${RUNS:-3} NICE=${NICE:-10}
OUT=${OUT:-$(mktemp -d)}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$OUT"
echo "work dir $OUT; dim $DIM, $LAYERS layers, $HEADS heads, FFN $FFN, dropout $DROPOUT, $JOBS jobs, epochs $EPOCHS (patience $PATIENCE), seeds $SEEDS; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"

pk="icu-uc icu-i18n libutf8proc openblas libprotobuf-c grpc"
link() { # link SOURCE OUT
  cc -std=c11 -O2 -march=native -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -I"$build/gen" \
     $(pkg-config --cflags $pk) "$1" "$build/libgyro.a" $(pkg-config --libs $pk) -lz -lm -lpthread -o "$2"
}
link tests/bench/model_params.c "$OUT/model_params"
link tests/bench/classify_latency.c "$OUT/latency"

# train_eval SET GEO SEED TRAIN DEV TAG -> appends "set geo seed acc f1 steps cpu state" to $OUT/rows
train_eval() {
  local set=$1 geo=$2 seed=$3 tr=$4 dv=$5 tag=$6 rc=0
  local lr=(); [ "$geo" = euclidean ] && lr=(--lr "$EU_LR")
  /usr/bin/time -f "%U %S" -o "$OUT/$tag.time" nice -n "$NICE" "$G" classify train --geometry "$geo" \
    --arch transformer --dim "$DIM" --layers "$LAYERS" --heads "$HEADS" --ffn "$FFN" --dropout "$DROPOUT" \
    "${lr[@]}" --epochs "$EPOCHS" --patience "$PATIENCE" --dev-fraction 0.1 --seed "$seed" \
    -o "$OUT/$tag.clf" "$tr" 2> "$OUT/$tag.log" || rc=$?
  local acc=nan f1=nan steps=0 cpu state
  cpu=$(awk 'NF == 2 {print $1 + $2}' "$OUT/$tag.time" | tail -1)
  # the per-epoch training losses: non-finite, or the last above the first, is not stable
  state=$(awk '/^epoch [0-9]+: train loss/ {v = $5; sub(/,$/, "", v); if (n == 0) f = v; n++; if (tolower(v) ~ /nan|inf/) bad = 1}
    END {print bad ? "nan" : (n && v + 0 > f + 0) ? "div" : "ok"}' "$OUT/$tag.log")
  if [ "$rc" -ne 0 ]; then
    grep -qi "non-finite" "$OUT/$tag.log" && state=nan || { echo "train $tag failed ($rc):"; tail -3 "$OUT/$tag.log"; exit 1; }
  else
    "$G" classify eval -m "$OUT/$tag.clf" "$dv" > "$OUT/$tag.eval"
    acc=$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' "$OUT/$tag.eval")
    f1=$(awk '/^macro-F1:/ {gsub("%","",$2); print $2}' "$OUT/$tag.eval")
    steps=$(sed -nE 's/.* epochs, ([0-9]+) steps.*/\1/p' "$OUT/$tag.log" | tail -1)
  fi
  local row="$set $geo $seed $acc $f1 $steps $cpu $state"
  echo "$row" >> "$OUT/rows"
  echo "$row"
}

# the splits: "TRAIN DEV" pairs per set
pairs() {
  case $1 in
    nlpcc) echo "$OUT/nlpcc.train.pb $OUT/nlpcc.dev.pb" ;;
    smp) for i in $(seq 0 $((FOLDS - 1))); do echo "$OUT/smp.$i.train.pb $OUT/smp.$i.dev.pb"; done ;;
    music) echo "$OUT/music.train.pb $OUT/music.dev.pb" ;;
  esac
}
for set in $SETS; do
  case $set in
    nlpcc)
      "$G" import -q -f nlpcc -o "$OUT/nlpcc.pb" "$corp/nlpcc2018/corpus.train.txt"
      "$G" split -q --seed 1 --dev 0.1 -t "$OUT/nlpcc.train.pb" -v "$OUT/nlpcc.dev.pb" "$OUT/nlpcc.pb" ;;
    smp)
      "$G" import -q -f smp -o "$OUT/smp.pb" "$corp/smp2020/2020train.json"
      for i in $(seq 0 $((FOLDS - 1))); do
        "$G" split -q --seed 1 --folds 5 --fold "$i" -t "$OUT/smp.$i.train.pb" -v "$OUT/smp.$i.dev.pb" "$OUT/smp.pb"
      done ;;
    music)
      "$G" generate music -o "$OUT/music.pb" 2>/dev/null
      "$G" split -q --seed 1 --dev 0.1 -t "$OUT/music.train.pb" -v "$OUT/music.dev.pb" "$OUT/music.pb" ;;
    *) echo "unknown set $set"; exit 2 ;;
  esac
done

: > "$OUT/rows"
for seed in $SEEDS; do
  for set in $SETS; do
    k=0
    while read -r tr dv; do
      for geo in $GEOS; do
        # one row per fold; folds are averaged below
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
        train_eval "$set.$k" "$geo" "$seed" "$tr" "$dv" "$set.$k.$geo.s$seed" < /dev/null &
      done
      k=$((k + 1))
    done < <(pairs "$set")
  done
done

wait
# a failed job (a training error that was not a non-finite value) shows as a missing row
expect=0; for set in $SETS; do expect=$((expect + $(pairs "$set" | wc -l))); done
expect=$((expect * $(wc -w <<<"$GEOS") * $(wc -w <<<"$SEEDS")))
[ "$(wc -l < "$OUT/rows")" -eq "$expect" ] || { echo "$(wc -l < "$OUT/rows") of $expect runs finished"; exit 1; }

# latency: each geometry's NLPCC (else first set's) model of the first seed, runs interleaved
first_seed=${SEEDS%% *}
lat_set=${SETS%% *}.0; [[ " $SETS " == *" nlpcc "* ]] && lat_set=nlpcc.0
for geo in $GEOS; do : > "$OUT/lat.$geo"; done
for r in $(seq "$RUNS"); do
  for geo in $GEOS; do
    "$OUT/latency" bench "$OUT/$lat_set.$geo.s$first_seed.clf" "$corp/nlpcc2018/corpus.train.txt" "$N" "$REPS" \
      | sed -nE 's/.*median_us=([0-9.]+).*/\1/p' >> "$OUT/lat.$geo"
  done
done

{
echo
printf '%-7s %-11s %9s %9s %10s %12s %10s %7s  %s\n' set geometry accuracy macro-F1 params steps/cpu-s latency_us stable "per seed (accuracy)"
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for set in $SETS; do
  for geo in $GEOS; do
    # per seed: mean over the set's folds of accuracy, F1 (nan when a fold stopped on a
    # non-finite value); steps and CPU summed
    per_seed=$(awk -v s="$set" -v g="$geo" '$1 ~ "^"s"\\." && $2 == g {a[$3]+=$4; f[$3]+=$5; st[$3]+=$6; c[$3]+=$7; n[$3]++; if ($4 == "nan") bad[$3] = 1}
      END {for (k in a) if (bad[k]) printf "%s nan nan %.1f\n", k, st[k]/c[k]; else printf "%s %.2f %.2f %.1f\n", k, a[k]/n[k], f[k]/n[k], st[k]/c[k]}' "$OUT/rows" | sort -n)
    acc=$(awk '{print $2}' <<<"$per_seed" | median)
    f1=$(awk '{print $3}' <<<"$per_seed" | median)
    rate=$(awk '{print $4}' <<<"$per_seed" | median)
    stable=$(awk -v s="$set" -v g="$geo" '$1 ~ "^"s"\\." && $2 == g {n++; if ($8 == "ok") k++} END {printf "%d/%d", k, n}' "$OUT/rows")
    params=$("$OUT/model_params" "$OUT/$set.0.$geo.s$first_seed.clf" | sed -nE 's/params=([0-9]+).*/\1/p')
    lat=$(median < "$OUT/lat.$geo")
    printf '%-7s %-11s %9s %9s %10s %12s %10s %7s  %s\n' "$set" "$geo" "$acc" "$f1" "$params" "$rate" "$lat" "$stable" \
      "$(awk '{printf "%s ", $2}' <<<"$per_seed")"
  done
done
echo "(accuracy, macro-F1: %, medians over seeds of the mean over folds; latency: µs per utterance, one thread;"
echo " stable: runs without a non-finite value or a last-epoch training loss above the first's)"
} | tee "$OUT/table.txt"
