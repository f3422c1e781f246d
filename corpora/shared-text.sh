#!/bin/sh
# shared-text.sh — the Chinese text of ../shared/corpora/text as plain text, one document per
# line, for `gyro normalize` and `gyro char2vec train` (README, "A pretrained character table").
#
#   corpora/shared-text.sh [--modern] [DIR] > text.txt      (DIR: ../shared/corpora/text)
#
# Each source in the form a character model can read:
#   news/dh_msra.txt      MSRA NER, one character per line with its tag: the characters of a
#                         sentence (up to the blank line) joined into one line
#   reviews/*.csv         the review column only (the last), not the label columns
#   tatoeba/cmn.txt       the Mandarin column only (English and attribution dropped)
#   chinese-poetry/**.json  each poem's lines (paragraphs / content / para) as one line
#   fortunes-zh/*         the `%`-separated entries as lines
# --modern leaves out the classical poetry and the fortunes (Tang and Song poems).
# Needs python3 (standard library only) for the CSV and JSON sources. Exit 2 on a missing DIR.
set -eu
modern=0
if [ "${1:-}" = "--modern" ]; then modern=1; shift; fi
case "${1:-}" in -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
dir=${1:-../shared/corpora/text}
[ -d "$dir/news" ] || { echo "shared-text.sh: $dir has no news/ (give the shared text directory)" >&2; exit 2; }

awk -F '\t' 'NF == 0 || $0 == "" { if (s != "") print s; s = ""; next } { s = s $1 } END { if (s != "") print s }' \
    "$dir/news/dh_msra.txt"
python3 - "$dir" "$modern" <<'EOF'
import csv, glob, json, os, sys
d, modern = sys.argv[1], sys.argv[2] == "1"
out = sys.stdout
def line(s):
    s = " ".join(s.split())
    if s: out.write(s + "\n")
for f in sorted(glob.glob(os.path.join(d, "reviews", "*.csv"))):
    with open(f, encoding="utf-8-sig", newline="") as fh:
        rows = csv.reader(fh)
        next(rows, None)                        # the header
        for row in rows:
            if row: line(row[-1])
cmn = os.path.join(d, "tatoeba", "cmn.txt")
if os.path.exists(cmn):
    for l in open(cmn, encoding="utf-8"):
        p = l.rstrip("\n").split("\t")
        if len(p) > 1: line(p[1])
if not modern:
    for f in sorted(glob.glob(os.path.join(d, "chinese-poetry", "**", "*.json"), recursive=True)):
        try: data = json.load(open(f, encoding="utf-8"))
        except ValueError: continue             # not a poem file
        for it in data if isinstance(data, list) else [data]:
            if not isinstance(it, dict): continue
            for k in ("paragraphs", "content", "para"):
                v = it.get(k)
                if isinstance(v, list): line("".join(x for x in v if isinstance(x, str))); break
                if isinstance(v, str): line(v); break
    for f in sorted(glob.glob(os.path.join(d, "fortunes-zh", "*"))):
        if os.path.basename(f) == "copyright": continue
        for entry in open(f, encoding="utf-8", errors="replace").read().split("\n%\n"):
            line(entry)
EOF
