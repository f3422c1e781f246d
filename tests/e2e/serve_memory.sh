#!/usr/bin/env bash
# serve_memory.sh — what hostile or careless clients can make `gyro serve` hold:
#  1. a request far over --max-request-bytes (320 MB; gRPC core reads a message whole before it
#     compares it with the limit) is refused RESOURCE_EXHAUSTED without the server's peak
#     memory growing by anything near its size: the transport's resource quota
#     (--max-buffer-bytes, 64 MiB by default) stops it;
#  2. after that request, after requests just under the limit 8 at a time, and after bursts of
#     calls cancelled at once, the server's RSS comes back near where it was (glibc's arenas
#     keep freed memory until the server trims them);
#  3. the server still answers, and stops cleanly (no sanitizer report, no leak at exit).
# (2) is checked on a build without ASan only, whose quarantine keeps freed memory resident.
# Bounds are loose (peak under +200 MB for a 320 MB request; RSS within 16–48 MB of the base
# after up to 25 s), so a loaded machine does not fail the test; without the quota the peak
# grows by the request's size, without the trim the RSS stays 25 MB above the base after the
# 4 MB requests. The bound after them is 16 MB: with gyro serve's fixed mmap threshold
# (cmd_serve.c heap_policy) the RSS comes back within 1 MB of the base (4 runs of 5; 14 MB once,
# left over from the 320 MB request); with glibc's dynamic threshold each thread's heap kept a
# free top of up to 8 MB that malloc_trim does not release, 17-23 MB in all.
set -eu
. tests/py/grpc_lib.bash
[ -x "$PY" ] && "$PY" -c 'import grpc' 2> /dev/null || { echo "python3-grpcio not installed"; exit 77; }
T=$TMPDIR
printf '播放周杰伦的歌\tmusic.play\n放首歌\tmusic.play\n今天天气\tweather.query\n明天下雨吗\tweather.query\n' > "$T/d.tsv"
"$GYRO" import -f tsv -q -o "$T/d.pb" "$T/d.tsv"
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet -o "$T/m.clf" "$T/d.pb"
start_server mem --model "$T/m.clf" --threads 2 --pool 2
kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$SPID/status"; }

cat > "$T/client.py" << 'PY'
import sys, grpc
port, what, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ch = grpc.insecure_channel("127.0.0.1:" + port, options=[("grpc.max_send_message_length", 1 << 30)])
ident = lambda b: b
classify = ch.unary_unary("/gyro.v1.Gyro/Classify", request_serializer=ident, response_deserializer=ident)
text = "播放周杰伦的稻香".encode()
valid = b"\x0a" + bytes([len(text)]) + text
codes = {}
def varint(v):
    out = b""
    while True:
        out += bytes([v & 0x7F | (0x80 if v >> 7 else 0)]); v >>= 7
        if not v: return out
def count(c): codes[c] = codes.get(c, 0) + 1
if what == "valid":
    for _ in range(n):
        try: classify(valid, timeout=30); count("OK")
        except grpc.RpcError as e: count(e.code().name)
elif what == "huge":       # field 1 (text) of n MiB, all of it sent
    body = b"\x0a" + varint(n << 20) + b"a" * (n << 20)
    try: classify(body, timeout=120); count("OK")
    except grpc.RpcError as e: count(e.code().name)
elif what == "near_limit": # n threads, 3 requests each, of 4,000,000 bytes (the limit is 4 MiB)
    import threading
    body = valid + b"\x1a" + varint(4000000 - len(valid) - 5) + b"x" * (4000000 - len(valid) - 5)  # id
    def run():
        for _ in range(3):
            try: classify(body, timeout=60); count("OK")
            except grpc.RpcError as e: count(e.code().name)
    ts = [threading.Thread(target=run) for _ in range(n)]
    for t in ts: t.start()
    for t in ts: t.join()
elif what == "cancel":     # a burst of calls, each cancelled right after it started
    fs = [classify.future(valid, timeout=30) for _ in range(n)]
    for f in fs: f.cancel()
    for f in fs:
        try: f.result(); count("OK")
        except grpc.FutureCancelledError: count("CANCELLED")
        except grpc.RpcError as e: count(e.code().name)
print(" ".join(f"{k}={v}" for k, v in sorted(codes.items())))
PY
client() { "$PY" "$T/client.py" "$PORT" "$@"; }

r=$(client valid 300)
[ "$r" = "OK=300" ] || { echo "FAIL warm-up calls: $r"; exit 1; }
sleep 6      # the first trim period (and ASan's release of free pages) before the base
base=$(kb VmRSS)
hwm0=$(kb VmHWM)

r=$(client huge 320)
[ "$r" = "RESOURCE_EXHAUSTED=1" ] || { echo "FAIL a 320 MB request: $r (want RESOURCE_EXHAUSTED)"; exit 1; }
peak=$(kb VmHWM)
grow=$(( (peak - (hwm0 > base ? hwm0 : base)) / 1024 ))
echo "     a 320 MB request: RESOURCE_EXHAUSTED, peak RSS $((hwm0 / 1024)) -> $((peak / 1024)) MB"
[ "$grow" -lt 200 ] || { echo "FAIL the server's peak memory grew by $grow MB for a refused 320 MB request"; exit 1; }
echo "ok   a 320 MB request is refused without being held (peak +$grow MB)"

# back_to_base WHAT MB: wait up to 25 s for the RSS to come within MB of the base. Not for a
# sanitizer build: ASan's quarantine holds freed memory back on purpose (256 MB by default).
asan=0
grep -aq __asan_init "$GYRO" && asan=1
back_to_base() {
  local rss
  if [ "$asan" = 1 ]; then echo "     (ASan build: RSS after $1 not checked)"; return; fi
  for i in $(seq 1 50); do
    rss=$(kb VmRSS)
    [ $(( (rss - base) / 1024 )) -lt "$2" ] && break
    # a trim that ran while a loaded machine still had the burst's buffers in flight is not
    # repeated without new calls (the server trims only after calls): one call every 6 s
    [ $((i % 12)) = 0 ] && client valid 1 > /dev/null
    sleep 0.5
  done
  echo "     RSS after $1: $((rss / 1024)) MB (base $((base / 1024)) MB)"
  [ $(( (rss - base) / 1024 )) -lt "$2" ] || { echo "FAIL RSS stayed $(( (rss - base) / 1024 )) MB above the base after $1"; exit 1; }
  echo "ok   RSS back within $2 MB of the base after $1"
}
r=$(client valid 10)   # calls since the last trim period: the server trims at the next one
[ "$r" = "OK=10" ] || { echo "FAIL calls after the 320 MB request: $r"; exit 1; }
back_to_base "the 320 MB request" 32

# requests just under the limit, 8 at a time: served, and their buffers given back (glibc keeps
# them in its arenas, 25 MB above the base, until the server trims)
r=$(client near_limit 8)
[ "$r" = "OK=24" ] || { echo "FAIL 4 MB requests: $r"; exit 1; }
r=$(client valid 10)
back_to_base "24 requests of 4 MB, 8 at a time" 16

for _ in 1 2 3; do
  r=$(client cancel 2000)
  case $r in *[A-Z]=*) ;; *) echo "FAIL cancelled burst: $r"; exit 1 ;; esac
done
r=$(client valid 300)
[ "$r" = "OK=300" ] || { echo "FAIL calls after the bursts: $r"; exit 1; }
back_to_base "6000 cancelled calls" 48
stop_server
