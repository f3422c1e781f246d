#!/usr/bin/env bash
# char2vec_bad_input.sh — every bad input gets a clear message and exit status, no crash and no
# half-written file: empty corpus, corpus shorter than the window, nothing above --min-count,
# missing input, bad options, truncated or foreign checkpoint and table files.
set -uo pipefail
: "${GYRO:?}" "${SHARED:?}"
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
# expect STATUS PATTERN CMD...: run, check the exit status and that stderr matches
expect() {
  local want=$1 pat=$2; shift 2
  "$@" > out 2> err
  local rc=$?
  [ $rc = "$want" ] || { cat err; fail "'$*' exited $rc, expected $want"; }
  grep -q -- "$pat" err || { cat err; fail "'$*': no message matching '$pat'"; }
  [ $rc -lt 128 ] || fail "crash"
}

: > empty.txt
expect 65 "empty" "$GYRO" char2vec train -o o.hyp empty.txt
printf '山水\n' > short.txt
expect 65 "shorter than the window" "$GYRO" char2vec train --min-count 1 -o o.hyp short.txt
printf '一二三四五六七八九十\n' > rare.txt
expect 65 "nothing above --min-count" "$GYRO" char2vec train -o o.hyp rare.txt
expect 1 "cannot open" "$GYRO" char2vec train -o o.hyp /nonexistent/corpus.txt
expect 2 "missing -o" "$GYRO" char2vec train rare.txt
expect 2 "--dim" "$GYRO" char2vec train --dim 0 -o o.hyp rare.txt
expect 2 "--geometry" "$GYRO" char2vec train --geometry spherical -o o.hyp rare.txt
expect 2 "unknown" "$GYRO" char2vec train --bogus -o o.hyp rare.txt
expect 2 "unknown subcommand" "$GYRO" char2vec fly
[ ! -e o.hyp ] || fail "output written for bad input"
ls | grep -qE '\.tmp\.|scratch' && fail "temporary files left behind"

# a diverging run stops on the first non-finite value with a clear message and no output
for i in $(seq 1 200); do echo 山水花鸟风月江河湖海; done > tiny.txt
expect 1 "NaN" "$GYRO" char2vec train -q --lr 100 --max-step 0 --min-count 1 --dim 4 -o nan.hyp tiny.txt
expect 1 "NaN" "$GYRO" char2vec train -q --geometry euclidean --lr 100 --epochs 50 --min-count 1 --dim 4 -o nan.hyp tiny.txt
[ ! -e nan.hyp ] || fail "output written after NaN"

# a stream of the wrong type as a corpus
"$GYRO" char2vec train -q --dim 4 --epochs 1 --min-count 1 --window 2 -o good.hyp \
  <(for i in $(seq 1 50); do echo 山水花鸟风月; done) || fail "small training"
expect 65 "not.*Document\|gyro.v1.EmbeddingTable" "$GYRO" char2vec train -o o.hyp good.hyp

# --resume without, with a truncated and with a foreign checkpoint
expect 1 "cannot open" "$GYRO" char2vec train --resume -o none.hyp
"$GYRO" char2vec train -q --keep-checkpoint --dim 4 --epochs 1 --min-count 1 --window 2 -o m.hyp \
  <(for i in $(seq 1 50); do echo 山水花鸟风月; done) || fail "keep-checkpoint training"
[ -e m.hyp.ckpt ] || fail "checkpoint not kept"
cp m.hyp.ckpt m.ckpt.orig
head -c 100 m.ckpt.orig > m.hyp.ckpt
expect 65 "corrupt\|truncated" "$GYRO" char2vec train --resume -o m.hyp
cp good.hyp m.hyp.ckpt
expect 65 "not a gyro char2vec checkpoint" "$GYRO" char2vec train --resume -o m.hyp
# a checkpoint whose encoded corpus was truncated
cp m.ckpt.orig m.hyp.ckpt
truncate -s 70 m.hyp.ckpt.ids
expect 65 "truncated" "$GYRO" char2vec train --resume -o m.hyp

# convert / neighbors / similarity on foreign and truncated tables
printf 'not a table\n' > foreign.hyp
expect 65 "not a gyro" "$GYRO" convert --to poincare -o p.poi foreign.hyp
head -c 40 good.hyp > trunc.hyp
expect 65 "truncated" "$GYRO" convert --to poincare -o p.poi trunc.hyp
expect 65 "" "$GYRO" neighbors -t trunc.hyp 山
expect 2 "--to" "$GYRO" convert --to klein -o p.poi good.hyp
[ ! -e p.poi ] || fail "half-written conversion"
printf '山 水\n' > badsim.txt
expect 65 "badsim.txt:1" "$GYRO" similarity -t good.hyp badsim.txt
echo ok
