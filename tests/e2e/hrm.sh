#!/usr/bin/env bash
# hrm.sh — end-to-end: gyro hrm train|eval on puzzles from gyro sudoku generate (a small model
# trains, writes its file, evaluates with and without ACT, is reproducible by seed); malformed,
# unsolvable and contradicting puzzles exit 65 naming file and line; corrupt model files exit 65;
# usage errors exit 2.
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
small=(--dim 8 --heads 2 --head-dim 4 --ffn 16 -N 2 -T 1 -M 2 -b 8)

"$GYRO" sudoku generate -q --seed 3 -n 16 --clues 45 > "$T/train.txt" || fail "generate"
"$GYRO" sudoku generate -q --seed 4 -n 8 --clues 45 > "$T/test.txt" || fail "generate"

# train: a summary line, a model file, progress on stderr
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 2 -o "$T/m.bin" "$T/train.txt"
grep -q '^epochs=2 puzzles=16 params=[0-9]* steps=[0-9]* loss=[0-9.]* ' "$T/out" || fail "summary: $(cat "$T/out")"
grep -q 'epoch 2: loss' "$T/err" || fail "progress: $(cat "$T/err")"
[ -s "$T/m.bin" ] || fail "no model file"
[ "$(head -c 8 "$T/m.bin")" = GYROHRM1 ] || fail "model file magic"
# the same seed gives the same model
"$GYRO" hrm train "${small[@]}" -e 2 -q -o "$T/m2.bin" "$T/train.txt" > /dev/null || fail "train again"
cmp -s "$T/m.bin" "$T/m2.bin" || fail "the same seed gave different models"
# hyperbolic, plain and BPTT variants train
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 1 -q -g hyperbolic -o "$T/h.bin" "$T/train.txt"
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 1 -q --plain -o "$T/p.bin" "$T/train.txt"
grep -q 'mean_segments=1.0000' "$T/out" || fail "plain runs one segment: $(cat "$T/out")"
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 1 -q --bptt -o "$T/b.bin" "$T/train.txt"
# the batch-by-batch loop (--whole-batch) and deep supervision after a one-segment start
# (--ds-start) train; --ds-start 1 never starts deep supervision: one segment per puzzle
# (--whole-batch takes no --ds-start / --act-start: their defaults are 0 there)
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 1 -q --whole-batch -o "$T/w.bin" "$T/train.txt"
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 4 -q --ds-start 0.5 --q-weight 1 -o "$T/d.bin" "$T/train.txt"
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 2 -q --ds-start 1 -o "$T/d1.bin" "$T/train.txt"
grep -q 'mean_segments=1.0000' "$T/out" || fail "--ds-start 1 runs one segment: $(cat "$T/out")"
expect_rc 2 "$GYRO" hrm train "${small[@]}" -e 1 -q --ds-start 1.5 -o "$T/d2.bin" "$T/train.txt"
expect_rc 2 "$GYRO" hrm train "${small[@]}" -e 1 -q --q-weight -1 -o "$T/d2.bin" "$T/train.txt"
expect_rc 2 "$GYRO" hrm train "${small[@]}" -e 1 -q --whole-batch --ds-start 0.5 -o "$T/d2.bin" "$T/train.txt"
# --act-start: every puzzle runs M segments until then (after the --ds-start phase), then ACT
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 4 -q --ds-start 0.25 --act-start 0.75 -o "$T/d3.bin" "$T/train.txt"
expect_rc 2 "$GYRO" hrm train "${small[@]}" -e 1 -q --whole-batch --act-start 0.5 -o "$T/d2.bin" "$T/train.txt"
expect_rc 2 "$GYRO" hrm train "${small[@]}" -e 1 -q --act-start 2 -o "$T/d2.bin" "$T/train.txt"

# eval: ACT halts at M at most; --no-act runs exactly M segments
expect_rc 0 "$GYRO" hrm eval -m "$T/m.bin" "$T/test.txt"
grep -q '^puzzles=8 cell_accuracy=[0-9.]* exact=[0-9.]* mean_segments=[12]\.[0-9]* m_max=2 act=1' "$T/out" \
  || fail "eval: $(cat "$T/out")"
expect_rc 0 "$GYRO" hrm eval -m "$T/m.bin" --no-act - < "$T/test.txt"
grep -q 'mean_segments=2.0000 m_max=2 act=0' "$T/out" || fail "eval --no-act: $(cat "$T/out")"
# -M: more (or fewer) segments at test time than the model was trained with
expect_rc 0 "$GYRO" hrm eval -m "$T/m.bin" --no-act -M 5 "$T/test.txt"
grep -q 'mean_segments=5.0000 m_max=5 act=0' "$T/out" || fail "eval -M 5: $(cat "$T/out")"
expect_rc 2 "$GYRO" hrm eval -m "$T/m.bin" -M 0 "$T/test.txt"
# --augment (the default): a random symmetry per puzzle; reproducible by seed, not the model of
# the puzzles as they are (--no-augment)
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 2 -q --augment -o "$T/a.bin" "$T/train.txt"
cmp -s "$T/a.bin" "$T/m.bin" || fail "--augment is not the default"
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 2 -q --no-augment -o "$T/n.bin" "$T/train.txt"
"$GYRO" hrm train "${small[@]}" -e 2 -q --no-augment -o "$T/n2.bin" "$T/train.txt" > /dev/null || fail "no-augment again"
cmp -s "$T/n.bin" "$T/n2.bin" || fail "--no-augment with the same seed gave different models"
cmp -s "$T/a.bin" "$T/n.bin" && fail "--no-augment trained the same model as --augment"
expect_rc 2 "$GYRO" hrm train "${small[@]}" -e 1 -q --augment --no-augment -o "$T/d2.bin" "$T/train.txt"
# --q-pool: the cells' product (the default) or the mean head; both evaluate, anything else is usage
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 2 -q --q-pool cells -o "$T/qc.bin" "$T/train.txt"
cmp -s "$T/qc.bin" "$T/m.bin" || fail "--q-pool cells is not the default"
expect_rc 0 "$GYRO" hrm train "${small[@]}" -e 2 -q --q-pool mean -o "$T/qm.bin" "$T/train.txt"
cmp -s "$T/qm.bin" "$T/m.bin" && fail "--q-pool mean trained the default model"
expect_rc 0 "$GYRO" hrm eval -m "$T/qm.bin" "$T/test.txt"
grep -q 'exact=' "$T/out" || fail "eval of a --q-pool mean model: $(cat "$T/out")"
expect_rc 2 "$GYRO" hrm train "${small[@]}" -e 1 -q --q-pool max -o "$T/d3.bin" "$T/train.txt"
# a line without a solution is solved by the reference solver
cut -f1 "$T/test.txt" > "$T/bare.txt"
expect_rc 0 "$GYRO" hrm eval -m "$T/m.bin" "$T/bare.txt"

# gyro reason --env sudoku: the board after every segment, the answer and the verdict
expect_rc 0 "$GYRO" reason --env sudoku -m "$T/m.bin" "$(head -1 "$T/test.txt" | cut -f1)"
grep -q '^segment 1 (' "$T/out" || fail "reason: $(head -5 "$T/out")"
grep -q '^answer: [1-9]\{81\}  after [12] segment' "$T/out" || fail "reason answer: $(cat "$T/out")"
grep -q '^result: [0-9]*/[0-9]* blank cells right' "$T/out" || fail "reason result: $(cat "$T/out")"
[ "$(grep -c '|' "$T/out")" -ge 9 ] || fail "reason prints no board"
head -2 "$T/test.txt" | expect_rc 0 "$GYRO" reason --env sudoku --no-act -m "$T/m.bin"
[ "$(grep -c '^answer:' "$T/out")" = 2 ] || fail "reason from stdin: $(cat "$T/out")"
[ "$(grep -c '^segment' "$T/out")" = 4 ] || fail "--no-act runs M=2 segments each"
expect_rc 65 "$GYRO" reason --env sudoku -m "$T/m.bin" "12x"
grep -q 'argument 1: ' "$T/err" || fail "reason bad puzzle: $(cat "$T/err")"
expect_rc 2 "$GYRO" reason --env sudoku "$(head -1 "$T/test.txt" | cut -f1)"

# bad puzzles: exit 65 with file:line
w=$(head -1 "$T/test.txt" | cut -f1)
s=$(head -1 "$T/test.txt" | cut -f2)
printf '%s\t%s\n%s\n' "$w" "$s" "${w:0:80}" > "$T/short.txt"
expect_rc 65 "$GYRO" hrm train -o "$T/x.bin" "$T/short.txt"
grep -q 'short.txt:2: a puzzle is 81 cells' "$T/err" || fail "size: $(cat "$T/err")"
[ -e "$T/x.bin" ] && fail "a model was written from bad data"
expect_rc 65 "$GYRO" hrm eval -m "$T/m.bin" "$T/short.txt"
printf '%s\t%s\n' "$w" "${s:0:80}" > "$T/badsol.txt"
expect_rc 65 "$GYRO" hrm eval -m "$T/m.bin" "$T/badsol.txt"
grep -q 'badsol.txt:1: solution: ' "$T/err" || fail "bad solution: $(cat "$T/err")"
bad=$(printf '12345678%s' "$(printf '.%.0s' $(seq 1 73))")
bad="${bad:0:53}9${bad:54}"
expect_rc 65 "$GYRO" hrm eval -m "$T/m.bin" - <<<"$bad"
grep -q -- '-:1: the puzzle has no solution' "$T/err" || fail "unsolvable: $(cat "$T/err")"
# a solution that changes a clue
c=${w%%[1-9]*}; i=${#c}; d=${w:$i:1}; nd=$(( d % 9 + 1 ))
printf '%s\t%s\n' "$w" "${s:0:$i}$nd${s:$((i+1))}" > "$T/clash.txt"
expect_rc 65 "$GYRO" hrm eval -m "$T/m.bin" "$T/clash.txt"

# corrupt, foreign and missing model files
cp "$T/m.bin" "$T/c.bin"
printf '\x55' | dd of="$T/c.bin" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_rc 65 "$GYRO" hrm eval -m "$T/c.bin" "$T/test.txt"
grep -q 'checksum' "$T/err" || fail "corrupt: $(cat "$T/err")"
expect_rc 65 "$GYRO" hrm eval -m "$T/test.txt" "$T/test.txt"
head -c 300 "$T/m.bin" > "$T/t.bin"   # truncated: refused before the parameters are allocated
expect_rc 65 "$GYRO" hrm eval -m "$T/t.bin" "$T/test.txt"
grep -q 'truncated or corrupt' "$T/err" || fail "truncated: $(cat "$T/err")"
expect_rc 1 "$GYRO" hrm eval -m "$T/none.bin" "$T/test.txt"

# usage errors
expect_rc 2 "$GYRO" hrm
expect_rc 2 "$GYRO" hrm frobnicate
expect_rc 2 "$GYRO" hrm train "$T/train.txt"
expect_rc 2 "$GYRO" hrm train -o "$T/x.bin" -g lorentzian "$T/train.txt"
expect_rc 2 "$GYRO" hrm train -o "$T/x.bin" -N 0 "$T/train.txt"
expect_rc 2 "$GYRO" hrm eval "$T/test.txt"
expect_rc 0 "$GYRO" hrm train --help
echo "hrm: ok"
