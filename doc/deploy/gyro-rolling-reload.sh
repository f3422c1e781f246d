#!/usr/bin/env bash
# gyro-rolling-reload.sh — reload the model of `gyro serve` replicas one at a time.
#
#   gyro-rolling-reload.sh [-t SECONDS] PORT...
#
# Replace the model file first (atomically: copy beside it, then mv). Then, for each PORT in
# turn (the replica on $GYRO_HOST:PORT, gyro-serve@PORT.service): note the model_version it
# serves, ask it to reload — $GYRO_RELOAD with %p replaced by the port, by default "systemctl
# reload gyro-serve@%p" (SIGHUP) — and wait until it serves another model_version and its
# grpc.health.v1 status is SERVING; then the next. A replica still on its old model after
# SECONDS (default 30) refused the file (truncated, corrupt, missing: its log says which) and
# keeps serving the old one: the rollout stops there, exit 1, the replicas after it untouched.
# Exit 0 when every replica serves a new model; 2 on a usage error.
#   env: GYRO (the gyro binary; default: gyro on PATH)  GYRO_HOST (127.0.0.1)  GYRO_RELOAD
set -euo pipefail
GYRO=${GYRO:-gyro} GYRO_HOST=${GYRO_HOST:-127.0.0.1} GYRO_RELOAD=${GYRO_RELOAD:-systemctl reload gyro-serve@%p}
timeout=30
usage() { echo "usage: gyro-rolling-reload.sh [-t SECONDS] PORT..." >&2; exit 2; }
while getopts t: o; do
  case $o in t) timeout=$OPTARG ;; *) usage ;; esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage
[[ "$timeout" =~ ^[0-9]+$ ]] || usage
for p in "$@"; do [[ "$p" =~ ^[0-9]+$ ]] || { echo "gyro-rolling-reload.sh: not a port: '$p'" >&2; exit 2; }; done

# version PORT: the model_version the replica serves; empty when it does not answer
version() { { "$GYRO" client --addr "$GYRO_HOST:$1" --timeout-ms 2000 stats 2>/dev/null || true; } |
  awk -F'\t' '$1 == "model_version" {print $2}'; }
for p in "$@"; do
  old=$(version "$p")
  [ -n "$old" ] || { echo "gyro-rolling-reload.sh: no replica answers on $GYRO_HOST:$p; stopping" >&2; exit 1; }
  sh -c "${GYRO_RELOAD//%p/$p}" || { echo "gyro-rolling-reload.sh: '${GYRO_RELOAD//%p/$p}' failed; stopping" >&2; exit 1; }
  end=$((SECONDS + timeout))
  new=$old health=
  while [ "$SECONDS" -le "$end" ]; do
    new=$(version "$p")
    if [ -n "$new" ] && [ "$new" != "$old" ]; then
      health=$("$GYRO" client --addr "$GYRO_HOST:$p" --timeout-ms 2000 health 2>/dev/null || true)
      [ "$health" = SERVING ] && break
    fi
    sleep 0.1
  done
  if [ "$new" = "$old" ]; then
    echo "gyro-rolling-reload.sh: $GYRO_HOST:$p still serves $old after ${timeout}s: it refused the file (see its log); stopping" >&2
    exit 1
  elif [ "$health" != SERVING ]; then
    echo "gyro-rolling-reload.sh: $GYRO_HOST:$p serves ${new:-nothing} but is not SERVING after ${timeout}s ('$health'); stopping" >&2
    exit 1
  fi
  echo "$GYRO_HOST:$p: $old -> $new, SERVING"
done
