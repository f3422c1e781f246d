#!/usr/bin/env bash
# progress_stream.sh — --progress-stream FILE writes gyro.v1.TrainingProgress records for
# classify train (on real NLPCC utterances, read live from a FIFO by `gyro dump` while training
# runs), char2vec train (on fortunes-zh) and rl finetune: the stage named, fractions rising to 1,
# steps counting 1, 2, ..., epochs within the number asked for; and an unwritable FILE exits 1
# before training.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
NL="$SHARED/corpora/intent/nlpcc2018/corpus.train.txt"
TXT="$SHARED/corpora/text/fortunes-zh/tang300"
[ -f "$NL" ] && [ -f "$TXT" ] || { echo "shared corpora not found"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/progress_stream.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }

check() { # jsonl, stage, epochs (0: none)
  python3 - "$@" <<'PY'
import json, sys
path, stage, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
recs = [json.loads(l) for l in open(path)]
assert len(recs) >= 1, f"{len(recs)} records"
assert all(r["stage"] == stage for r in recs), "stage"
fr = [r.get("fraction", 0.0) for r in recs]
assert fr == sorted(fr) and abs(fr[-1] - 1) < 1e-9, f"fractions {fr}"
assert [int(r["step"]) for r in recs] == list(range(1, len(recs) + 1)), "steps"
if epochs:
    ep = [r.get("epoch", 0) for r in recs]
    assert all(1 <= e <= epochs for e in ep) and ep[-1] == epochs, f"epochs {ep}"
assert all(r["elapsed_seconds"] >= 0 for r in recs if "elapsed_seconds" in r)
print(f"{len(recs)} records, fractions {fr[0]:.2f}..{fr[-1]:.2f}")
PY
}

awk -F'\t' 'NF >= 3 && n < 5000 { n++; print $2 "\t" $3 }' "$NL" > d.tsv
mkfifo progress.fifo
# the reader notes when each record arrives (the header is record 0) and keeps the bytes
python3 - progress.fifo classify.pb classify.times <<'PY' &
import sys, time
src, out, times = sys.argv[1:]
with open(src, "rb") as f, open(out, "wb") as o, open(times, "w") as t:
    while True:
        n, shift, raw = 0, 0, b""
        while True:
            b = f.read(1)
            if not b:
                sys.exit(0)
            raw += b
            n |= (b[0] & 0x7F) << shift
            shift += 7
            if not b[0] & 0x80:
                break
        body = f.read(n)
        o.write(raw + body); o.flush()
        t.write(f"{time.monotonic()}\n"); t.flush()
PY
reader=$!
"$GYRO" classify train -q --epochs 12 --progress-stream progress.fifo -o m.clf d.tsv
wait "$reader" || fail "the FIFO reader failed"
"$GYRO" dump classify.pb > classify.jsonl
r=$(check classify.jsonl classify 12) || fail "classify progress records"
# live: the first record came well before the last (training takes about a second or more)
gap=$(awk 'NR == 2 { a = $1 } { b = $1 } END { printf "%.2f", b - a }' classify.times)
awk -v g="$gap" 'BEGIN { exit !(g > 0.2) }' || fail "records did not arrive while training ran (gap ${gap}s)"
ok "classify train: $r, read live from a FIFO (first to last record ${gap}s apart)"

"$GYRO" char2vec train -q --dim 16 --epochs 2 --progress-stream c2v.pb -o t.tbl "$TXT"
"$GYRO" dump c2v.pb > c2v.jsonl
r=$(check c2v.jsonl char2vec 2) || fail "char2vec progress records"
ok "char2vec train: $r"

"$GYRO" rl finetune --env root --iterations 3 --states 4 --group 4 --epochs 2 --eval 4 --eval-every 1 -q \
  --seed 3 --progress-stream rl.pb --out rl.bin > /dev/null
"$GYRO" dump rl.pb > rl.jsonl
r=$(check rl.jsonl rl 0) || fail "rl progress records"
ok "rl finetune: $r"

set +e; "$GYRO" classify train -q --progress-stream /nonexistent/dir/p.pb -o x.clf d.tsv 2> err.txt; rc=$?; set -e
[ "$rc" = 1 ] && grep -q "cannot create" err.txt || fail "unwritable progress stream: exit $rc, $(cat err.txt)"
[ ! -e x.clf ] || fail "trained despite the unwritable progress stream"
ok "an unwritable --progress-stream: exit 1 before training"
echo "progress_stream: all ok"
