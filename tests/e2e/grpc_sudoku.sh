#!/usr/bin/env bash
# grpc_sudoku.sh — Reason with environment "sudoku" over gRPC (gyro serve --hrm-model): a small
# HRM trained here answers a puzzle with one step per segment (board, σ(Q_halt), reward) and the
# same final board as `gyro reason --env sudoku`; malformed puzzles (wrong size, a character
# other than digits and blanks, a repeated digit) and an unsolvable one get INVALID_ARGUMENT;
# a server without --hrm-model answers UNAVAILABLE; a file that is not an HRM model is refused
# at start.
set -eu
. tests/py/grpc_lib.bash
grpc_setup

"$GYRO" sudoku generate -q --seed 3 -n 16 --clues 45 > "$TMPDIR/train.txt"
"$GYRO" hrm train --dim 8 --heads 2 --head-dim 4 --ffn 16 -N 2 -T 1 -M 3 -b 8 -E 2 -q \
  -o "$TMPDIR/s.hrm" "$TMPDIR/train.txt" > /dev/null
puzzle=$(head -n 1 "$TMPDIR/train.txt" | cut -f1)
# what the command line answers, with the Q head halting as the server does
want=$("$GYRO" reason --env sudoku --model "$TMPDIR/s.hrm" "$puzzle" | sed -n 's/^answer: \([1-9]*\) .*/\1/p')
segs=$("$GYRO" reason --env sudoku --model "$TMPDIR/s.hrm" "$puzzle" | sed -n 's/.*after \([0-9]*\) segment.*/\1/p')
[ ${#want} = 81 ] || { echo "FAIL gyro reason --env sudoku gave no answer"; exit 1; }

cat > "$TMPDIR/sudoku_client.py" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import grpc
import gyro_pb2, gyro_pb2_grpc

addr, mode = sys.argv[2], sys.argv[3]
stub = gyro_pb2_grpc.GyroStub(grpc.insecure_channel(addr))

def reason(text):
    return stub.Reason(gyro_pb2.ReasonRequest(environment="sudoku", input=text), timeout=30)

def expect_code(text, code, what):
    try:
        reason(text)
    except grpc.RpcError as e:
        if e.code() != code:
            sys.exit("FAIL %s: %s (%s), want %s" % (what, e.code(), e.details(), code))
        print("ok   %s: %s (%s)" % (what, code.name, e.details()))
        return
    sys.exit("FAIL %s: answered, want %s" % (what, code))

if mode == "unavailable":
    expect_code(sys.argv[4], grpc.StatusCode.UNAVAILABLE, "no --hrm-model")
    sys.exit(0)
puzzle, want, segs = sys.argv[4], sys.argv[5], int(sys.argv[6])
r = reason(puzzle)
assert len(r.steps) == segs, (len(r.steps), segs)
for i, s in enumerate(r.steps):
    assert s.index == i + 1 and s.action == "segment", s
    assert len(s.state) == 81 and all(c in "123456789" for c in s.state), s.state
    assert all(p == "." or p == c for p, c in zip(puzzle, s.state)), "a clue changed"
    assert 0.0 < s.probability < 1.0 and s.reward in (0.0, 1.0), s
assert r.answer == r.steps[-1].state == want, (r.answer, want)
assert r.total_reward == r.steps[-1].reward
assert r.model_version.startswith("hrm-sudoku-euclidean-C8-N2T1M3"), r.model_version
again = reason(puzzle)
assert again.answer == r.answer and [s.state for s in again.steps] == [s.state for s in r.steps]
print("ok   Reason sudoku: %d segment(s), the answer of gyro reason --env sudoku, deterministic" % len(r.steps))
row = list(puzzle)
blank = row.index(".")
other = next(c for c in puzzle[(blank // 9) * 9:(blank // 9) * 9 + 9] if c != ".")
row[blank] = other
expect_code(puzzle[:80], grpc.StatusCode.INVALID_ARGUMENT, "80 cells")
expect_code(puzzle + "5", grpc.StatusCode.INVALID_ARGUMENT, "82 cells")
expect_code("x" + puzzle[1:], grpc.StatusCode.INVALID_ARGUMENT, "a letter")
expect_code("".join(row), grpc.StatusCode.INVALID_ARGUMENT, "a digit repeated in a row")
expect_code("", grpc.StatusCode.INVALID_ARGUMENT, "empty input")
# consistent but unsolvable: row 1 holds 1-8 with a blank whose column already holds the 9
unsolvable = "12345678." + "........9" + "." * 63
expect_code(unsolvable, grpc.StatusCode.INVALID_ARGUMENT, "no solution")
PYEOF

start_server sudoku --hrm-model "$TMPDIR/s.hrm"
"$PY" "$TMPDIR/sudoku_client.py" "$GEN" "$ADDR" serve "$puzzle" "$want" "$segs"
stop_server

start_server none
"$PY" "$TMPDIR/sudoku_client.py" "$GEN" "$ADDR" unavailable "$puzzle"
stop_server

if "$GYRO" serve --addr 127.0.0.1:0 --hrm-model "$TMPDIR/train.txt" 2>/dev/null; then
  echo "FAIL a puzzle file was accepted as an HRM model"; exit 1
fi
echo "ok   --hrm-model refuses a file that is not an HRM model"
