#!/usr/bin/env bash
# replicas.sh — Classify through HAProxy (doc/deploy/haproxy-gyro.cfg) to 1 and to 3
# `gyro serve` replicas on this machine, beside 1 replica called directly.
#
#   tests/bench/replicas.sh [BUILD_DIR]
#     env: RUNS (3)  DURATION (5 s per measurement)  THREADS (2) POOL (2): each replica's
#          --threads/--pool  INFLIGHT (128: calls outstanding, closed loop)  UTTS (4 NLPCC 2018
#          utterances, one per h2load process)  ARCH (transformer)  MODEL (a classifier file;
#          default: train one with ARCH for 1 epoch on the first LIMIT (3000) utterances of
#          NLPCC 2018, as tests/bench/grpc_load.sh does)
#
# Three set-ups, measured in turn in each of RUNS rounds (interleaved, so all see the same
# machine load): "direct" (h2load to replica 1), "lb 1" (HAProxy with one server line, replica
# 1), "lb 3" (HAProxy with three server lines, replicas 1-3). The same three replica processes
# and the two HAProxy processes run throughout; each measurement is INFLIGHT calls outstanding
# for DURATION seconds from UTTS h2load processes. Reported, medians of RUNS: calls/s answered;
# CPU time per call (user + system from /proc) of the replicas together, of HAProxy, and of
# both; the replicas' calls per CPU-second. The load generator shares the cores: on a machine
# with fewer cores than replicas + HAProxy + h2load want, 3 replicas cannot answer 3 times the
# calls of one, and this script says so rather than hiding it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
RUNS=${RUNS:-3} DURATION=${DURATION:-5} THREADS=${THREADS:-2} POOL=${POOL:-2} INFLIGHT=${INFLIGHT:-128}
UTTS=${UTTS:-4} ARCH=${ARCH:-transformer} LIMIT=${LIMIT:-3000}
corpus=../shared/corpora/intent/nlpcc2018/corpus.train.txt
cd "$root"
command -v h2load >/dev/null || { echo "h2load not installed (make deps: nghttp2-client)"; exit 1; }
command -v haproxy >/dev/null || { echo "haproxy not installed (make deps)"; exit 1; }
make -s BUILD="$build" "$build/gyro" >/dev/null
GYRO="$root/$build/gyro"
PY=/usr/bin/python3
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
"$PY" -m grpc_tools.protoc -Iproto --python_out="$work" proto/gyro.proto

if [ -z "${MODEL:-}" ]; then
  "$PY" tests/py/make_examples.py "$work" nlpcc "$corpus" "$work/train.pb" "$work/texts.txt" "$LIMIT"
  echo "training a classifier on $LIMIT NLPCC 2018 utterances (1 epoch, --arch $ARCH)..."
  nice "$GYRO" classify train --arch "$ARCH" --epochs 1 --quiet -o "$work/model" "$work/train.pb"
  MODEL="$work/model"
fi
# gRPC bodies of UTTS utterances of NLPCC 2018 (records 10,001 on, spread over the file)
"$PY" - "$work" "$corpus" "$UTTS" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[1])
import gyro_pb2
texts = []
with open(sys.argv[2], encoding="utf-8") as f:
    for i, line in enumerate(f):
        parts = line.rstrip("\n").split("\t")
        if i >= 10000 and len(parts) >= 3 and parts[1].strip() and parts[2].strip():
            texts.append(parts[1])
n = int(sys.argv[3])
for i, t in enumerate(texts[::max(1, len(texts) // n)][:n]):
    b = gyro_pb2.ClassifyRequest(text=t).SerializeToString()
    open("%s/classify.%d.bin" % (sys.argv[1], i), "wb").write(b"\0" + struct.pack(">I", len(b)) + b)
EOF

# free loopback ports: 3 replicas, 2 balancers
read -r P1 P2 P3 L1 L3 < <("$PY" -c '
import socket
ss = [socket.socket() for _ in range(5)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
rpids=()
for p in $P1 $P2 $P3; do
  "$GYRO" serve --model "$MODEL" --addr "127.0.0.1:$p" --port-file "$work/port.$p" --threads "$THREADS" --pool "$POOL" \
    2>"$work/serve.$p.log" &
  pids+=($!); rpids+=($!)
done
for p in $P1 $P2 $P3; do
  for _ in $(seq 1 200); do [ -s "$work/port.$p" ] && break; sleep 0.05; done
  [ -s "$work/port.$p" ] || { echo "replica on $p did not start"; cat "$work/serve.$p.log"; exit 1; }
done
# the recipe's HAProxy configuration: LB 1 keeps the first server line, LB 3 all three
cfg=doc/deploy/haproxy-gyro.cfg
declare -A HP=()
mkcfg() { # mkcfg LBPORT N
  sed -e "s|127.0.0.1:50061\$|127.0.0.1:$P1|" -e "s|127.0.0.1:50062\$|127.0.0.1:$P2|" -e "s|127.0.0.1:50063\$|127.0.0.1:$P3|" \
    -e "s|bind 0.0.0.0:50051 |bind 127.0.0.1:$1 |" -e "s|/run/gyro-lb/admin.sock|$work/admin.$1.sock|" "$cfg" |
    awk -v n="$2" '/^    server r[0-9]+ / {k++; if (k > n) next} {print}' > "$work/lb.$1.cfg"
  grep -q "127.0.0.1:$P1\$" "$work/lb.$1.cfg" && grep -q "bind 127.0.0.1:$1 " "$work/lb.$1.cfg" || { echo "$cfg: unexpected layout"; exit 1; }
  haproxy -db -f "$work/lb.$1.cfg" > "$work/lb.$1.log" 2>&1 &
  pids+=($!)
  HP[$1]=$!
}
mkcfg "$L1" 1
mkcfg "$L3" 3
for lb in "$L1" "$L3"; do # wait until a call through each balancer succeeds
  for _ in $(seq 1 100); do "$GYRO" client --addr "127.0.0.1:$lb" --timeout-ms 1000 stats >/dev/null 2>&1 && break; sleep 0.1; done
done
sleep 2.5 # every server UP (rise 2 x inter 1 s)
version=$("$GYRO" client --addr "127.0.0.1:$P1" stats | awk -F'\t' '$1 == "model_version" {print $2}')
hz=$(getconf CLK_TCK)
ticks() { local s=0 p; for p in "$@"; do s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$s"; }

# run ADDR LBPID : one measurement; prints "calls_per_s replica_cpu_us_per_call lb_cpu_us_per_call"
run() {
  local addr=$1 lbpid=$2 r0 l0=0 i hp=() n=0 rps=0 f
  rm -f "$work"/h2.*
  r0=$(ticks "${rpids[@]}")
  [ -n "$lbpid" ] && l0=$(ticks "$lbpid")
  for i in $(seq 0 $((UTTS - 1))); do
    timeout 120 h2load -c1 -m $((INFLIGHT / UTTS)) -D "$DURATION" -d "$work/classify.$i.bin" \
      -H 'content-type: application/grpc' -H 'te: trailers' "http://$addr/gyro.v1.Gyro/Classify" > "$work/h2.$i.out" &
    hp+=($!)
  done
  wait "${hp[@]}"
  local r1 l1=0
  r1=$(ticks "${rpids[@]}")
  [ -n "$lbpid" ] && l1=$(ticks "$lbpid")
  for f in "$work"/h2.*.out; do
    grep -q " 0 failed, 0 errored" "$f" || { echo "h2load reported failures:" >&2; cat "$f" >&2; exit 1; }
    grep -q "^status codes: [0-9]* 2xx, 0 3xx, 0 4xx, 0 5xx" "$f" || { echo "h2load: non-2xx responses:" >&2; cat "$f" >&2; exit 1; }
    n=$((n + $(awk '/^requests:/ {print $8}' "$f")))
  done
  # h2load's req/s of each process, summed
  rps=$(cat "$work"/h2.*.out | awk '/^finished in/ {for (i = 1; i <= NF; i++) if ($i ~ /req\/s/) {gsub(/,/, "", $(i-1)); s += $(i-1)}} END {printf "%.0f", s}')
  awk -v r="$rps" -v n="$n" -v a="$r0" -v b="$r1" -v c="$l0" -v d="$l1" -v hz="$hz" \
    'BEGIN {printf "%s %.1f %.1f\n", r, (b - a) * 1e6 / hz / n, (d - c) * 1e6 / hz / n}'
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "model $version; each replica --threads $THREADS --pool $POOL; $INFLIGHT calls in flight from $UTTS h2load processes, $DURATION s per measurement, runs=$RUNS; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A res
for r in $(seq "$RUNS"); do
  res[direct]+="$(run "127.0.0.1:$P1" "")"$'\n'
  res[lb1]+="$(run "127.0.0.1:$L1" "${HP[$L1]}")"$'\n'
  res[lb3]+="$(run "127.0.0.1:$L3" "${HP[$L3]}")"$'\n'
done
printf '%-28s %10s %18s %16s %16s %18s\n' set-up calls/s replicas_cpu_us/call lb_cpu_us/call total_cpu_us/call replica_calls/cpu_s
for k in direct lb1 lb3; do
  rows=${res[$k]}
  col() { awk -v k="$1" 'NF {print $k}' <<<"$rows" | median; }
  tot=$(awk 'NF {print $2 + $3}' <<<"$rows" | median)
  case $k in direct) label="1 replica, direct" ;; lb1) label="HAProxy -> 1 replica" ;; lb3) label="HAProxy -> 3 replicas" ;; esac
  printf '%-28s %10.0f %18.1f %16.1f %16.1f %18.0f\n' "$label" "$(col 1)" "$(col 2)" "$(col 3)" "$tot" "$(awk -v c="$(col 2)" 'BEGIN {print 1e6 / c}')"
  eval "rps_$k=$(col 1)"
done
awk -v a="$rps_lb3" -v b="$rps_lb1" -v c="$rps_direct" 'BEGIN {printf "3 replicas / 1 replica through HAProxy: %.2fx the calls/s; HAProxy -> 1 replica / direct: %.2fx\n", a / b, b / c}'
# rows of make bench's closing table (tests/bench/run-all.sh)
awk -v a="$rps_lb3" -v b="$rps_lb1" -v c="$rps_direct" -v n="$(nproc)" 'BEGIN {
  printf "TABLE | gRPC Classify ('"${version%-*}"') through HAProxy, 3 replicas vs 1, calls/s (%d cores shared) | %.0f | 1 replica %.0f | %.2f | — | — |\n", n, a, b, a / b
  printf "TABLE | gRPC Classify ('"${version%-*}"') through HAProxy vs direct, 1 replica, calls/s | %.0f | direct %.0f | %.2f | — | — |\n", b, c, b / c}'
# every call the replicas answered was OK (CANCELLED: calls cut off at the end of a timed run)
bad=0
for p in $P1 $P2 $P3; do
  b=$("$GYRO" client --addr "127.0.0.1:$p" stats | awk -F'\t' '$1 == "count" && $3 != "OK" && $3 != "CANCELLED" {s += $4} END {print s + 0}')
  c=$("$GYRO" client --addr "127.0.0.1:$p" stats | awk -F'\t' '$1 == "count" && $2 ~ /Classify/ && $3 == "OK" {s += $4} END {print s + 0}')
  echo "replica on port $p: $c Classify calls OK"
  bad=$((bad + b))
done
for p in "${pids[@]}"; do kill -TERM "$p"; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
[ "$bad" = 0 ] || { echo "FAIL: the replicas answered $bad calls with an error status"; exit 1; }
