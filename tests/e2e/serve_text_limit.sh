#!/usr/bin/env bash
# serve_text_limit.sh — `gyro serve --max-text-bytes N`: a Classify, ClassifyStream, Embed or
# Reason text over N bytes, and a Normalize document over N bytes, get INVALID_ARGUMENT with a
# message naming the size and the limit; a text of exactly N bytes is served.
set -eu
. tests/py/grpc_lib.bash
[ -x "$PY" ] && "$PY" -c 'import grpc' 2> /dev/null || { echo "python3-grpcio not installed"; exit 77; }
T=$TMPDIR
printf '播放周杰伦的歌\tmusic.play\n放首歌\tmusic.play\n今天天气\tweather.query\n明天下雨吗\tweather.query\n' > "$T/d.tsv"
"$GYRO" import -f tsv -q -o "$T/d.pb" "$T/d.tsv"
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet -o "$T/m.clf" "$T/d.pb"
start_server limit --model "$T/m.clf" --max-text-bytes 64
cat > "$T/call.py" << 'PY'
import sys, grpc
port, method, field, n, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
text = (b"a" * n + b"\nb") if kind == "lines" else b"a" * n
def varint(v):
    out = b""
    while True:
        b = v & 0x7F; v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v: return out
msg = bytes([field << 3 | 2]) + varint(len(text)) + text
ch = grpc.insecure_channel("127.0.0.1:" + port)
ident = lambda b: b
try:
    if method in ("Normalize",):
        list(ch.unary_stream("/gyro.v1.Gyro/" + method, request_serializer=ident, response_deserializer=ident)(msg, timeout=10))
    elif method == "ClassifyStream":
        list(ch.stream_stream("/gyro.v1.Gyro/" + method, request_serializer=ident, response_deserializer=ident)(iter([msg]), timeout=10))
    else:
        ch.unary_unary("/gyro.v1.Gyro/" + method, request_serializer=ident, response_deserializer=ident)(msg, timeout=10)
    print("OK")
except grpc.RpcError as e:
    print(e.code().name, e.details())
PY
call() { "$PY" "$T/call.py" "$PORT" "$@"; }
for m in "Classify 1" "ClassifyStream 1" "Embed 2" "Reason 2" "Normalize 1"; do
  set -- $m
  kind=one; [ "$1" = Normalize ] && kind=lines
  r=$(call "$1" "$2" 65 $kind)
  case $r in INVALID_ARGUMENT*"over the limit of 64"*) ;; *) echo "FAIL $1 with 65 bytes: $r"; exit 1 ;; esac
  echo "ok   $1 with 65 bytes: $r"
done
for m in Classify ClassifyStream Normalize; do
  kind=one; [ "$m" = Normalize ] && kind=lines
  r=$(call "$m" 1 64 $kind)
  [ "$r" = OK ] || { echo "FAIL $m with 64 bytes: $r"; exit 1; }
done
echo "ok   64 bytes are served"
stop_server
