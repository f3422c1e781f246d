#!/usr/bin/env bash
# tour.sh — the README's quick tour, command by command, timed: wall-clock seconds and CPU
# seconds (user + system, children included) of each step, for the README's "how long" column.
# The commands are the README's (build/ on PATH, the shared corpora beside the checkout); the
# Python package of step 3 is installed by the README's venv recipe into the work directory.
#   tests/bench/tour.sh [path/to/gyro]      (default: $GYRO, else build/gyro)
# Work files go to a temporary directory, removed at the end; the server is stopped with
# SIGTERM by its pid. One run: wall times depend on the machine's load, CPU times much less.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
gyro=${1:-${GYRO:-$root/build/gyro}}
gyro=$(cd "$(dirname "$gyro")" && pwd)/$(basename "$gyro")
shared=$root/../shared
PATH="$(dirname "$gyro"):$PATH"
work=$(mktemp -d)
spid=""
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
S=$shared   # the README's ../shared, absolute

# step NAME CMD: run CMD (a shell string), print NAME, wall and CPU seconds
step() {
  local name=$1 cmd=$2 t0 c0 c1 t1
  t0=$(date +%s.%N); c0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  bash -c "$cmd" > "$work/out.$RANDOM" 2>&1 || { echo "FAIL: $name: $cmd"; exit 1; }
  t1=$(date +%s.%N)
  # CPU of finished children: the shell's cutime + cstime (ticks)
  c1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  awk -v n="$name" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%-34s %8.1f s wall %8.1f s CPU\n", n, t1 - t0, (c1 - c0) / hz }'
}

echo "tour on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
step "1 normalize | char2vec train" "gyro normalize $S/corpora/text/fortunes-zh/tang300 | gyro char2vec train --threads 2 -o chars.hyp"
step "1 neighbors" "gyro neighbors -t chars.hyp -k 8 水 火 爱 听 歌"
step "1 convert --to poincare" "gyro convert --to poincare -o chars.poi chars.hyp"
step "2 import nlpcc" "gyro import --format nlpcc $S/corpora/intent/nlpcc2018/corpus.train.txt -o nlpcc.pb"
step "2 split (test, then dev)" "gyro split --seed 1 --dev 0.1 --train-out rest.pb --dev-out test.pb nlpcc.pb && gyro split --seed 2 --dev 0.1 --train-out train.pb --dev-out dev.pb rest.pb"
step "2 classify train" "gyro classify train --embeddings chars.poi --dev dev.pb -o intents.clf train.pb"
step "2 classify eval" "gyro classify eval -m intents.clf test.pb"
step "2 normalize | classify predict" "echo '播放周杰伦的稻香' | gyro normalize | gyro classify predict -m intents.clf"
# step 3: a server on a free port (the README uses the default address)
gyro serve --model intents.clf --embeddings chars.poi --addr 127.0.0.1:0 --port-file port > serve.log 2>&1 &
spid=$!
t0=$(date +%s.%N)
for _ in $(seq 600); do [ -s port ] && break; sleep 0.1; done
[ -s port ] || { echo "FAIL: the server did not start"; cat serve.log; exit 1; }
awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%-34s %8.1f s wall (until it listens)\n", "3 serve", t1 - t0 }'
addr=127.0.0.1:$(cat port)
step "3 client classify" "gyro client --addr $addr classify '播放周杰伦的稻香'"
step "3 Python: venv + pip install" "/usr/bin/python3 -m venv --system-site-packages env && env/bin/pip install -q --no-build-isolation $root/pipeline/python"
step "3 Python Client().classify" "env/bin/python -c 'import gyro; print(gyro.Client(\"$addr\").classify(\"播放周杰伦的稻香\").intents[0].label)'"
t0=$(date +%s.%N)
kill -TERM "$spid"; wait "$spid" || true; spid=""
awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "%-34s %8.1f s wall\n", "3 stop the server (SIGTERM)", t1 - t0 }'
step "4 import crosswoz" "gyro import --format crosswoz $S/corpora/intent/crosswoz/val.json.zip -o cw.pb"
step "4 split" "gyro split --seed 1 --dev 0.2 --train-out cwtrain.pb --dev-out cwdev.pb cw.pb"
step "4 rl finetune --env composite" "gyro rl finetune --env composite --train cwtrain.pb --dev cwdev.pb --out composite.pol"
step "4 rl eval" "gyro rl eval --env composite --model composite.pol cwdev.pb"
step "4 reason" "gyro reason --env composite --model composite.pol '我想找一家评分4.5以上的酒店，顺便问下附近的景点'"
