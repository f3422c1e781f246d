#!/usr/bin/env bash
# intent_quality.sh — intent accuracy of gyro's classifiers against fastText on the public sets,
# in one run, medians over seeds, one table:
#   nlpcc     NLPCC 2018 task 4 shared train file, split by session (gyro split --seed 1
#             --dev 0.1): models train on the 90% (gyro holds out --dev-fraction 0.1 of it for
#             early stopping) and are scored on the session dev split;
#   smp       SMP2020-ECDT, 5-fold cross-validation by gyro split --folds 5 (the mean over the
#             folds of one seed is that seed's figure);
#   crosswoz  CrossWOZ validation dialogues, user turns labelled with their set of dialogue-act
#             domains joined by '+' as one flat label (exact-set accuracy), split by dialogue
#             (gyro split --seed 1 --dev 0.2, as the composite-policy figures in the README).
# Splits are fixed (seed 1); SEEDS vary the models' initialisation, shuffling and held-out part
# (gyro --seed, fastText -seed). Dev examples whose label the training part lacks count as
# errors for every model (gyro classify eval counts them so; its --json figures are used as
# they are).
#
#   tests/bench/intent_quality.sh [BUILD_DIR]
#
# env:
#   SETS="nlpcc smp crosswoz"   CONFIGS="fasttext hyp euc hypnoctx eucnoctx tf"   SEEDS="1 2 3"
#   FOLDS="0 1 2 3 4"           (SMP folds to run)
#   EPOCHS= PATIENCE=           gyro's limits when set (passed before each configuration's own
#                               options); empty: the classify train defaults
#   FASTTEXT=path               the fasttext binary. Build it outside the project:
#       git clone https://github.com/facebookresearch/fastText /tmp/fastText
#       make -C /tmp/fastText            # then FASTTEXT=/tmp/fastText/fasttext
#     Without it the fasttext rows say "skipped" and everything else runs.
#   FT_VECTORS=path.vec  adds nothing by itself; the config fasttext_pre trains fastText with
#     -pretrainedVectors FT_VECTORS (100-d character vectors, e.g. fastText skipgram on the same
#     corpus as TABLE: the honest baseline of a table)
#   FT_OPTS="-dim 100 -lr 0.5 -epoch 25 -wordNgrams 2 -minCount 1"  fastText's settings
#     (characters as tokens after gyro's normalization, character bigrams; tuned by hand on
#     the NLPCC dev split). FT_AUTOTUNE=seconds adds the config fasttext_auto: fastText's own
#     -autotune-validation on 10% of the training part (never the dev split), for that long.
#   GYRO_OPTS_<name>="options"  a named gyro configuration (options of gyro classify train);
#     put <name> in CONFIGS. Built in:
#       hyp     no options: what `gyro classify train` does by default (the hyperbolic bag of
#               character n-grams with the previous turn's features and parent classes)
#       euc     its Euclidean twin (--geometry euclidean; 100-d, no more parameters)
#       hypnoctx, eucnoctx  the same without the previous turn (--no-context)
#       hypflat, eucflat    the same without parent classes (--no-hierarchy)
#       hyptab, hyptabfrozen, euctab  with TABLE=path (a Poincaré char2vec table, see the
#               README): --embeddings TABLE, fine-tuned or --freeze; the twin fine-tuned
#       tf      --arch transformer: the hyperbolic transformer's defaults
#       tfeuc   the Euclidean transformer (--arch transformer --geometry euclidean --lr 1e-3)
#       hypres  the hyperbolic transformer, --residual tangent --layernorm --relu (c = 1, no
#               dropout)
#       hypseed the seed's transformer block: --residual none --no-layernorm --no-relu
#               --curvature 1 --dropout 0
#       hypradam  the transformer with Riemannian Adam for the ball tensors (--ball-optimizer
#               radam --ball-lr 0.01)
#   OUT=dir (work files; default a fresh temporary dir)  SHARED=../shared
# Columns: accuracy and macro-F1 in % (median over seeds), parameters, training CPU seconds
# (user + system of the training process, median over seeds; SMP: summed over the folds), and
# the per-seed accuracies. Every number printed is measured in this run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
cd "$root"
G="$root/$build/gyro"
[ -x "$G" ] || make -s BUILD="$build" "$build/gyro"
corp=${SHARED:-$root/../shared}/corpora/intent
SETS=${SETS:-nlpcc smp crosswoz}
CONFIGS=${CONFIGS:-fasttext hyp euc hypnoctx eucnoctx tf}
SEEDS=${SEEDS:-1 2 3}
FOLDS=${FOLDS:-0 1 2 3 4}
EPOCHS=${EPOCHS:-} PATIENCE=${PATIENCE:-}
limits=()
[ -n "$EPOCHS" ] && limits+=(--epochs "$EPOCHS")
[ -n "$PATIENCE" ] && limits+=(--patience "$PATIENCE")
FT_OPTS=${FT_OPTS:--dim 100 -lr 0.5 -epoch 25 -wordNgrams 2 -minCount 1}
FT_AUTOTUNE=${FT_AUTOTUNE:-}
[ -n "$FT_AUTOTUNE" ] && case " $CONFIGS " in *" fasttext_auto "*) ;; *) CONFIGS="$CONFIGS fasttext_auto" ;; esac
FASTTEXT=${FASTTEXT:-$(command -v fasttext || true)}
OUT=${OUT:-$(mktemp -d)}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$OUT"
PY=$(command -v python3)
# parameter counts of gyro models come from tests/bench/intent_diag.c (built against the library)
make --no-print-directory -s BUILD="$build" "$build/libgyro.a"
DIAG="$OUT/intent_diag"
cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -I"$build/gen" \
   $(pkg-config --cflags openblas) tests/bench/intent_diag.c "$build/libgyro.a" \
   $(pkg-config --libs icu-uc icu-i18n libutf8proc openblas libprotobuf-c zlib) -lstdc++ -lm -lpthread \
   -o "$DIAG"

: "${GYRO_OPTS_hyp:=}"
: "${GYRO_OPTS_hypnoctx:=--no-context}"
: "${GYRO_OPTS_eucnoctx:=--geometry euclidean --no-context}"
: "${GYRO_OPTS_tf:=--arch transformer}"
: "${GYRO_OPTS_tfeuc:=--arch transformer --geometry euclidean --lr 1e-3}"
: "${GYRO_OPTS_hypres:=--residual tangent --layernorm --relu --curvature 1 --dropout 0}"
: "${GYRO_OPTS_hypseed:=--residual none --no-layernorm --no-relu --curvature 1 --dropout 0}"
: "${GYRO_OPTS_hypradam:=--ball-optimizer radam --ball-lr 0.01}"
: "${GYRO_OPTS_euc:=--geometry euclidean}"
: "${GYRO_OPTS_hypflat:=--no-hierarchy}"
: "${GYRO_OPTS_eucflat:=--geometry euclidean --no-hierarchy}"
TABLE=${TABLE:-}
if [ -n "$TABLE" ]; then
  : "${GYRO_OPTS_hyptab:=--embeddings $TABLE}"
  : "${GYRO_OPTS_hyptabfrozen:=--embeddings $TABLE --freeze}"
  : "${GYRO_OPTS_euctab:=--geometry euclidean --embeddings $TABLE}"
fi
FT_VECTORS=${FT_VECTORS:-}

echo "intent_quality: work dir $OUT; $(date -u); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sets: $SETS; configs: $CONFIGS; seeds: $SEEDS; gyro limits: ${limits[*]:-the defaults}"
for c in $CONFIGS; do
  case $c in
    fasttext)      echo "  fasttext: $FT_OPTS -thread 1" ;;
    fasttext_auto) echo "  fasttext_auto: -autotune-validation (10% of train) -autotune-duration ${FT_AUTOTUNE:-?} -thread 1" ;;
    fasttext_pre)  [ -s "$FT_VECTORS" ] || { echo "intent_quality: fasttext_pre needs FT_VECTORS=file.vec" >&2; exit 2; }
                   echo "  fasttext_pre: $FT_OPTS -pretrainedVectors $FT_VECTORS -thread 1" ;;
    *) v="GYRO_OPTS_$c"
       [ -n "${!v+x}" ] || { echo "intent_quality: unknown configuration '$c' (set GYRO_OPTS_$c)" >&2; exit 2; }
       echo "  $c: gyro classify train ${!v}" ;;
  esac
done
if [ -z "$FASTTEXT" ] || [ ! -x "$FASTTEXT" ]; then
  echo "  (no fastText binary: the fasttext rows are skipped; build it outside the project and set FASTTEXT, see the header)"
  FASTTEXT=
fi

cpu_of() { awk '{printf "%.1f", $1 + $2}' "$1"; }   # "user sys" file -> seconds

# fastText input: "__label__L c h a r s" after gyro's normalization (characters as tokens)
to_fasttext() { # stream -> text
  "$G" dump "$1" 2>/dev/null | "$PY" -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if "text" not in r or "label" not in r: continue
    print("__label__" + r["label"].replace(" ", "_"), " ".join(ch for ch in r["text"] if not ch.isspace()))'
}

# score GOLD.ft PRED -> "accuracy macroF1" (%, macro-F1 over labels that occur as gold or predicted)
score() {
  "$PY" - "$1" "$2" <<'EOF'
import sys
gold = [l.split(" ", 1)[0] for l in open(sys.argv[1], encoding="utf-8")]
pred = [l.strip() for l in open(sys.argv[2], encoding="utf-8")]
assert len(gold) == len(pred), (len(gold), len(pred))
labels = set(gold) | set(pred)
ok = sum(g == p for g, p in zip(gold, pred))
f1s = []
for c in labels:
    tp = sum(g == c and p == c for g, p in zip(gold, pred))
    ng = sum(g == c for g in gold); np_ = sum(p == c for p in pred)
    f1s.append(2 * tp / (ng + np_) if tp else 0.0)
print("%.2f %.2f" % (100 * ok / len(gold), 100 * sum(f1s) / len(f1s)))
EOF
}

# run_ft CONFIG TRAIN.pb DEV.pb TAG SEED -> "accuracy macroF1 params cpu_s"
run_ft() {
  local c=$1 tr=$2 dv=$3 tag=$4 seed=$5 extra=()
  [ -s "$OUT/$tag.ft.train" ] || to_fasttext "$tr" > "$OUT/$tag.ft.train"
  [ -s "$OUT/$tag.ft.dev" ] || to_fasttext "$dv" > "$OUT/$tag.ft.dev"
  local input="$OUT/$tag.ft.train"
  if [ "$c" = fasttext_auto ]; then
    # hold out 10% of the training part (every 10th line) for fastText's own search
    awk 'NR % 10 != 0' "$OUT/$tag.ft.train" > "$OUT/$tag.ft.fit"
    awk 'NR % 10 == 0' "$OUT/$tag.ft.train" > "$OUT/$tag.ft.val"
    input="$OUT/$tag.ft.fit"
    extra=(-autotune-validation "$OUT/$tag.ft.val" -autotune-duration "$FT_AUTOTUNE")
  else
    # shellcheck disable=SC2206
    extra=($FT_OPTS)
    [ "$c" = fasttext_pre ] && extra+=(-pretrainedVectors "$FT_VECTORS")
  fi
  local m="$OUT/$tag.$c.s$seed"
  /usr/bin/time -f "%U %S" -o "$m.time" "$FASTTEXT" supervised -input "$input" -output "$m" \
    "${extra[@]}" -seed "$seed" -thread 1 -verbose 0 > /dev/null
  "$FASTTEXT" predict "$m.bin" "$OUT/$tag.ft.dev" 1 > "$m.pred"
  local dims; dims=$("$FASTTEXT" dump "$m.bin" args 2>/dev/null | awk '$1=="dim"{d=$2} $1=="bucket"{b=$2} END{print d, b}')
  local nw nl; nw=$("$FASTTEXT" dump "$m.bin" dict 2>/dev/null | awk '$NF=="word"{w++} $NF=="label"{l++} END{print w+0, l+0}')
  read -r nwords nlabels <<<"$nw"; read -r dim bucket <<<"$dims"
  local params=$(( (nwords + bucket) * dim + nlabels * dim ))
  rm -f "$m.bin" "$m.vec"
  echo "$(score "$OUT/$tag.ft.dev" "$m.pred") $params $(cpu_of "$m.time")"
}

# run_gyro CONFIG TRAIN.pb DEV.pb TAG SEED -> "accuracy macroF1 params cpu_s"
run_gyro() {
  local c=$1 tr=$2 dv=$3 tag=$4 seed=$5 v="GYRO_OPTS_$1"
  local m="$OUT/$tag.$c.s$seed"
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S" -o "$m.time" "$G" classify train --quiet "${limits[@]}" \
    --seed "$seed" ${!v} -o "$m.clf" "$tr" 2> "$m.log" \
    || { echo "intent_quality: gyro classify train failed ($c, $tag, seed $seed): $(tail -1 "$m.log")" >&2; exit 1; }
  "$G" classify eval --json -m "$m.clf" "$dv" > "$m.eval" 2> /dev/null
  # accuracy and macro-F1 over all dev examples (those of a label the model never saw are errors)
  local acc f1
  read -r acc f1 <<<"$("$PY" -c 'import json, sys; e = json.load(open(sys.argv[1]))
print("%.2f %.2f" % (100 * e["accuracy"], 100 * e["macro_f1"]))' "$m.eval")"
  local params; params=$("$DIAG" params "$m.clf")
  echo "$acc $f1 $params $(cpu_of "$m.time")"
}

run_cfg() { # CONFIG TRAIN DEV TAG SEED
  case $1 in
    fasttext|fasttext_auto|fasttext_pre) [ -n "$FASTTEXT" ] && run_ft "$@" || echo "skipped skipped - -" ;;
    *) run_gyro "$@" ;;
  esac
}

median() { tr ' ' '\n' | grep -v '^$' | grep -v skipped | sort -g | awk '{v[NR]=$1} END{if (NR) print v[int((NR+1)/2)]; else print "n/a"}'; }
mean() { tr ' ' '\n' | grep -v '^$' | awk '{s+=$1; n++} END{if (n) printf "%.2f", s/n; else print "n/a"}'; }

prepare() { # SET -> list of "TAG TRAIN DEV" lines
  case $1 in
    nlpcc)
      "$G" import -q -f nlpcc -o "$OUT/nlpcc.pb" "$corp/nlpcc2018/corpus.train.txt"
      "$G" split -q --seed 1 --dev 0.1 -t "$OUT/nlpcc.train.pb" -v "$OUT/nlpcc.dev.pb" "$OUT/nlpcc.pb"
      echo "nlpcc $OUT/nlpcc.train.pb $OUT/nlpcc.dev.pb" ;;
    smp)
      "$G" import -q -f smp -o "$OUT/smp.pb" "$corp/smp2020/2020train.json"
      for i in $FOLDS; do
        "$G" split -q --seed 1 --folds 5 --fold "$i" -t "$OUT/smp.$i.train.pb" -v "$OUT/smp.$i.dev.pb" "$OUT/smp.pb"
        echo "smp.$i $OUT/smp.$i.train.pb $OUT/smp.$i.dev.pb"
      done ;;
    crosswoz)
      "$G" import -q -f crosswoz -o "$OUT/crosswoz.pb" "$corp/crosswoz/val.json.zip" 2>/dev/null
      "$G" split -q --seed 1 --dev 0.2 -t "$OUT/crosswoz.train.pb" -v "$OUT/crosswoz.dev.pb" "$OUT/crosswoz.pb"
      echo "crosswoz $OUT/crosswoz.train.pb $OUT/crosswoz.dev.pb" ;;
    *) echo "intent_quality: unknown set '$1' (nlpcc smp crosswoz)" >&2; exit 2 ;;
  esac
}

rows=()
for set in $SETS; do
  mapfile -t parts < <(prepare "$set")
  for c in $CONFIGS; do
    accs=() f1s=() cpus=() params=-
    for seed in $SEEDS; do
      pa=() pf=() pc=0
      for p in "${parts[@]}"; do
        read -r tag tr dv <<<"$p"
        read -r acc f1 np cpu <<<"$(run_cfg "$c" "$tr" "$dv" "$tag" "$seed")"
        echo "  $set $c seed $seed $tag: accuracy $acc macro-F1 $f1 params $np cpu ${cpu}s" >&2
        [ "$acc" = skipped ] && continue
        pa+=("$acc"); pf+=("$f1"); params=$np
        pc=$(awk -v a="$pc" -v b="$cpu" 'BEGIN{print a + b}')
      done
      [ ${#pa[@]} -gt 0 ] || continue
      accs+=("$(echo "${pa[*]}" | mean)"); f1s+=("$(echo "${pf[*]}" | mean)"); cpus+=("$pc")
    done
    if [ ${#accs[@]} -eq 0 ]; then
      rows+=("$(printf '%-9s %-14s %9s %9s %12s %9s  %s' "$set" "$c" skipped - - - "no fastText binary (FASTTEXT)")")
      continue
    fi
    rows+=("$(printf '%-9s %-14s %9s %9s %12s %9s  %s' "$set" "$c" "$(echo "${accs[*]}" | median)" \
      "$(echo "${f1s[*]}" | median)" "$params" "$(echo "${cpus[*]}" | median)" "seeds: ${accs[*]}")")
  done
done

echo
printf '%-9s %-14s %9s %9s %12s %9s  %s\n' set config "acc %" "macro-F1" params "train cpu s" "per seed (accuracy)"
printf '%s\n' "${rows[@]}"
