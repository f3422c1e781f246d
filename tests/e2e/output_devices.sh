#!/usr/bin/env bash
# output_devices.sh — every output option of every command, pointed at a character device and at
# a FIFO, writes through the node and leaves it a device or a FIFO (an atomic write must never
# rename a regular file over /dev/null). The device is a private copy of /dev/null made with
# mknod in the scratch directory; the real /dev/null is never a target. Also: a regular file
# reached through a symbolic link is replaced and the link stays a link, and a normalize or
# import killed by SIGINT/SIGTERM leaves no OUT.tmp.PID.N file behind (SIGINT ignored on entry stays ignored).
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mknod null c 1 3 2> /dev/null || { echo "skipped: mknod needs CAP_MKNOD"; exit 77; }
rm -f null

# ---- inputs: a corpus, an Example stream, a table, a model -------------------------------------
for i in $(seq 1 40); do echo "今天天气很好我们去公园散步吧$i"; echo "播放周杰伦的歌曲$i"; done > corpus.txt
printf '播放周杰伦的歌\tmusic.play\n放首歌\tmusic.play\n今天天气\tweather.query\n明天下雨吗\tweather.query\n' > d.tsv
"$GYRO" import -f tsv -q -o d.pb d.tsv || bad "import (setup) failed"
"$GYRO" char2vec train -q --dim 4 --epochs 1 --min-count 1 --window 2 -o t.hyp corpus.txt || bad "char2vec (setup) failed"
"$GYRO" convert -q --to poincare -o t.poi t.hyp || bad "convert (setup) failed"
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet -o m.clf d.pb || bad "classify train (setup) failed"
small=(--iterations 1 --states 4 --group 4 --epochs 1 --eval 4 --eval-every 1 -q)

# run_to KIND NAME command... with the literal word OUT standing for the node's path
run_to() {
  local kind=$1 name=$2; shift 2
  local node="$TMPDIR/node.$name" args=() a
  rm -f "$node"
  if [ "$kind" = char ]; then mknod "$node" c 1 3; else mkfifo "$node"; fi
  for a in "$@"; do args+=("${a//OUT/$node}"); done
  local reader=
  if [ "$kind" = fifo ]; then cat "$node" > "$TMPDIR/fifo.$name.got" & reader=$!; fi
  timeout 60 "${args[@]}" < /dev/null > /dev/null 2> "$TMPDIR/err.$name"; local rc=$?
  if [ -n "$reader" ]; then
    # a command that never opened the FIFO (failed, or replaced it) leaves the reader waiting
    for _ in $(seq 1 20); do kill -0 "$reader" 2> /dev/null || break; sleep 0.1; done
    kill "$reader" 2> /dev/null
    wait "$reader" 2> /dev/null
  fi
  [ "$rc" = 0 ] || bad "$kind $name: exit $rc: $(head -c 300 "$TMPDIR/err.$name")"
  local want; [ "$kind" = char ] && want="character special file" || want="fifo"
  local got; got=$(stat -c %F "$node" 2> /dev/null)
  [ "$got" = "$want" ] || bad "$kind $name: the output node became '$got' (want $want)"
  ls "$TMPDIR" | grep -q "^node\.$name\.tmp\." && bad "$kind $name: temporary file left: $(ls "$TMPDIR" | grep tmp)"
  if [ "$kind" = fifo ] && [ "$rc" = 0 ] && [ ! -s "$TMPDIR/fifo.$name.got" ]; then
    bad "fifo $name: nothing came through the FIFO"
  fi
  rm -f "$node" "$node".* "$TMPDIR/fifo.$name.got"
}

for kind in char fifo; do
  run_to $kind normalize      sh -c 'echo 你好 | "$0" normalize -q -o "$1"' "$GYRO" OUT
  run_to $kind normalize-text sh -c 'echo 你好 | "$0" normalize -q --text -o "$1"' "$GYRO" OUT
  run_to $kind import         "$GYRO" import -f tsv -q -o OUT d.tsv
  run_to $kind char2vec       "$GYRO" char2vec train -q --dim 4 --epochs 1 --min-count 1 --window 2 -o OUT corpus.txt
  run_to $kind char2vec-ckpt  "$GYRO" char2vec train -q --dim 4 --epochs 1 --min-count 1 --window 2 --checkpoint OUT -o c.hyp corpus.txt
  run_to $kind convert        "$GYRO" convert -q --to poincare -o OUT t.hyp
  run_to $kind generate       "$GYRO" generate music -n 20 -o OUT
  run_to $kind plot           "$GYRO" plot -t t.hyp -o OUT
  run_to $kind split-train    "$GYRO" split --dev 0.5 --train-out OUT --dev-out dev.pb d.pb
  run_to $kind split-dev      "$GYRO" split --dev 0.5 --train-out train.pb --dev-out OUT d.pb
  run_to $kind classify       "$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet -o OUT d.pb
  run_to $kind classify-ckpt  "$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet --checkpoint OUT -o m2.clf d.pb
  run_to $kind predict        sh -c 'echo 播放 | "$0" classify predict -m m.clf --stream -o "$1" -' "$GYRO" OUT
  run_to $kind rl             "$GYRO" rl finetune --env root "${small[@]}" --seed 3 --out OUT
  run_to $kind rl-transition  "$GYRO" rl transition --env vdp --episodes 4 --test-episodes 2 --epochs 1 -q --out OUT
  run_to $kind serve          sh -c '"$0" serve --model m.clf --addr 127.0.0.1:0 --port-file "$1" 2> serve.err & p=$!
    for i in $(seq 1 100); do grep -q listening serve.err && break; sleep 0.1; done
    sleep 0.5; kill -TERM $p; wait $p' "$GYRO" OUT
done

# ---- a symbolic link to a regular file: the target is replaced, the link kept -------------------
echo old > target.txt
ln -s target.txt link.txt
echo 新 | "$GYRO" normalize -q --text -o link.txt || bad "normalize through a link failed"
[ -L link.txt ] || bad "link.txt is no longer a symbolic link"
[ "$(cat target.txt)" = 新 ] || bad "the link's target was not written: $(cat target.txt)"

# ---- a killed writer leaves no temporary file ---------------------------------------------------
set -m   # job control: background commands get SIGINT's default action, not SIG_IGN
# ...unless this test itself started with SIGINT ignored (a suite launched by nohup or as a
# background job of a script): bash cannot undo that, and the writers rightly keep an ignored
# signal ignored (gyro_atomic_cleanup_on_signals). Then the INT round checks that SIGINT is
# still ignored and ends the writer with SIGTERM.
int_ignored=0
sigign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
[ -n "$sigign" ] && (( 0x$sigign & 2 )) && int_ignored=1
for sig in INT TERM; do
  for cmd in normalize import; do
    mkfifo in.fifo
    if [ $cmd = normalize ]; then "$GYRO" normalize -q -o k.out in.fifo 2> /dev/null &
    else "$GYRO" import -f tsv -q -o k.out in.fifo 2> /dev/null & fi
    pid=$!
    exec 7> in.fifo                              # the reader is now open: the writer is running
    printf '播放\tmusic.play\n' >&7
    for _ in $(seq 1 300); do ls | grep -q '^k\.out\.tmp\.' && break; sleep 0.1; done
    ls | grep -q '^k\.out\.tmp\.' || bad "$cmd: no temporary file while writing (test broken)"
    if [ $sig = INT ] && [ $int_ignored = 1 ]; then
      kill -INT $pid; sleep 0.5
      kill -0 $pid 2> /dev/null || bad "$cmd: SIGINT, ignored on entry, was not kept ignored"
      kill -TERM $pid
    else
      kill -$sig $pid
    fi
    for _ in $(seq 1 300); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
    kill -0 $pid 2> /dev/null && { bad "$cmd ignored SIG$sig"; kill -9 $pid; }
    wait $pid; rc=$?
    exec 7>&-
    [ $rc -gt 128 ] || bad "$cmd after SIG$sig: exit $rc (want death by the signal)"
    ls | grep -q '^k\.out\.tmp\.' && bad "$cmd after SIG$sig: temporary file left: $(ls | grep tmp)"
    rm -f in.fifo k.out*
  done
done

exit $fail
