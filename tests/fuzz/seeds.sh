#!/usr/bin/env bash
# seeds.sh — build the seed corpus of every fuzz target into OUT/<target>/ from small real files:
# the committed text seeds of tests/fuzz/corpus/ and files made here by gyro itself (streams, a
# trained classifier, a policy, HRM models, embedding tables, a char2vec checkpoint and encoded
# corpus).
#   tests/fuzz/seeds.sh GYRO OUT
set -euo pipefail
G=$1 OUT=$2
here=$(cd "$(dirname "$0")" && pwd)
C=$here/corpus
rm -rf "$OUT"
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for t in stream json zip classifier policy table c2v_checkpoint normalize import_tsv import_nlpcc \
         import_smp import_crosswoz grpc hrm reflection; do mkdir -p "$OUT/$t"; done
q=(-q)
cp "$C"/tsv/* "$OUT/import_tsv/"
cp "$C"/nlpcc/* "$OUT/import_nlpcc/"
cp "$C"/smp/* "$OUT/import_smp/"
cp "$C"/crosswoz/* "$OUT/import_crosswoz/"
cp "$C"/json/* "$C"/smp/* "$C"/crosswoz/* "$OUT/json/"
cp "$C"/normalize/* "$OUT/normalize/"

# streams: Examples, Documents, and a table (any stream type goes through the reader)
"$G" generate music -n 40 -s 1 "${q[@]}" -o "$W/ex.pb"
"$G" import -f tsv "${q[@]}" -o "$W/tsv.pb" "$C/tsv/basic.tsv"
printf '播放周杰伦的稻香\n明天天气怎么样\n' | "$G" normalize -o "$W/doc.pb"
# a ZIP of the CrossWOZ seed, stored and deflated (Python's zipfile)
/usr/bin/python3 - "$C/crosswoz/crosswoz.json" "$W" <<'PY'
import sys, zipfile
src, w = sys.argv[1], sys.argv[2]
for name, method in (("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(f"{w}/{name}.zip", "w", method) as z:
        z.write(src, "val.json")
        z.writestr("README.txt", "not json")
PY
cp "$W"/stored.zip "$W"/deflated.zip "$OUT/zip/"
cp "$W"/deflated.zip "$OUT/import_crosswoz/"

# a classifier trained for one epoch, and its composite policy twin's input
"$G" classify train --dim 4 --layers 1 --heads 1 --epochs 1 --quiet -o "$W/m.clf" "$W/tsv.pb"
cp "$W/m.clf" "$OUT/classifier/"
# and the default n-gram model (format version 2), small
"$G" classify train --dim 4 --buckets 64 --epochs 1 --quiet -o "$W/ng.clf" "$W/tsv.pb"
cp "$W/ng.clf" "$OUT/classifier/"
# a policy and a transition model
"$G" rl transition --env vdp --episodes 2 --test-episodes 1 --epochs 1 -q --out "$W/t.pol" > /dev/null
cp "$W/t.pol" "$OUT/policy/"
# HRM models trained on a few generated puzzles (Euclidean and hyperbolic), as tests/e2e/hrm.sh
"$G" sudoku generate -q --seed 3 -n 8 --clues 45 > "$W/puzzles.txt"
hrm=(--dim 8 --heads 2 --head-dim 4 --ffn 16 -N 2 -T 1 -M 2 -b 8 -e 1 -q)
"$G" hrm train "${hrm[@]}" -o "$W/e.hrm" "$W/puzzles.txt" > /dev/null
"$G" hrm train "${hrm[@]}" -g hyperbolic -o "$W/h.hrm" "$W/puzzles.txt" > /dev/null
"$G" hrm train "${hrm[@]}" --q-pool mean -o "$W/m.hrm" "$W/puzzles.txt" > /dev/null
cp "$W/e.hrm" "$W/h.hrm" "$W/m.hrm" "$OUT/hrm/"
# embedding tables (hyperboloid, Poincaré) and a char2vec checkpoint with its encoded corpus
printf '山水花鸟风月山水花鸟\n风月山水花鸟风月\n' > "$W/c.txt"
"$G" char2vec train -q --dim 3 --epochs 1 --min-count 1 --keep-checkpoint -o "$W/c.hyp" "$W/c.txt"
"$G" convert --to poincare -o "$W/c.poi" "$W/c.hyp"
cp "$W/c.hyp" "$W/c.poi" "$OUT/table/"
cp "$W/c.hyp.ckpt" "$W/c.hyp.ckpt.ids" "$OUT/c2v_checkpoint/"
cp "$W/ex.pb" "$W/tsv.pb" "$W/doc.pb" "$W/c.hyp" "$OUT/stream/"

# gRPC: a method index byte, then a request whose field 1 is the text "播放周杰伦的稻香"
text=$(printf '播放周杰伦的稻香')
len=$(printf '%s' "$text" | wc -c)
for i in $(seq 0 9); do
  { printf "\\x$(printf %02x "$i")\\x0a\\x$(printf %02x "$len")"; printf '%s' "$text"; } > "$OUT/grpc/m$i"
  printf "\\x$(printf %02x "$i")" > "$OUT/grpc/e$i"
done

# reflection: the descriptor set the build compiled into gyro (beside the binary's build tree)
cp "$(dirname "$G")/gen/proto/descriptors/gyro.desc" "$OUT/reflection/"
