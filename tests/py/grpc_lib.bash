# grpc_lib.bash — helpers shared by tests/e2e/grpc_*.sh (sourced, not run).
#
# Uses Debian's /usr/bin/python3 (python3-grpcio, python3-grpc-tools); the python3 first on PATH
# may not see Debian's packages. Stubs are generated into $TMPDIR/gen at test time. Servers run
# on an ephemeral port (--addr 127.0.0.1:0 --port-file) and are stopped by their own pid.

PY=/usr/bin/python3
GEN="$TMPDIR/gen"
SUITE="tests/py/grpc_suite.py"
SPID=""
# never leave a server behind when a check fails (set -e exits the script)
trap '[ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null; true' EXIT

grpc_setup() {
  [ -x "$PY" ] || { echo "no $PY"; exit 77; }
  "$PY" tests/py/need.py grpc grpc_tools.protoc || exit $?
  [ -x "$GYRO" ] || { echo "no gyro binary at $GYRO"; exit 1; }
  mkdir -p "$GEN"
  "$PY" -m grpc_tools.protoc -Iproto --python_out="$GEN" --grpc_python_out="$GEN" proto/gyro.proto proto/health.proto \
    || { echo "stub generation failed"; exit 1; }
}

# start_server NAME ARGS... : start `gyro serve ARGS`, set SPID_<NAME>/PORT_<NAME> as SPID/PORT.
start_server() {
  local log="$TMPDIR/serve-$1.log" pf="$TMPDIR/port-$1"; shift
  rm -f "$pf"
  "$GYRO" serve --addr 127.0.0.1:0 --port-file "$pf" "$@" 2>"$log" &
  SPID=$!
  SLOG=$log
  for _ in $(seq 1 300); do
    [ -s "$pf" ] && break
    kill -0 "$SPID" 2>/dev/null || { echo "server exited at start:"; cat "$log"; exit 1; }
    sleep 0.05
  done
  [ -s "$pf" ] || { echo "server did not start"; cat "$log"; kill -KILL "$SPID"; exit 1; }
  PORT=$(cat "$pf")
  ADDR="127.0.0.1:$PORT"
}

# stop_server: SIGTERM, expect exit 0 and a clean log (no sanitizer report).
stop_server() {
  kill -TERM "$SPID"
  local rc=0
  wait "$SPID" || rc=$?
  check_log "$SLOG"
  SPID=""
  [ "$rc" = 0 ] || { echo "FAIL server exit status $rc after SIGTERM"; cat "$SLOG"; exit 1; }
  echo "ok   server exited 0 after SIGTERM"
}

check_log() {
  if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|assertion failed' "$1"; then
    echo "FAIL sanitizer or core report in $1:"; cat "$1"; exit 1
  fi
}

suite() { "$PY" "$SUITE" "$GEN" "$@"; }
