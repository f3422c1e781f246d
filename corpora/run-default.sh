#!/usr/bin/env bash
# run-default.sh — the `make run` job on the embedded default corpus.
#
#   corpora/run-default.sh path/to/gyro
#
# The default corpus is the Chinese text of Debian's fortunes-zh package (quotes, 唐诗三百首,
# 宋词一百首), installed by `make deps` under /usr/share/games/fortunes. Entries are separated
# by lines holding only "%"; they carry ANSI colour escapes, which the normalize stage removes.
#
# The job runs in numbered steps, each a shell function below; work files go to run/ beside the
# gyro binary (e.g. build/run/). Later stages (char2vec training, classification) are added as
# further steps after the last one, reading the files the earlier steps leave.
set -euo pipefail

GYRO=${1:?usage: corpora/run-default.sh path/to/gyro}
GYRO=$(cd "$(dirname "$GYRO")" && pwd)/$(basename "$GYRO")
FORTUNES=${FORTUNES:-/usr/share/games/fortunes}
WORK=${GYRO_RUN_DIR:-$(dirname "$GYRO")/run}
mkdir -p "$WORK"

step() { printf '\n== step %s: %s\n' "$1" "$2"; }

# Step 1 — collect the entries of fortunes-zh as paragraphs (one blank line between entries;
# blank lines inside an entry are dropped so an entry stays one document).
collect_fortunes() {
  step 1 "collect the Chinese text of fortunes-zh ($FORTUNES)"
  local f found=0
  : > "$WORK/fortunes-zh.txt"
  for f in chinese tang300 song100; do
    if [ -r "$FORTUNES/$f" ]; then
      awk '/^%[[:space:]]*$/ { print ""; next } /^[[:space:]]*$/ { next } { print }' \
        "$FORTUNES/$f" >> "$WORK/fortunes-zh.txt"
      printf '\n' >> "$WORK/fortunes-zh.txt"
      found=$((found + 1))
    fi
  done
  if [ $found = 0 ]; then
    echo "run-default: fortunes-zh is not installed ($FORTUNES); run 'make deps'" >&2
    exit 1
  fi
  echo "$found files, $(wc -c < "$WORK/fortunes-zh.txt") bytes -> $WORK/fortunes-zh.txt"
}

# Step 2 — normalize: NFKC, Traditional->Simplified, ANSI escapes and controls removed,
# whitespace folded, grapheme clusters; one Document per entry.
normalize_fortunes() {
  step 2 "gyro normalize --paragraphs"
  "$GYRO" normalize --paragraphs -o "$WORK/fortunes-zh.pb" "$WORK/fortunes-zh.txt"
  echo "-> $WORK/fortunes-zh.pb"
}

# Step 3 — show a sample: a few normalized entries as text, and one Document as JSON.
show_sample() {
  step 3 "a sample of the normalized text"
  "$GYRO" dump "$WORK/fortunes-zh.pb" \
    | /usr/bin/python3 -c '
import json, sys
docs = [json.loads(line) for line in sys.stdin]
picks = [docs[i] for i in (0, len(docs) // 3, len(docs) // 2, len(docs) - 1)] if docs else []
for d in picks:
    print("  [%s:%s] %s" % (d["source"].split("/")[-1], d["line"], d["text"][:120]))
' 2> /dev/null || "$GYRO" normalize --paragraphs --text -q "$WORK/fortunes-zh.txt" | head -n 4
  printf '\none record of the stream (gyro dump -n 1):\n'
  "$GYRO" dump -n 1 "$WORK/fortunes-zh.pb" | cut -c1-400
}

collect_fortunes
normalize_fortunes
show_sample

# Step 4 — generate the music set: the labelled music-domain intent set (125 intents of the seed
# paper's appendix D, composites included) from the templates of corpora/music/ compiled into
# gyro (so no --data: it works from any directory), 16,332 utterances like the seed's, split by
# session with 15% held out as the seed did. Leaves music.train and music.dev.
generate_music() {
  step 4 "generate the music set (gyro generate music) and split it by session"
  "$GYRO" generate music --seed 1 -n 16332 -o "$WORK/music.examples"
  "$GYRO" split --seed 1 --dev 0.15 --train-out "$WORK/music.train" --dev-out "$WORK/music.dev" \
    "$WORK/music.examples"
  "$GYRO" generate music --seed 1 -n 6 --format tsv -q | sed 's/^/  /'
}
generate_music

# Step 5 — char2vec: character embeddings on the hyperboloid from the normalized fortunes-zh
# stream (a small model: dim 50, 5 epochs, 2 threads), their nearest neighbours, and the table
# converted to the Poincare ball for the classifier. Leaves chars.hyp and chars.poi.
train_char2vec() {
  step 5 "gyro char2vec train on the normalized text, neighbours, conversion to the ball"
  "$GYRO" char2vec train --dim 50 --epochs 5 --threads 2 --min-count 5 --checkpoint-every 0 \
    -o "$WORK/chars.hyp" "$WORK/fortunes-zh.pb"
  "$GYRO" neighbors -t "$WORK/chars.hyp" -k 6 水 火 爱 听 歌 |
    awk -F'\t' '{ a[$1] = a[$1] sprintf(" %s(%.2f)", $3, $4) } END { n = split("水 火 爱 听 歌", q, " "); for (i = 1; i <= n; i++) print "  " q[i] ":" a[q[i]] }'
  "$GYRO" convert --to poincare -o "$WORK/chars.poi" "$WORK/chars.hyp"
}
train_char2vec

# Step 6 — intent classification with gyro classify train's defaults: the hyperbolic bag of
# character n-grams (Einstein midpoint of the character and hashed n-gram rows in the Poincare
# ball, c = 0.1, hyperbolic MLR, Riemannian SGD; the previous turn's features where the data
# has sessions, which the music set has not), its character rows starting from the Poincare
# table of step 5 (fine-tuned; its dimension sets the model's), trained on music.train with
# the best epoch chosen on music.dev; then the dev report and a few utterances classified.
classify_music() {
  step 6 "gyro classify train on the music set, eval on its dev split, predict sample utterances"
  local emb=()
  [ -r "$WORK/chars.poi" ] && emb=(--embeddings "$WORK/chars.poi")
  "$GYRO" classify train "${emb[@]}" --seed 1 --dev "$WORK/music.dev" \
    -o "$WORK/music.clf" "$WORK/music.train"
  "$GYRO" classify eval -m "$WORK/music.clf" --svg "$WORK/music.confusion.svg" --confusion 8 \
    "$WORK/music.dev" | sed -n '1,8p'
  echo "  (full report: gyro classify eval -m $WORK/music.clf $WORK/music.dev; image: $WORK/music.confusion.svg)"
  printf '我想听茉莉花\n这首加到收藏夹\n音量调到最小\n搜蓝调类型的歌曲然后单曲循环\n附近有什么好吃的\n' |
    "$GYRO" classify predict -m "$WORK/music.clf" -k 2
}
classify_music
