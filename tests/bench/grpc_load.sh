#!/usr/bin/env bash
# grpc_load.sh — load test of `gyro serve` with h2load (Debian's nghttp2-client) on loopback.
#
#   tests/bench/grpc_load.sh [BUILD_DIR]
#     env: RUNS (5)  N (20000 requests per run)  THREADS (2)  POOL (2)  MODEL (a classifier file;
#          default: train one with the seed's architecture for EPOCHS (1) on the first LIMIT
#          (3000) utterances of NLPCC 2018: inference cost does not depend on how long it trained)
#          TRAIN_OPTS (extra options of gyro classify train, e.g. a smaller model)
#          TEXT (the utterance sent; default 播放周杰伦的稻香)
#
# For Health/Check (the gRPC ceiling of this machine: no work per call) and Classify (a real
# trained model): requests/s, mean and p99 latency at 1 request in flight (-c1 -m1) and at 128
# in flight (-c4 -m32), median of RUNS runs, interleaved so both see the same machine load; the
# ratio Classify/health; the server's CPU time per call (user + system, from /proc: far less
# sensitive to other jobs on the machine than rates and latencies); its RSS after the runs. Latencies come from h2load's
# per-request log (--log-file). h2load counts every HTTP 200 as a success even when the gRPC
# status is an error, so the script checks the server's own counters: every call must be OK.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
RUNS=${RUNS:-5} N=${N:-20000} THREADS=${THREADS:-2} POOL=${POOL:-2} EPOCHS=${EPOCHS:-1} LIMIT=${LIMIT:-3000}
TEXT=${TEXT:-播放周杰伦的稻香}
cd "$root"
command -v h2load >/dev/null || { echo "h2load not installed (apt-get install nghttp2-client)"; exit 1; }
make -s BUILD="$build" "$build/gyro" >/dev/null
GYRO="$root/$build/gyro"
work=$(mktemp -d)
trap '[ -n "${spid:-}" ] && kill -KILL "$spid" 2>/dev/null; rm -rf "$work"' EXIT
PY=/usr/bin/python3
"$PY" -m grpc_tools.protoc -Iproto --python_out="$work" proto/gyro.proto proto/health.proto

if [ -z "${MODEL:-}" ]; then
  "$PY" tests/py/make_examples.py "$work" nlpcc ../shared/corpora/intent/nlpcc2018/corpus.train.txt \
    "$work/train.pb" "$work/texts.txt" "$LIMIT"
  echo "training a classifier on $LIMIT NLPCC 2018 utterances ($EPOCHS epoch(s), default architecture)..."
  nice "$GYRO" classify train --epochs "$EPOCHS" --quiet ${TRAIN_OPTS:-} -o "$work/model" "$work/train.pb"
  MODEL="$work/model"
fi

# gRPC bodies: 1 flag byte, 4-byte big-endian length, the message
"$PY" - "$work" "$TEXT" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[1])
import gyro_pb2, health_pb2
def frame(m):
    b = m.SerializeToString()
    return b"\0" + struct.pack(">I", len(b)) + b
open(sys.argv[1] + "/classify.bin", "wb").write(frame(gyro_pb2.ClassifyRequest(text=sys.argv[2])))
open(sys.argv[1] + "/health.bin", "wb").write(frame(health_pb2.HealthCheckRequest()))
EOF

"$GYRO" serve --model "$MODEL" --addr 127.0.0.1:0 --port-file "$work/port" --threads "$THREADS" --pool "$POOL" \
  2>"$work/serve.log" &
spid=$!
for _ in $(seq 1 200); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(cat "$work/port")
version=$("$GYRO" client --addr "127.0.0.1:$port" stats | awk -F'\t' '$1 == "model_version" {print $2}')
"$GYRO" client --addr "127.0.0.1:$port" classify "$TEXT" >/dev/null

# CPU time (user + system) of the server so far, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$spid/stat"; }
hz=$(getconf CLK_TCK)

# run KIND C M : one h2load run; prints "req_s mean_us p99_us server_cpu_us_per_call"
run() {
  local path body
  case $1 in
    health) path=/grpc.health.v1.Health/Check; body=$work/health.bin ;;
    classify) path=/gyro.v1.Gyro/Classify; body=$work/classify.bin ;;
  esac
  rm -f "$work/h2.log"
  local t0; t0=$(cpu_ticks)
  timeout 300 h2load -n "$N" -c "$2" -m "$3" -d "$body" --log-file="$work/h2.log" \
    -H 'content-type: application/grpc' -H 'te: trailers' "http://127.0.0.1:$port$path" > "$work/h2.out"
  local rps cpu
  cpu=$(awk -v a="$t0" -v b="$(cpu_ticks)" -v hz="$hz" -v n="$N" 'BEGIN {printf "%.1f", (b - a) * 1e6 / hz / n}')
  rps=$(awk '/^finished in/ {for (i = 1; i <= NF; i++) if ($i ~ /req\/s/) {gsub(/,/, "", $(i-1)); print $(i-1)}}' "$work/h2.out")
  grep -q "succeeded, 0 errored" "$work/h2.out" || grep -q " 0 failed, 0 errored" "$work/h2.out" \
    || { echo "h2load reported failures:" >&2; cat "$work/h2.out" >&2; exit 1; }
  awk -F'\t' '{print $3}' "$work/h2.log" | sort -n |
    awk -v r="$rps" -v c="$cpu" '{a[NR] = $1; s += $1} END {i = int(NR * 0.99); if (i < 1) i = 1; printf "%s %.0f %d %s\n", r, s / NR, a[i], c}'
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "gyro serve --threads $THREADS --pool $POOL, model $version; h2load -n $N; runs=$RUNS; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A res
for r in $(seq "$RUNS"); do
  for load in "1 1" "4 32"; do
    for kind in health classify; do
      res["$kind $load"]+="$(run "$kind" $load)"$'\n'
    done
  done
done
printf '%-10s %-12s %10s %10s %10s %12s\n' method in_flight req/s mean_us p99_us cpu_us/call
for load in "1 1" "4 32"; do
  c=${load% *}; m=${load#* }
  for kind in health classify; do
    rows=${res["$kind $load"]}
    rps=$(awk 'NF {print $1}' <<<"$rows" | median); mean=$(awk 'NF {print $2}' <<<"$rows" | median)
    p99=$(awk 'NF {print $3}' <<<"$rows" | median); cpu=$(awk 'NF {print $4}' <<<"$rows" | median)
    printf '%-10s %-12s %10.0f %10.0f %10.0f %12.1f\n' "$kind" "$((c * m)) (-c$c -m$m)" "$rps" "$mean" "$p99" "$cpu"
    eval "rps_${kind}_$c=$rps"
  done
  printf '%-10s %-12s %10s\n' ratio "$((c * m))" "$(awk -v a="$(eval echo \$rps_classify_$c)" -v b="$(eval echo \$rps_health_$c)" 'BEGIN {printf "%.3f", a / b}')"
done
echo "server RSS: $(awk '/^VmRSS/ {print $2 " " $3}' /proc/$spid/status), peak $(awk '/^VmHWM/ {print $2 " " $3}' /proc/$spid/status), threads $(awk '/^Threads/ {print $2}' /proc/$spid/status)"
"$GYRO" client --addr "127.0.0.1:$port" stats > "$work/stats"
bad=$(awk -F'\t' '$1 == "count" && $3 != "OK" {s += $4} END {print s + 0}' "$work/stats")
ok=$(awk -F'\t' '$1 == "count" && $3 == "OK" {s += $4} END {print s + 0}' "$work/stats")
echo "server counters: $ok OK, $bad not OK"
kill -TERM "$spid"; wait "$spid"; spid=
tail -n 3 "$work/serve.log"
[ "$bad" = 0 ] || { echo "FAIL: the server answered $bad calls with an error status"; exit 1; }
