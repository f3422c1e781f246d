#!/usr/bin/env bash
# cli_basics.sh — the conventions every `gyro` command keeps, checked generically over the
# commands `gyro --help` lists (so commands added later are covered): `--help` prints a usage on
# stdout and exits 0, an unknown option exits 2 with a message on stderr; plus the dispatcher's
# own exit codes, the exit codes of normalize and dump (0, 1, 2, 65), that the man page
# doc/gyro.1 has a section for every command and holds the option blocks generated from the
# option tables, that each subcommand prints its own help, that the common letters (-o -q -m -k
# -t -s -j) mean the same everywhere, and that `gyro dump --types` knows every message of
# proto/*.proto.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
root=$(pwd)
cd "$TMPDIR"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
expect_rc() { # expect_rc CODE command...
  local code=$1; shift
  timeout 20 "$@" < /dev/null > out.txt 2> err.txt; local rc=$?
  [ "$rc" = "$code" ] || bad "$* -> exit $rc (want $code); stderr: $(head -c 300 err.txt)"
}

# ---- the dispatcher -------------------------------------------------------------------------
expect_rc 0 "$GYRO" --help
grep -q '^usage: gyro <command>' out.txt || bad "gyro --help prints no usage line"
cp out.txt help.txt
expect_rc 2 "$GYRO"
expect_rc 2 "$GYRO" no-such-command
grep -q "unknown command" err.txt || bad "unknown command: no message"
expect_rc 0 "$GYRO" version
grep -q '^gyro [0-9]' out.txt || bad "gyro version prints no version"

# ---- every listed command ---------------------------------------------------------------------
cmds=$(awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' help.txt)
[ -n "$cmds" ] || bad "gyro --help lists no commands"
n=0
for c in $cmds; do
  [ "$c" = version ] && continue
  n=$((n+1))
  expect_rc 0 "$GYRO" "$c" --help
  grep -qi 'usage' out.txt || bad "gyro $c --help: no usage on stdout"
  [ -s err.txt ] && bad "gyro $c --help wrote to stderr: $(head -c 200 err.txt)"
  expect_rc 2 "$GYRO" "$c" --no-such-option-xyz
  [ -s err.txt ] || bad "gyro $c --no-such-option-xyz: no message on stderr"
  grep -q "^\.SS \"gyro $c[ \"]" "$root/doc/gyro.1" || bad "doc/gyro.1 has no section for gyro $c"
done
echo "checked $n commands: $(echo $cmds | tr '\n' ' ')"
echo "$cmds" | grep -qx normalize || bad "normalize is not listed"
echo "$cmds" | grep -qx dump || bad "dump is not listed"

# ---- exit codes of normalize and dump -----------------------------------------------------------
printf 'ok\n' > ok.txt
printf 'bad \xff byte\n' > bad.txt
expect_rc 0 "$GYRO" normalize -q -o ok.pb ok.txt
expect_rc 0 "$GYRO" dump ok.pb
expect_rc 65 "$GYRO" normalize --invalid=fail -o x.pb bad.txt
grep -q 'bad.txt:1: invalid UTF-8 byte 0xFF at byte 4' err.txt || bad "fail policy message: $(cat err.txt)"
[ -e x.pb ] && bad "a failed normalize left its output file"
expect_rc 2 "$GYRO" normalize --invalid=maybe ok.txt
expect_rc 2 "$GYRO" normalize --max-line=abc ok.txt
expect_rc 2 "$GYRO" normalize --output
expect_rc 1 "$GYRO" normalize -o x.pb missing.txt
grep -q 'missing.txt' err.txt || bad "missing input not named: $(cat err.txt)"
expect_rc 1 "$GYRO" normalize -o /nonexistent-dir/x.pb ok.txt
expect_rc 1 "$GYRO" dump missing.pb
expect_rc 65 "$GYRO" dump ok.txt
expect_rc 65 "$GYRO" dump bad.txt
head -c 20 ok.pb > trunc.pb
expect_rc 65 "$GYRO" dump trunc.pb
grep -q 'record 0 at byte 0: truncated' err.txt || bad "truncated header message: $(cat err.txt)"
expect_rc 2 "$GYRO" dump --type gyro.v1.NoSuchThing ok.pb
expect_rc 2 "$GYRO" dump --limit -3 ok.pb

# ---- every --seed is parsed alike: a non-negative integer up to 2^64-1, anything else exit 2 ------
for c in "generate music" split reason "rl finetune" "classify train" "char2vec train" "sudoku generate"; do
  for s in -3 1x "" 18446744073709551616; do
    # shellcheck disable=SC2086
    expect_rc 2 "$GYRO" $c --seed "$s"
    grep -q -- '--seed expects a non-negative integer' err.txt || bad "gyro $c --seed '$s': $(cat err.txt)"
  done
done

# ---- every subcommand prints its own help ---------------------------------------------------------
subs="classify train|classify eval|classify predict|char2vec train|char2vec tokens|rl finetune|rl eval|rl transition|sudoku generate|sudoku solve|hrm train|hrm eval"
IFS='|' read -ra sublist <<< "$subs"
for sc in "${sublist[@]}"; do
  # shellcheck disable=SC2086
  expect_rc 0 "$GYRO" $sc --help
  grep -q "^usage: gyro $sc " out.txt || bad "gyro $sc --help does not print its own usage: $(head -n 1 out.txt)"
done

# ---- a letter means the same in every command: -o output, -q quiet, -m model, -k top-k, -t table,
# ---- -s seed, -j threads (old letters may stay as hidden aliases, never listed) --------------------
for c in $cmds "${sublist[@]}"; do
  [ "$c" = version ] && continue
  # shellcheck disable=SC2086
  "$GYRO" $c --help 2>/dev/null | grep -oE '^  -[a-zA-Z], --[a-z-]+' | sed 's/^  //' | while read -r l; do
    letter=${l%%,*}; long=${l#*, }
    case "$letter" in
      -o) want='--output|--out' ;; -q) want='--quiet' ;; -m) want='--model' ;; -k) want='--top-k' ;;
      -t) want='--table|--embeddings' ;; -s) want='--seed' ;; -j) want='--threads' ;; -h) want='--help' ;;
      *) continue ;;
    esac
    echo "$long" | grep -qxE -- "$want" || echo "FAIL: gyro $c: $letter is $long (want $want)"
  done
done > letters.txt
[ -s letters.txt ] && { cat letters.txt; fail=1; }

# ---- the option tables: --opt=value, missing values, unknown letters, old spellings kept hidden --------
"$GYRO" generate music -q -n 40 --seed=3 -f tsv -o g1.tsv || bad "generate --seed=3 failed"
"$GYRO" generate music -q -n 40 -s 3 --format=tsv -o g2.tsv || bad "generate -s 3 failed"
cmp -s g1.tsv g2.tsv || bad "--seed=3 and -s 3 differ"
"$GYRO" import -q -f tsv -o g.pb g1.tsv || bad "import of the generated tsv failed"
expect_rc 2 "$GYRO" split --seed
grep -q "option '--seed' needs a value" err.txt || bad "missing value message: $(cat err.txt)"
expect_rc 2 "$GYRO" split -Z g.pb
grep -q "unknown option '-Z'" err.txt || bad "unknown letter message: $(cat err.txt)"
expect_rc 0 "$GYRO" split -q -s 2 -d 0.25 --train-out a1.pb --dev-out b1.pb g.pb
expect_rc 0 "$GYRO" split -q -s 2 -d 0.25 -t a2.pb -v b2.pb g.pb   # the old letters, hidden now
cmp -s a1.pb a2.pb && cmp -s b1.pb b2.pb || bad "split -t/-v differ from --train-out/--dev-out"
"$GYRO" split --help | grep -E '^  -t' > /dev/null && bad "split --help lists -t (it means --table elsewhere)"

# ---- the man page's option blocks are the option tables' (regenerate with doc/update-man.sh) -----
"$GYRO" help --man > man.gen || bad "gyro help --man failed"
[ -s man.gen ] || bad "gyro help --man printed nothing"
awk '/^\.\\" BEGIN OPTIONS /{on=1} on{print} /^\.\\" END OPTIONS /{on=0}' "$root/doc/gyro.1" > man.doc
cmp -s man.gen man.doc || bad "doc/gyro.1 differs from the option tables (run doc/update-man.sh): $(diff man.doc man.gen | head -n 6)"

# ---- dump knows every message of the .proto files ------------------------------------------------
"$GYRO" dump --types > types.txt || bad "dump --types failed"
for f in "$root"/proto/*.proto; do
  pkg=$(awk '/^package /{gsub(/;/,"",$2); print $2}' "$f")
  for m in $(awk '/^message /{print $2}' "$f"); do
    grep -qx "$pkg.$m" types.txt || bad "gyro dump --types lacks $pkg.$m (add it to pipeline/stream_types.c)"
  done
done
exit $fail
