#!/usr/bin/env bash
# classify_errors.sh — bad usage and bad input of `gyro classify`: exit 2 for usage errors, 65
# for corrupt, truncated, newer or foreign model files and for a stream of the wrong type,
# 1 for a missing file; a clear message every time, never a crash.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
fail=0
expect() { # expect CODE PATTERN -- command...
  local code=$1 pat=$2; shift 3
  "$@" > out.txt 2> err.txt; local rc=$?
  if [ "$rc" != "$code" ] || ! grep -q -- "$pat" err.txt; then
    echo "FAIL: $* -> exit $rc (want $code), stderr: $(cat err.txt)"; fail=1
  fi
}
printf '播放晴天\tmusic.play\n暂停\tmusic.pause\n播放夜曲\tmusic.play\n停\tmusic.pause\n' > d.tsv
"$GYRO" import -f tsv -q -o d.pb d.tsv || exit 1
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet -o m.clf d.pb || exit 1

expect 2 "missing subcommand" -- "$GYRO" classify
expect 2 "unknown subcommand" -- "$GYRO" classify frobnicate
expect 2 "unknown option" -- "$GYRO" classify train --bogus -o x d.pb
expect 2 "needs -o" -- "$GYRO" classify train d.pb
expect 2 "geometry" -- "$GYRO" classify train --geometry flat -o x d.pb
expect 2 "dropout" -- "$GYRO" classify train --dropout 1.5 -o x d.pb
expect 2 "needs -m" -- "$GYRO" classify predict
expect 1 "cannot open" -- "$GYRO" classify predict -m nonexistent.clf
expect 1 "cannot open" -- "$GYRO" classify train -o x.clf missing.pb

head -c 100 m.clf > trunc.clf
expect 65 "truncated" -- "$GYRO" classify predict -m trunc.clf
printf 'hello world, not a model' > foreign.clf
expect 65 "not a gyro classifier" -- "$GYRO" classify eval -m foreign.clf d.pb
cp m.clf newer.clf; printf '\x09' | dd of=newer.clf bs=1 seek=8 conv=notrunc 2>/dev/null
expect 65 "newer" -- "$GYRO" classify predict -m newer.clf
cp m.clf flip.clf; printf '\xff' | dd of=flip.clf bs=1 seek=200 conv=notrunc 2>/dev/null
expect 65 "checksum" -- "$GYRO" classify predict -m flip.clf

# a stream of the wrong type, and a truncated Example stream
printf '播放\n' | "$GYRO" normalize -o doc.pb 2>/dev/null
expect 65 "expected gyro.v1.Example" -- "$GYRO" classify train -o x.clf doc.pb
head -c 30 d.pb > trunc.pb
expect 65 "trunc" -- "$GYRO" classify eval -m m.clf trunc.pb
[ ! -e x.clf ] || { echo "FAIL: a failed training left x.clf"; fail=1; }

exit $fail
