#!/bin/sh
# update-man.sh — rewrite the generated blocks of the man page from gyro's option tables.
#
#   doc/update-man.sh [GYRO [MAN]]     (defaults: build/gyro, doc/gyro.1)
#
# `gyro help --man` prints, for every command's option table (pipeline/cli/specs.def), a block
# between the lines `.\" BEGIN OPTIONS name ...` and `.\" END OPTIONS name`: the synopsis and one
# .TP paragraph per option. This script replaces each such block of MAN with the generated one,
# so the page says what --help says; the prose around the blocks is written by hand.
# tests/e2e/cli_basics.sh fails when the committed page differs from the generated blocks.
set -eu
gyro=${1:-build/gyro}
man=${2:-doc/gyro.1}
gen=$(mktemp)
trap 'rm -f "$gen" "$man.tmp"' EXIT
"$gyro" help --man > "$gen"
awk -v GEN="$gen" '
function key(line,   k) { k = line; sub(/^\.\\" (BEGIN|END) OPTIONS /, "", k); sub(/ .*$/, "", k); return k }
BEGIN {
  while ((getline line < GEN) > 0) {
    if (line ~ /^\.\\" BEGIN OPTIONS /) { cur = key(line); order[++n] = cur }
    block[cur] = block[cur] line "\n"
  }
}
/^\.\\" BEGIN OPTIONS / {
  k = key($0)
  if (!(k in block)) { print "update-man.sh: " FILENAME " has a block for " k ", which no option table names" > "/dev/stderr"; err = 1 }
  printf "%s", block[k]; seen[k] = 1; skip = 1; next
}
skip && /^\.\\" END OPTIONS / { skip = 0; next }
skip { next }
{ print }
END {
  for (i = 1; i <= n; i++)
    if (!(order[i] in seen)) { print "update-man.sh: " FILENAME " has no place for the options of " order[i] " (add the two marker lines)" > "/dev/stderr"; err = 1 }
  exit err
}' "$man" > "$man.tmp"
mv "$man.tmp" "$man"
