#!/usr/bin/env bash
# grpc_train_classify.sh — what a training over gRPC costs the Classify calls served meanwhile,
# and how soon a cancelled training lets go.
#
#   tests/bench/grpc_train_classify.sh [BUILD_DIR]
#     env: RUNS (3)  N (2000 Classify calls per measurement)  THREADS (2)  POOL (2)
#
# One `gyro serve --model M --train-dir D` (the classifier: the n-gram model trained on the 144
# utterances of tests/e2e/lib/intents.sh). Each run, interleaved so both sides see the same
# machine load:
#   idle       N Classify calls, one at a time (Debian's python3-grpcio, a synchronous stub),
#              nothing else running;
#   training   the same N calls while a char2vec training runs on the server
#              (TrainEmbeddings on a 7 MB corpus under D, started by `gyro client train`), then
#              the training client is killed and the time until a new training is accepted is
#              the cancellation latency.
# Reported: p50, p99 and mean latency of each side (medians over RUNS), calls per second, and the
# median cancellation latency. The server's own CPU is shared with the training in the second
# side, so this measures what a client sees on this machine, not a per-call cost.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
RUNS=${RUNS:-3} N=${N:-2000} THREADS=${THREADS:-2} POOL=${POOL:-2}
cd "$root"
PY=/usr/bin/python3
"$PY" -c 'import grpc, grpc_tools.protoc' || { echo "needs python3-grpcio and python3-grpc-tools"; exit 1; }
make -s BUILD="$build" "$build/gyro" >/dev/null
GYRO="$root/$build/gyro"
work=$(mktemp -d)
spid=""
trap '[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null; rm -rf "$work"' EXIT
. tests/e2e/lib/intents.sh
mkdir -p "$work/gen" "$work/train"
"$PY" -m grpc_tools.protoc -Iproto --python_out="$work/gen" --grpc_python_out="$work/gen" proto/gyro.proto
gen_intents > "$work/data.tsv"
"$GYRO" classify train -q -o "$work/m.clf" "$work/data.tsv"
for _ in $(seq 1 125); do cut -f1 "$work/data.tsv"; done | paste -d' ' - - - - - - - - > "$work/train/big.txt"

cat > "$work/lat.py" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import grpc, gyro_pb2, gyro_pb2_grpc
stub = gyro_pb2_grpc.GyroStub(grpc.insecure_channel(sys.argv[2]))
n = int(sys.argv[3])
texts = ["播放稻香", "导航到机场", "暂停一下", "帮我来一首晴天"]
stub.Classify(gyro_pb2.ClassifyRequest(text="预热"), timeout=10)
lat = []
t0 = time.perf_counter()
for i in range(n):
    a = time.perf_counter()
    stub.Classify(gyro_pb2.ClassifyRequest(text=texts[i % 4]), timeout=10)
    lat.append(time.perf_counter() - a)
wall = time.perf_counter() - t0
lat.sort()
print("%.1f %.1f %.1f %.0f" % (1e6 * lat[n // 2], 1e6 * lat[int(n * 0.99)], 1e6 * sum(lat) / n, n / wall))
PY

"$GYRO" serve --addr 127.0.0.1:0 --port-file "$work/port" --model "$work/m.clf" --train-dir "$work/train" \
  --threads "$THREADS" --pool "$POOL" 2> "$work/serve.log" &
spid=$!
for _ in $(seq 1 200); do [ -s "$work/port" ] && break; sleep 0.05; done
addr=127.0.0.1:$(cat "$work/port")

: > "$work/idle" ; : > "$work/busy" ; : > "$work/cancel"
for r in $(seq 1 "$RUNS"); do
  "$PY" "$work/lat.py" "$work/gen" "$addr" "$N" >> "$work/idle"
  "$GYRO" client --addr "$addr" train embeddings --server-path big.txt --epochs 100 -o never.pb > "$work/tr.out" 2>&1 &
  c=$!
  for _ in $(seq 1 400); do grep -q '^progress' "$work/tr.out" && break; sleep 0.05; done
  grep -q '^progress' "$work/tr.out" || { echo "the training did not start"; cat "$work/tr.out"; exit 1; }
  "$PY" "$work/lat.py" "$work/gen" "$addr" "$N" >> "$work/busy"
  kill -TERM "$c"; wait "$c" || true
  t0=$(date +%s%N)
  until "$GYRO" client --addr "$addr" train embeddings --dim 4 --epochs 1 -o after.pb "$work/data.tsv" > /dev/null 2>&1; do
    sleep 0.01
  done
  echo $(( ($(date +%s%N) - t0) / 1000000 )) >> "$work/cancel"
  [ ! -e "$work/train/never.pb" ] || { echo "the cancelled training wrote its output"; exit 1; }
  echo "run $r: idle $(tail -n 1 "$work/idle"), training $(tail -n 1 "$work/busy"), cancel $(tail -n 1 "$work/cancel") ms" >&2
done
kill -TERM "$spid"; wait "$spid" || true; spid=""

med() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "Classify, one call at a time, $N calls x $RUNS runs (medians), load average $(cut -d' ' -f1 /proc/loadavg):"
printf '| side | p50 us | p99 us | mean us | calls/s |\n| --- | ---: | ---: | ---: | ---: |\n'
for side in idle busy; do
  name=$([ $side = idle ] && echo "no training" || echo "during a char2vec training")
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$(cut -d' ' -f1 "$work/$side" | med)" "$(cut -d' ' -f2 "$work/$side" | med)" \
    "$(cut -d' ' -f3 "$work/$side" | med)" "$(cut -d' ' -f4 "$work/$side" | med)"
done
echo "cancellation: a new training accepted $(med < "$work/cancel") ms (median) after the training client was killed"
