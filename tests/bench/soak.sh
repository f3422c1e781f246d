#!/usr/bin/env bash
# soak.sh — a long run of `gyro serve` from the sanitizer build (ASan + UBSan) on loopback:
# N valid Classify calls (h2load, 128 in flight) in rounds, interleaved with malformed calls
# from a Python grpcio client (/usr/bin/python3): text that is not UTF-8, bytes that are not a
# ClassifyRequest, an empty text, a text over the request size limit, unknown fields, huge
# top_k, an unknown method, and a burst of BAD/4 calls the client cancels at once. Prints the
# status codes of each kind, the server's own counters (every non-OK status by method and
# code), and the server's RSS after warm-up (which includes one round of every malformed kind)
# and at the end (growth per million calls). Not part of `make check`.
#
#   tests/bench/soak.sh [BUILD_DIR]          (default build-san, built here if needed)
#     env: N (1000000 valid calls)  ROUNDS (10)  BAD (2000 malformed calls per round)
#          WARM (2: rounds of N/ROUNDS valid and BAD malformed calls before the baseline, while
#          ASan's quarantine and the allocator caches fill; not counted in N)
#          THREADS (2)  POOL (2)  LIMIT_S (7200: the whole run is bounded)
#
# Exit 1 when a valid call is not OK, a malformed call gets a status other than the expected
# INVALID_ARGUMENT / RESOURCE_EXHAUSTED / UNIMPLEMENTED (or OK where the request is acceptable),
# the sanitizers report anything, or the server dies.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-san}
N=${N:-1000000} ROUNDS=${ROUNDS:-10} BAD=${BAD:-2000} WARM=${WARM:-2} THREADS=${THREADS:-2} POOL=${POOL:-2}
LIMIT_S=${LIMIT_S:-7200}
cd "$root"
command -v h2load >/dev/null || { echo "h2load not installed (apt-get install nghttp2-client)"; exit 1; }
PY=/usr/bin/python3
if [ "$build" = build-san ]; then
  # the build of `make sanitize` (clang; a directory built with other flags is wiped first,
  # since gcc's and clang's sanitizer runtimes do not link together)
  san_opts='-fsanitize=address,undefined,pointer-overflow -fno-sanitize-recover=undefined,pointer-overflow -fno-omit-frame-pointer -ffp-contract=off'
  if [ "$(cat build-san/.compiler 2> /dev/null)" != "clang $san_opts" ]; then
    rm -rf build-san; mkdir -p build-san; echo "clang $san_opts" > build-san/.compiler
  fi
  make -s -j2 BUILD=build-san OPT=-O1 CC=clang SAN_FLAGS="$san_opts" build-san/gyro > /dev/null
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
# live(): the bytes the program holds allocated (kB), from ASan's allocator through gdb when
# both are there, else empty. Under ASan the RSS also holds the quarantine, the shadow of every
# heap page ever used and the size classes' free chunks, so it moves by +-15 MB between
# samples; the live heap is what a leak makes grow.
live() {
  [ "$build" = build-san ] && command -v gdb > /dev/null || return 0
  timeout 60 gdb -p "$spid" -batch -ex 'p (long)__sanitizer_get_current_allocated_bytes() / 1024' \
    -ex detach 2> /dev/null | awk '/^[$]/ {print $3}'
}

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
# clients that go away mid-call: a burst of calls each cancelled right after it started (the
# server sees the stream reset before, during or after its handler)
valid = gyro_pb2.ClassifyRequest(text="播放周杰伦的稻香").SerializeToString()
futures = [classify.future(valid, timeout=30) for _ in range(n // 4)]
for f in futures:
    f.cancel()
for f in futures:
    try:
        f.result()
        code = "OK"
    except grpc.FutureCancelledError:
        code = "CANCELLED"
    except grpc.RpcError as e:
        code = e.code().name
    print("disconnect", code)
PY
}

# warm-up: thread-local scratch, allocator pools, and one round of every malformed kind, so that
# the baseline includes the peak of the transport's buffers (an oversized request is read whole
# by gRPC core before it is refused, and a burst of cancelled calls is held at once): growth
# from here on is what repeats, a leak, not the first high-water mark
valid 20000 > /dev/null
malformed "$BAD" > /dev/null
valid 20000 > /dev/null
# then WARM full rounds: ASan's quarantine (256 MB of freed blocks held back) and the allocator
# caches fill over the first ~200,000 calls, a one-off rise of the RSS that is not growth
for _ in $(seq 1 "$WARM"); do valid $(( N / ROUNDS )) > /dev/null; malformed "$BAD" > /dev/null; done
sleep 6      # ASan gives free allocator pages back every 5 s (allocator_release_to_os_interval_ms)
rss0=$(rss) live0=$(live)
: > "$work/bad.txt"
per=$(( N / ROUNDS )); failed=0; t0=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
  f=$(valid "$per"); failed=$(( failed + f ))
  malformed "$BAD"
  kill -0 "$spid" 2> /dev/null || { tail -n 30 "$work/serve.log"; echo "FAIL: the server died"; exit 1; }
  echo "round $r/$ROUNDS: $(( r * per )) valid calls, RSS $(rss) kB, $(( $(date +%s) - t0 )) s"
  if [ "$r" = $(( ROUNDS / 2 )) ]; then sleep 6; rss_half=$(rss); fi
done
sleep 6
rss1=$(rss) live1=$(live)   # rss_half: after half the rounds, when allocator caches have settled
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
  $1 == "disconnect"     && $2 != "CANCELLED" && $2 != "OK" {u++}
  END {print u + 0}' "$work/bad.txt")
echo "server counters, non-OK (method, code, count):"
awk -F'\t' '$1 == "count" && $3 != "OK" {print "  " $2, $3, $4}' "$work/stats"
echo "unexpected statuses: $(( unexpected + failed ))"
awk -v a="$rss0" -v h="${rss_half:-$rss0}" -v b="$rss1" -v n="$(( per * ROUNDS ))" -v nh="$(( per * (ROUNDS - ROUNDS / 2) ))" 'BEGIN {
  printf "server RSS after warm-up %d kB, at the end %d kB: %+.2f MB per million valid calls\n", a, b, (b - a) / 1024 / (n / 1e6)
  printf "second half of the run: %d kB -> %d kB, %+.2f MB per million valid calls\n", h, b, (b - h) / 1024 / (nh / 1e6) }'
[ -n "$live0" ] && [ -n "$live1" ] && awk -v a="$live0" -v b="$live1" -v n="$(( per * ROUNDS ))" 'BEGIN {
  printf "live heap (ASan) after warm-up %d kB, at the end %d kB: %+.2f MB per million valid calls\n", a, b, (b - a) / 1024 / (n / 1e6) }'
kill -TERM "$spid"; wait "$spid" || { tail -n 30 "$work/serve.log"; echo "FAIL: the server exited with an error"; exit 1; }
spid=
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error' "$work/serve.log"; then
  grep -E 'ERROR|runtime error|SUMMARY' "$work/serve.log" | head; echo "FAIL: sanitizer report"; exit 1
fi
[ $(( unexpected + failed )) = 0 ] || { echo "FAIL: unexpected statuses"; exit 1; }
echo "ok"
