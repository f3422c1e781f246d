#!/usr/bin/env bash
# generate_music.sh — gyro generate music: the set compiled into gyro is used from any working
# directory without --data (all 125 intents), equals the set read from corpora/music/ with
# --data, is deterministic, reads back through gyro import and gyro split, and bad
# arguments or template directories give the documented exit codes.
set -euo pipefail
: "${GYRO:?}"
ROOT=$PWD                       # run-all.sh starts every script in the project root
T="${TMPDIR:-/tmp}"
fail() { echo "FAIL: $*"; exit 1; }
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; echo "ok   $1 = $2"; }
field() { grep -o "[0-9][0-9.]* $2" "$1" | head -1 | cut -d' ' -f1; }
code() { set +e; "$@" > /dev/null 2>&1; local rc=$?; set -e; echo $rc; }

# ---- the embedded set, from a directory that holds no corpora/ --------------------------------
mkdir -p "$T/elsewhere"
[ ! -e "$T/elsewhere/corpora" ] || fail "scratch directory has a corpora/"
(cd "$T/elsewhere" && "$GYRO" generate music --seed 9 -n 2000 --format tsv -o music.tsv 2> gen.log)
grep -q "of the embedded set" "$T/elsewhere/gen.log" || fail "summary: $(cat "$T/elsewhere/gen.log")"
expect "generated lines (outside the tree)" "$(wc -l < "$T/elsewhere/music.tsv")" 2000
expect "generated distinct intents (outside the tree)" "$(cut -f2 "$T/elsewhere/music.tsv" | sort -u | wc -l)" 125
(cd / && "$GYRO" generate music --list) > "$T/list.txt"
expect "intents listed from /" "$(sort -u "$T/list.txt" | wc -l)" 125
cmp -s <(cut -f2 "$T/elsewhere/music.tsv" | sort -u) <(sort -u "$T/list.txt") \
  || fail "generated intents differ from --list"

# a copy of the binary outside the tree (as after `make install`) needs nothing beside it
mkdir -p "$T/bin"
cp "$GYRO" "$T/bin/gyro"
(cd "$T/bin" && ./gyro generate music -q --seed 9 -n 2000 --format tsv -o "$T/music.copy.tsv")
cmp -s "$T/elsewhere/music.tsv" "$T/music.copy.tsv" || fail "a copied binary generates another set"
echo "ok   a copy of the binary outside the tree generates the same set"

# the embedded copy is the tree's corpora/music: same examples with --data
"$GYRO" generate music --data "$ROOT/corpora/music" --seed 9 -n 2000 --format tsv -o "$T/music.data.tsv" 2> /dev/null
cmp -s "$T/elsewhere/music.tsv" "$T/music.data.tsv" || fail "embedded set differs from corpora/music (stale build?)"
echo "ok   embedded set = --data corpora/music"

# ---- deterministic, readable by import, stream = TSV, splittable ------------------------------
"$GYRO" generate music --seed 9 -n 2000 --format tsv -o "$T/music.tsv" 2> /dev/null
cmp -s "$T/music.tsv" "$T/elsewhere/music.tsv" || fail "generate not deterministic"
echo "ok   deterministic for a seed"
"$GYRO" generate music --seed 10 -n 2000 --format tsv -o "$T/music10.tsv" 2> /dev/null
! cmp -s "$T/music.tsv" "$T/music10.tsv" || fail "seeds 9 and 10 give the same set"
"$GYRO" import --format tsv "$T/music.tsv" -o "$T/music.ex" 2> "$T/music.log"
expect "music re-import labels" "$(field "$T/music.log" labels)" 125
"$GYRO" generate music --seed 9 -n 300 -o "$T/music.stream" 2> /dev/null
# the stream and the TSV hold the same examples (the first 300 of the same seed)
cmp -s <("$GYRO" dump "$T/music.stream" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l); print("%s\t%s\t%s" % (e["text"], e["label"], e["session"]))') <(head -n 300 "$T/music.tsv") \
  || fail "generate: stream and tsv differ"
echo "ok   stream = tsv"
"$GYRO" split --seed 1 --dev 0.2 --train-out "$T/m.train" --dev-out "$T/m.dev" "$T/music.stream" 2> /dev/null

# ---- --data overrides the embedded set --------------------------------------------------------
mkdir -p "$T/mini/slots"
printf 'play_song\nquery_song+play_song\n' > "$T/mini/intents.txt"
printf 'play_song\t放{song}\nquery_song\t找{song}\n' > "$T/mini/templates.tsv"
printf '甲\n' > "$T/mini/slots/song.txt"
printf '然后\n' > "$T/mini/connectors.txt"
printf '请\n' > "$T/mini/prefixes.txt"
printf '吧\n' > "$T/mini/suffixes.txt"
expect "--data intents" "$("$GYRO" generate music --data "$T/mini" --list | wc -l)" 2
"$GYRO" generate music --data "$T/mini" -n 50 --format tsv -q | cut -f1 | sed 's/^请//; s/吧$//' | LC_ALL=C sort -u > "$T/mini.txt"
expect "--data texts" "$(tr '\n' ' ' < "$T/mini.txt")" "找甲然后放甲 放甲 "

# ---- exit codes -------------------------------------------------------------------------------
expect "generate --help" "$(code "$GYRO" generate --help)" 0
expect "generate unknown set" "$(code "$GYRO" generate poetry)" 2
expect "generate unknown option" "$(code "$GYRO" generate music --bogus)" 2
expect "generate bad format" "$(code "$GYRO" generate music --format csv -n 1)" 2
expect "generate missing data dir" "$(code "$GYRO" generate music --data "$T/none" -n 1)" 1
printf 'play_song\t放{singer}\nquery_song\t找{song}\n' > "$T/mini/templates.tsv"
set +e
"$GYRO" generate music --data "$T/mini" -n 1 --format tsv > /dev/null 2> "$T/bad.log"
rc=$?
set -e
expect "generate malformed templates" "$rc" 65
grep -q "templates.tsv:1: unknown slot {singer}" "$T/bad.log" || fail "message: $(cat "$T/bad.log")"
echo "all generate checks passed"
