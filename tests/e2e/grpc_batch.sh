#!/usr/bin/env bash
# grpc_batch.sh — `gyro serve --max-batch N --batch-wait-us W` (dynamic batching of Classify):
# many Classify calls sent at once to a batching server get, call by call, the answer of a server
# that takes them one at a time (same status, top classes in the same order, probabilities within
# 1e-6, normalized text, id), for a transformer (one forward pass per batch over utterances of
# different lengths) and an n-gram model; a call with an empty or over-long text fails alone with
# the message a single call gets; the server really ran batches (its closing counters, the
# Prometheus counters); --max-batch without an inference pool is a usage error.
set -eu
. tests/py/grpc_lib.bash
grpc_setup
"$GYRO" classify --help >/dev/null 2>&1 || { echo "gyro classify not built"; exit 77; }

"$PY" tests/py/make_examples.py "$GEN" toy "$TMPDIR/toy.pb" "$TMPDIR/toy.txt"
"$GYRO" classify train --arch transformer --dim 16 --layers 2 --heads 2 --epochs 5 --seed 3 --quiet \
  -o "$TMPDIR/tf.model" "$TMPDIR/toy.pb"
"$GYRO" classify train --arch ngrams --epochs 5 --seed 3 --quiet -o "$TMPDIR/ng.model" "$TMPDIR/toy.pb"

set +e
"$GYRO" serve --model "$TMPDIR/tf.model" --addr 127.0.0.1:0 --pool 0 --max-batch 4 2> "$TMPDIR/usage.err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- "--max-batch needs --pool" "$TMPDIR/usage.err" ||
  { echo "FAIL --max-batch with --pool 0: exit $rc"; cat "$TMPDIR/usage.err"; exit 1; }
echo "ok   --max-batch without an inference pool is a usage error"

cat > "$TMPDIR/batch.py" << 'PY'
import sys, threading, grpc
sys.path.insert(0, sys.argv[1])
import gyro_pb2
ref_port, bat_port, texts_file = sys.argv[2], sys.argv[3], sys.argv[4]
texts = [t for t in open(texts_file, encoding="utf-8").read().split("\n") if t]
# utterances of many lengths, an empty one, an over-long one (--max-text-bytes 600), repeats
texts = texts[:40] + ["   ", "歌" * 300, "播", "播放" * 30, "今天的天气怎么样啊我想知道"] + texts[:10]
def stub(port):
    ch = grpc.insecure_channel("127.0.0.1:" + port)
    return ch.unary_unary("/gyro.v1.Gyro/Classify", request_serializer=gyro_pb2.ClassifyRequest.SerializeToString,
                          response_deserializer=gyro_pb2.ClassifyResponse.FromString)
def call(c, i, t):
    try:
        return ("OK", c(gyro_pb2.ClassifyRequest(text=t, top_k=1 + i % 6, id="u%d" % i), timeout=60))
    except grpc.RpcError as e:
        return (e.code().name, e.details())
ref = stub(ref_port)
want = [call(ref, i, t) for i, t in enumerate(texts)]
bat = stub(bat_port)
rounds = 6
got = [[None] * len(texts) for _ in range(rounds)]
def worker(r, lo, hi):
    for i in range(lo, hi): got[r][i] = call(bat, i, texts[i])
threads = []
for r in range(rounds):   # 6 rounds x 5 clients in parallel over slices of the texts
    step = (len(texts) + 4) // 5
    for lo in range(0, len(texts), step):
        threads.append(threading.Thread(target=worker, args=(r, lo, min(len(texts), lo + step))))
# and the same texts as futures all at once (many calls queued together)
futs = [bat.future(gyro_pb2.ClassifyRequest(text=t, top_k=1 + i % 6, id="u%d" % i), timeout=60) for i, t in enumerate(texts)]
for t in threads: t.start()
for t in threads: t.join()
fut = []
for f in futs:
    try: fut.append(("OK", f.result()))
    except grpc.RpcError as e: fut.append((e.code().name, e.details()))
bad = 0
for r, row in enumerate(got + [fut]):
    for i, (w, g) in enumerate(zip(want, row)):
        if w[0] != g[0]:
            print("FAIL text %d (%r): status %s, unbatched %s" % (i, texts[i][:20], g[0], w[0])); bad += 1; continue
        if w[0] != "OK":
            if w[1] != g[1]: print("FAIL text %d: details %r, unbatched %r" % (i, g[1], w[1])); bad += 1
            continue
        a, b = w[1], g[1]
        if (a.id, a.normalized_text, a.model_version) != (b.id, b.normalized_text, b.model_version) or \
           [x.label for x in a.intents] != [x.label for x in b.intents] or \
           any(abs(x.probability - y.probability) > 1e-6 for x, y in zip(a.intents, b.intents)):
            print("FAIL text %d (%r): batched %s, unbatched %s" % (i, texts[i][:20], b, a)); bad += 1
codes = sorted(set(w[0] for w in want))
print("ok   %d calls (%d texts x %d) answered as one at a time (statuses %s)" % ((rounds + 1) * len(texts), len(texts), rounds + 1, ",".join(codes)) if not bad else "")
sys.exit(1 if bad else 0)
PY

for arch in tf ng; do
  start_server ref --model "$TMPDIR/$arch.model" --threads 1 --pool 1 --max-text-bytes 600
  ref_pid=$SPID ref_log=$SLOG ref_port=$PORT
  # grpc_lib's trap stops the last server started: stop the reference server too on failure
  trap '[ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null; kill -KILL "$ref_pid" 2>/dev/null || true' EXIT
  start_server bat --model "$TMPDIR/$arch.model" --threads 2 --pool 2 --max-batch 8 --batch-wait-us 3000 \
    --max-text-bytes 600 --metrics-addr 127.0.0.1:0
  bat_port=$PORT
  grep -q "batches of up to 8 (wait 3000 us)" "$SLOG" || { echo "FAIL start message"; cat "$SLOG"; exit 1; }
  "$PY" "$TMPDIR/batch.py" "$GEN" "$ref_port" "$bat_port" "$TMPDIR/toy.txt"
  mport=$(sed -n 's/.*metrics on .* (port \([0-9]*\)).*/\1/p' "$SLOG")
  metrics=$("$PY" -c 'import sys, urllib.request; print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1]).read().decode())' "$mport")
  mb=$(awk '$1 == "gyro_batches_total" {print $2}' <<< "$metrics")
  mc=$(awk '$1 == "gyro_batched_calls_total" {print $2}' <<< "$metrics")
  stop_server
  line=$(grep "batches:" "$SLOG" || true)
  n=$(sed -n 's/.*batches: \([0-9]*\) of \([0-9]*\) calls.*/\1/p' <<< "$line")
  c=$(sed -n 's/.*batches: \([0-9]*\) of \([0-9]*\) calls.*/\2/p' <<< "$line")
  [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$c" -ge $((2 * n)) ] || { echo "FAIL $arch: no batches ran: $line"; cat "$SLOG"; exit 1; }
  [ "$mb" = "$n" ] && [ "$mc" = "$c" ] || { echo "FAIL $arch: metrics say $mb batches of $mc calls, the log $line"; exit 1; }
  echo "ok   $arch: $line (the same in the metrics)"
  SPID=$ref_pid SLOG=$ref_log
  stop_server
  grep -q "batches:" "$SLOG" && { echo "FAIL the unbatched server ran batches"; exit 1; }
  echo "ok   $arch: the server without --max-batch ran none"
done
