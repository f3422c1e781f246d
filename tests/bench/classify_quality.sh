#!/usr/bin/env bash
# classify_quality.sh — the seed's Table 1 rebuilt on public data: intent accuracy of gyro's
# hyperbolic character transformer (100-d, dropout 0 and 0.3), the Euclidean character twin
# (128-d and 256-d, dropout 0.2), a Euclidean word model (ICU dictionary word segmentation,
# `--words`) and fastText supervised (a baseline built outside the project), on
#   NLPCC 2018 task 4: the shared train file split by session (gyro split, 10% dev, seed 1);
#                      models train on the rest (early stopping on a further 10% of it) and are
#                      scored on the session dev split;
#   SMP2020-ECDT:      5-fold cross-validation (gyro split --folds 5), mean and range.
#
#   tests/bench/classify_quality.sh [BUILD_DIR]
#   env: SETS="nlpcc smp"  VARIANTS="hyp100 hyp100d30 euc128 euc256 word128 fasttext"
#        (hyp100res: the hyperbolic model with the tangent-space residual and hyperbolic
#        LayerNorm of rl-hyperbolic-transformer-grpo, not in the default list)
#        EPOCHS=10 PATIENCE=3 EUC_LR=1e-3 FOLDS=5 (folds to run of 5)  FASTTEXT=path/to/fasttext binary
#        EMB=char2vec table for the hyperbolic variants (optional; FREEZE=1 keeps its rows fixed,
#        otherwise they are fine-tuned)  OUT=work dir
# Needs ../shared/corpora. Every number printed is measured in this run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
cd "$root"
G="$root/$build/gyro"
[ -x "$G" ] || make -s BUILD="$build" "$build/gyro"
corp=${SHARED:-$root/../shared}/corpora/intent
SETS=${SETS:-nlpcc smp}
VARIANTS=${VARIANTS:-hyp100 hyp100d30 euc128 euc256 word128 fasttext}
EPOCHS=${EPOCHS:-10} PATIENCE=${PATIENCE:-3} FOLDS=${FOLDS:-5}
OUT=${OUT:-$(mktemp -d)}
FASTTEXT=${FASTTEXT:-$(command -v fasttext || echo "$root/../fastText/fasttext")}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$OUT"
echo "work dir $OUT; epochs $EPOCHS, patience $PATIENCE; $(date -u)"

opts_of() {
  local common=(--epochs "$EPOCHS" --patience "$PATIENCE" --dev-fraction 0.1 --seed 1 --quiet)
  # RMSProp at 1e-3 for every variant (the seed's hyperbolic setting): the seed's 1e-4 for the
  # Euclidean models needs many more epochs than a benchmark run affords. EUC_LR overrides it.
  local euc=(--lr "${EUC_LR:-1e-3}")
  local emb=(); [ -n "${EMB:-}" ] && emb=(--embeddings "$EMB")
  [ -n "${EMB:-}" ] && [ "${FREEZE:-0}" = 1 ] && emb+=(--freeze)
  case $1 in
    hyp100)    echo "${common[*]} ${emb[*]} --geometry hyperbolic --dim 100 --dropout 0" ;;
    hyp100d30) echo "${common[*]} ${emb[*]} --geometry hyperbolic --dim 100 --dropout 0.3" ;;
    hyp100res) echo "${common[*]} ${emb[*]} --geometry hyperbolic --dim 100 --dropout 0 --residual tangent --layernorm" ;;
    euc128)    echo "${common[*]} ${euc[*]} --geometry euclidean --dim 128 --dropout 0.2" ;;
    euc256)    echo "${common[*]} ${euc[*]} --geometry euclidean --dim 256 --dropout 0.2" ;;
    word128)   echo "${common[*]} ${euc[*]} --geometry euclidean --dim 128 --dropout 0.2 --words" ;;
  esac
}

# fastText input: "__label__L c h a r s" after gyro's normalization (characters as tokens)
to_fasttext() { # stream -> text
  "$G" dump "$1" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if "text" not in r or "label" not in r: continue
    print("__label__" + r["label"].replace(" ", "_"), " ".join(ch for ch in r["text"] if not ch.isspace()))'
}

# run_one VARIANT TRAIN.pb DEV.pb TAG -> prints "accuracy macroF1 seconds"
run_one() {
  local v=$1 tr=$2 dv=$3 tag=$4 t0 t1
  t0=$(date +%s.%N)
  if [ "$v" = fasttext ]; then
    [ -x "$FASTTEXT" ] || { echo "n/a n/a n/a"; return; }
    to_fasttext "$tr" > "$OUT/$tag.ft.train"; to_fasttext "$dv" > "$OUT/$tag.ft.dev"
    "$FASTTEXT" supervised -input "$OUT/$tag.ft.train" -output "$OUT/$tag.ft" -dim 100 -lr 0.5 \
      -epoch 25 -wordNgrams 2 -minCount 1 -thread 2 -verbose 0 >/dev/null
    t1=$(date +%s.%N)
    local acc; acc=$("$FASTTEXT" test "$OUT/$tag.ft.bin" "$OUT/$tag.ft.dev" 1 | awk '/^P@1/ {print 100*$2}')
    echo "$acc n/a $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", b-a}')"
    return
  fi
  # shellcheck disable=SC2046
  nice "$G" classify train $(opts_of "$v") -o "$OUT/$tag.clf" "$tr"
  t1=$(date +%s.%N)
  "$G" classify eval -m "$OUT/$tag.clf" "$dv" > "$OUT/$tag.eval"
  echo "$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' "$OUT/$tag.eval") \
$(awk '/^macro-F1:/ {gsub("%","",$2); print $2}' "$OUT/$tag.eval") \
$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", b-a}')"
}

printf '%-8s %-10s %10s %10s %10s  %s\n' set variant accuracy macro-F1 train_s detail
for set in $SETS; do
  case $set in
    nlpcc)
      "$G" import -q -f nlpcc -o "$OUT/nlpcc.pb" "$corp/nlpcc2018/corpus.train.txt"
      "$G" split -q --seed 1 --dev 0.1 -t "$OUT/nlpcc.train.pb" -v "$OUT/nlpcc.dev.pb" "$OUT/nlpcc.pb"
      for v in $VARIANTS; do
        read -r acc f1 secs <<<"$(run_one "$v" "$OUT/nlpcc.train.pb" "$OUT/nlpcc.dev.pb" "nlpcc.$v")"
        printf '%-8s %-10s %10s %10s %10s  %s\n' nlpcc "$v" "$acc" "$f1" "$secs" "session dev split"
      done ;;
    smp)
      "$G" import -q -f smp -o "$OUT/smp.pb" "$corp/smp2020/2020train.json"
      for i in $(seq 0 $((FOLDS - 1))); do
        "$G" split -q --seed 1 --folds 5 --fold "$i" -t "$OUT/smp.$i.train.pb" -v "$OUT/smp.$i.dev.pb" "$OUT/smp.pb"
      done
      for v in $VARIANTS; do
        accs=(); f1s=(); secs_sum=0
        for i in $(seq 0 $((FOLDS - 1))); do
          read -r acc f1 secs <<<"$(run_one "$v" "$OUT/smp.$i.train.pb" "$OUT/smp.$i.dev.pb" "smp.$i.$v")"
          accs+=("$acc"); f1s+=("$f1"); [ "$secs" = n/a ] || secs_sum=$((secs_sum + secs))
        done
        printf '%-8s %-10s %10s %10s %10s  %s\n' smp "$v" \
          "$(printf '%s\n' "${accs[@]}" | awk '$1!="n/a"{s+=$1;n++} END{if(n) printf "%.2f", s/n; else print "n/a"}')" \
          "$(printf '%s\n' "${f1s[@]}" | awk '$1!="n/a"{s+=$1;n++} END{if(n) printf "%.2f", s/n; else print "n/a"}')" \
          "$secs_sum" "mean of $FOLDS folds: ${accs[*]}"
      done ;;
  esac
done
