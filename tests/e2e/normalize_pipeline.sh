#!/usr/bin/env bash
# normalize_pipeline.sh — `gyro normalize | gyro dump` end to end: the issue's "done when" line
# under every invalid-UTF-8 policy, --text, CRLF and BOM, ANSI escapes, paragraphs, several
# inputs, -o (atomic), the summary, a 10 MB line, a stream truncated at every byte, memory that
# does not grow with the input, and real text from ../shared/corpora.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
SHARED=${SHARED:-../shared}
case $SHARED in /*) ;; *) SHARED=$(pwd)/$SHARED ;; esac
cd "$TMPDIR"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
has() { grep -qF -- "$2" "$1" || bad "$1 lacks '$2': $(head -c 400 "$1")"; }

# ---- the "done when" line -----------------------------------------------------------------------
printf '學生ＡＢＣ\xff\n' | "$GYRO" normalize 2> sum.txt | "$GYRO" dump > out.json || bad "pipeline failed"
has out.json '"text":"学生ABC�"'
has out.json '"chars":["学","生","A","B","C","�"]'
has out.json '"repairs":1'
has sum.txt '1 lines read, 1 documents written, 1 repaired, 0 skipped'
has sum.txt '-:1: 1 invalid UTF-8 sequence replaced by U+FFFD'
printf '學生ＡＢＣ\xff\nok\n' | "$GYRO" normalize --invalid=skip 2> sum.txt | "$GYRO" dump > out.json || bad "skip pipeline failed"
[ "$(wc -l < out.json)" = 1 ] || bad "skip: want 1 document, got $(cat out.json)"
has out.json '"text":"ok"'
has out.json '"line":"2"'
has sum.txt '1 skipped'
has sum.txt '-:1: skipped: invalid UTF-8'
printf '學生ＡＢＣ\xff\n' | "$GYRO" normalize --invalid=fail > /dev/null 2> err.txt
rc=$?; [ $rc = 65 ] || bad "fail policy exit $rc"
has err.txt '-:1: invalid UTF-8 byte 0xFF at byte 15 of the line'

# ---- text mode, CRLF, BOM, ANSI, whitespace, case folding -------------------------------------
printf '\xef\xbb\xbf\x1b[1;31m微波爐\x1b[0m\r\n  Ｈｅｌｌｏ\t Wörld \r\n' > crlf.txt
"$GYRO" normalize --text -q crlf.txt > t.txt || bad "normalize --text failed"
printf '微波炉\nHello Wörld\n' > want.txt
cmp -s t.txt want.txt || bad "--text output: $(od -c t.txt | head)"
"$GYRO" normalize --text -q --case-fold --no-t2s crlf.txt > t.txt
printf '微波爐\nhello wörld\n' > want.txt
cmp -s t.txt want.txt || bad "--case-fold --no-t2s output: $(cat t.txt)"

# ---- paragraphs, several inputs, empty documents, -o -----------------------------------------
printf 'first line\nstill first\n\n\nsecond\n' > p.txt
"$GYRO" normalize -q --paragraphs p.txt | "$GYRO" dump > out.json
[ "$(wc -l < out.json)" = 2 ] || bad "paragraphs: $(cat out.json)"
has out.json '"text":"first line still first"'
has out.json '"line":"5","original":"second"'
printf 'a\n\nb\n' > a.txt
"$GYRO" normalize -o two.pb a.txt p.txt 2> sum.txt || bad "two inputs failed"
"$GYRO" dump --header two.pb > out.json
has out.json '"message_type":"gyro.v1.Document"'
has out.json '{"id":"5","source":"p.txt","line":"5","original":"second"'
has sum.txt '8 lines read, 5 documents written, 0 repaired, 0 skipped (0 too long), 3 empty'
"$GYRO" normalize -q --keep-empty a.txt | "$GYRO" dump > out.json
[ "$(wc -l < out.json)" = 3 ] || bad "--keep-empty: $(cat out.json)"
ls | grep -q '\.tmp\.' && bad "temporary files left behind: $(ls)"

# ---- a 10 MB line, and the maximum line length ---------------------------------------------------
awk 'BEGIN{ s="學生們在圖書館讀書 "; for (i = 0; i < 400000; i++) printf "%s", s; printf "\nshort\n" }' > long.txt
size=$(stat -c %s long.txt); [ "$size" -gt 10000000 ] || bad "long line only $size bytes"
"$GYRO" normalize --text long.txt > t.txt 2> sum.txt || bad "10 MB line failed: $(cat sum.txt)"
[ "$(head -n 1 t.txt | wc -c)" = $((400000 * 28 - 1 + 1)) ] || bad "10 MB line: $(head -n 1 t.txt | wc -c) bytes"
head -c 28 t.txt | grep -q '^学生们在图书馆读书 ' || bad "10 MB line content: $(head -c 40 t.txt)"
"$GYRO" normalize -q -o long.pb long.txt || bad "10 MB line as a Document"
"$GYRO" dump -n 1 long.pb > out.json
has out.json '"chars":["学","生","们"'
[ "$(wc -l < out.json)" = 1 ] || bad "dump -n 1 printed $(wc -l < out.json) lines"
"$GYRO" normalize --text --max-line 1000000 long.txt > t.txt 2> sum.txt
[ "$(cat t.txt)" = short ] || bad "--max-line: $(head -c 100 t.txt)"
has sum.txt 'long.txt:1: skipped: document longer than the maximum length'
has sum.txt '1 skipped (1 too long)'

# ---- a stream cut at every byte: dump exits 0 at record boundaries, 65 elsewhere, never crashes ---
printf '一\n二二\n三三三\n' | "$GYRO" normalize -q > s.pb
n=$(stat -c %s s.pb); ok=0
for ((i = 0; i < n; i++)); do
  head -c $i s.pb > cut.pb
  "$GYRO" dump cut.pb > /dev/null 2> err.txt; rc=$?
  if [ $rc = 0 ]; then ok=$((ok+1))
  elif [ $rc != 65 ]; then bad "cut at $i: exit $rc: $(cat err.txt)"
  elif ! grep -q 'record [0-9]* at byte [0-9]*' err.txt; then bad "cut at $i: message $(cat err.txt)"; fi
done
[ $ok = 3 ] || bad "want 3 clean cuts (after the header and records 1, 2), got $ok"

# ---- memory does not grow with the input ------------------------------------------------------------
awk 'BEGIN{ for (i = 0; i < 20000; i++) print "学生们在图书馆读书，微波爐很好用。ＡＢＣ abc" }' > small.txt
for i in 1 2 3 4 5 6 7 8; do cat small.txt; done > big.txt
rss() { /usr/bin/time -f %M "$GYRO" normalize -q "$1" 2>&1 > /dev/null | tail -n 1; }
if [ -x /usr/bin/time ]; then
  r1=$(rss small.txt); r2=$(rss big.txt)
  echo "max RSS: $r1 KiB on $(stat -c %s small.txt) bytes, $r2 KiB on $(stat -c %s big.txt) bytes"
  [ "$r2" -lt $((r1 + 4096)) ] || bad "memory grows with the input: $r1 KiB -> $r2 KiB"
fi

# ---- real text ---------------------------------------------------------------------------------------
f=$SHARED/corpora/text/fortunes-zh/tang300
if [ -r "$f" ]; then
  "$GYRO" normalize "$f" 2> sum.txt | "$GYRO" dump > real.json || bad "normalize of $f failed"
  grep -q $'\x1b' real.json && bad "ANSI escapes left in the output"
  [ "$(wc -l < real.json)" -gt 1000 ] || bad "too few documents from $f"
  cat sum.txt
else
  echo "note: $f not found, real-text check skipped"
fi
exit $fail
