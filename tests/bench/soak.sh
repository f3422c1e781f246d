#!/usr/bin/env bash
# soak.sh — a long run of `gyro serve` from the sanitizer build (ASan + UBSan) on loopback:
# N valid Classify calls (h2load, 128 in flight) in rounds, interleaved with malformed calls
# from a Python grpcio client (/usr/bin/python3): text that is not UTF-8, bytes that are not a
# ClassifyRequest, an empty text, a text over the request size limit, unknown fields, huge
# top_k, an unknown method. Prints the status codes of each kind, the server's own counters
# (every non-OK status by method and code), and the server's RSS after warm-up and at the end
# (growth per million calls). Not part of `make check`.
#
#   tests/bench/soak.sh [BUILD_DIR]          (default build-san, built here if needed)
#     env: N (1000000 valid calls)  ROUNDS (10)  BAD (2000 malformed calls per round)
#          THREADS (2)  POOL (2)  LIMIT_S (7200: the whole run is bounded)
#
# Exit 1 when a valid call is not OK, a malformed call gets a status other than the expected
# INVALID_ARGUMENT / RESOURCE_EXHAUSTED / UNIMPLEMENTED (or OK where the request is acceptable),
# the sanitizers report anything, or the server dies.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-san}
N=${N:-1000000} ROUNDS=${ROUNDS:-10} BAD=${BAD:-2000} THREADS=${THREADS:-2} POOL=${POOL:-2}
LIMIT_S=${LIMIT_S:-7200}
cd "$root"
command -v h2load >/dev/null || { echo "h2load not installed (apt-get install nghttp2-client)"; exit 1; }
PY=/usr/bin/python3
if [ "$build" = build-san ]; then
  make -s BUILD=build-san OPT=-O1 \
    SAN_FLAGS='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' \
    build-san/gyro > /dev/null
else
  make -s BUILD="$build" "$build/gyro" > /dev/null
fi
GYRO="$root/$build/gyro"
work=$(mktemp -d)
trap '[ -n "${spid:-}" ] && kill -KILL "$spid" 2> /dev/null; rm -rf "$work"' EXIT
deadline=$(( $(date +%s) + LIMIT_S ))
"$PY" -m grpc_tools.protoc -Iproto --python_out="$work" --grpc_python_out="$work" proto/gyro.proto proto/health.proto

# a small model: inference cost and memory behaviour do not depend on how well it was trained
"$GYRO" generate music -n 400 -s 1 -q -o "$work/m.pb"
"$GYRO" classify train --dim 32 --layers 1 --heads 4 --epochs 1 --quiet -o "$work/model" "$work/m.pb"

"$PY" - "$work" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import gyro_pb2
b = gyro_pb2.ClassifyRequest(text="播放周杰伦的稻香").SerializeToString()
open(sys.argv[1] + "/classify.bin", "wb").write(b"\0" + struct.pack(">I", len(b)) + b)
PY

# a small ASan quarantine: freed memory is held back for use-after-free detection up to this
# size, which would otherwise read as RSS growth over the first hundreds of MB
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:quarantine_size_mb=16:thread_local_quarantine_size_kb=256} \
  "$GYRO" serve --model "$work/model" --addr 127.0.0.1:0 --port-file "$work/port" \
  --threads "$THREADS" --pool "$POOL" 2> "$work/serve.log" &
spid=$!
for _ in $(seq 1 400); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || { cat "$work/serve.log"; echo "FAIL: the server did not start"; exit 1; }
port=$(cat "$work/port")
rss() { awk '/^VmRSS/ {print $2}' "/proc/$spid/status"; }

# h2load N_CALLS: valid Classify calls; prints the number not succeeded at the HTTP/2 level
valid() {
  local left=$(( deadline - $(date +%s) ))
  [ "$left" -gt 0 ] || { echo "FAIL: time limit reached" >&2; exit 1; }
  timeout "$left" h2load -n "$1" -c 4 -m 32 -d "$work/classify.bin" -H 'content-type: application/grpc' \
    -H 'te: trailers' "http://127.0.0.1:$port/gyro.v1.Gyro/Classify" > "$work/h2.out"
  awk '/^requests:/ {for (i = 1; i <= NF; i++) if ($(i) ~ /^succeeded,/) s = $(i-1); print $2 - s}' "$work/h2.out"
}
# malformed COUNT: Python client; appends "kind code" lines to bad.txt, one per call
malformed() {
  "$PY" - "$work" "$port" "$1" >> "$work/bad.txt" <<'PY'
import sys, grpc
sys.path.insert(0, sys.argv[1])
import gyro_pb2
port, n = sys.argv[2], int(sys.argv[3])
ch = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
raw = lambda path: ch.unary_unary(path, request_serializer=lambda b: b, response_deserializer=lambda b: b)
classify = raw("/gyro.v1.Gyro/Classify")
cases = [
    ("invalid_utf8", classify, b"\x0a\x04\xff\xfe\xe6\x92"),
    ("not_protobuf", classify, b"\xff\xff\xff\xff\x0f garbage"),
    ("empty_text", classify, gyro_pb2.ClassifyRequest(text="").SerializeToString()),
    ("oversized", classify, gyro_pb2.ClassifyRequest(text="播" * (5 << 20)).SerializeToString()),
    ("unknown_field", classify, gyro_pb2.ClassifyRequest(text="播放").SerializeToString() + b"\xf8\x7f\x01"),
    ("huge_top_k", classify, gyro_pb2.ClassifyRequest(text="播放", top_k=4294967295).SerializeToString()),
    ("unknown_method", raw("/gyro.v1.Gyro/NoSuchMethod"), b""),
]
for i in range(n):
    kind, call, body = cases[i % len(cases)]
    if kind == "oversized" and i % (len(cases) * 50) != 3:
        continue          # a 15 MB request now and then, not thousands of them
    try:
        call(body, timeout=30)
        code = "OK"
    except grpc.RpcError as e:
        code = e.code().name
    print(kind, code)
PY
}

valid 20000 > /dev/null      # warm-up: thread-local scratch, allocator pools
rss0=$(rss)
: > "$work/bad.txt"
per=$(( N / ROUNDS )); failed=0; t0=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
  f=$(valid "$per"); failed=$(( failed + f ))
  malformed "$BAD"
  kill -0 "$spid" 2> /dev/null || { tail -n 30 "$work/serve.log"; echo "FAIL: the server died"; exit 1; }
  echo "round $r/$ROUNDS: $(( r * per )) valid calls, RSS $(rss) kB, $(( $(date +%s) - t0 )) s"
  [ "$r" = $(( ROUNDS / 2 )) ] && rss_half=$(rss)
done
rss1=$(rss)   # rss_half: after half the rounds, when allocator caches have settled
"$GYRO" client --addr "127.0.0.1:$port" stats > "$work/stats"
echo
echo "valid Classify calls: $(( per * ROUNDS )), not succeeded (h2load): $failed"
echo "malformed calls by kind and status:"
sort "$work/bad.txt" | uniq -c | sed 's/^/  /'
unexpected=$(awk '
  $1 == "invalid_utf8"   && $2 != "INVALID_ARGUMENT" {u++}
  $1 == "not_protobuf"   && $2 != "INVALID_ARGUMENT" {u++}
  $1 == "empty_text"     && $2 != "INVALID_ARGUMENT" {u++}
  $1 == "oversized"      && $2 != "RESOURCE_EXHAUSTED" && $2 != "INVALID_ARGUMENT" {u++}
  $1 == "unknown_field"  && $2 != "OK" {u++}
  $1 == "huge_top_k"     && $2 != "OK" && $2 != "INVALID_ARGUMENT" {u++}
  $1 == "unknown_method" && $2 != "UNIMPLEMENTED" {u++}
  END {print u + 0}' "$work/bad.txt")
echo "server counters, non-OK (method, code, count):"
awk -F'\t' '$1 == "count" && $3 != "OK" {print "  " $2, $3, $4}' "$work/stats"
echo "unexpected statuses: $(( unexpected + failed ))"
awk -v a="$rss0" -v h="${rss_half:-$rss0}" -v b="$rss1" -v n="$(( per * ROUNDS ))" -v nh="$(( per * (ROUNDS - ROUNDS / 2) ))" 'BEGIN {
  printf "server RSS after warm-up %d kB, at the end %d kB: %+.2f MB per million valid calls\n", a, b, (b - a) / 1024 / (n / 1e6)
  printf "second half of the run: %d kB -> %d kB, %+.2f MB per million valid calls\n", h, b, (b - h) / 1024 / (nh / 1e6) }'
kill -TERM "$spid"; wait "$spid" || { tail -n 30 "$work/serve.log"; echo "FAIL: the server exited with an error"; exit 1; }
spid=
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error' "$work/serve.log"; then
  grep -E 'ERROR|runtime error|SUMMARY' "$work/serve.log" | head; echo "FAIL: sanitizer report"; exit 1
fi
[ $(( unexpected + failed )) = 0 ] || { echo "FAIL: unexpected statuses"; exit 1; }
echo "ok"
