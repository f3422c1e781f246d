#!/usr/bin/env bash
# grpc_load.sh — load test of `gyro serve` with h2load (Debian's nghttp2-client) on loopback.
#
#   tests/bench/grpc_load.sh [BUILD_DIR]
#     env: GYRO (the binary; default BUILD_DIR/gyro, made first)  RUNS (5)  DURATION (6 s per measurement: long enough for a stable rate)  THREADS (2)
#          POOL (2)  UTTS (8 real NLPCC 2018 utterances, records 10,001 on, spread over the
#          file, one per h2load process)  RATES ("1000 4000 15000" requests/s offered)
#          ARCH (transformer: the seed-size model; ngrams: `classify train`'s default)
#          MODEL (a classifier file; default: train one with ARCH for EPOCHS (1) on the first
#          LIMIT (3000) utterances of NLPCC 2018: inference cost does not depend on how long it
#          trained)  TRAIN_OPTS (extra options of gyro classify train)
#          BATCH ("1:0 16:200": the servers compared, each MAX_BATCH:WAIT_US, i.e. gyro serve
#          --max-batch and --batch-wait-us; 1:0 is the unbatched server)
#
# One server per BATCH configuration runs for the whole script (an idle one costs nothing); every
# measurement of every configuration is interleaved with the others and with Health/Check (which
# goes to the first server), so all see the same machine load. The batched servers report how
# many calls their batches held (mean batch size, from their closing counters).
# h2load sends one request body per process, so the UTTS utterances go out from UTTS h2load
# processes side by side (for Health/Check all send the same empty request). Three ways to load
# the server, each for DURATION seconds, RUNS times, interleaved so both methods see the same
# machine load:
#   in flight 1     one request at a time (the utterances one after the other, DURATION/UTTS s
#                   each): latency without queueing
#   in flight 128   closed loop, 128 requests outstanding (UTTS processes × 128/UTTS streams):
#                   the throughput ceiling
#   offered R/s     open loop at a fixed rate (h2load --rps per process, up to 64 streams each
#                   so slow answers do not throttle the offered rate): p50/p99 at that load
# Reported: achieved requests/s, p50, p99 and mean latency (h2load's per-request logs,
# --log-file), the server's CPU time per call (user + system from /proc, far less sensitive to
# other jobs than rates and latencies), calls per server CPU-second and the server threads'
# voluntary context switches per call (thread hand-offs); medians of RUNS; the
# ratio Classify/Health; the server's RSS. h2load counts every HTTP 200 as a success even when
# the gRPC status is an error, so the script checks the server's own counters: every call must
# be OK. The load generator shares the machine's cores with the server: rates per CPU-second of
# the server process come first, wall-clock rates beside them.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
RUNS=${RUNS:-5} DURATION=${DURATION:-6} THREADS=${THREADS:-2} POOL=${POOL:-2} EPOCHS=${EPOCHS:-1}
LIMIT=${LIMIT:-3000} UTTS=${UTTS:-8} RATES=${RATES-1000 4000 15000} ARCH=${ARCH:-transformer}
BATCH=${BATCH:-1:0 16:200}
corpus=../shared/corpora/intent/nlpcc2018/corpus.train.txt
cd "$root"
command -v h2load >/dev/null || { echo "h2load not installed (apt-get install nghttp2-client)"; exit 1; }
# GYRO=/path/to/gyro: that binary (e.g. a copy that a rebuild cannot change under the run)
if [ -z "${GYRO:-}" ]; then
  make -s BUILD="$build" "$build/gyro" >/dev/null
  GYRO="$root/$build/gyro"
fi
work=$(mktemp -d)
trap 'for p in "${spid[@]:-}"; do [ -n "$p" ] && kill -KILL "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
PY=/usr/bin/python3
"$PY" -m grpc_tools.protoc -Iproto --python_out="$work" proto/gyro.proto proto/health.proto

if [ -z "${MODEL:-}" ]; then
  "$PY" tests/py/make_examples.py "$work" nlpcc "$corpus" \
    "$work/train.pb" "$work/texts.txt" "$LIMIT"
  echo "training a classifier on $LIMIT NLPCC 2018 utterances ($EPOCHS epoch(s), --arch $ARCH)..."
  nice "$GYRO" classify train --arch "$ARCH" --epochs "$EPOCHS" --quiet ${TRAIN_OPTS:-} -o "$work/model" "$work/train.pb"
  MODEL="$work/model"
fi

# gRPC bodies: 1 flag byte, 4-byte big-endian length, the message; UTTS utterances of NLPCC
"$PY" - "$work" "$corpus" "$UTTS" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[1])
import gyro_pb2, health_pb2
def frame(m):
    b = m.SerializeToString()
    return b"\0" + struct.pack(">I", len(b)) + b
texts = []
with open(sys.argv[2], encoding="utf-8") as f:
    for i, line in enumerate(f):
        parts = line.rstrip("\n").split("\t")
        if i >= 10000 and len(parts) >= 3 and parts[1].strip() and parts[2].strip():
            texts.append(parts[1])
n = int(sys.argv[3])
step = max(1, len(texts) // n)
picked = texts[::step][:n]
for i, t in enumerate(picked):
    open("%s/classify.%d.bin" % (sys.argv[1], i), "wb").write(frame(gyro_pb2.ClassifyRequest(text=t)))
open(sys.argv[1] + "/texts", "w", encoding="utf-8").write("\n".join(picked) + "\n")
open(sys.argv[1] + "/health.bin", "wb").write(frame(health_pb2.HealthCheckRequest()))
print("utterances: %s (mean %.1f characters)" % (" | ".join(picked), sum(map(len, picked)) / len(picked)))
EOF

# one server per batching configuration: spid[B:W], port[B:W]
declare -A spid port
for cfg in $BATCH; do
  "$GYRO" serve --model "$MODEL" --addr 127.0.0.1:0 --port-file "$work/port.$cfg" --threads "$THREADS" --pool "$POOL" \
    --max-batch "${cfg%%:*}" --batch-wait-us "${cfg##*:}" 2>"$work/serve.$cfg.log" &
  spid[$cfg]=$!
  for _ in $(seq 1 200); do [ -s "$work/port.$cfg" ] && break; sleep 0.05; done
  port[$cfg]=$(cat "$work/port.$cfg")
  "$GYRO" client --addr "127.0.0.1:${port[$cfg]}" classify "$(head -1 "$work/texts")" >/dev/null
done
first=${BATCH%% *}
version=$("$GYRO" client --addr "127.0.0.1:${port[$first]}" stats | awk -F'\t' '$1 == "model_version" {print $2}')

# CPU time (user + system) of the server so far, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# voluntary context switches of all the server's threads so far: a thread that sleeps until
# another wakes it (a hand-off) counts one; far less sensitive to other jobs than CPU time
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; }
hz=$(getconf CLK_TCK)

# h2 KIND I TAG ARGS... : one h2load process sending body I (health: the one body) to the server
# of $cfg (KIND classify@B:W) or the first server (health)
h2() {
  local kind=$1 i=$2 tag=$3 path body p
  shift 3
  case $kind in
    health) path=/grpc.health.v1.Health/Check; body=$work/health.bin; p=${port[$first]} ;;
    classify@*) path=/gyro.v1.Gyro/Classify; body=$work/classify.$i.bin; p=${port[${kind#classify@}]} ;;
  esac
  timeout 300 h2load "$@" -d "$body" --log-file="$work/h2.$tag.log" \
    -H 'content-type: application/grpc' -H 'te: trailers' "http://127.0.0.1:$p$path" > "$work/h2.$tag.out"
}

# run KIND MODE : one measurement (MODE: seq, closed or an offered rate); prints
# "req_s p50_us p99_us mean_us server_cpu_us_per_call calls_per_server_cpu_s"
run() {
  local kind=$1 mode=$2 t0 w0 i pids=() pid
  case $kind in health) pid=${spid[$first]} ;; *) pid=${spid[${kind#classify@}]} ;; esac
  rm -f "$work"/h2.*
  t0=$(cpu_ticks "$pid")
  local s0; s0=$(switches "$pid")
  w0=$(date +%s.%N)
  case $mode in
    seq) # one request in flight, the utterances one after the other
      local d; d=$(awk -v a="$DURATION" -v n="$UTTS" 'BEGIN {d = 1000 * a / n; printf "%d", d < 500 ? 500 : d}')
      for i in $(seq 0 $((UTTS - 1))); do h2 "$kind" "$i" "$i" -c1 -m1 -D "${d}ms"; done ;;
    closed) # 128 outstanding over UTTS processes
      for i in $(seq 0 $((UTTS - 1))); do
        h2 "$kind" "$i" "$i" -c1 -m $((128 / UTTS)) -D "$DURATION" & pids+=($!)
      done
      wait "${pids[@]}" ;;
    *) # open loop at $mode requests/s in total
      local per=$(( (mode + UTTS - 1) / UTTS ))
      for i in $(seq 0 $((UTTS - 1))); do
        h2 "$kind" "$i" "$i" -c1 -m 64 --rps "$per" -D "$DURATION" & pids+=($!)
      done
      wait "${pids[@]}" ;;
  esac
  local wall n cpu rps
  wall=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
  for f in "$work"/h2.*.out; do
    grep -q " 0 failed, 0 errored" "$f" || { echo "h2load reported failures:" >&2; cat "$f" >&2; exit 1; }
  done
  n=$(cat "$work"/h2.*.log | wc -l)
  cpu=$(awk -v a="$t0" -v b="$(cpu_ticks "$pid")" -v hz="$hz" -v n="$n" 'BEGIN {printf "%.1f", (b - a) * 1e6 / hz / n}')
  local sw; sw=$(awk -v a="$s0" -v b="$(switches "$pid")" -v n="$n" 'BEGIN {printf "%.2f", (b - a) / n}')
  # achieved rate: h2load's req/s of each process, summed (sequential runs: requests / wall time)
  rps=$(cat "$work"/h2.*.out | awk '/^finished in/ {for (i = 1; i <= NF; i++) if ($i ~ /req\/s/) {gsub(/,/, "", $(i-1)); s += $(i-1)}} END {print s}')
  [ "$mode" = seq ] && rps=$(awk -v n="$n" -v w="$wall" 'BEGIN {printf "%.0f", n / w}')
  cat "$work"/h2.*.log | awk -F'\t' '{print $3}' | sort -n |
    awk -v r="$rps" -v c="$cpu" -v sw="$sw" '{a[NR] = $1; s += $1} END {
      i50 = int(NR * 0.50); i99 = int(NR * 0.99); if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
      printf "%s %d %d %.0f %s %.0f %s\n", r, a[i50], a[i99], s / NR, c, 1e6 / c, sw}'
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "gyro serve --threads $THREADS --pool $POOL, model $version; batching (max-batch:wait-us) $BATCH; $DURATION s per measurement; runs=$RUNS; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
modes="seq closed $RATES"
kinds="health"
for cfg in $BATCH; do kinds+=" classify@$cfg"; done
declare -A res
for r in $(seq "$RUNS"); do
  for mode in $modes; do
    for kind in $kinds; do
      res["$kind $mode"]+="$(run "$kind" "$mode")"$'\n'
    done
  done
done
declare -A sum
printf '%-18s %-16s %10s %9s %9s %9s %12s %14s %12s\n' method load req/s p50_us p99_us mean_us cpu_us/call calls/cpu_s switches/call
for mode in $modes; do
  case $mode in seq) label="in flight 1" ;; closed) label="in flight 128" ;; *) label="offered $mode/s" ;; esac
  for kind in $kinds; do
    rows=${res["$kind $mode"]}
    col() { awk -v k="$1" 'NF {print $k}' <<<"$rows" | median; }
    printf '%-18s %-16s %10.0f %9.0f %9.0f %9.0f %12.1f %14.0f %12.2f\n' "$kind" "$label" "$(col 1)" "$(col 2)" \
      "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)" "$(col 7)"
    sum["$kind $mode"]="$(col 1) $(col 2) $(col 3) $(col 5)"
  done
done
# rows of make bench's closing table (tests/bench/run-all.sh), per batching configuration
read -r h_rps _ _ h_cpu <<<"${sum["health closed"]}"
for cfg in $BATCH; do
  read -r c_rps _ _ c_cpu <<<"${sum["classify@$cfg closed"]}"
  awk -v cr="$c_rps" -v hr="$h_rps" -v cc="$c_cpu" -v hc="$h_cpu" -v b="$cfg" 'BEGIN {
    printf "TABLE | gRPC Classify ('"$ARCH"', batch %s), 128 in flight, req/s | %.0f | Health/Check %.0f | %.3f | >= 20000 | %s |\n", b, cr, hr, cr / hr, (cr >= 20000 ? "met" : "not met")
    printf "TABLE | server CPU µs per Classify call ('"$ARCH"', batch %s), 128 in flight | %.1f (%.0f calls per CPU-second) | Health/Check %.1f | %.1fx the cost | <= 90 | %s |\n", b, cc, 1e6 / cc, hc, cc / hc, (cc <= 90 ? "met" : "not met")}'
  for rate in $RATES; do
    read -r r_rps _ r_p99 _ <<<"${sum["classify@$cfg $rate"]}"
    awk -v r="$rate" -v a="$r_rps" -v p="$r_p99" -v b="$cfg" 'BEGIN {
      printf "TABLE | gRPC Classify ('"$ARCH"', batch %s) p99 at %d req/s offered | %.1f ms (%.0f req/s answered) | — | — | <= 5 ms at 15000 | %s |\n", b, r, p / 1000, a, (r == 15000 ? ((p <= 5000 && a >= 0.98 * r) ? "met" : "not met") : "—")}'
  done
done
bad_all=0
for cfg in $BATCH; do
  pid=${spid[$cfg]} p=${port[$cfg]}
  echo "server $cfg: RSS $(awk '/^VmRSS/ {print $2 " " $3}' /proc/$pid/status), peak $(awk '/^VmHWM/ {print $2 " " $3}' /proc/$pid/status), threads $(awk '/^Threads/ {print $2}' /proc/$pid/status)"
  "$GYRO" client --addr "127.0.0.1:$p" stats > "$work/stats"
  # timed runs (-D) end by dropping the streams still in flight: those calls count as CANCELLED
  bad=$(awk -F'\t' '$1 == "count" && $3 != "OK" && $3 != "CANCELLED" {s += $4} END {print s + 0}' "$work/stats")
  cancelled=$(awk -F'\t' '$1 == "count" && $3 == "CANCELLED" {s += $4} END {print s + 0}' "$work/stats")
  ok=$(awk -F'\t' '$1 == "count" && $3 == "OK" {s += $4} END {print s + 0}' "$work/stats")
  echo "server $cfg counters: $ok OK, $cancelled cancelled by h2load at the end of a timed run, $bad other"
  kill -TERM "$pid"; wait "$pid" || true
  unset "spid[$cfg]"
  grep -E "total .* calls|batches:" "$work/serve.$cfg.log" | sed "s/^/server $cfg: /"
  bad_all=$((bad_all + bad))
done
[ "$bad_all" = 0 ] || { echo "FAIL: the servers answered $bad_all calls with an error status"; exit 1; }
