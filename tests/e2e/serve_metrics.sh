#!/usr/bin/env bash
# serve_metrics.sh — `gyro serve --metrics-addr`: the Prometheus text endpoint, scraped while the
# server is driven over gRPC (tests/py/metrics_suite.py: counters by method and code, cumulative
# latency histograms, in-flight calls, the model version of every ClassifyResponse, load time
# and reloads across SIGHUP, malformed HTTP requests); curl sees the same document; the server
# exits 0 with a clean log; a busy metrics port is refused at start with exit 1.
set -eu
. tests/py/grpc_lib.bash
grpc_setup
"$GYRO" classify --help >/dev/null 2>&1 || { echo "gyro classify not built"; exit 77; }

"$PY" tests/py/make_examples.py "$GEN" toy "$TMPDIR/toy.pb" "$TMPDIR/toy.txt"
train() { "$GYRO" classify train --dim 16 --layers 1 --heads 2 --epochs 15 --seed "$1" --quiet -o "$2" "$TMPDIR/toy.pb"; }
train 1 "$TMPDIR/a.model"
train 2 "$TMPDIR/b.model"
cp "$TMPDIR/a.model" "$TMPDIR/serve.model"

start_server metrics --model "$TMPDIR/serve.model" --metrics-addr 127.0.0.1:0
MPORT=$(sed -n 's/.*metrics on .* (port \([0-9]*\)).*/\1/p' "$SLOG")
[ -n "$MPORT" ] || { echo "FAIL no metrics port in the log"; cat "$SLOG"; exit 1; }
"$PY" tests/py/metrics_suite.py "$GEN" "$ADDR" "127.0.0.1:$MPORT" "$SPID" "$TMPDIR/serve.model" "$TMPDIR/b.model" "$TMPDIR/toy.txt"
if command -v curl >/dev/null; then
  curl -fsS "http://127.0.0.1:$MPORT/metrics" > "$TMPDIR/m.txt"
  grep -q '^grpc_server_handled_total{grpc_type="unary",grpc_service="gyro.v1.Gyro",grpc_method="Classify",grpc_code="OK"} 2[0-9]$' "$TMPDIR/m.txt" \
    || { echo "FAIL curl: Classify OK count"; grep Classify "$TMPDIR/m.txt" | head; exit 1; }
  echo "ok   curl scrapes the same document"
fi
# a second server may not take the same metrics port
if "$GYRO" serve --addr 127.0.0.1:0 --metrics-addr "127.0.0.1:$MPORT" 2>"$TMPDIR/busy.log"; then
  echo "FAIL a busy metrics port was accepted"; exit 1
fi
grep -q 'cannot listen on 127.0.0.1:'"$MPORT"' for metrics' "$TMPDIR/busy.log" || { echo "FAIL busy port message"; cat "$TMPDIR/busy.log"; exit 1; }
echo "ok   a busy metrics port is refused at start: $(head -n 1 "$TMPDIR/busy.log")"
if "$GYRO" serve --addr 127.0.0.1:0 --metrics-addr nonsense 2>/dev/null; then echo "FAIL --metrics-addr nonsense accepted"; exit 1; fi
echo "ok   --metrics-addr without a port is refused"
stop_server
