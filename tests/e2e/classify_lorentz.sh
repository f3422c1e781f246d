#!/usr/bin/env bash
# classify_lorentz.sh — the Lorentz (HyboNet) geometry through `gyro classify`: train with
# --geometry lorentz, evaluate and predict unchanged, reproducible from the seed; a hyperboloid
# char2vec table is taken as it is (frozen and fine-tuned), a Poincaré table is converted with a
# notice and a hyperboloid table given to the Poincaré model likewise, a table of another
# curvature is mapped onto the model's ball with a notice; a model file of an
# unknown geometry exits 65 with the reason; --ball-optimizer radam trains the point tensors
# with Riemannian Adam on the hyperboloid.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
# shellcheck source=tests/e2e/lib/intents.sh
. "$(dirname "$0")/lib/intents.sh"
cd "$TMPDIR"

intents_data

opts=(--geometry lorentz --dim 16 --layers 2 --heads 2 --epochs 15 --batch 16 --optimizer adam
      --lr 0.01 --dev-fraction 0.2 --seed 5 --quiet)
"$GYRO" classify train "${opts[@]}" -o m1.clf data.pb
"$GYRO" classify train "${opts[@]}" -o m2.clf data.pb
cmp m1.clf m2.clf
"$GYRO" classify eval -m m1.clf data.pb > report.txt
acc=$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' report.txt)
awk -v a="$acc" 'BEGIN { exit !(a >= 90) }' || { echo "lorentz accuracy $acc% too low"; cat report.txt; exit 1; }
printf '播放晴天\n导航到机场\n' | "$GYRO" classify predict -m m1.clf -k 2 > out.jsonl
sed -n 1p out.jsonl | grep -q '"intents":\[{"label":"music.play"'
sed -n 2p out.jsonl | grep -q '"intents":\[{"label":"navigation.navigation"'

# Riemannian Adam on the hyperboloid for the point tensors (token, position and class points):
# it learns the set too, and differs from Riemannian SGD
"$GYRO" classify train "${opts[@]}" --ball-optimizer radam --ball-lr 0.01 -o m3.clf data.pb
"$GYRO" classify eval -m m3.clf data.pb > report3.txt
acc=$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' report3.txt)
awk -v a="$acc" 'BEGIN { exit !(a >= 90) }' || { echo "lorentz radam accuracy $acc% too low"; cat report3.txt; exit 1; }
! cmp -s m1.clf m3.clf || { echo "--ball-optimizer radam changed nothing"; exit 1; }

# char2vec tables: a hyperboloid one as it is, a Poincaré one converted with a notice
cut -f1 data.tsv > corpus.txt
"$GYRO" char2vec train --dim 16 --epochs 1 --min-count 1 --seed 1 -o hyp.tab corpus.txt 2>/dev/null
"$GYRO" convert --to poincare -q -o ball.tab hyp.tab
small=(--dim 16 --layers 1 --heads 2 --epochs 2 --batch 16 --dev-fraction 0 --seed 5 --quiet)
"$GYRO" classify train --geometry lorentz "${small[@]}" --embeddings hyp.tab -o e1.clf data.pb 2> e1.err
! grep -q notice e1.err || { echo "a hyperboloid table for the lorentz model is not converted"; cat e1.err; exit 1; }
"$GYRO" classify train --geometry lorentz "${small[@]}" --embeddings hyp.tab --freeze -o e2.clf data.pb 2> e2.err
"$GYRO" classify train --geometry lorentz "${small[@]}" --embeddings ball.tab -o e3.clf data.pb 2> e3.err
grep -q "notice: .*Poincaré.*converted to the hyperboloid" e3.err || { echo "no notice"; cat e3.err; exit 1; }
"$GYRO" classify train --geometry hyperbolic "${small[@]}" --embeddings hyp.tab -o e4.clf data.pb 2> e4.err
grep -q "notice: .*hyperboloid.*converted to the Poincaré ball" e4.err || { echo "no notice"; cat e4.err; exit 1; }
# a Poincaré table (curvature 1) for the default hyperbolic model (curvature 0.1): its rows are
# mapped onto the model's ball (scaled by sqrt(1/0.1)) with a notice, not refused
"$GYRO" classify train "${small[@]}" --embeddings ball.tab -o e5.clf data.pb 2> e5.err
grep -q "notice: the table's rows (curvature 1) are scaled by 3.162 onto the model's ball of curvature 0.1" e5.err \
  || { echo "no curvature notice"; cat e5.err; exit 1; }
for m in e1 e2 e3 e4 e5; do "$GYRO" classify eval -m $m.clf data.pb | grep -q '^accuracy:'; done

# a model file of an unknown geometry: exit 65 naming it (the CRC recomputed)
/usr/bin/python3 - m1.clf bad.clf <<'PY'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
key = struct.pack("<I", 8) + b"geometry"
i = b.index(key) + len(key)
assert struct.unpack_from("<d", b, i)[0] == 2.0
struct.pack_into("<d", b, i, 7.0)
n = struct.unpack_from("<Q", b, 16)[0]
struct.pack_into("<I", b, 24 + n, zlib.crc32(bytes(b[24:24 + n])))
open(sys.argv[2], "wb").write(b)
PY
rc=0; "$GYRO" classify predict -m bad.clf < /dev/null > /dev/null 2> bad.err || rc=$?
[ "$rc" = 65 ] && grep -q "geometry 7 is unknown" bad.err || { echo "unknown geometry: exit $rc, $(cat bad.err)"; exit 1; }
echo ok
