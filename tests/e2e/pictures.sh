#!/usr/bin/env bash
# pictures.sh — the pictures rendered by a real SVG renderer (librsvg's rsvg-convert, the one
# `gyro plot --png` and `gyro classify eval --png` spawn), as a reader would see them:
#   - the font list gyro names draws Chinese: 一 and 国 rendered through it must be real glyphs
#     (一 a flat bar, 国 several times its ink), which a missing-glyph box is not; the checker
#     is first run with a font configuration that has no CJK font, where it must fail;
#   - `gyro plot` of a char2vec table (tang300): PNG of the SVG's size, labels only where they
#     fit (no two label boxes overlap; with many asked, fewer placed and the legend says so),
#     a legend, and the labels draw ink (the PNG differs from the same SVG without them);
#   - `gyro classify eval --svg/--png` on intents with Chinese names: title, axis titles, both
#     colour scales, PNG of the SVG's size, the Chinese class names drawn;
#   - without rsvg-convert on PATH, --png fails with a message naming the package.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
root=$PWD
command -v rsvg-convert > /dev/null || { echo "SKIP: no rsvg-convert (make deps installs librsvg2-bin)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
corpus=${SHARED:-../shared}/corpora/text/fortunes-zh/tang300
[ -r "$corpus" ] || { echo "SKIP: no $corpus"; exit 77; }
. "$root/tests/e2e/lib/intents.sh"
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }

# png.py: PNG facts from the file itself (8-bit RGB/RGBA, non-interlaced: what rsvg-convert writes)
cat > png.py <<'EOF'
import struct, sys, zlib
def read(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, w = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR': w, h, depth, color, _, _, inter = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT': idat += body
        pos += 12 + n
    assert depth == 8 and color in (2, 6) and inter == 0, 'unexpected PNG layout'
    bpp = 4 if color == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line); prev = line
    return w, h, bpp, rows
def ink(path):
    """pixels darker than mid-grey (alpha-composited on white) and their bounding box"""
    w, h, bpp, rows = read(path)
    n, x0, y0, x1, y1 = 0, w, h, -1, -1
    for y, r in enumerate(rows):
        for x in range(w):
            px = r[x * bpp:(x + 1) * bpp]; al = px[3] / 255 if bpp == 4 else 1
            lum = (0.299 * px[0] + 0.587 * px[1] + 0.114 * px[2]) * al + 255 * (1 - al)
            if lum < 128: n += 1; x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
    return n, x1 - x0 + 1, y1 - y0 + 1
def diff(a, b):
    """pixels that differ between two renderings of one size"""
    _, _, _, ra = read(a); _, _, _, rb = read(b)
    return sum(1 for p, q in zip(ra, rb) for u, v in zip(p, q) if abs(u - v) > 40)
cmd = sys.argv[1]
if cmd == 'size': w, h, _, _ = read(sys.argv[2]); print(w, h)
elif cmd == 'ink': print(*ink(sys.argv[2]))
elif cmd == 'diff': print(diff(sys.argv[2], sys.argv[3]))
EOF

svg_size() { sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' "$1" | head -1; }

# ---- glyphs, through the font list of gyro's SVG --------------------------------------------------
"$GYRO" char2vec train -q --dim 20 --epochs 1 --min-count 3 -o t.hyp "$corpus"
"$GYRO" plot -t t.hyp -o t.svg --png t.png
fonts=$(sed -n 's/.*<svg [^>]*font-family="\([^"]*\)".*/\1/p' t.svg | head -1)
case "$fonts" in *"Noto Sans CJK SC"*"WenQuanYi Micro Hei"*sans-serif) ;; *) fail "font list: $fonts" ;; esac
glyph() { # glyph CHAR OUT.png: CHAR alone at 200 px through gyro's font list
  printf '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="240"><rect width="240" height="240" fill="white"/><text x="20" y="200" font-size="200" font-family="%s">%s</text></svg>\n' \
    "$fonts" "$1" > "$2.svg"
  rsvg-convert --format png -o "$2" "$2.svg"
}
# glyphs_ok: 一 is a flat bar and 国 has at least 2.5 times its ink; a missing-glyph box is neither
glyphs_ok() {
  glyph 一 one.png; glyph 国 guo.png
  read -r n1 w1 h1 <<< "$(python3 png.py ink one.png)"
  read -r n2 _ _ <<< "$(python3 png.py ink guo.png)"
  echo "一: $n1 px of ink, ${w1}x${h1}; 国: $n2 px"
  [ "$n1" -gt 100 ] && [ $((h1 * 4)) -lt "$w1" ] && [ "$n2" -gt $((n1 * 5 / 2)) ]
}
mkdir -p nocjk
cat > nocjk/fonts.conf <<EOF
<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>/usr/share/fonts/truetype/dejavu</dir><cachedir>$TMPDIR/nocjk/cache</cachedir></fontconfig>
EOF
if out=$(FONTCONFIG_FILE="$TMPDIR/nocjk/fonts.conf" glyphs_ok); then
  fail "the glyph check passes without any CJK font ($out)"
fi
echo "ok   without a CJK font the check fails: $out"
out=$(glyphs_ok) || fail "Chinese is not drawn through the font list ($out; fc-list :lang=zh: $(fc-list :lang=zh family | head -3))"
echo "ok   Chinese drawn through gyro's font list: $out"

# ---- gyro plot -----------------------------------------------------------------------------------
read -r w h <<< "$(svg_size t.svg)"
[ "$(python3 "$TMPDIR/png.py" size t.png)" = "$w $h" ] || fail "PNG $(python3 png.py size t.png), SVG $w x $h"
nl=$(grep -c 'class="label"' t.svg)
[ "$nl" -ge 20 ] && [ "$nl" -le 40 ] || fail "$nl labels (default: at most 40)"
grep -q 'labelled: ' t.svg && grep -q 'other characters: ' t.svg || fail "no legend"
# no two label boxes overlap (boxes as gyro estimates them: 14 px high, a full em per CJK character)
python3 - t.svg <<'EOF' || fail "labels overlap"
import re, sys
boxes = []
for x, y, s in re.findall(r'<text class="label" x="([-0-9.]+)" y="([-0-9.]+)">([^<]*)</text>', open(sys.argv[1]).read()):
    w = sum(14 if ord(ch) >= 0x1100 else 0.6 * 14 for ch in s); x = float(x); top = float(y) - 0.86 * 14
    boxes.append((x, top, x + w, top + 14))
for i, a in enumerate(boxes):
    for b in boxes[:i]:
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]: sys.exit('overlap %s %s' % (a, b))
EOF
# the labels draw ink: the PNG without them differs
sed '/class="label"/d' t.svg > nolabels.svg
rsvg-convert --format png -o nolabels.png nolabels.svg
d=$(python3 png.py diff t.png nolabels.png)
[ "$d" -gt $((nl * 20)) ] || fail "the $nl labels change only $d pixels"
echo "ok   gyro plot: ${w}x${h} PNG, $nl labels that change $d pixels, none overlapping, a legend"
"$GYRO" plot -t t.hyp -o many.svg --labels 1000 --size 400
nm=$(grep -c 'class="label"' many.svg)
[ "$nm" -lt 1000 ] && grep -q ">labelled: $nm of the 1000 most frequent characters<" many.svg \
  && grep -q ">$((1000 - nm)) more left as points: no free place" many.svg \
  || fail "--labels 1000 on a 400 px picture: $nm labels placed, legend: $(grep -o 'labelled: [^<]*' many.svg)"
echo "ok   --labels 1000 --size 400: $nm readable labels, the rest points, and the legend says so"

# ---- the confusion matrix -----------------------------------------------------------------------
gen_intents | sed 's/music.play$/音乐.播放/; s/music.pause$/音乐.暂停/; s/navigation.navigation$/导航.出发/' > zh.tsv
"$GYRO" import -f tsv -q -o zh.pb zh.tsv
"$GYRO" classify train --arch ngrams --dim 16 --buckets 2000 --epochs 2 --lr 0.05 --dev-fraction 0 --seed 3 \
  --quiet -o zh.clf zh.pb
"$GYRO" classify eval -m zh.clf --svg cm.svg --png cm.png zh.pb > report.txt
for s in 'Confusion matrix: 144 examples' '>predicted intent<' '>true intent<' 'url(#scale-correct)' \
         'url(#scale-confused)' '>100%<' 'share of the true intent' '>音乐.播放<' "font-family=\"$fonts\""; do
  grep -qF -- "$s" cm.svg || fail "confusion SVG lacks $s"
done
read -r w h <<< "$(svg_size cm.svg)"
[ "$(python3 png.py size cm.png)" = "$w $h" ] || fail "confusion PNG $(python3 png.py size cm.png), SVG $w x $h"
# the Chinese class names draw ink
sed -E 's|>(音乐\.播放\|音乐\.暂停\|导航\.出发)</text>|></text>|g' cm.svg > cm-nonames.svg
rsvg-convert --format png -o cm-nonames.png cm-nonames.svg
d=$(python3 png.py diff cm.png cm-nonames.png)
[ "$d" -gt 300 ] || fail "the class names change only $d pixels"
echo "ok   confusion matrix: ${w}x${h} PNG, title, axis titles, colour scales, Chinese names ($d pixels)"

# ---- no renderer ----------------------------------------------------------------------------------
mkdir -p nopath
ln -s "$(command -v python3)" nopath/python3
if PATH="$TMPDIR/nopath" "$GYRO" plot -t t.hyp --png x.png 2> err; then fail "--png without rsvg-convert"; fi
grep -q "librsvg2-bin" err || { cat err; fail "message does not name librsvg2-bin"; }
[ ! -e x.png ] && [ -z "$(find . -maxdepth 1 -name '*.tmp.*')" ] || fail "a file left behind"
echo "ok   without rsvg-convert: $(cat err)"
echo PASS
