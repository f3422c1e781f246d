#!/usr/bin/env bash
# classify_ngrams.sh — `gyro classify train --arch ngrams` end to end, in both geometries, on a
# small generated dialogue set where "取消" (cancel) means navigation.cancel_navigation after a
# navigation turn and music.pause after a music turn: with --context the previous turn of the
# session decides it (eval, predict over an Example stream, the gRPC Classify method through
# `gyro client classify --previous`); without, it cannot. The toy set is small, so the context
# weighs 3 features (default 1) and steps are larger. Training is reproducible from the seed.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"

# NLPCC 2018 task-4 layout: session \t text \t label \t slots, a blank line between sessions
gen() {
  local s=0
  for rep in 1 2 3; do
    for a in 播放 来一首 我想听; do for b in 稻香 晴天 七里香 夜曲; do
      s=$((s + 1)); printf '%s\t%s%s\tmusic.play\t-\n%s\t取消\tmusic.pause\t-\n\n' "m$rep$s" "$a" "$b" "m$rep$s"; done; done
    for a in 导航到 带我去 去; do for b in 北京西站 机场 公司 学校; do
      s=$((s + 1)); printf '%s\t%s%s\tnavigation.navigation\t-\n%s\t取消\tnavigation.cancel_navigation\t-\n\n' "n$rep$s" "$a" "$b" "n$rep$s"; done; done
  done
}
gen > dialogues.txt
"$GYRO" import --format nlpcc -q -o all.pb dialogues.txt
"$GYRO" split --seed 1 --dev 0.25 --train-out train.pb --dev-out dev.pb all.pb 2>/dev/null

acc_of() { awk '/^accuracy:/ {gsub("%","",$2); print $2}' "$1"; }
for geo in hyperbolic euclidean; do
  lr=0.5; [ "$geo" = hyperbolic ] && lr=0.2     # a toy set needs larger steps than the defaults
  opts=(--arch ngrams --geometry "$geo" --dim 16 --buckets 2000 --epochs 40 --lr "$lr" --dev-fraction 0 --seed 3 --quiet)
  "$GYRO" classify train "${opts[@]}" --context --context-weight 3 -o "ctx-$geo.clf" train.pb
  "$GYRO" classify train "${opts[@]}" --context --context-weight 3 -o "ctx2-$geo.clf" train.pb
  cmp "ctx-$geo.clf" "ctx2-$geo.clf"                       # same seed, same bytes
  "$GYRO" classify train "${opts[@]}" --no-context -o "flat-$geo.clf" train.pb
  "$GYRO" classify eval -m "ctx-$geo.clf" dev.pb > "ctx-$geo.txt"
  "$GYRO" classify eval -m "flat-$geo.clf" dev.pb > "flat-$geo.txt"
  a=$(acc_of "ctx-$geo.txt") b=$(acc_of "flat-$geo.txt")
  awk -v a="$a" 'BEGIN { exit !(a >= 99) }' || { echo "FAIL $geo with context: accuracy $a%"; cat "ctx-$geo.txt"; exit 1; }
  # half the dev turns are 取消 and a bag of its characters alone cannot tell music from navigation
  awk -v b="$b" 'BEGIN { exit !(b <= 80) }' || { echo "FAIL $geo without context: accuracy $b% (expected <= 80%)"; exit 1; }
  grep -q "model: ngrams-$geo-16d-" "ctx-$geo.txt"
done

# predict over an Example stream reads the previous turn of the same session
"$GYRO" classify predict -m ctx-hyperbolic.clf dev.pb > pred.jsonl
"$GYRO" dump dev.pb 2>/dev/null | grep -o '"label":"[^"]*"' > gold.txt
grep -o '"intents":\[{"label":"[^"]*"' pred.jsonl | sed 's/"intents":\[{//' > got.txt
cmp gold.txt got.txt || { echo "FAIL predict over the Example stream"; paste gold.txt got.txt | head; exit 1; }
# plain text lines have no previous turn: 取消 still gets an answer
printf '取消\n' | "$GYRO" classify predict -m ctx-hyperbolic.clf | grep -q '"intents":\[{"label":"'

# the gRPC Classify method with ClassifyRequest.previous_turn
if "$GYRO" serve --help >/dev/null 2>&1; then
  "$GYRO" serve --addr 127.0.0.1:0 --port-file port --model ctx-hyperbolic.clf 2> serve.log &
  spid=$!
  trap 'kill "$spid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 300); do [ -s port ] && break; sleep 0.05; done
  [ -s port ] || { echo "FAIL server did not start"; cat serve.log; exit 1; }
  addr=127.0.0.1:$(cat port)
  "$GYRO" client --addr "$addr" classify --previous 带我去机场 取消 | grep -q '^navigation.cancel_navigation	' \
    || { echo "FAIL client --previous (navigation)"; "$GYRO" client --addr "$addr" classify --previous 带我去机场 取消; exit 1; }
  "$GYRO" client --addr "$addr" classify --previous 来一首晴天 取消 | grep -q '^music.pause	' \
    || { echo "FAIL client --previous (music)"; exit 1; }
  kill "$spid"; wait "$spid" 2>/dev/null || true
  trap - EXIT
fi
echo ok
