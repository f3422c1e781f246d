#!/usr/bin/env bash
# grpc_model.sh — `gyro serve --model --embeddings` with a classifier and a character table
# trained here on a small labelled set, a root-finding policy and a composite-intent policy:
# Embed (both hyperbolic models), Neighbors, Reason and Reason "composite" (against
# `gyro reason --env composite`);
# Classify / ClassifyStream answers (top-k, order, ids, atoms, determinism, concurrency, the same
# message as `gyro classify predict --stream`), the C
# client, and SIGHUP reloads while four clients keep Classify busy: a good new model is swapped
# in, a truncated, a garbage and a missing file are refused, and no call fails meanwhile.
set -eu
. tests/py/grpc_lib.bash
grpc_setup
"$GYRO" classify --help >/dev/null 2>&1 || { echo "gyro classify not built"; exit 77; }
"$GYRO" rl --help >/dev/null 2>&1 || { echo "gyro rl not built"; exit 77; }

"$PY" tests/py/make_examples.py "$GEN" toy "$TMPDIR/toy.pb" "$TMPDIR/toy.txt"
train() { "$GYRO" classify train --dim 16 --layers 1 --heads 2 --epochs 15 --seed "$1" --quiet -o "$2" "$TMPDIR/toy.pb"; }
train 1 "$TMPDIR/a.model"
train 2 "$TMPDIR/b.model"
cp "$TMPDIR/a.model" "$TMPDIR/serve.model"
for k in 1 2 3 4 5 6 7 8; do cat "$TMPDIR/toy.txt"; done > "$TMPDIR/chars.txt"
"$GYRO" char2vec train --dim 5 --epochs 1 --min-count 1 --sample 0 --checkpoint-every 0 -o "$TMPDIR/chars.tab" "$TMPDIR/chars.txt" 2>/dev/null
rows=$(tr -d '\n' < "$TMPDIR/chars.txt" | "$PY" -c 'import sys; print(len(set(sys.stdin.read())))')

"$GYRO" rl finetune --env root -n 2 -S 2 -G 2 --eval 2 -o "$TMPDIR/root.policy" >/dev/null 2>&1
# a tiny composite-intent policy and what `gyro reason --env composite` says about a few utterances
"$GYRO" generate music -n 300 -q -o "$TMPDIR/music.pb"
"$GYRO" rl finetune --env composite --train "$TMPDIR/music.pb" --dim 32 --layers 1 --heads 2 --sft-epochs 20 \
  -n 2 -S 4 -G 2 -q -o "$TMPDIR/comp.policy" >/dev/null
{ "$GYRO" generate music -n 300 -q -f tsv | grep -F '+' | cut -f1 | head -n 6; echo "音量调大一点"; } > "$TMPDIR/comp.txt"
mapfile -t comp_utts < "$TMPDIR/comp.txt"
"$GYRO" reason --env composite --model "$TMPDIR/comp.policy" "${comp_utts[@]}" > "$TMPDIR/comp.expect"

start_server model --model "$TMPDIR/serve.model" --embeddings "$TMPDIR/chars.tab" --policy "$TMPDIR/root.policy" \
  --composite-policy "$TMPDIR/comp.policy" --threads 2 --pool 2
grep -q 'model ' "$SLOG"
suite embed "$ADDR" --dim 5 --rows "$rows"
suite reason "$ADDR"
suite reason-composite "$ADDR" --expect-file "$TMPDIR/comp.expect" --texts-file "$TMPDIR/comp.txt"
suite model "$ADDR" --n-labels 4 --texts-file "$TMPDIR/toy.txt"
# `classify predict --stream` writes the very ClassifyResponse the Classify method answers (one
# function builds both, pipeline/classify_response.h): field for field, atoms of composites included
"$GYRO" classify predict --stream -k 4 -m "$TMPDIR/serve.model" -o "$TMPDIR/cli.pb" "$TMPDIR/toy.txt"
suite same-as-cli "$ADDR" --top-k 4 --texts-file "$TMPDIR/toy.txt" --expect-file "$TMPDIR/cli.pb"

# the C client: one line per text, tab-separated label/probability pairs
out=$("$GYRO" client --addr "$ADDR" classify --top-k 2 "导航到西湖" "播放晴天")
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || { echo "FAIL client classify lines: $out"; exit 1; }
printf '%s\n' "$out" | awk -F'\t' 'NF != 4 || $2 < 0 || $2 > 1 { bad = 1 } END { exit bad }' \
  || { echo "FAIL client classify format: $out"; exit 1; }
n_in=$(wc -l < "$TMPDIR/toy.txt")
printf '\n' >> "$TMPDIR/toy.txt"   # an empty line keeps its place
"$GYRO" client --addr "$ADDR" classify --stream < "$TMPDIR/toy.txt" > "$TMPDIR/stream.out"
[ "$(wc -l < "$TMPDIR/stream.out")" = $((n_in + 1)) ] || { echo "FAIL stream lines"; exit 1; }
[ -z "$(tail -n 1 "$TMPDIR/stream.out")" ] || { echo "FAIL empty line not kept"; exit 1; }
first=$(head -n 1 "$TMPDIR/toy.txt")
[ "$("$GYRO" client --addr "$ADDR" classify "$first")" = "$(head -n 1 "$TMPDIR/stream.out")" ] \
  || { echo "FAIL stream and unary differ"; exit 1; }
echo "ok   C client classify and classify --stream"

# SIGHUP under load
v1=$(grep -o 'model [^ ]*$' "$SLOG" | head -n 1 | cut -d' ' -f2)
suite reload-load "$ADDR" --texts-file "$TMPDIR/toy.txt" --seconds 120 --ready-file "$TMPDIR/ready" \
  --stop-file "$TMPDIR/stop" > "$TMPDIR/load.out" 2>&1 &
LOAD=$!
for _ in $(seq 1 600); do [ -e "$TMPDIR/ready" ] && break; sleep 0.05; done
[ -e "$TMPDIR/ready" ] || { echo "FAIL the load did not start"; cat "$TMPDIR/load.out"; exit 1; }
cp "$TMPDIR/b.model" "$TMPDIR/new.model" && mv "$TMPDIR/new.model" "$TMPDIR/serve.model"
kill -HUP "$SPID"; sleep 0.7
head -c 2000 "$TMPDIR/a.model" > "$TMPDIR/new.model" && mv "$TMPDIR/new.model" "$TMPDIR/serve.model"
kill -HUP "$SPID"; sleep 0.7
head -c 4096 /dev/urandom > "$TMPDIR/new.model" && mv "$TMPDIR/new.model" "$TMPDIR/serve.model"
kill -HUP "$SPID"; sleep 0.7
rm "$TMPDIR/serve.model"
kill -HUP "$SPID"; sleep 0.5
touch "$TMPDIR/stop"
wait "$LOAD" || { echo "FAIL load during reloads:"; cat "$TMPDIR/load.out"; exit 1; }
cat "$TMPDIR/load.out"
[ "$(grep -c 'reloaded' "$SLOG")" = 1 ] || { echo "FAIL expected one good reload"; cat "$SLOG"; exit 1; }
[ "$(grep -c 'reload refused' "$SLOG")" = 3 ] || { echo "FAIL expected three refused reloads"; cat "$SLOG"; exit 1; }
v2=$(grep -o 'reloaded .*: model .*' "$SLOG" | sed 's/.*: model //')
[ -n "$v2" ] && [ "$v2" != "$v1" ] || { echo "FAIL version did not change ($v1 -> $v2)"; exit 1; }
"$GYRO" client --addr "$ADDR" stats | grep -q "^model_version	$v2\$" || { echo "FAIL serving $v2 after refusals"; exit 1; }
grep -q "$v1" "$TMPDIR/load.out" && grep -q "$v2" "$TMPDIR/load.out" \
  || { echo "FAIL the load did not see both models"; exit 1; }
echo "ok   SIGHUP: good model swapped in ($v1 -> $v2), 3 bad files refused, no call failed"
stop_server

# a composite policy alone: root-finding Reason is UNAVAILABLE, composite Reason serves;
# --composite-policy with a file that is not a composite policy is refused at start
start_server comp --composite-policy "$TMPDIR/comp.policy"
suite reason-composite "$ADDR" --expect-file "$TMPDIR/comp.expect" --texts-file "$TMPDIR/comp.txt" --without-root
stop_server
if "$GYRO" serve --addr 127.0.0.1:0 --composite-policy "$TMPDIR/root.policy" 2>/dev/null; then
  echo "FAIL a root policy was accepted as a composite policy"; exit 1
fi
echo "ok   --composite-policy refuses a file that is not a composite policy"
