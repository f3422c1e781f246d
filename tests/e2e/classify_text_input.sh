#!/usr/bin/env bash
# classify_text_input.sh — fastText's habits on the real NLPCC 2018 data: `classify train` and
# `classify eval` read TSV and fastText's `__label__x text` lines directly (detected, or
# --format), give the same model as the Example stream of `gyro import`, print the data summary
# before training, stop at a bad line with its line number and exit status 65; several __label__
# tokens make a composite label; `classify predict` on a pipe answers each line before the next
# one is written (a coprocess writes a line and waits for its answer), also when the first line
# is a single character that could begin a stream header.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
N="$SHARED/corpora/intent/nlpcc2018/corpus.train.txt"
[ -f "$N" ] || { echo "NLPCC 2018 corpus not found at $N"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/classify_text_input.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }

# the first 3000 utterances of NLPCC as TSV (text, label) and as fastText lines
awk -F'\t' 'NF >= 3 && n < 3000 { n++; print $2 "\t" $3 }' "$N" > d.tsv
awk -F'\t' 'NF >= 3 && n < 3000 { n++; print "__label__" $3 " " $2 }' "$N" > d.ft
"$GYRO" import -q --format tsv -o d.pb d.tsv
opts=(--epochs 3 --seed 7 --dim 32 --buckets 20000)

# ---- the three inputs train the same model --------------------------------------------------------
"$GYRO" classify train "${opts[@]}" -o pb.clf d.pb 2> pb.log
"$GYRO" classify train "${opts[@]}" -o tsv.clf d.tsv 2> tsv.log
"$GYRO" classify train "${opts[@]}" -o ft.clf d.ft 2> ft.log
"$GYRO" classify train "${opts[@]}" -o stdin.clf - < d.tsv 2> stdin.log
cat ft.log
grep -q '^gyro classify: data: d.ft (fasttext): 3000 examples, 10 labels' ft.log || fail "fastText summary: $(head -1 ft.log)"
grep -q '^gyro classify: data: d.tsv (tsv): 3000 examples, 10 labels' tsv.log || fail "TSV summary"
grep -q '^gyro classify: data: d.pb (pb): 3000 examples, 10 labels' pb.log || fail "pb summary"
grep -q '^gyro classify: data: - (tsv): 3000 examples' stdin.log || fail "stdin summary"
# the summary comes before training starts
[ "$(grep -n 'data:' ft.log | cut -d: -f1)" -lt "$(grep -n '^epoch 1' ft.log | cut -d: -f1)" ] || fail "summary after training"
ok "summaries: $(grep -h 'data:' pb.log tsv.log ft.log stdin.log | wc -l) inputs, before the first epoch"
for m in tsv ft stdin; do
  "$GYRO" classify eval -m $m.clf d.pb > $m.eval
done
"$GYRO" classify eval -m pb.clf d.pb > pb.eval
for m in tsv ft stdin; do
  cmp -s pb.eval $m.eval || fail "$m-trained model differs from the pb-trained one: $(diff pb.eval $m.eval | head -5)"
done
ok "TSV, fastText, TSV on stdin and the Example stream train the same model ($(grep -m1 '^accuracy' pb.eval))"
# eval reads the text formats too, with the same result
"$GYRO" classify eval -m pb.clf d.ft > pb.ft.eval
"$GYRO" classify eval -m pb.clf --format tsv d.tsv > pb.tsv.eval
cmp -s pb.eval pb.ft.eval && cmp -s pb.eval pb.tsv.eval || fail "eval on text differs from eval on the stream"
ok "classify eval on TSV and fastText lines = on the stream"

# predict reads labelled lines too: fastText's without their labels, TSV's text column
head -200 d.tsv | cut -f1 > plain.txt
"$GYRO" classify predict -m pb.clf plain.txt > plain.jsonl
head -200 d.ft | "$GYRO" classify predict -m pb.clf > ft.jsonl
head -200 d.tsv | "$GYRO" classify predict -m pb.clf --format tsv > tsv.jsonl
cmp -s plain.jsonl ft.jsonl && cmp -s plain.jsonl tsv.jsonl || fail "predict on labelled lines differs from predict on their texts"
ok "classify predict on fastText lines (labels dropped) and TSV (--format tsv) = on the bare texts"

# ---- a header line reorders the columns ------------------------------------------------------------
{ printf 'label\ttext\n'; awk -F'\t' '{ print $2 "\t" $1 }' d.tsv; } > lt.tsv
"$GYRO" classify train "${opts[@]}" -q -o lt.clf lt.tsv
"$GYRO" classify eval -m lt.clf d.pb > lt.eval
cmp -s pb.eval lt.eval || fail "label<TAB>text with a header trains another model"
ok "a 'label<TAB>text' header reorders the columns"

# ---- several labels: a composite ------------------------------------------------------------------
printf '__label__query_song __label__play_song 播放稻香\n__label__play_song 来一首晴天\n' > multi.ft
"$GYRO" import -q --format fasttext -o multi.pb multi.ft
"$GYRO" dump multi.pb | sed -n 1p | grep -q '"label":"query_song+play_song","labels":\["play_song","query_song"\]' \
  || fail "composite: $("$GYRO" dump multi.pb | sed -n 1p)"
ok "__label__a __label__b is the composite a+b"

# ---- bad lines: the line number and exit status 65 ------------------------------------------------
expect_65() { # name, expected message, command...
  local name=$1 msg=$2; shift 2
  set +e; "$@" > out.txt 2> err.txt; local rc=$?; set -e
  [ "$rc" = 65 ] || fail "$name: exit $rc, expected 65 ($(cat err.txt))"
  grep -qF -- "$msg" err.txt || fail "$name: message '$(cat err.txt)', expected '$msg'"
  ok "$name: exit 65, $(cat err.txt)"
}
{ head -5 d.tsv; echo "打开导航"; tail -3 d.tsv; } > bad.tsv
expect_65 "TSV line without a label" "bad.tsv:6: expected 2 or 3 tab-separated columns" \
  "$GYRO" classify train -q -o bad.clf bad.tsv
{ head -3 d.ft; echo "打开导航"; } > bad.ft
expect_65 "fastText line without a label" "bad.ft:4: no __label__ token" \
  "$GYRO" classify train -q -o bad.clf bad.ft
{ head -2 d.ft; echo "__label__a..b 打开导航"; } > badlabel.ft
expect_65 "fastText bad label" "badlabel.ft:3: bad label" "$GYRO" classify train -q -o bad.clf badlabel.ft
expect_65 "a TSV given as pb" "d.tsv: not a gyro stream" "$GYRO" classify train -q --format pb -o bad.clf d.tsv
expect_65 "a stream given as tsv" "d.pb: a gyro stream, not tsv lines" "$GYRO" classify train -q --format tsv -o bad.clf d.pb
[ ! -e bad.clf ] || fail "a model was written despite the errors"

# ---- predict answers each line as it arrives -------------------------------------------------------
# A coprocess: write one line, wait (at most 10 s) for its answer, then write the next. Before,
# predict waited for 16 bytes and answered at the end of the input, so this hung.
converse() { # the lines to send
  coproc P { "$GYRO" classify predict -m pb.clf; }
  local ppid=$P_PID # bash unsets P_PID once the coprocess has ended; its status stays with wait
  local n=0 t
  for t in "$@"; do
    n=$((n + 1))
    printf '%s\n' "$t" >&"${P[1]}"
    IFS= read -r -t 10 ans <&"${P[0]}" || fail "no answer to line $n ('$t') within 10 s"
    case "$ans" in "{\"id\":\"$n\",\"text\":\"$t\",\"intents\":[{\"label\":"*) ;; *) fail "answer to '$t': $ans";; esac
  done
  exec {P[1]}>&-
  wait "$ppid" || fail "predict on a pipe exited with $?"
}
converse 播放周杰伦的稻香 导航到北京西站 下一首
ok "predict on a pipe: each of 3 lines answered before the next was written"
converse 好 播放音乐
converse a 导航回家
ok "predict on a pipe: a one-character first line ('好', 'a') is answered too"
# --stream on a pipe: each ClassifyResponse record is written before the next line is read
mkfifo in.fifo
"$GYRO" classify predict -m pb.clf --stream < in.fifo > live.pb &
PRED=$!
exec {W}>in.fifo
records() { "$GYRO" dump live.pb 2>/dev/null | grep -c '"intents"' || true; }
n=0
for t in 播放周杰伦的稻香 导航到北京西站; do
  n=$((n + 1))
  printf '%s\n' "$t" >&"$W"
  for _ in $(seq 100); do [ "$(records)" = "$n" ] && break; sleep 0.1; done
  [ "$(records)" = "$n" ] || fail "--stream on a pipe: $n line(s) written, $(records) record(s) out after 10 s"
done
exec {W}>&-
wait "$PRED" || fail "predict --stream on a pipe exited with $?"
ok "predict --stream on a pipe: each record is written before the next line arrives"
# a stream on a pipe is still detected as one
printf '播放音乐\n导航\n' | "$GYRO" normalize 2>/dev/null | "$GYRO" classify predict -m pb.clf > piped.jsonl
[ "$(wc -l < piped.jsonl)" = 2 ] || fail "Document stream through a pipe: $(cat piped.jsonl)"
ok "a Document stream through a pipe is still read as a stream"
echo "classify_text_input: all ok"
