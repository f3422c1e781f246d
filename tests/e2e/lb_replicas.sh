#!/usr/bin/env bash
# lb_replicas.sh — three `gyro serve` replicas behind HAProxy on loopback, configured by
# doc/deploy/haproxy-gyro.cfg itself (only its ports and socket path replaced; run as the
# current user from $TMPDIR, no system service), the replicas started by the ExecStart line of
# doc/deploy/gyro-serve@.service. Under load from h2load and from a gRPC client
# (Debian's python3-grpcio) that records the status of every call:
#   - one replica is killed (SIGKILL) and restarted on its port: the calls it had in flight and
#     those sent to it before its health check failed are retried on the others by HAProxy;
#   - the model file is replaced and reloaded on every replica, one at a time (SIGHUP), each
#     reporting the new model and SERVING before the next, by doc/deploy/gyro-rolling-reload.sh
#     (first with a truncated file: refused by the first replica, the rollout stops there);
#   - one replica is restarted the graceful way (SIGTERM with --drain-ms: NOT_SERVING first, so
#     the health check takes it out before it stops listening).
# Zero calls may fail: every call made under load ends normally in HAProxy's log (retried or
# not), h2load sees no failed or non-2xx response, the gRPC client sees only OK, every replica's
# counters show only OK. The one exception is counted, not hidden: a call the SIGKILL breaks
# after the replica began to answer it cannot be replayed by any balancer (HAProxy logs it SD--
# and resets the client's stream); the clients' failures must be exactly those calls, at most 3
# (usually none). Then
# every replica is stopped: a call through the balancer ends at once with UNAVAILABLE (retries
# exhausted, then "no healthy gyro replica" once the checks have marked them down), never a hang.
# Skipped when haproxy or h2load is not installed.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
command -v haproxy >/dev/null || { echo "haproxy not installed (make deps)"; exit 77; }
command -v h2load >/dev/null || { echo "h2load not installed (make deps: nghttp2-client)"; exit 77; }
. tests/py/grpc_lib.bash
grpc_setup
T=$TMPDIR
declare -A RPID=()
HPID=""
LOADPIDS=()
cleanup() {
  for p in "${LOADPIDS[@]}" "$HPID" "${RPID[@]}"; do [ -n "$p" ] && kill -KILL "$p" 2>/dev/null; done
  true
}
trap cleanup EXIT
fail() {
  echo "FAIL $*"
  for f in "$T"/r*.log "$T/haproxy.log"; do [ -e "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done
  # HAProxy's log lines of calls that did not end normally (termination state other than ----)
  [ -e "$T/haproxy.log" ] && { echo "--- calls HAProxy logged with a termination state"; grep 'HTTP/2.0"$' "$T/haproxy.log" | grep -v ' ---- ' | tail -n 20; }
  exit 1
}

"$PY" tests/py/make_examples.py "$GEN" toy "$T/toy.pb" "$T/toy.txt"
train() { "$GYRO" classify train --dim 16 --layers 1 --heads 2 --epochs 15 --seed "$1" --quiet -o "$2" "$T/toy.pb"; }
train 1 "$T/a.model"
train 2 "$T/b.model"
cp "$T/a.model" "$T/serve.model"

# four free loopback ports: three replicas and the balancer
read -r P1 P2 P3 PLB < <("$PY" -c '
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
declare -A PORT=([1]=$P1 [2]=$P2 [3]=$P3)
LB=127.0.0.1:$PLB

# start_replica I: gyro serve on its port, the shared model file
# start_replica I: the ExecStart line of doc/deploy/gyro-serve@.service, with this build's gyro,
# the instance (%i) replica I's port, GYRO_MODEL the shared model file and GYRO_SERVE_OPTS a port
# file and small thread counts
unit=doc/deploy/gyro-serve@.service
execstart=$(sed -n 's/^ExecStart=//p' "$unit")
[[ "$execstart" == '/usr/local/bin/gyro serve --addr 127.0.0.1:%i --model ${GYRO_MODEL} '*' $GYRO_SERVE_OPTS' ]] \
  || fail "$unit: unexpected ExecStart '$execstart' (update this test)"
start_replica() {
  local i=$1 pf="$T/port$1" line args
  rm -f "$pf"
  line=${execstart//\/usr\/local\/bin\/gyro/$GYRO}
  line=${line//%i/${PORT[$i]}}
  line=${line//'${GYRO_MODEL}'/$T/serve.model}
  line=${line//'$GYRO_SERVE_OPTS'/--port-file $pf --threads 2 --pool 1}
  read -ra args <<<"$line"
  "${args[@]}" 2>>"$T/r$i.log" &
  RPID[$i]=$!
  echo "${RPID[$i]}" > "$T/pid.${PORT[$i]}"
  for _ in $(seq 1 200); do [ -s "$pf" ] && return 0; kill -0 "${RPID[$i]}" 2>/dev/null || break; sleep 0.05; done
  fail "replica $i did not start on port ${PORT[$i]}"
}
for i in 1 2 3; do start_replica "$i"; done

# the recipe's configuration with this run's ports and socket, and one log line per call (level
# info); each replacement must apply
cfg=doc/deploy/haproxy-gyro.cfg
for pat in '127.0.0.1:50061$' '127.0.0.1:50062$' '127.0.0.1:50063$' 'bind 0.0.0.0:50051 ' 'socket /run/gyro-lb/admin.sock' \
  'log stderr format short local0 notice$'; do
  grep -q "$pat" "$cfg" || fail "$cfg no longer has '$pat' (update this test)"
done
sed -e "s|127.0.0.1:50061\$|127.0.0.1:$P1|" -e "s|127.0.0.1:50062\$|127.0.0.1:$P2|" -e "s|127.0.0.1:50063\$|127.0.0.1:$P3|" \
  -e "s|bind 0.0.0.0:50051 |bind $LB |" -e "s|/run/gyro-lb/admin.sock|$T/admin.sock|" -e 's|local0 notice$|local0 info|' "$cfg" > "$T/haproxy.cfg"
# the check's bytes are the ones the generator script documents
hex=$("$PY" doc/deploy/grpc-health-check-hex.py)
grep -q "tcp-check send-binary $hex " "$cfg" || fail "$cfg: the tcp-check bytes differ from doc/deploy/grpc-health-check-hex.py"
haproxy -c -q -f "$T/haproxy.cfg" || fail "haproxy -c rejects the configuration"
haproxy -db -f "$T/haproxy.cfg" > "$T/haproxy.log" 2>&1 &
HPID=$!

# lb CMD: a command on HAProxy's admin socket
lb() { "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode() + b"\n")
out = b""
while True:
    d = s.recv(65536)
    if not d: break
    out += d
sys.stdout.write(out.decode())' "$T/admin.sock" "$1"; }
# state I: HAProxy's status of replica I (UP, DOWN, "UP 1/2", ...)
state() { lb "show stat" | awk -F, -v s="r$1" '$1 == "gyro" && $2 == s {print $18}'; }
wait_state() { # wait_state I STATE SECONDS
  local k
  for k in $(seq 1 $(( $3 * 20 ))); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.05; done
  fail "replica $1 is '$(state "$1")' in HAProxy after $3 s, expected $2"
}
for _ in $(seq 1 100); do [ -S "$T/admin.sock" ] && break; sleep 0.05; done
for i in 1 2 3; do wait_state "$i" UP 10; done
echo "ok   HAProxy sees 3 replicas UP through the grpc.health.v1 check"

# a client stream passes through too (the frontend does not wait for its body)
out=$(printf '播放稻香\n导航到西湖\n' | "$GYRO" client --addr "$LB" classify --stream -k 1 | cut -f1 | tr '\n' ' ')
[ "$(wc -w <<<"$out")" = 2 ] || fail "ClassifyStream through the balancer: '$out'"
echo "ok   ClassifyStream through the balancer: $out"

version() { "$GYRO" client --addr "127.0.0.1:${PORT[$1]}" stats | awk -F'\t' '$1 == "model_version" {print $2}'; }
vA=$(version 1)

# ---- load --------------------------------------------------------------------------------------
"$PY" - "$T" <<'EOF'
import struct, sys
b = b"\x0a" + bytes([len("播放稻香".encode())]) + "播放稻香".encode()   # ClassifyRequest.text
open(sys.argv[1] + "/classify.bin", "wb").write(b"\0" + struct.pack(">I", len(b)) + b)
EOF
# h2load in batches of whole runs (-n: no call is cut off at the end) until $T/stop exists
( k=0; while [ ! -e "$T/stop" ]; do
    k=$((k + 1))
    h2load -n 600 -c 2 -m 4 -d "$T/classify.bin" -H 'content-type: application/grpc' -H 'te: trailers' \
      "http://$LB/gyro.v1.Gyro/Classify" > "$T/h2.$k.out" 2>&1 || echo "h2load exit $?" >> "$T/h2.$k.out"
  done ) &
LOADPIDS+=($!)
# the gRPC client: 4 threads calling Classify until $T/stop exists; prints "status count" lines
"$PY" - "$GEN" "$LB" "$T/stop" > "$T/client.out" 2>&1 <<'EOF' &
import collections, os, sys, threading
sys.path.insert(0, sys.argv[1])
import grpc, gyro_pb2, gyro_pb2_grpc
stub = gyro_pb2_grpc.GyroStub(grpc.insecure_channel(sys.argv[2]))
counts = collections.Counter()
lock = threading.Lock()
def run():
    while not os.path.exists(sys.argv[3]):
        try:
            stub.Classify(gyro_pb2.ClassifyRequest(text="我想听青花瓷"), timeout=10)
            code = "OK"
        except grpc.RpcError as e:
            code = "%s %s" % (e.code().name, e.details())
        with lock:
            counts[code] += 1
ts = [threading.Thread(target=run) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
for code, n in sorted(counts.items()):
    print("%s\t%d" % (code, n))
EOF
LOADPIDS+=($!)
sleep 1.5

# counters I: "ok bad" calls of replica I's process so far (Stats itself included)
counters() { "$GYRO" client --addr "127.0.0.1:${PORT[$1]}" stats |
  awk -F'\t' '$1 == "count" {if ($3 == "OK") ok += $4; else bad += $4} END {print ok + 0, bad + 0}'; }

# 1. SIGKILL replica 2 under load; restart it on its port 1 s later
read -r ok bad < <(counters 2)
[ "$bad" = 0 ] || fail "replica 2 answered $bad calls with an error before the kill"
kill -KILL "${RPID[2]}"; wait "${RPID[2]}" 2>/dev/null || true
t0=$(date +%s.%N)
wait_state 2 DOWN 5
down=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
sleep 0.5
start_replica 2
wait_state 2 UP 10
echo "ok   replica 2 killed with $ok calls answered: DOWN in HAProxy after ${down}s, restarted and UP again"
sleep 1

# 2. rolling reload by the recipe's script (SIGHUP here instead of systemctl reload). First a
# truncated model file: replica 1 refuses it and keeps its model, the rollout stops there.
roll() { GYRO="$GYRO" GYRO_RELOAD="kill -HUP \$(cat $T/pid.%p)" bash doc/deploy/gyro-rolling-reload.sh "$@" "$P1" "$P2" "$P3"; }
head -c 2000 "$T/b.model" > "$T/new.model" && mv "$T/new.model" "$T/serve.model"
rc=0; roll -t 2 > "$T/roll.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "127.0.0.1:$P1 still serves $vA after 2s: it refused the file" "$T/roll.out" \
  || fail "rolling reload of a truncated file: exit $rc, $(cat "$T/roll.out")"
grep -q 'reload refused' "$T/r1.log" || fail "replica 1 did not log the refused reload"
for i in 1 2 3; do [ "$(version "$i")" = "$vA" ] || fail "replica $i left $vA after the refused rollout"; done
echo "ok   rolling reload of a truncated file: refused by replica 1, stopped there, all on $vA"
cp "$T/b.model" "$T/new.model" && mv "$T/new.model" "$T/serve.model"
roll -t 10 > "$T/roll.out" 2>&1 || fail "rolling reload: $(cat "$T/roll.out")"
[ "$(grep -c ' -> .*, SERVING$' "$T/roll.out")" = 3 ] || fail "rolling reload: $(cat "$T/roll.out")"
vB=$(version 1)
for i in 1 2 3; do
  [ "$(version "$i")" = "$vB" ] && [ "$vB" != "$vA" ] || fail "replica $i serves $(version "$i") after the rollout"
  [ "$(state "$i")" = UP ] || fail "replica $i is $(state "$i") in HAProxy after the reload"
done
echo "ok   rolling SIGHUP: each replica reloaded ($vA -> $vB) and SERVING before the next"

# 3. graceful restart of replica 3: SIGTERM drains 2 s with NOT_SERVING, HAProxy takes it out
t0=$(date +%s.%N)
kill -TERM "${RPID[3]}"
wait_state 3 DOWN 6
down=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
# taken out within the unit's --drain-ms, while the replica still listened: the check saw
# NOT_SERVING, not a refused connection
drain_ms=$(grep -o -- '--drain-ms [0-9]*' <<<"$execstart" | cut -d' ' -f2)
awk -v d="$down" -v m="$drain_ms" 'BEGIN {exit !(d * 1000 < m)}' \
  || fail "replica 3 marked DOWN ${down}s after SIGTERM, not within its drain of $drain_ms ms"
rc=0; wait "${RPID[3]}" || rc=$?
[ "$rc" = 0 ] || fail "replica 3 exited $rc after SIGTERM"
start_replica 3
wait_state 3 UP 10
echo "ok   replica 3 drained: NOT_SERVING, DOWN in HAProxy after ${down}s (drain $drain_ms ms); exited 0, restarted, UP"
sleep 1

# ---- end of the load: count ---------------------------------------------------------------------
touch "$T/stop"
for p in "${LOADPIDS[@]}"; do wait "$p" || fail "load generator exited non-zero"; done
LOADPIDS=()
sleep 0.3 # HAProxy's last log lines
# HAProxy's log of the calls made under load: the termination state (10th field) of every call
# is "----" (retried or not), except for the calls the SIGKILL broke after replica 2 had begun to
# answer them ("SD": the server connection closed during the response): a response already on
# its way to the client cannot be replayed by HAProxy (nor by any HTTP balancer), so the client
# sees its stream reset. Those, and only those, may fail on the client side.
grep 'HTTP/2.0"$' "$T/haproxy.log" > "$T/calls.log" || true
broken=$(awk '$4 == "gyro/r2" && $10 ~ /^SD/' "$T/calls.log" | wc -l)
other=$(awk '$10 != "----" && !($4 == "gyro/r2" && $10 ~ /^SD/)' "$T/calls.log" | wc -l)
[ "$other" = 0 ] || fail "HAProxy logged $other calls that did not end normally: $(awk '$10 != "----"' "$T/calls.log" | head -n 5)"
[ "$broken" -le 3 ] || fail "$broken calls broken mid-answer by one SIGKILL"
n=0 h2fail=0
for f in "$T"/h2.*.out; do
  grep -q "^requests: .* 0 timeout" "$f" || fail "h2load: $(grep -h '^requests:\|exit' "$f")"
  h2fail=$((h2fail + $(awk '/^requests:/ {print $10}' "$f")))
  r=$(awk '/^status codes:/ {gsub(/,/, ""); if ($5 != 0 || $7 != 0 || $9 != 0) print "non-2xx"; else print $3}' "$f")
  [[ "$r" =~ ^[0-9]+$ ]] || fail "h2load saw non-2xx responses: $(grep -h '^status codes:' "$f")"
  n=$((n + r))
done
cat "$T/client.out"
pyok=$(awk -F'\t' '$1 == "OK" {s += $2} END {print s + 0}' "$T/client.out")
pyfail=$(awk -F'\t' '$1 != "OK" {s += $2} END {print s + 0}' "$T/client.out")
[ "$pyok" -gt 0 ] || fail "the gRPC client made no call"
[ $((h2fail + pyfail)) = "$broken" ] \
  || fail "the clients saw $h2fail (h2load) + $pyfail (gRPC client) failed calls; HAProxy logged $broken broken mid-answer by the kill"
echo "ok   h2load: $n calls through the balancer, all HTTP 200, $h2fail failed ($(ls "$T"/h2.*.out | wc -l) runs)"
echo "ok   gRPC client: $pyok calls OK, $pyfail failed"
if [ "$broken" = 0 ]; then echo "ok   no call failed"
else echo "ok   $broken calls failed, each broken by the SIGKILL after replica 2 had begun to answer it (HAProxy's log); every other call OK"; fi
# HAProxy's own answers (no replica chosen)
nosrv=$(grep -c '<NOSRV>' "$T/calls.log" || true)
[ "$nosrv" = 0 ] || fail "HAProxy answered $nosrv calls itself: $(grep -m3 '<NOSRV>' "$T/calls.log")"
total=0
for i in 1 2 3; do
  read -r ok bad < <(counters "$i")
  [ "$bad" = 0 ] || fail "replica $i answered $bad calls with an error status"
  [ "$ok" -gt 1 ] || fail "replica $i answered no calls since its (re)start"
  total=$((total + ok))
  echo "     replica $i ($(state "$i")): $ok calls OK since it (re)started"
done
read -r retr redis < <(lb "show stat" | awk -F, '$1 == "gyro" && $2 == "BACKEND" {print $16, $17}')
echo "ok   every replica's counters show only OK; HAProxy: $retr connections retried, $redis calls redispatched to another replica"

# ---- no healthy replica: UNAVAILABLE at once --------------------------------------------------
for i in 1 2 3; do kill -KILL "${RPID[$i]}"; wait "${RPID[$i]}" 2>/dev/null || true; RPID[$i]=""; done
# before the checks notice: connections refused, retries exhausted, HAProxy's 503 as UNAVAILABLE
t0=$(date +%s.%N)
rc=0; out=$("$GYRO" client --addr "$LB" --timeout-ms 20000 classify 播放稻香 2>&1) || rc=$?
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
[ "$rc" = 1 ] && [ "$out" = "gyro client: UNAVAILABLE: no gyro replica answered" ] || fail "with every replica just killed: exit $rc, '$out'"
awk -v e="$el" 'BEGIN {exit !(e < 5)}' || fail "the call took ${el}s"
echo "ok   replicas just killed: '$out' after ${el}s"
for i in 1 2 3; do wait_state "$i" DOWN 5; done
t0=$(date +%s.%N)
rc=0; out=$("$GYRO" client --addr "$LB" --timeout-ms 20000 classify 播放稻香 2>&1) || rc=$?
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
[ "$rc" = 1 ] && [ "$out" = "gyro client: UNAVAILABLE: no healthy gyro replica" ] || fail "with every replica DOWN: exit $rc, '$out'"
awk -v e="$el" 'BEGIN {exit !(e < 2)}' || fail "the call took ${el}s"
echo "ok   every replica DOWN: '$out' after ${el}s"
kill -TERM "$HPID"; wait "$HPID" 2>/dev/null || true; HPID=""
for i in 1 2 3; do check_log "$T/r$i.log"; done
