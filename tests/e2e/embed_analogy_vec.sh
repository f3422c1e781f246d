#!/usr/bin/env bash
# embed_analogy_vec.sh — fastText's and gensim's vector habits on a table trained on real text
# (fortunes-zh's 唐诗三百首):
#   gyro convert --from vec   a .vec written by `convert --to vec` loads back bit for bit (the
#                             hyperboloid and the ball); fastText's layout (trailing spaces) and
#                             GloVe's (no header) load; each malformed .vec exits 65 naming its line;
#   gyro embed                character vectors are the table's rows; a sentence of a Poincaré
#                             table (Einstein midpoint) is the same point as the sentence of the
#                             hyperboloid table (Lorentz centroid); an n-gram model's sentence is
#                             its pooled point (for a Euclidean characters-only model, the mean of
#                             the characters' rows); lines are answered one at a time on a pipe;
#   gyro analogy              sections and totals on a real table; on a constructed ball the gyro
#                             method finds d = c ⊕ gyr[c,⊖a](⊖a ⊕ b) (computed here in Python),
#                             which the naive Euclidean c + b − a misses, and 3CosAdd finds the
#                             parallelogram corner of a Euclidean table.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
TXT="$SHARED/corpora/text/fortunes-zh/tang300"
NL="$SHARED/corpora/intent/nlpcc2018/corpus.train.txt"
[ -f "$TXT" ] && [ -f "$NL" ] || { echo "shared corpora not found"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/embed_analogy_vec.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }

"$GYRO" char2vec train -q --dim 16 --epochs 2 --min-count 3 --seed 5 -o h.tbl "$TXT"
"$GYRO" convert -q --to poincare -o p.tbl h.tbl

# ---- convert --from vec -----------------------------------------------------------------------------
"$GYRO" convert --to vec h.tbl > h.vec
"$GYRO" convert --to vec p.tbl > p.vec
read -r rows cols < h.vec
"$GYRO" convert -q --from vec --model hyperboloid -o h2.tbl h.vec
"$GYRO" convert --to vec h2.tbl | cmp -s - h.vec || fail "hyperboloid .vec round trip"
"$GYRO" convert -q --from vec --model poincare -o p2.tbl p.vec
"$GYRO" convert --to vec p2.tbl | cmp -s - p.vec || fail "Poincare .vec round trip"
ok "convert --from vec: $rows rows x $cols columns back to the same table (hyperboloid and ball)"
sed 's/$/ /' p.vec > ft.vec                          # fastText ends each row with a space
"$GYRO" convert -q --from vec -o e.tbl ft.vec
tail -n +2 p.vec > glove.vec                          # GloVe: no header line
"$GYRO" convert --from vec -o g.tbl glove.vec 2> glove.log
grep -q "no header line" glove.log || fail "headerless: $(cat glove.log)"
cmp -s <("$GYRO" convert --to vec e.tbl) <("$GYRO" convert --to vec g.tbl) || fail "fastText and GloVe layouts differ"
[ "$("$GYRO" convert --to vec e.tbl | sed -n 1p)" = "$rows 16" ] || fail "euclidean table header"
ok "fastText's trailing spaces and GloVe's missing header load the same euclidean table"
bad() { # name, expected message, .vec content on stdin, extra options
  local name=$1 msg=$2; shift 2
  cat > bad.vec
  set +e; "$GYRO" convert -q --from vec "$@" -o bad.tbl bad.vec 2> err.txt; local rc=$?; set -e
  [ "$rc" = 65 ] || fail "$name: exit $rc ($(cat err.txt))"
  grep -qF -- "$msg" err.txt || fail "$name: '$(cat err.txt)', expected '$msg'"
  [ ! -e bad.tbl ] || fail "$name: a table was written"
  ok "$name: exit 65, $(cat err.txt)"
}
head -5 p.vec | bad "truncated (header says more rows)" "bad.vec: the header says $rows rows, the file has 4"
{ echo "2 3"; echo "甲 1 2 3"; echo "乙 1 2"; } | bad "a row of the wrong dimension" "bad.vec:3: 2 values after the token, expected 3"
{ echo "2 3"; echo "甲 1 2 3"; echo "乙 1 2 3 4"; } | bad "a row too long" "bad.vec:3: 4 values after the token, expected 3"
{ echo "2 2"; echo "甲 1 nan"; echo "乙 1 2"; } | bad "NaN" "bad.vec:2: value 2 ('nan') is not finite"
{ echo "2 2"; echo "甲 1 2"; echo "乙 1e39 2"; } | bad "overflows float32" "bad.vec:3: value 1 ('1e39') is not finite (in float32)"
{ echo "2 2"; echo "甲 1 x2"; echo "乙 1 2"; } | bad "not a number" "bad.vec:2: value 2 ('x2') is not a number"
{ echo "2 2"; echo "甲 1 2"; echo "甲 1 2"; } | bad "duplicate token" "bad.vec:3: duplicate token"
{ echo "0 2"; } | bad "empty header" "rows and columns must be positive"
{ echo "2 2"; echo "甲 0.9 0.9"; echo "乙 0 0"; } | bad "outside the ball" "bad.vec:2: '甲' is not inside the Poincare ball" --model poincare
{ echo "1 3"; echo "甲 1 1 1"; } | bad "off the hyperboloid" "bad.vec:2: '甲' is not on the hyperboloid" --model hyperboloid

# ---- embed ---------------------------------------------------------------------------------------
echo "床前明月光" | "$GYRO" embed -t h.tbl > chars.txt
[ "$(wc -l < chars.txt)" = 5 ] || fail "embed: 5 characters, got $(wc -l < chars.txt) lines"
for ch in 床 月; do
  [ "$(grep "^$ch " chars.txt)" = "$(grep "^$ch " h.vec)" ] || fail "embed: the row of $ch differs from the table's"
done
ok "embed -t: one line per character, the table's own row (17 hyperboloid coordinates)"
echo "床前☃光" | "$GYRO" embed -t p.tbl 2> unk.log | grep '^☃ ' | grep -q '^☃ 0 0 0' || fail "unknown character not at the origin"
grep -q "1 of 4 characters not in the table" unk.log || fail "unknown count: $(cat unk.log)"
ok "embed: a character missing from the table is printed at the origin and counted"
printf '床前明月光\n疑是地上霜\n' | "$GYRO" embed -t p.tbl --sentence > sp.txt
printf '床前明月光\n疑是地上霜\n' | "$GYRO" embed -t h.tbl --sentence > sh.txt
python3 - <<'PY' || fail "sentence points of the ball and the hyperboloid differ"
import math
P = [list(map(float, l.split())) for l in open("sp.txt")]
H = [list(map(float, l.split())) for l in open("sh.txt")]
assert len(P) == 2 and len(H) == 2 and len(P[0]) == 16 and len(H[0]) == 17
for p, h in zip(P, H):
    b = [x / (1 + h[0]) for x in h[1:]]            # hyperboloid -> ball
    err = max(abs(x - y) for x, y in zip(p, b))
    assert err < 1e-4, err
    assert abs(-h[0] ** 2 + sum(x * x for x in h[1:]) + 1) < 1e-3
print("max difference", err)
PY
ok "embed --sentence: the Einstein midpoint in the ball = the Lorentz centroid on the hyperboloid"
awk -F'\t' 'NF >= 3 && n < 2000 { n++; print $2 "\t" $3 }' "$NL" > d.tsv
"$GYRO" classify train -q --geometry euclidean --max-n 1 --buckets 0 --no-context --epochs 2 --dim 8 -o e.clf d.tsv
printf '播放音乐\n' | "$GYRO" embed -m e.clf > mc.txt
printf '播放音乐\n' | "$GYRO" embed -m e.clf --sentence > ms.txt
python3 - <<'PY' || fail "n-gram sentence point is not the mean of its characters' rows"
rows = [list(map(float, l.split()[1:])) for l in open("mc.txt")]
s = list(map(float, open("ms.txt").read().split()))
mean = [sum(c) / len(rows) for c in zip(*rows)]
assert len(rows) == 4 and len(s) == 8
assert max(abs(a - b) for a, b in zip(s, mean)) < 1e-5, (s, mean)
PY
ok "embed -m --sentence: a euclidean characters-only model pools the mean of its rows"
"$GYRO" classify train -q --epochs 2 --dim 8 -o hyp.clf d.tsv
printf '播放音乐\n' | "$GYRO" embed -m hyp.clf --sentence | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i * $i; exit !(NF == 8 && s < 1) }' \
  || fail "hyperbolic model's sentence point not in the ball"
ok "embed -m --sentence: a hyperbolic model's pooled point lies in the ball"
# one line at a time on a pipe
coproc E { "$GYRO" embed -t p.tbl --sentence; }
epid=$E_PID # bash unsets E_PID once the coprocess has ended; its status stays with wait
for s in 床前明月光 疑是地上霜; do
  echo "$s" >&"${E[1]}"
  IFS= read -r -t 10 v <&"${E[0]}" || fail "embed answered no line for $s within 10 s"
done
exec {E[1]}>&-
wait "$epid" || fail "embed on a pipe exited with $?"
ok "embed on a pipe answers each line before the next"

# ---- analogy ---------------------------------------------------------------------------------------
printf ': 反义\n大 小 多 少\n上 下 左 右\n: 诗\n明月 月光 白日 日光\n' > real.txt
"$GYRO" analogy -t h.tbl real.txt > real.out
cat real.out
grep -q '^反义: 2/2 answered' real.out && grep -q '^诗: 1/1 answered' real.out && grep -q '^total: 3/3 answered' real.out \
  || fail "analogy sections"
ok "analogy on the real table: per-section and total lines"
# a constructed ball: d = c ⊕ gyr[c,⊖a](⊖a ⊕ b) is a row; so is the naive c + b − a
python3 - <<'PY'
def dot(x, y): return sum(a * b for a, b in zip(x, y))
def madd(x, y, c=1.0):
    xy, x2, y2 = dot(x, y), dot(x, x), dot(y, y)
    den = 1 + 2 * c * xy + c * c * x2 * y2
    return [((1 + 2 * c * xy + c * y2) * a + (1 - c * x2) * b) / den for a, b in zip(x, y)]
def neg(x): return [-v for v in x]
def gyr(u, v, w): return madd(neg(madd(u, v)), madd(u, madd(v, w)))
a, b, c = [0.1, 0.6], [0.5, 0.2], [-0.6, -0.3]
ab = madd(neg(a), b)
d = madd(c, gyr(c, neg(a), ab))
naive = [c[i] + b[i] - a[i] for i in range(2)]
rows = {"甲": a, "乙": b, "丙": c, "丁": d, "戊": naive, "己": [0.0, 0.7], "庚": [-0.7, 0.0], "辛": [0.2, -0.2]}
assert all(dot(v, v) < 1 for v in rows.values())
with open("ball.vec", "w") as f:
    f.write(f"{len(rows)} 2\n")
    for k, v in rows.items(): f.write(k + " " + " ".join(f"{x:.9f}" for x in v) + "\n")
with open("euc.vec", "w") as f:   # a parallelogram: 丁 = 丙 + 乙 − 甲
    f.write("6 2\n甲 1 0\n乙 1 1\n丙 -1 0\n丁 -1 1\n戊 0 -1\n己 -1 -1\n")
print("d =", d, "naive =", naive)
PY
"$GYRO" convert -q --from vec --model poincare -o ball.tbl ball.vec
printf ': gyro\n甲 乙 丙 丁\n' > q.txt
"$GYRO" analogy -t ball.tbl q.txt --show 1 > ball.out 2> ball.err || fail "analogy on the ball: $(cat ball.err)"
grep -q '^total: 1/1 answered, 1 correct' ball.out || fail "gyro analogy missed d: $(cat ball.out ball.err)"
printf ': gyro\n甲 乙 丙 戊\n' > q2.txt
"$GYRO" analogy -t ball.tbl q2.txt > ball2.out
grep -q '^total: 1/1 answered, 0 correct' ball2.out || fail "the naive c + b - a was chosen"
ok "analogy --method gyro finds c (+) gyr[c,(-)a]((-)a (+) b), not c + b - a"
"$GYRO" convert -q --from vec -o euc.tbl euc.vec
"$GYRO" analogy -t euc.tbl q.txt > euc.out
grep -q '^method: 3CosAdd' euc.out && grep -q '^total: 1/1 answered, 1 correct' euc.out || fail "3CosAdd: $(cat euc.out)"
set +e; "$GYRO" analogy -t euc.tbl --method gyro q.txt 2> /dev/null; rc=$?; set -e
[ "$rc" = 2 ] || fail "gyro method on a euclidean table: exit $rc"
printf ': s\n甲 乙 丙\n' > badq.txt
set +e; "$GYRO" analogy -t euc.tbl badq.txt 2> err.txt; rc=$?; set -e
[ "$rc" = 65 ] && grep -q 'badq.txt:2: expected four words' err.txt || fail "malformed question: exit $rc, $(cat err.txt)"
ok "3CosAdd finds the parallelogram corner; a three-word line exits 65 with its line"
echo "embed_analogy_vec: all ok"
