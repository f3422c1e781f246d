#!/usr/bin/env bash
# char2vec_speed.sh — gyro char2vec against word2vec.c's and fastText's skip-gram on the same
# character stream.
#
#   tests/bench/char2vec_speed.sh [RUNS]        (default 3 runs)
#   env: GYRO (binary), W2V (word2vec binary), FASTTEXT (fasttext binary), WORK (scratch dir),
#        EPOCHS (5, the anchors' setting), LINES (use only the first LINES documents; 100000,
#        3.9M characters; 0 = all), TOOLS (default "gyro gyro-share2 word2vec fasttext"; gyro is
#        the per-pair update (--update pair), gyro-share2 the default window update with
#        negatives shared by 2 contexts (--update batch --share 2), gyro-batch the window update
#        with one draw of negatives for the whole window (--share 0, pWord2Vec's HogBatch),
#        gyro-euclidean the per-pair update in Euclidean space; word2vec is word2vec.c's
#        skip-gram, fasttext fastText's skipgram without subwords (-minn 0 -maxn 0)),
#        THREADS (default "1 2"; C2V_THREADS overrides it, for make bench-speed where THREADS
#        means other things to other scripts)
#
# One counting rule for every tool: the tokens of the stream (characters, before the min-count
# cut and subsampling) × epochs, divided by the process's wall or CPU time, vocabulary building
# and I/O included. Each tool's own printed rate is shown beside it but counts differently
# (word2vec: kept tokens per CPU-second of the training threads; fastText: per wall-second per
# thread; gyro: per wall-second of the training phase).
#
# The corpus is all of ../shared/corpora/text turned into plain lines (char2vec_corpus.py), then
# `gyro char2vec tokens` writes the characters gyro trains on, space-separated, so both tools
# read the SAME token stream. Settings of the anchors (../shared/anchors): dim 100, window 5,
# 5 negatives, sample 1e-4, min-count 5, 5 epochs, at 1 and 2 threads. word2vec.c (dav/word2vec:
# tmikolov's has a -threads 1 bug) and fastText are built OUTSIDE the project in $WORK from a
# local mirror or a clone (-O3 -march=native, their own settings); set W2V= / FASTTEXT= to use
# your own builds. Nothing of them enters the project.
#
# Reported per tool and thread count (medians of RUNS): wall seconds, tokens/s/thread over the
# whole run (tokens × epochs / (wall × threads), vocabulary building and I/O included), the same
# per CPU-second (tokens × epochs / (user + system time): robust when other load shares the
# machine, comparable to word2vec's own CPU-based figure), the
# tool's own training rate (gyro: its summary line, training phase only, wall clock; word2vec:
# its last "Words/thread/sec", process CPU time based, </s> line ends counted as words;
# fastText: its last words/sec/thread), and
# peak RSS. Runs are niced; other load on the machine moves absolute figures, so compare ratios
# taken in one run.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
GYRO=${GYRO:-$here/build/gyro}
SHARED=${SHARED:-$here/../shared}
WORK=${WORK:-/tmp/gyro-bench-char2vec}
RUNS=${1:-3}
EPOCHS=${EPOCHS:-5}
LINES=${LINES:-100000}
TOOLS=${TOOLS:-gyro gyro-share2 word2vec fasttext}
THREADS=${C2V_THREADS:-${THREADS:-1 2}}
PY=/usr/bin/python3
mkdir -p "$WORK"
[ -x "$GYRO" ] || { echo "build gyro first ($GYRO)"; exit 1; }

# ---- word2vec.c, built beside the project -------------------------------------------------------
if [ -z "${W2V:-}" ]; then
  src=$WORK/word2vec.c
  if [ ! -s "$src" ]; then
    if [ -d /work/.mirror/dav+word2vec/repo ]; then
      git --git-dir=/work/.mirror/dav+word2vec/repo show HEAD:src/word2vec.c > "$src"
    else
      git clone -q --depth 1 https://github.com/dav/word2vec "$WORK/w2v-src"
      cp "$WORK/w2v-src/src/word2vec.c" "$src"
    fi
  fi
  [ -x "$WORK/word2vec" ] || gcc -O3 -march=native -funroll-loops -Wno-unused-result -pthread \
    "$src" -o "$WORK/word2vec" -lm
  W2V=$WORK/word2vec
fi

# ---- fastText, built beside the project (only when TOOLS names it) ------------------------------
if [[ " $TOOLS " == *" fasttext "* ]] && [ -z "${FASTTEXT:-}" ]; then
  if [ ! -x "$WORK/ft-src/fasttext" ]; then
    rm -rf "$WORK/ft-src"; mkdir -p "$WORK/ft-src"
    if [ -d /work/.mirror/facebookresearch+fastText/repo ]; then
      git --git-dir=/work/.mirror/facebookresearch+fastText/repo archive HEAD | tar -x -C "$WORK/ft-src"
    else
      git clone -q --depth 1 https://github.com/facebookresearch/fastText "$WORK/ft-src"
    fi
    make -C "$WORK/ft-src" -j2 opt > "$WORK/ft-build.log" 2>&1 ||
      { echo "fastText did not build (see $WORK/ft-build.log)"; exit 1; }
  fi
  FASTTEXT=$WORK/ft-src/fasttext
fi

# ---- the token stream -------------------------------------------------------------------------
if [ ! -s "$WORK/tokens.all" ]; then
  "$PY" "$here/tests/bench/char2vec_corpus.py" "$SHARED/corpora/text" > "$WORK/corpus.txt"
  "$GYRO" char2vec tokens "$WORK/corpus.txt" > "$WORK/tokens.all"
fi
if [ "$LINES" -gt 0 ]; then head -n "$LINES" "$WORK/tokens.all" > "$WORK/tokens.txt"; else cp "$WORK/tokens.all" "$WORK/tokens.txt"; fi
tokens=$(wc -w < "$WORK/tokens.txt")
lines=$(wc -l < "$WORK/tokens.txt")
echo "corpus: $tokens characters in $lines documents of shared/corpora/text (LINES=$LINES, 0 = all); epochs $EPOCHS"

median() { sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; }

run_gyro() { # threads geometry update share
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/time" nice "$GYRO" char2vec train --geometry "$2" --update "$3" --share "$4" --dim 100 \
    --window 5 --negatives 5 --sample 1e-4 --min-count 5 --epochs "$EPOCHS" --threads "$1" \
    --checkpoint-every 0 -o "$WORK/gyro.tab" "$WORK/tokens.txt" 2> "$WORK/log" > /dev/null
  read -r wall rss usr sys < "$WORK/time"
  own=$(sed -n 's/.*s, \([0-9]*\) chars\/sec\/thread.*/\1/p' "$WORK/log" | tail -1)
  kept=$(sed -n 's/.* \([0-9]*\) tokens to train on.*/\1/p' "$WORK/log")
  echo "$wall $rss $own $kept $(awk -v a="$usr" -v b="$sys" 'BEGIN{print a+b}')"
}

run_w2v() { # threads
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/time" nice "$W2V" -train "$WORK/tokens.txt" -output "$WORK/w2v.bin" \
    -cbow 0 -size 100 -window 5 -negative 5 -hs 0 -min-count 5 -iter "$EPOCHS" -sample 1e-4 -binary 1 \
    -threads "$1" > "$WORK/log" 2>&1
  read -r wall rss usr sys < "$WORK/time"
  own=$(tr '\r' '\n' < "$WORK/log" | sed -n 's/.*Words\/thread\/sec: *\([0-9.]*\)k.*/\1/p' | tail -1)
  own=$(awk -v k="${own:-0}" 'BEGIN{printf "%d", k*1000}')
  kept=$(sed -n 's/^Words in train file: \([0-9]*\).*/\1/p' "$WORK/log")
  echo "$wall $rss $own $kept $(awk -v a="$usr" -v b="$sys" 'BEGIN{print a+b}')"
}

run_ft() { # threads — skip-gram without subwords (-minn 0 -maxn 0): word2vec's model
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/time" nice "$FASTTEXT" skipgram -input "$WORK/tokens.txt" \
    -output "$WORK/ft" -dim 100 -ws 5 -neg 5 -minCount 5 -epoch "$EPOCHS" -t 1e-4 -minn 0 -maxn 0 \
    -thread "$1" -verbose 2 > "$WORK/log" 2>&1
  read -r wall rss usr sys < "$WORK/time"
  own=$(tr '\r' '\n' < "$WORK/log" | sed -n 's/.*words\/sec\/thread: *\([0-9]*\).*/\1/p' | tail -1)
  # fastText prints its vocabulary size, not the tokens it trains on: "train tokens" stays 0
  echo "$wall $rss ${own:-0} 0 $(awk -v a="$usr" -v b="$sys" 'BEGIN{print a+b}')"
}

declare -A WALL RSS OWN CPU
for r in $(seq 1 "$RUNS"); do
  for t in $THREADS; do
    for tool in $TOOLS; do
      case $tool in
        gyro) set -- $(run_gyro "$t" hyperbolic pair 0) ;;
        gyro-batch) set -- $(run_gyro "$t" hyperbolic batch 0) ;;
        gyro-share2) set -- $(run_gyro "$t" hyperbolic batch 2) ;;
        gyro-euclidean) set -- $(run_gyro "$t" euclidean pair 0) ;;
        word2vec) set -- $(run_w2v "$t") ;;
        fasttext) set -- $(run_ft "$t") ;;
      esac
      WALL[$tool,$t]+="$1 "; RSS[$tool,$t]+="$2 "; OWN[$tool,$t]+="$3 "; CPU[$tool,$t]+="$5 "
      echo "run $r: $tool threads $t: wall $1 s, cpu $5 s, peak RSS $(( $2 / 1024 )) MB, own rate $3, train tokens $4" >&2
    done
  done
done

printf '\n| tool | threads | wall s | tokens/s/thread (wall, end to end) | tokens per CPU-second | own training rate | peak RSS MB |\n|---|---|---|---|---|---|---|\n'
for tool in $TOOLS; do
  for t in $THREADS; do
    w=$(echo ${WALL[$tool,$t]} | tr ' ' '\n' | median)
    o=$(echo ${OWN[$tool,$t]} | tr ' ' '\n' | median)
    m=$(echo ${RSS[$tool,$t]} | tr ' ' '\n' | median)
    cs=$(echo ${CPU[$tool,$t]} | tr ' ' '\n' | median)
    e=$(awk -v n="$tokens" -v e="$EPOCHS" -v w="$w" -v t="$t" 'BEGIN{printf "%.0f", n*e/(w*t)}')
    c=$(awk -v n="$tokens" -v e="$EPOCHS" -v w="$cs" 'BEGIN{printf "%.0f", n*e/w}')
    printf '| %s | %s | %.1f | %s | %s | %s | %.0f |\n' "$tool" "$t" "$w" "$e" "$c" "$o" "$(awk -v m="$m" 'BEGIN{print m/1024}')"
    eval "E_${tool//-/_}_$t=$e; O_${tool//-/_}_$t=$o; C_${tool//-/_}_$t=$c"
  done
done
echo
for t in $THREADS; do
  eval "g=\${E_gyro_$t:-0} w=\${E_word2vec_$t:-0} gc=\${C_gyro_$t:-0} wc=\${C_word2vec_$t:-0} bc=\${C_gyro_batch_$t:-0}"
  eval "dc=\${C_gyro_share2_$t:-0}"
  awk -v g="$g" -v w="$w" -v gc="$gc" -v wc="$wc" -v t="$t" 'BEGIN{ if (w > 0 && wc > 0) printf "threads %d: gyro/word2vec tokens/s/thread %.2f (wall), %.2f (CPU)\n", t, g/w, gc/wc}'
  awk -v bc="$bc" -v gc="$gc" -v wc="$wc" -v t="$t" 'BEGIN{ if (bc > 0 && wc > 0) printf "threads %d: gyro --update batch/word2vec %.2f (CPU)\n", t, bc/wc; if (bc > 0 && gc > 0) printf "threads %d: --update batch/--update pair %.2f (CPU)\n", t, bc/gc}'
  # make bench's closing table: the default update (--update batch --share 2, gyro-share2) on
  # one thread against word2vec.c (its quality against the per-pair update: README)
  eval "fc=\${C_fasttext_$t:-0}"
  awk -v dc="$dc" -v fc="$fc" -v t="$t" 'BEGIN{ if (dc > 0 && fc > 0) printf "threads %d: gyro (default update)/fastText %.2f (CPU)\n", t, dc/fc}'
  [ "$t" != 1 ] || awk -v gc="$dc" -v wc="$wc" 'BEGIN{ if (gc > 0 && wc > 0)
    printf "TABLE | char2vec tokens per CPU-second, default update (batch, share 2), 1 thread | %.0f | word2vec.c %.0f | %.2f | >= 4x at equal quality | %s |\n",
           gc, wc, gc / wc, (gc / wc >= 4 ? "met" : "not met") }'
  [ "$t" != 1 ] || awk -v gc="$dc" -v fc="$fc" 'BEGIN{ if (gc > 0 && fc > 0)
    printf "TABLE | char2vec tokens per CPU-second, default update, 1 thread, against fastText | %.0f | fastText skipgram %.0f | %.2f | — | — |\n",
           gc, fc, gc / fc }'
done
eval "g1=\${E_gyro_1:-0} g2=\${E_gyro_2:-0}"
awk -v a="$g1" -v b="$g2" 'BEGIN{ if (a > 0 && b > 0) printf "gyro scaling 1 -> 2 threads: %.2fx total throughput (wall)\n", 2*b/a}'
