#!/usr/bin/env bash
# serve_fd_exhaustion.sh — running out of descriptors does not kill the listener. gRPC core
# (1.51) stops accepting for good after one accept4 failure with EMFILE; gyro keeps a reserve
# descriptor and sheds the one connection instead. The server runs with `ulimit -n 1024` (soft
# and hard, so raising the soft limit cannot help), a client opens 1,200 loopback connections,
# closes them all, and the server must still answer health checks. Bounded: one burst, 10 s
# deadlines.
set -eu
. tests/py/grpc_lib.bash
[ -x "$PY" ] && "$PY" -c 'import grpc' 2> /dev/null || { echo "python3-grpcio not installed"; exit 77; }
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 1400 ] || { echo "hard fd limit below 1400"; exit 77; }

cat > "$TMPDIR/burst.py" << 'PY'
import socket, sys, time, grpc
port = int(sys.argv[1]); mode = sys.argv[2]
def health():
    ch = grpc.insecure_channel("127.0.0.1:%d" % port)
    call = ch.unary_unary("/grpc.health.v1.Health/Check",
                          request_serializer=lambda b: b, response_deserializer=lambda b: b)
    try:
        call(b"", timeout=10)
        return "ok"
    except grpc.RpcError as e:
        return "error %s" % e.code()
    finally:
        ch.close()
if mode == "health":
    print(health()); sys.exit(0)
socks = []
for i in range(1200):
    s = socket.socket(); s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port)); socks.append(s)
    except OSError:
        s.close()
time.sleep(1.0)          # let the server accept what it can (and hit EMFILE)
for s in socks: s.close()
time.sleep(1.0)          # let the server see the closes
print("connected %d" % len(socks))
PY

# the server alone gets 1024 descriptors (soft and hard)
( ulimit -n 1024; exec "$GYRO" serve --addr 127.0.0.1:0 --port-file "$TMPDIR/port" 2> "$TMPDIR/serve.log" ) &
SPID=$!; SLOG="$TMPDIR/serve.log"
for _ in $(seq 1 300); do [ -s "$TMPDIR/port" ] && break; sleep 0.05; done
PORT=$(cat "$TMPDIR/port")
[ "$("$PY" "$TMPDIR/burst.py" "$PORT" health)" = ok ] || { echo "FAIL no health answer before the burst"; exit 1; }
ulimit -n 4096 2> /dev/null || true
timeout 120 "$PY" "$TMPDIR/burst.py" "$PORT" burst
for i in 1 2 3; do
  h=$(timeout 30 "$PY" "$TMPDIR/burst.py" "$PORT" health)
  [ "$h" = ok ] || { echo "FAIL health check $i after the burst: $h"; tail -5 "$SLOG"; exit 1; }
done
echo "ok   the server answers after 1,200 connections with 1,024 descriptors"
grep -q 'descriptor' "$SLOG" && echo "     $(grep descriptor "$SLOG" | head -n 2 | tr '\n' ' ')"
stop_server
