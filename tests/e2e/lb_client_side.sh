#!/usr/bin/env bash
# lb_client_side.sh — client-side load balancing with the gyro Python package (pipeline/python,
# Debian's python3-grpcio), no balancer in between: two `gyro serve` replicas on loopback, one
# gyro.Client whose target names both ("ipv4:127.0.0.1:P1,127.0.0.1:P2", as a DNS name with
# two addresses resolves).
#   - lb_policy="round_robin": the calls land on both replicas, in turn (each replica's Stats);
#     the default policy (pick_first) sends them all to one;
#   - health_check=True (grpc.health.v1 Watch from the channel): while one replica drains
#     after SIGTERM (NOT_SERVING, still answering), every call goes to the other; without
#     health checking the draining replica keeps getting calls;
#   - lb_policy together with a grpc.service_config option is refused (ValueError).
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
. tests/py/python_lib.bash
. tests/py/grpc_lib.bash
py_require
grpc_setup
T=$TMPDIR
py_package_env "$T/venv"
RP=()
trap 'for p in "${RP[@]}"; do kill -KILL "$p" 2>/dev/null; done; true' EXIT

"$PY" tests/py/make_examples.py "$GEN" toy "$T/toy.pb" "$T/toy.txt"
"$GYRO" classify train --dim 16 --layers 1 --heads 2 --epochs 15 --seed 1 --quiet -o "$T/a.model" "$T/toy.pb"
for i in 1 2; do
  "$GYRO" serve --model "$T/a.model" --addr 127.0.0.1:0 --port-file "$T/port$i" --drain-ms 3000 --grace-ms 1000 \
    2>"$T/r$i.log" &
  RP+=($!)
done
for i in 1 2; do
  for _ in $(seq 1 200); do [ -s "$T/port$i" ] && break; sleep 0.05; done
  [ -s "$T/port$i" ] || { echo "FAIL replica $i did not start"; cat "$T/r$i.log"; exit 1; }
done

"$PYV" - "$(cat "$T/port1")" "$(cat "$T/port2")" "${RP[1]}" <<'EOF'
import json, os, signal, sys, time
import gyro
from gyro.client import service_config

p1, p2, pid2 = sys.argv[1], sys.argv[2], int(sys.argv[3])
target = "ipv4:127.0.0.1:%s,127.0.0.1:%s" % (p1, p2)
direct = [gyro.Client("127.0.0.1:" + p) for p in (p1, p2)]

def classified():
    """Classify calls answered OK so far by each replica (its own Stats)."""
    return [sum(c.count for c in d.stats().status_counts if c.method.endswith("/Classify") and c.code == "OK")
            for d in direct]

def settled():
    """classified() once two reads 50 ms apart agree: a replica counts a call after it has sent
    the answer, so the client can see the answer before the count."""
    last = classified()
    while True:
        time.sleep(0.05)
        now = classified()
        if now == last:
            return now
        last = now

def spread(client, n):
    before = settled()
    for _ in range(n):
        client.classify("播放稻香")
    return [a - b for a, b in zip(settled(), before)]

def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)

def warm(client):
    """Call until both replicas have answered one of these calls (both subchannels READY)."""
    before = classified()
    for _ in range(500):
        client.classify("播放稻香")
        if all(a > b for a, b in zip(classified(), before)):
            return
        time.sleep(0.01)
    fail("the round_robin client never reached both replicas")

# pick_first (grpcio's default): every call to one replica
with gyro.Client(target) as c:
    c.classify("播放稻香")
    d = spread(c, 60)
    if sorted(d) != [0, 60]:
        fail("pick_first spread 60 calls as %s" % d)
    print("ok   default policy (pick_first): 60 calls -> %s" % d)

# round_robin: both replicas, in turn once both subchannels are ready
with gyro.Client(target, lb_policy="round_robin") as c:
    warm(c)
    d = spread(c, 60)
    if d != [30, 30]:
        fail("round_robin spread 60 calls as %s (expected 30 each)" % d)
    print("ok   lb_policy=\"round_robin\": 60 calls -> %s" % d)

if json.loads(service_config("round_robin", True)) != {"loadBalancingConfig": [{"round_robin": {}}],
                                                        "healthCheckConfig": {"serviceName": ""}}:
    fail("service_config: %s" % service_config("round_robin", True))
try:
    gyro.Client(target, lb_policy="round_robin", options=[("grpc.service_config", "{}")])
    fail("lb_policy with a grpc.service_config option was accepted")
except ValueError as e:
    print("ok   lb_policy with a grpc.service_config option: ValueError: %s" % e)

# health checking: replica 2 drains (NOT_SERVING for 3 s, still answering calls)
checked = gyro.Client(target, lb_policy="round_robin", health_check=True)
plain = gyro.Client(target, lb_policy="round_robin")
for c in (checked, plain):
    warm(c)
d = spread(checked, 40)
if d != [20, 20]:
    fail("round_robin with health checks, both SERVING: %s" % d)
os.kill(pid2, signal.SIGTERM)
for _ in range(100):
    if direct[1].health() == "NOT_SERVING":
        break
    time.sleep(0.02)
else:
    fail("replica 2 did not turn NOT_SERVING after SIGTERM")
time.sleep(0.5)  # the channel hears NOT_SERVING on its Watch of replica 2
t0 = time.time()
d_checked = spread(checked, 40)
d_plain = spread(plain, 40)
if time.time() - t0 > 2.5:
    fail("the drain window passed before the calls were made (%.1f s)" % (time.time() - t0))
if d_checked != [40, 0]:
    fail("health_check=True sent calls to the draining replica: %s" % d_checked)
if d_plain[1] == 0:
    fail("without health checking no call went to the draining replica (%s): the check above proves nothing" % d_plain)
print("ok   replica 2 draining (NOT_SERVING): health_check=True 40 calls -> %s; without it -> %s" % (d_checked, d_plain))
checked.close()
plain.close()
EOF
wait "${RP[1]}" || { echo "FAIL replica 2 exit status after SIGTERM"; exit 1; }
kill -TERM "${RP[0]}"; wait "${RP[0]}"
RP=()
echo "ok   both replicas exited 0"
