#!/usr/bin/env bash
# rl_primefield.sh — end-to-end: the primefield environment through the CLI — listed by
# `rl finetune --help`, trains in both geometries, `rl eval`, `reason` prints the digits as
# actions and the verifier's verdict on the answer, a start value is a usage error.
set -euo pipefail
: "${GYRO:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

"$GYRO" rl finetune --help | grep '^  primefield ' > /dev/null || fail "rl finetune --help does not list primefield"
for geo in euclidean hyperbolic; do
  out=$("$GYRO" rl finetune --env primefield --geometry $geo --iterations 3 --states 4 --group 4 \
          --eval 4 --eval-every 1 --seed 2 -q --out "$T/pf-$geo.pol")
  [ "$(field "$out" env)" = primefield ] || fail "summary env: $out"
  [ "$(field "$out" metric)" = miss ] || fail "summary metric: $out"
  m=$(field "$out" final_metric)
  awk -v m="$m" 'BEGIN{exit !(m >= 0 && m <= 1)}' || fail "miss rate outside [0, 1]: $out"
  ev=$("$GYRO" rl eval --model "$T/pf-$geo.pol" --eval 8)
  [ "$(field "$ev" env)" = primefield ] || fail "eval: $ev"
done

r=$("$GYRO" reason --model "$T/pf-hyperbolic.pol" --sample --seed 4)
grep -q '^env: primefield' <<<"$r" || fail "reason header: $r"
grep -q -- '-> digit [0-9]\|-> STOP' <<<"$r" || fail "reason shows no digit actions: $r"
grep -q '^result:  miss = [01]  reward = ' <<<"$r" || fail "reason result line: $r"
grep -q '^final:   answer = ' <<<"$r" || fail "reason final state: $r"

set +e
"$GYRO" reason --model "$T/pf-hyperbolic.pol" --start=5 >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 2 ] || fail "a start value for primefield should exit 2, got $rc"
grep -q "primefield" "$T/err" || fail "the start error does not name the environment"
echo "rl_primefield: ok"
