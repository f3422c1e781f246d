#!/usr/bin/env bash
# grpc_train.sh — training over gRPC with the C client (`gyro client train`), against
# `gyro serve --train-dir`:
#   without --train-dir the training methods are UNAVAILABLE;
#   train classifier (examples sent by the client) -> progress lines -> done with the file and
#   the version, which Stats and Classify now report, the file a valid model written under the
#   directory; train embeddings (documents sent, and a corpus file under the directory) -> a
#   table that loads, then a classifier started from it (embeddings_path);
#   a long training: a second one meanwhile is RESOURCE_EXHAUSTED, Classify keeps answering
#   (latency printed), the client is killed -> the training stops (a new one is accepted within
#   seconds), nothing is written, no work directory is left, the model served is unchanged;
#   paths: '..' and malformed outputs INVALID_ARGUMENT, absolute paths and symbolic links out of
#   the directory PERMISSION_DENIED, a missing file NOT_FOUND;
#   empty and malformed data, epochs and dim over the limits: INVALID_ARGUMENT;
#   --train-max-seconds: DEADLINE_EXCEEDED, nothing written; SIGTERM during a training: the
#   server exits 0 promptly, the client gets UNAVAILABLE.
set -eu
: "${GYRO:?}" "${TMPDIR:?}"
. tests/py/grpc_lib.bash
. tests/e2e/lib/intents.sh
[ -x "$GYRO" ] || { echo "no gyro binary at $GYRO"; exit 1; }

D="$TMPDIR/train"
mkdir -p "$D/sub"
gen_intents > "$TMPDIR/data.tsv"
cut -f1 "$TMPDIR/data.tsv" > "$TMPDIR/corpus.txt"
"$GYRO" classify train -q --dim 16 --epochs 2 -o "$TMPDIR/old.model" "$TMPDIR/data.tsv"

# fail MSG FILE...: print the message and the files, exit 1
fail() { echo "FAIL $1"; shift; for f in "$@"; do echo "--- $f"; cat "$f"; done; exit 1; }
# expect CODE RC CMD...: the client call fails with exit status RC and "gyro client: CODE:" on stderr
expect() {
  local code=$1 want=$2; shift 2
  local rc=0
  "$GYRO" client --addr "$ADDR" "$@" > "$TMPDIR/out" 2> "$TMPDIR/err" || rc=$?
  [ "$rc" = "$want" ] && grep -q "gyro client: $code:" "$TMPDIR/err" \
    || fail "client $* gave exit $rc (wanted $want and $code)" "$TMPDIR/err" "$TMPDIR/out"
  echo "ok   $code ($(sed 's/^gyro client: [A-Z_]*: //' "$TMPDIR/err" | head -c 110))"
}
version() { "$GYRO" client --addr "$ADDR" stats | sed -n 's/^model_version\t//p'; }

# ---- no --train-dir ------------------------------------------------------------------------------
start_server none --model "$TMPDIR/old.model"
expect UNAVAILABLE 1 train classifier "$TMPDIR/data.tsv"
grep -q -- '--train-dir' "$TMPDIR/err" || fail "the message does not name --train-dir" "$TMPDIR/err"
stop_server

# ---- train, progress, serve ----------------------------------------------------------------------
start_server train --model "$TMPDIR/old.model" --train-dir "$D" --train-max-epochs 50 --train-max-dim 64 \
  --metrics-addr 127.0.0.1:0
for _ in $(seq 1 100); do grep -q 'metrics on' "$SLOG" && break; sleep 0.05; done
MPORT=$(sed -n 's/.*metrics on .* (port \([0-9]*\)).*/\1/p' "$SLOG")
# metric NAME: its value in the Prometheus text of the server's --metrics-addr
metric() {
  exec 3<>"/dev/tcp/127.0.0.1/$MPORT"
  printf 'GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
  sed -n "s/^$1 //p" <&3 | tr -d '\r'
  exec 3<&-
}
[ "$(metric gyro_training_running)" = 0 ] || fail "gyro_training_running is not 0 before any training" "$SLOG"
v0=$(version)
"$GYRO" client --addr "$ADDR" train classifier --dim 16 --epochs 30 -o first.model "$TMPDIR/data.tsv" > "$TMPDIR/t1.out" \
  || fail "train classifier" "$TMPDIR/t1.out" "$SLOG"
n=$(grep -c '^progress	classify	' "$TMPDIR/t1.out" || true)
[ "$n" -ge 1 ] || fail "no progress line" "$TMPDIR/t1.out"
tail -n 1 "$TMPDIR/t1.out" | grep -q "^done	$(cd "$D" && pwd -P)/first.model	" || fail "last line is not done with the path" "$TMPDIR/t1.out"
v1=$(tail -n 1 "$TMPDIR/t1.out" | cut -f3)
[ -n "$v1" ] && [ "$v1" != "$v0" ] || fail "model version '$v1' (was '$v0')" "$TMPDIR/t1.out"
awk -F'\t' '$1=="progress" && ($4 < 0 || $4 > 1 || $3 < 1 || $3 > 30) {bad=1} END {exit bad}' "$TMPDIR/t1.out" \
  || fail "a progress line has a fraction outside [0,1] or an epoch outside 1..30" "$TMPDIR/t1.out"
echo "ok   train classifier: $n progress lines, then done: $D/first.model, model $v1 (was $v0)"
[ "$(version)" = "$v1" ] || fail "Stats reports $(version), not $v1"
"$GYRO" client --addr "$ADDR" classify 请播放稻香 | grep -q '^music.play' || fail "Classify with the new model"
"$GYRO" classify predict -m "$D/first.model" <<< "请播放稻香" | grep -q 'music.play' || fail "the written model does not predict"
echo "ok   Stats and Classify serve the new model; the file is a model gyro classify predict reads"
kill -HUP "$SPID"
for _ in $(seq 1 100); do grep -q 'reloaded .*/first.model: model' "$SLOG" && break; sleep 0.05; done
grep -q "reloaded $(cd "$D" && pwd -P)/first.model: model $v1" "$SLOG" || fail "SIGHUP did not reload the trained file" "$SLOG"
echo "ok   SIGHUP now reloads the trained file"

"$GYRO" client --addr "$ADDR" train embeddings --dim 8 --epochs 2 -o chars.pb "$TMPDIR/corpus.txt" > "$TMPDIR/t2.out" \
  || fail "train embeddings" "$TMPDIR/t2.out" "$SLOG"
tail -n 1 "$TMPDIR/t2.out" | grep -q "^done	.*/chars.pb	$" || fail "train embeddings: last line" "$TMPDIR/t2.out"
rows=$("$GYRO" dump "$D/chars.pb" | grep -o '"token"' | wc -l)
[ "$rows" -ge 20 ] || fail "the table has $rows rows" "$TMPDIR/t2.out"
cp "$TMPDIR/corpus.txt" "$D/sub/corpus.txt"
"$GYRO" client --addr "$ADDR" train embeddings --dim 8 --epochs 2 --server-path sub/corpus.txt -o sub/chars2.pb > "$TMPDIR/t3.out" \
  || fail "train embeddings --server-path" "$TMPDIR/t3.out"
[ -s "$D/sub/chars2.pb" ] || fail "no sub/chars2.pb"
"$GYRO" client --addr "$ADDR" train classifier --embeddings-path chars.pb --epochs 5 -o withtable.model "$TMPDIR/data.tsv" \
  > "$TMPDIR/t4.out" || fail "train classifier --embeddings-path" "$TMPDIR/t4.out"
echo "ok   train embeddings (sent documents: $rows rows; a corpus under the directory), a classifier started from the table"

# ---- one at a time, Classify meanwhile, cancellation ---------------------------------------------
for _ in $(seq 1 1250); do cat "$TMPDIR/corpus.txt"; done | paste -d' ' - - - - - - - - > "$D/big.txt"
v2=$(version)
"$GYRO" client --addr "$ADDR" train embeddings --server-path big.txt --epochs 50 -o cancelled.pb > "$TMPDIR/long.out" 2>&1 &
C=$!
for _ in $(seq 1 200); do grep -q '^progress' "$TMPDIR/long.out" && break; sleep 0.05; done
grep -q '^progress' "$TMPDIR/long.out" || fail "the long training sent no progress" "$TMPDIR/long.out" "$SLOG"
expect RESOURCE_EXHAUSTED 1 train classifier --epochs 1 "$TMPDIR/data.tsv"
[ "$(metric gyro_training_running)" = 1 ] || fail "gyro_training_running is not 1 during a training"
t0=$(date +%s%N)
for _ in $(seq 1 20); do "$GYRO" client --addr "$ADDR" classify 导航到机场 > /dev/null || fail "Classify during a training"; done
ms=$(( ($(date +%s%N) - t0) / 20000000 ))
echo "ok   20 Classify calls during the training, ${ms} ms each (client process included)"
kill -TERM "$C"
wait "$C" || true
t0=$(date +%s%N)
ok=0
for _ in $(seq 1 100); do
  if "$GYRO" client --addr "$ADDR" train embeddings --dim 4 --epochs 1 -o after.pb "$TMPDIR/corpus.txt" > /dev/null 2>&1; then ok=1; break; fi
  sleep 0.05
done
[ $ok = 1 ] || fail "no training accepted within 5 s of the cancellation" "$SLOG"
echo "ok   client killed: a new training was accepted $(( ($(date +%s%N) - t0) / 1000000 )) ms later"
[ ! -e "$D/cancelled.pb" ] || fail "the cancelled training wrote its output"
left=$(find "$D" -name '.gyro-train-*' -o -name '*.tmp.*')
[ -z "$left" ] || fail "left behind: $left"
[ "$(version)" = "$v2" ] || fail "the model changed to $(version) (was $v2)"
[ "$("$GYRO" client --addr "$ADDR" health)" = SERVING ] || fail "health after the cancellation"
"$GYRO" client --addr "$ADDR" stats | grep -q 'TrainEmbeddings	CANCELLED	1' || fail "Stats does not count the cancelled call"
[ "$(metric gyro_training_running)" = 0 ] || fail "gyro_training_running is not 0 after the cancellation"
echo "ok   nothing written, no work directory left, still SERVING model $v2, the call counted CANCELLED"
echo "ok   metrics: gyro_training_running 0, 1 during the training, 0 after it"

# ---- paths -----------------------------------------------------------------------------------------
ln -s /etc/passwd "$D/escape"
ln -s "$TMPDIR" "$D/outside"
expect INVALID_ARGUMENT 65 train classifier --server-path ../data.tsv
expect INVALID_ARGUMENT 65 train embeddings --server-path sub/../../corpus.txt
expect PERMISSION_DENIED 1 train classifier --server-path /etc/passwd
expect PERMISSION_DENIED 1 train classifier --server-path escape
expect PERMISSION_DENIED 1 train embeddings --server-path outside/corpus.txt
expect PERMISSION_DENIED 1 train classifier --embeddings-path /etc/passwd "$TMPDIR/data.tsv"
expect NOT_FOUND 1 train classifier --server-path missing.tsv
expect INVALID_ARGUMENT 65 train embeddings -o ../evil.pb "$TMPDIR/corpus.txt"
expect INVALID_ARGUMENT 65 train embeddings -o .hidden "$TMPDIR/corpus.txt"
expect PERMISSION_DENIED 1 train embeddings -o "$TMPDIR/evil.pb" "$TMPDIR/corpus.txt"
expect PERMISSION_DENIED 1 train embeddings -o outside/evil.pb "$TMPDIR/corpus.txt"
long=$(printf 'x%.0s' $(seq 1 300))
expect INVALID_ARGUMENT 65 train embeddings -o "$long.pb" "$TMPDIR/corpus.txt"
expect INVALID_ARGUMENT 65 train classifier --server-path "$long.tsv"
[ ! -e "$TMPDIR/evil.pb" ] || fail "a file was written outside the directory"

# ---- data and limits -------------------------------------------------------------------------------
: > "$D/empty.tsv"
head -c 3000 /dev/urandom > "$D/garbage.pb"
printf 'gyro garbage\n' > "$TMPDIR/empty-label.tsv"
expect INVALID_ARGUMENT 65 train classifier --server-path empty.tsv
expect INVALID_ARGUMENT 65 train classifier --server-path garbage.pb
expect INVALID_ARGUMENT 65 train classifier /dev/null
expect INVALID_ARGUMENT 65 train embeddings < /dev/null
printf '\n\n' | { expect INVALID_ARGUMENT 65 train embeddings; }
expect INVALID_ARGUMENT 65 train embeddings --server-path empty.tsv
expect INVALID_ARGUMENT 65 train classifier --epochs 51 "$TMPDIR/data.tsv"
expect INVALID_ARGUMENT 65 train classifier --dim 65 "$TMPDIR/data.tsv"
expect INVALID_ARGUMENT 65 train embeddings --dim 100 "$TMPDIR/corpus.txt"
expect INVALID_ARGUMENT 65 train classifier --geometry spherical "$TMPDIR/data.tsv"
[ "$(version)" = "$v2" ] || fail "a refused training changed the model"
stop_server

# ---- time limit; shutdown during a training --------------------------------------------------------
start_server limit --train-dir "$D" --train-max-seconds 1
expect DEADLINE_EXCEEDED 1 train embeddings --server-path big.txt --epochs 50 -o late.pb
[ ! -e "$D/late.pb" ] || fail "the training over --train-max-seconds wrote its output"
"$GYRO" client --addr "$ADDR" train embeddings --server-path big.txt --epochs 50 -o never.pb > "$TMPDIR/sd.out" 2>&1 &
C=$!
for _ in $(seq 1 200); do grep -q '^progress' "$TMPDIR/sd.out" && break; sleep 0.05; done
t0=$(date +%s%N)
stop_server
echo "ok   SIGTERM during a training: exit 0 after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
rc=0; wait "$C" || rc=$?
grep -q 'UNAVAILABLE' "$TMPDIR/sd.out" || fail "the client did not get UNAVAILABLE (exit $rc)" "$TMPDIR/sd.out"
[ ! -e "$D/never.pb" ] || fail "the interrupted training wrote its output"
echo "ok   the client got UNAVAILABLE, nothing written"
