#!/usr/bin/env bash
# predict_max_line.sh — `gyro classify predict` bounds the line it reads (--max-line, like
# normalize): a longer line is skipped without being held in memory, reported with its line
# number, and counted in the summary; the other lines are still classified. Also a Document
# stream record over the limit, and a bad --max-line value (usage error, exit 2).
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
printf '播放周杰伦的歌\tmusic.play\n放首歌\tmusic.play\n今天天气\tweather.query\n明天下雨吗\tweather.query\n' > d.tsv
"$GYRO" import -f tsv -q -o d.pb d.tsv || exit 1
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet -o m.clf d.pb || exit 1

# a 64-byte limit; line 2 is 65 bytes, line 3 exactly 64
long=$(head -c 65 /dev/zero | tr '\0' a); edge=$(head -c 64 /dev/zero | tr '\0' b)
printf '播放\n%s\n%s\n天气\n' "$long" "$edge" > in.txt
"$GYRO" classify predict -m m.clf --max-line 64 in.txt > out.json 2> err.txt; rc=$?
[ $rc = 0 ] || bad "predict --max-line: exit $rc: $(cat err.txt)"
[ "$(wc -l < out.json)" = 3 ] || bad "want 3 predictions (lines 1, 3, 4): $(cat out.json)"
grep -q '"id":"2"' out.json && bad "the long line 2 was classified"
grep -q '"id":"3"' out.json || bad "the 64-byte line 3 was not classified: $(cat out.json)"
grep -q 'in.txt:2: skipped: line longer than --max-line (64 bytes)' err.txt || bad "no warning for line 2: $(cat err.txt)"
grep -q '1 line skipped (longer than --max-line)' err.txt || bad "no count in the summary: $(cat err.txt)"

# a Document stream: the record over the limit is skipped too
printf '播放\n%s\n' "$long" | "$GYRO" normalize -q -o docs.pb
"$GYRO" classify predict -m m.clf --max-line 64 docs.pb > out.json 2> err.txt || bad "stream predict failed: $(cat err.txt)"
[ "$(wc -l < out.json)" = 1 ] || bad "stream: want 1 prediction: $(cat out.json)"
grep -q 'docs.pb:2: skipped' err.txt || bad "stream: no warning for record 2: $(cat err.txt)"

# the default limit is that of normalize, and a bad value is a usage error
"$GYRO" classify --help | grep -- '--max-line' > /dev/null || bad "--max-line not in the help"
"$GYRO" classify predict -m m.clf --max-line 0 in.txt > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || bad "--max-line 0: exit $rc (want 2)"
exit $fail
