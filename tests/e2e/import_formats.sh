#!/usr/bin/env bash
# import_formats.sh — the importers for the formats users bring, each on real data:
#   conll  the CAIS layout (one character and its BIO tag per line, blank lines between
#          sentences, the intents in a second file), made from NLPCC 2018's slot-tagged column
#          and checked against the same utterances imported as TSV; the layout with the intent on
#          the last line of each sentence; the real MSRA NER file (dh_msra.txt, one character and
#          its BIO tag per line) with an intent file, and one that does not belong to it;
#   jsonl  SMP2020's records as JSON lines with --label-field domain,intent and a nested
#          --session-field, checked against `gyro import --format smp`; composite labels from an
#          array field; a malformed line reported with its line number;
#   fasttext  multi-label lines, checked in classify_text_input.sh.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
C="$SHARED/corpora"
for f in intent/nlpcc2018/corpus.train.txt intent/smp2020/2020train.json text/news/dh_msra.txt; do
  [ -f "$C/$f" ] || { echo "shared corpus $C/$f not found"; exit 77; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/import_formats.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }
# text and label of each Example, for comparing two imports
pairs() { "$GYRO" dump "$1" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l); print(e["text"] + "\t" + e["label"])'; }

# ---- CAIS layout from NLPCC's tagged column --------------------------------------------------------
python3 - "$C/intent/nlpcc2018/corpus.train.txt" <<'PY'
import re, sys
tag = re.compile(r"<(\w+)>(.*?)</\1>")
n = slots = 0
with open(sys.argv[1], encoding="utf-8") as f, open("ch.train", "w", encoding="utf-8") as tr, \
     open("ch.train.intent", "w", encoding="utf-8") as it, open("ref.tsv", "w", encoding="utf-8") as ref, \
     open("merged.txt", "w", encoding="utf-8") as mg:
    for line in f:
        col = line.rstrip("\r\n").split("\t")
        if len(col) != 4 or " " in col[3] or not col[1].strip() or n >= 2000:
            continue
        chars, tags, pos, k = [], [], 0, 0
        for m in tag.finditer(col[3]):
            for ch in col[3][pos:m.start()]: chars.append(ch); tags.append("O")
            for i, ch in enumerate(m.group(2)): chars.append(ch); tags.append(("B-" if i == 0 else "I-") + m.group(1))
            k += 1 if m.group(2) else 0
            pos = m.end()
        for ch in col[3][pos:]: chars.append(ch); tags.append("O")
        if "".join(chars) != col[1]:
            continue                    # a few tagged columns disagree with the utterance
        n += 1
        slots += k
        body = "".join(f"{c} {t}\n" for c, t in zip(chars, tags))
        tr.write(body + "\n"); it.write(col[2] + "\n"); mg.write(body + col[2] + "\n\n")
        ref.write(f"{col[1]}\t{col[2]}\n")
print(n, slots, file=open("counts", "w"))
PY
read -r n slots < counts
"$GYRO" import --format conll --intents ch.train.intent -o cais.pb ch.train 2> cais.log
cat cais.log
grep -q "^gyro import: $n examples, .* $slots slots (1 file, format conll)" cais.log || fail "conll summary, expected $n examples and $slots slots"
"$GYRO" import -q --format tsv -o ref.pb ref.tsv
cmp -s <(pairs cais.pb) <(pairs ref.pb) || fail "CAIS import differs from the TSV of the same utterances: $(diff <(pairs cais.pb) <(pairs ref.pb) | head -4)"
ok "conll + intent file: $n sentences, $slots slots, the same texts and labels as the TSV"
"$GYRO" import --format conll -o merged.pb merged.txt 2> merged.log
cmp -s <(pairs merged.pb) <(pairs ref.pb) || fail "intent-on-the-last-line layout differs"
ok "conll with the intent on the last line of each sentence: the same examples"
# the classifier trains on it directly from the import
"$GYRO" classify train -q --epochs 2 -o cais.clf cais.pb
ok "classify train on the CAIS import"

# ---- the real MSRA NER file (a character and its tag per line) -------------------------------------
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 1500' "$C/text/news/dh_msra.txt" > msra.txt
s=$(awk 'BEGIN { RS = "" } END { print NR }' msra.txt)
awk -v n="$s" 'BEGIN { for (i = 0; i < n; i++) print "news" }' > msra.intent
"$GYRO" import --format conll --intents msra.intent -o msra.pb msra.txt 2> msra.log
cat msra.log
grep -q "^gyro import: $s examples, $s sessions, 1 labels" msra.log || fail "MSRA: expected $s sentences"
first=$(awk 'BEGIN { RS = "" } NR == 1 { n = split($0, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], f, "\t"); printf "%s", f[1] } }' msra.txt)
"$GYRO" dump msra.pb | sed -n 1p | grep -qF "\"text\":\"$first\"" || fail "MSRA first sentence: $("$GYRO" dump msra.pb | sed -n 1p)"
ok "MSRA NER (dh_msra.txt): $s sentences, the first rebuilt from its characters"
head -n $((s - 1)) msra.intent > short.intent
set +e; "$GYRO" import --format conll --intents short.intent -o x.pb msra.txt 2> err.txt; rc=$?; set -e
[ "$rc" = 65 ] && grep -q "msra.txt has $s sentences but short.intent has $((s - 1)) intents" err.txt \
  || fail "intent count mismatch: exit $rc, $(cat err.txt)"
[ ! -e x.pb ] || fail "output written despite the mismatch"
ok "an intent file one line short: exit 65, $(cat err.txt)"
{ printf '播 O\n放 B-song\n歌 X-song\n\n下 O\n一 O\n首 O\n'; } > badtag.txt
printf 'music.play\nmusic.next\n' > badtag.intent
"$GYRO" import --format conll --intents badtag.intent -o bt.pb badtag.txt 2> bt.log
grep -q "badtag.txt:3: 'X-song' is not a BIO tag" bt.log && grep -q "^gyro import: 1 examples" bt.log \
  || fail "bad tag: $(cat bt.log)"
[ "$(pairs bt.pb)" = "$(printf '下一首\tmusic.next')" ] || fail "the sentence after a bad one got the wrong intent: $(pairs bt.pb)"
set +e; "$GYRO" import --strict --format conll --intents badtag.intent -o bt2.pb badtag.txt 2> err.txt; rc=$?; set -e
[ "$rc" = 65 ] || fail "strict bad tag: exit $rc"
ok "a bad tag: skipped with its line (the next sentence keeps its own intent), exit 65 with --strict"

# ---- JSON lines from SMP2020 -----------------------------------------------------------------------
python3 - "$C/intent/smp2020/2020train.json" <<'PY'
import json, sys
recs = json.load(open(sys.argv[1], encoding="utf-8"))
with open("smp.jsonl", "w", encoding="utf-8") as out:
    for i, r in enumerate(recs):
        out.write(json.dumps({"text": r["text"], "domain": r["domain"], "intent": r["intent"],
                              "meta": {"dialogue": i // 4}}, ensure_ascii=False) + "\n")
PY
"$GYRO" import --format jsonl --label-field domain,intent --session-field meta.dialogue -o jl.pb smp.jsonl 2> jl.log
cat jl.log
"$GYRO" import -q --format smp -o smp.pb "$C/intent/smp2020/2020train.json"
grep -q "^gyro import: 5024 examples, 1256 sessions, 91 labels" jl.log || fail "jsonl summary"
# SMP labels a record with no intent by its domain alone; JSON lines join what is there
cmp -s <(pairs jl.pb) <(pairs smp.pb) || fail "jsonl differs from the smp import: $(diff <(pairs jl.pb) <(pairs smp.pb) | head -4)"
ok "JSON lines (--label-field domain,intent, --session-field meta.dialogue) = the SMP import"
printf '{"q":"播放稻香","acts":["query_song","play_song"],"sid":7}\n\n{"q":"下一首","acts":"music.next","sid":7}\n{"q":"x", "acts":\n{"q":"暂停","acts":3,"sid":8}\n' > small.jsonl
"$GYRO" import --format jsonl --text-field q --label-field acts --session-field sid -o small.pb small.jsonl 2> small.log
cat small.log
"$GYRO" dump small.pb | sed -n 1p | grep -q '"label":"query_song+play_song".*"session":"7"' || fail "array label: $("$GYRO" dump small.pb | sed -n 1p)"
grep -q "small.jsonl:4: malformed JSON at column" small.log || fail "malformed line not reported with its line"
grep -q "^gyro import: 3 examples, 2 sessions" small.log || fail "small jsonl summary"
ok "JSON lines: an array label is a composite, a number is a label, a malformed line is reported at its line"
set +e; "$GYRO" import --format tsv --label-field x -o y.pb ref.tsv 2> err.txt; rc=$?; set -e
[ "$rc" = 2 ] || fail "--label-field with tsv: exit $rc"
echo "import_formats: all ok"
