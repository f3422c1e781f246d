#!/usr/bin/env bash
# grpc_client_watch.sh — `gyro client watch`, `list` and `describe` against `gyro serve`:
#   list: the services server reflection names (gyro.v1.Gyro, grpc.health.v1.Health, both
#   reflection services); describe: every rpc of proto/gyro.proto and proto/health.proto, read
#   back from the FileDescriptorProto the server sends, with its streaming sides; an unknown
#   service NOT_FOUND (exit 65), a message name refused;
#   watch: --count 1 prints SERVING and exits 0, an unknown service SERVICE_UNKNOWN, a deadline
#   ends it DEADLINE_EXCEEDED; without --count it prints SERVING, then NOT_SERVING when the
#   drain before shutdown begins, then ends UNAVAILABLE (exit 1) when the server stops.
set -eu
: "${GYRO:?}" "${TMPDIR:?}"
. tests/py/grpc_lib.bash
[ -x "$GYRO" ] || { echo "no gyro binary at $GYRO"; exit 1; }
fail() { echo "FAIL $1"; shift; for f in "$@"; do echo "--- $f"; cat "$f"; done; exit 1; }
client() { "$GYRO" client --addr "$ADDR" "$@"; }

start_server reflect --drain-ms 1500 --grace-ms 5000

# ---- list --------------------------------------------------------------------------------------------
client list > "$TMPDIR/list.out"
printf '%s\n' gyro.v1.Gyro grpc.health.v1.Health grpc.reflection.v1alpha.ServerReflection \
  grpc.reflection.v1.ServerReflection | sort > "$TMPDIR/list.want"
sort "$TMPDIR/list.out" | cmp -s - "$TMPDIR/list.want" || fail "list" "$TMPDIR/list.out"
echo "ok   list: $(tr '\n' ' ' < "$TMPDIR/list.out")"

# ---- describe: the rpc lines of the .proto files, as the server describes them ------------------------
# "rpc Name(stream A) returns (stream B);" -> "Name(stream gyro.v1.A) returns (stream gyro.v1.B)"
want_methods() { # FILE PACKAGE
  sed -n 's/^ *rpc \([A-Za-z]*\)(\(stream \)\{0,1\}\([A-Za-z.]*\)) returns (\(stream \)\{0,1\}\([A-Za-z.]*\)).*/\1(\2'"$2"'.\3) returns (\4'"$2"'.\5)/p' "$1"
}
want_methods proto/gyro.proto gyro.v1 > "$TMPDIR/gyro.want"
[ "$(wc -l < "$TMPDIR/gyro.want")" -ge 9 ] || fail "could not read the rpc lines of proto/gyro.proto" "$TMPDIR/gyro.want"
client describe gyro.v1.Gyro > "$TMPDIR/gyro.out"
cmp -s "$TMPDIR/gyro.out" "$TMPDIR/gyro.want" || { diff "$TMPDIR/gyro.want" "$TMPDIR/gyro.out"; fail "describe gyro.v1.Gyro"; }
grep -q '^ClassifyStream(stream gyro.v1.ClassifyRequest) returns (stream gyro.v1.ClassifyResponse)$' "$TMPDIR/gyro.out" \
  || fail "the bidi method is not marked stream on both sides" "$TMPDIR/gyro.out"
echo "ok   describe gyro.v1.Gyro: the $(wc -l < "$TMPDIR/gyro.out") rpcs of proto/gyro.proto, streaming sides included"
want_methods proto/health.proto grpc.health.v1 > "$TMPDIR/health.want"
client describe grpc.health.v1.Health > "$TMPDIR/health.out"
cmp -s "$TMPDIR/health.out" "$TMPDIR/health.want" || { diff "$TMPDIR/health.want" "$TMPDIR/health.out"; fail "describe Health"; }
client describe .grpc.reflection.v1alpha.ServerReflection | grep -q '^ServerReflectionInfo(stream ' \
  || fail "describe the reflection service"
echo "ok   describe grpc.health.v1.Health (Check, Watch) and the reflection service"
rc=0; client describe gyro.v1.Nothing 2> "$TMPDIR/err" || rc=$?
[ $rc = 65 ] && grep -q 'NOT_FOUND' "$TMPDIR/err" || fail "describe an unknown service: exit $rc" "$TMPDIR/err"
rc=0; client describe gyro.v1.Example 2> "$TMPDIR/err" || rc=$?
[ $rc = 65 ] && grep -q 'not a service' "$TMPDIR/err" || fail "describe a message: exit $rc" "$TMPDIR/err"
rc=0; client describe 2> "$TMPDIR/err" || rc=$?
[ $rc = 2 ] || fail "describe without SERVICE: exit $rc" "$TMPDIR/err"
echo "ok   describe: an unknown service NOT_FOUND, a message refused (65), no operand a usage error (2)"

# ---- watch ---------------------------------------------------------------------------------------------
[ "$(client watch --count 1)" = SERVING ] || fail "watch --count 1"
[ "$(client watch gyro.v1.Gyro -n 1)" = SERVING ] || fail "watch gyro.v1.Gyro -n 1"
[ "$(client watch no.such.Service --count 1)" = SERVICE_UNKNOWN ] || fail "watch an unknown service"
rc=0; client watch --timeout-ms 400 > "$TMPDIR/dl.out" 2> "$TMPDIR/dl.err" || rc=$?
[ $rc = 1 ] && [ "$(cat "$TMPDIR/dl.out")" = SERVING ] && grep -q DEADLINE_EXCEEDED "$TMPDIR/dl.err" \
  || fail "watch --timeout-ms 400: exit $rc" "$TMPDIR/dl.out" "$TMPDIR/dl.err"
echo "ok   watch: --count 1 SERVING, an unknown service SERVICE_UNKNOWN, a deadline DEADLINE_EXCEEDED after SERVING"
client watch > "$TMPDIR/w.out" 2> "$TMPDIR/w.err" &
W=$!
for _ in $(seq 1 100); do [ -s "$TMPDIR/w.out" ] && break; sleep 0.05; done
[ "$(cat "$TMPDIR/w.out")" = SERVING ] || fail "watch did not print SERVING at once" "$TMPDIR/w.out" "$TMPDIR/w.err"
stop_server
rc=0; wait "$W" || rc=$?
printf 'SERVING\nNOT_SERVING\n' | cmp -s - "$TMPDIR/w.out" || fail "watch across the drain printed" "$TMPDIR/w.out"
[ $rc = 1 ] && grep -q 'UNAVAILABLE' "$TMPDIR/w.err" || fail "watch at shutdown: exit $rc" "$TMPDIR/w.err"
echo "ok   watch until the server stops: SERVING, NOT_SERVING at the drain, then UNAVAILABLE (exit 1)"
