#!/usr/bin/env bash
# sudoku.sh — end-to-end: gyro sudoku generate (reproducible by seed, unique solutions that
# solve back, the Example stream through gyro dump, the difficulty band) and gyro sudoku solve
# (a known puzzle; malformed and unsolvable puzzles exit 65 naming file, line and problem).
set -uo pipefail
: "${GYRO:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect_rc() { # expect_rc CODE command...
  local code=$1; shift
  "$@" > "$T/out" 2> "$T/err"; local rc=$?
  [ "$rc" = "$code" ] || fail "$* -> exit $rc (want $code); stderr: $(head -c 300 "$T/err")"
}

# generate: reproducible, seed-dependent, prefix-stable
"$GYRO" sudoku generate -q --seed 5 -n 6 -o "$T/a.txt" || fail "generate"
"$GYRO" sudoku generate -q --seed 5 -n 6 > "$T/b.txt" || fail "generate to stdout"
cmp -s "$T/a.txt" "$T/b.txt" || fail "the same seed gave different puzzles"
"$GYRO" sudoku generate -q --seed 6 -n 6 > "$T/c.txt"
cmp -s "$T/a.txt" "$T/c.txt" && fail "seeds 5 and 6 gave the same puzzles"
"$GYRO" sudoku generate -q --seed 5 -n 3 > "$T/d.txt"
[ "$(head -3 "$T/a.txt")" = "$(cat "$T/d.txt")" ] || fail "puzzle i depends on -n"
[ "$(wc -l < "$T/a.txt")" = 6 ] || fail "6 puzzles expected"
awk -F'\t' 'NF != 5 || $5 !~ /^-?[0-9]+$/ || length($1) != 81 || length($2) != 81 || $1 !~ /^[1-9.]+$/ || $2 !~ /^[1-9]+$/ {exit 1}' "$T/a.txt" \
  || fail "text lines are not puzzle, solution, clues, nodes, rounds: $(head -1 "$T/a.txt")"

# solve reads generate's lines back: same solution, same grade, no warning (unique)
"$GYRO" sudoku solve "$T/a.txt" > "$T/s.txt" 2> "$T/err" || fail "solve: $(cat "$T/err")"
cmp -s "$T/a.txt" "$T/s.txt" || fail "solve disagrees with generate"
[ -s "$T/err" ] && fail "solve warned on generated puzzles: $(cat "$T/err")"

# the stream form
"$GYRO" sudoku generate -q --seed 5 -n 2 --format stream -o "$T/p.pb" || fail "stream"
"$GYRO" dump "$T/p.pb" > "$T/p.json" || fail "dump"
grep -q '"source":"sudoku:seed=5,clues=[0-9]*,nodes=[0-9]*,rounds=-*[0-9]*"' "$T/p.json" || fail "stream source: $(head -1 "$T/p.json")"
p1=$(head -1 "$T/a.txt" | cut -f1)
grep -q "\"text\":\"$p1\"" "$T/p.json" || fail "stream text differs from the text form"

# a difficulty band
"$GYRO" sudoku generate -q --seed 2 -n 3 --min-nodes 1500 | awk -F'\t' '$4 < 1500 {exit 1}' || fail "band not kept"
expect_rc 1 "$GYRO" sudoku generate -q -n 1 --max-nodes 10 --attempts 2
grep -q 'no puzzle' "$T/err" || fail "impossible band: $(cat "$T/err")"
# a band of rounds of singles propagation
"$GYRO" sudoku generate -q --seed 2 -n 5 --clues 40 --min-rounds 4 --max-rounds 5 --attempts 10000 > "$T/r.txt" \
  || fail "rounds band"
awk -F'\t' '$5 < 4 || $5 > 5 {exit 1}' "$T/r.txt" || fail "rounds band not kept: $(cut -f5 "$T/r.txt" | tr '\n' ' ')"
"$GYRO" sudoku solve "$T/r.txt" | cmp -s - "$T/r.txt" || fail "solve grades rounds differently"
expect_rc 2 "$GYRO" sudoku generate --min-rounds 5 --max-rounds 4
expect_rc 1 "$GYRO" sudoku generate -q -n 1 --clues 60 --min-rounds 12 --attempts 2
grep -q 'no puzzle' "$T/err" || fail "impossible band: $(cat "$T/err")"

# a known puzzle
echo '53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79' > "$T/w.txt"
expect_rc 0 "$GYRO" sudoku solve "$T/w.txt"
cut -f2 "$T/out" | grep -qx 534678912672195348198342567859761423426853791713924856961537284287419635345286179 \
  || fail "wrong solution: $(cat "$T/out")"

# malformed and unsolvable puzzles: exit 65, file:line and the problem
w=$(cat "$T/w.txt")
printf '%s\n\n%s\n' "$w" "${w:0:80}" > "$T/short.txt"
expect_rc 65 "$GYRO" sudoku solve "$T/short.txt"
grep -q 'short.txt:3: a puzzle is 81 cells (9 rows of 9), got 80' "$T/err" || fail "size: $(cat "$T/err")"
echo "${w:0:10}x${w:11}" | { "$GYRO" sudoku solve > /dev/null 2> "$T/err"; echo $? > "$T/rc"; }
[ "$(cat "$T/rc")" = 65 ] || fail "a letter should exit 65"
grep -q -- "-:1: character 11 is 'x'" "$T/err" || fail "character: $(cat "$T/err")"
echo "${w:0:2}5${w:3}" > "$T/row.txt"
expect_rc 65 "$GYRO" sudoku solve "$T/row.txt"
grep -q 'digit 5 twice in row 1 (r1c1 and r1c3)' "$T/err" || fail "row: $(cat "$T/err")"
bad=$(printf '12345678%s' "$(printf '.%.0s' $(seq 1 73))")
bad="${bad:0:53}9${bad:54}"   # r6c9 = 9: row 1 leaves r1c9 no candidate
expect_rc 65 "$GYRO" sudoku solve - <<<"$bad"
grep -q -- '-:1: the puzzle has no solution' "$T/err" || fail "unsolvable: $(cat "$T/err")"
# several solutions: a warning, exit 0
expect_rc 0 "$GYRO" sudoku solve - <<<"$(printf '.%.0s' $(seq 1 81))"
grep -q 'more than one solution' "$T/err" || fail "no warning for the empty grid"

# usage errors
expect_rc 2 "$GYRO" sudoku generate --clues 5
expect_rc 2 "$GYRO" sudoku generate --format csv
expect_rc 2 "$GYRO" sudoku generate --min-nodes 50 --max-nodes 40
expect_rc 2 "$GYRO" sudoku
expect_rc 2 "$GYRO" sudoku frobnicate
expect_rc 1 "$GYRO" sudoku solve "$T/missing.txt"
echo "sudoku: ok"
