#!/usr/bin/env bash
# import_real.sh — gyro import on the real shared data sets (NLPCC 2018, SMP2020, CrossWOZ read
# from its zip), the counts each must give, gyro split on the result, and the exit codes of bad
# input. gyro generate music has its own script (generate_music.sh), which needs no shared data.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
I="$SHARED/corpora/intent"
[ -d "$I" ] || { echo "shared intent corpora not found at $I"; exit 77; }
T="${TMPDIR:-/tmp}"
fail() { echo "FAIL: $*"; exit 1; }
# field N of the summary line: "<n> <word>"
field() { grep -o "[0-9][0-9.]* $2" "$1" | head -1 | cut -d' ' -f1; }
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; echo "ok   $1 = $2"; }

# ---- NLPCC 2018: 21,352 utterances, 4,705 sessions, 11 labels -----------------------------------
"$GYRO" import --format nlpcc "$I/nlpcc2018/corpus.train.txt" -o "$T/nlpcc.ex" 2> "$T/nlpcc.log"
cat "$T/nlpcc.log"
expect "nlpcc examples" "$(field "$T/nlpcc.log" examples)" 21352
expect "nlpcc sessions" "$(field "$T/nlpcc.log" sessions)" 4705
expect "nlpcc labels" "$(field "$T/nlpcc.log" labels)" 11
expect "nlpcc bad" "$(field "$T/nlpcc.log" 'bad records')" 0

# stdin gives the same stream as the file ('-'); only the source name differs
"$GYRO" import -q --format nlpcc - -o "$T/nlpcc.stdin.ex" < "$I/nlpcc2018/corpus.train.txt"
cmp -s <("$GYRO" dump "$T/nlpcc.ex" | sed 's/"source":"[^"]*"//') \
       <("$GYRO" dump "$T/nlpcc.stdin.ex" | sed 's/"source":"[^"]*"//') || fail "nlpcc from stdin differs"
echo "ok   nlpcc from stdin = from the file"

# ---- SMP2020: 5,024 utterances, 91 labels ---------------------------------------------------------
"$GYRO" import --format smp "$I/smp2020/2020train.json" -o "$T/smp.ex" 2> "$T/smp.log"
cat "$T/smp.log"
expect "smp examples" "$(field "$T/smp.log" examples)" 5024
expect "smp labels" "$(field "$T/smp.log" labels)" 91
"$GYRO" import --format smp - -o "$T/smp.stdin.ex" < "$I/smp2020/2020train.json" 2> "$T/smp2.log"
expect "smp from stdin" "$(field "$T/smp2.log" examples)" 5024

# ---- CrossWOZ (zip): 4,229 user turns, 16 without any act, 53% composite, 16 atoms ---------------
"$GYRO" import --format crosswoz --max-warnings 0 "$I/crosswoz/val.json.zip" -o "$T/cw.ex" 2> "$T/cw.log"
cat "$T/cw.log"
ex=$(field "$T/cw.log" examples); bad=$(field "$T/cw.log" 'bad records')
expect "crosswoz user turns (examples + turns without acts)" "$((ex + bad))" 4229
expect "crosswoz turns without acts" "$bad" 16
expect "crosswoz dialogues" "$(field "$T/cw.log" sessions)" 500
expect "crosswoz atoms" "$(field "$T/cw.log" atoms)" 16
pct=$(grep -o '([0-9.]*%)' "$T/cw.log" | tr -d '()%')
awk -v p="$pct" 'BEGIN { exit !(p > 50 && p < 56) }' || fail "crosswoz composite share $pct% not ~53%"
echo "ok   crosswoz composite = $pct%"
grep -q "and 16 more bad records" "$T/cw.log" || fail "crosswoz: warnings not summarized"
# strict mode stops at the first act-less turn with its location
set +e
"$GYRO" import --format crosswoz --strict "$I/crosswoz/val.json.zip" -o "$T/cw2.ex" 2> "$T/cw2.log"
rc=$?
set -e
expect "crosswoz --strict exit" "$rc" 65
grep -q 'val.json.zip:val.json:[0-9]*: dialogue [0-9]*: user turn with no dialogue act' "$T/cw2.log" || fail "strict message: $(cat "$T/cw2.log")"
[ ! -e "$T/cw2.ex" ] || fail "output written despite the error"

# ZIP archives written by another implementation (Python's zipfile): streamed with data
# descriptors, stored with two members, and an unsupported method
python3 - "$T" <<'PY'
import io, json, sys, zipfile
t = sys.argv[1]
doc = {"1": {"messages": [
           {"role": "usr", "content": "你好，找酒店", "dialog_act": [["Request", "酒店", "名称", ""], ["General", "greet", "none", "none"]]},
           {"role": "sys", "content": "好的", "dialog_act": []}]},
       "2": {"messages": [{"role": "usr", "content": "谢谢", "dialog_act": [["General", "thank", "none", "none"]]}]}}
data = json.dumps(doc, ensure_ascii=False, indent=1).encode()
class Pipe(io.RawIOBase):          # not seekable: zipfile writes data descriptors (flag bit 3)
    def __init__(self): self.b = bytearray()
    def writable(self): return True
    def write(self, x): self.b += x; return len(x)
p = Pipe()
with zipfile.ZipFile(p, "w", compression=zipfile.ZIP_DEFLATED) as z:
    with z.open("dir/val.json", "w") as f: f.write(data)
    z.writestr("README.txt", "not json")
open(t + "/streamed.zip", "wb").write(bytes(p.b))
with zipfile.ZipFile(t + "/stored.zip", "w", compression=zipfile.ZIP_STORED) as z:
    z.writestr("val.json", data); z.writestr("test.json", data)
with zipfile.ZipFile(t + "/bzip2.zip", "w", compression=zipfile.ZIP_BZIP2) as z:
    z.writestr("val.json", data)
PY
"$GYRO" import --format crosswoz "$T/streamed.zip" -o "$T/z1.ex" 2> "$T/z1.log"
expect "python zip (streamed, deflate) examples" "$(field "$T/z1.log" examples)" 2
expect "python zip (streamed, deflate) composites" "$(field "$T/z1.log" composite)" 1
"$GYRO" import --format crosswoz "$T/stored.zip" -o "$T/z2.ex" 2> "$T/z2.log"
expect "python zip (stored, 2 members) sessions" "$(field "$T/z2.log" sessions)" 4
expect "python zip (bzip2) exit" "$(set +e; "$GYRO" import --format crosswoz "$T/bzip2.zip" -o "$T/z3.ex" 2> /dev/null; echo $?)" 65

# ---- split: deterministic, by session, ~10% --------------------------------------------------------
"$GYRO" split --seed 3 --dev 0.1 --train-out "$T/n.train" --dev-out "$T/n.dev" "$T/nlpcc.ex" 2> "$T/split.log"
cat "$T/split.log"
"$GYRO" split --seed 3 --dev 0.1 --train-out "$T/n2.train" --dev-out "$T/n2.dev" < "$T/nlpcc.ex" 2> /dev/null
cmp -s "$T/n.dev" "$T/n2.dev" && cmp -s "$T/n.train" "$T/n2.train" || fail "split not deterministic"
"$GYRO" split --seed 4 --dev 0.1 --train-out "$T/n3.train" --dev-out "$T/n3.dev" "$T/nlpcc.ex" 2> /dev/null
! cmp -s "$T/n.dev" "$T/n3.dev" || fail "another seed gave the same split"
dev=$(grep -o 'dev [0-9]* examples' "$T/split.log" | cut -d' ' -f2)
train=$(grep -o 'train [0-9]* examples' "$T/split.log" | cut -d' ' -f2)
expect "split train+dev" "$((train + dev))" 21352
awk -v d="$dev" 'BEGIN { exit !(d > 2100 && d < 2170) }' || fail "dev size $dev not ~10%"
# the two halves re-imported: sessions of train and dev are disjoint (session counts add up)
st=$(grep -o 'train [0-9]* examples ([0-9]* sessions' "$T/split.log" | grep -o '([0-9]*' | tr -d '(')
sd=$(grep -o 'dev [0-9]* examples ([0-9]* sessions' "$T/split.log" | grep -o '([0-9]*' | tr -d '(')
expect "split sessions train+dev" "$((st + sd))" 4705
# read back with gyro dump: no session on both sides, input order kept on each side
sessions() { "$GYRO" dump "$1" | python3 -c 'import json, sys; print("\n".join(sorted({json.loads(l)["session"] for l in sys.stdin})))'; }
expect "sessions in both train and dev" "$(comm -12 <(sessions "$T/n.train") <(sessions "$T/n.dev") | wc -l)" 0
"$GYRO" dump "$T/n.dev" | python3 -c '
import json, sys
lines = [int(json.loads(l)["line"]) for l in sys.stdin]
sys.exit(lines != sorted(lines))' || fail "dev records out of input order"
# 5 folds of SMP: dev sizes add up to the whole set
total=0
for f in 0 1 2 3 4; do
  "$GYRO" split --seed 1 --folds 5 --fold $f --train-out "$T/s.train" --dev-out "$T/s.dev" "$T/smp.ex" 2> "$T/fold.log"
  total=$((total + $(grep -o 'dev [0-9]* examples' "$T/fold.log" | cut -d' ' -f2)))
done
expect "smp 5-fold dev total" "$total" 5024
# stratified folds: every one of the 91 labels in every dev fold, 2-3 of the 10-example labels
for f in 0 4; do
  "$GYRO" split -q --stratify --seed 1 --folds 5 --fold $f --train-out "$T/s.train" --dev-out "$T/s.dev" "$T/smp.ex"
  read -r nl lo < <("$GYRO" dump "$T/s.dev" | python3 -c '
import collections, json, sys
c = collections.Counter(json.loads(l)["label"] for l in sys.stdin)
print(len(c), min(c.values()))')
  expect "smp stratified fold $f labels" "$nl" 91
  [ "$lo" -ge 2 ] || fail "stratified fold $f: a label with only $lo examples"
done

# ---- exit codes ---------------------------------------------------------------------------------------
code() { set +e; "$@" > /dev/null 2>&1; local rc=$?; set -e; echo $rc; }
expect "import --help" "$(code "$GYRO" import --help)" 0
expect "import unknown option" "$(code "$GYRO" import --bogus x)" 2
expect "import unknown format" "$(code "$GYRO" import --format csv x)" 2
expect "import missing file" "$(code "$GYRO" import --format tsv "$T/nope.tsv" -o "$T/x.ex")" 1
printf 'ok\tOTHERS\nbad\ta++b\n' > "$T/bad.tsv"
expect "import strict bad label" "$(code "$GYRO" import --format tsv --strict "$T/bad.tsv" -o "$T/x.ex")" 65
expect "import lenient bad label" "$(code "$GYRO" import --format tsv "$T/bad.tsv" -o "$T/x.ex")" 0
printf 'x\ta++b\n' > "$T/allbad.tsv"
expect "import no examples" "$(code "$GYRO" import --format tsv "$T/allbad.tsv" -o "$T/y.ex")" 65
[ ! -e "$T/y.ex" ] || fail "output written although nothing was imported"
printf '[{"text": "x", ' > "$T/trunc.json"
expect "import truncated JSON" "$(code "$GYRO" import --format smp "$T/trunc.json" -o "$T/z.ex")" 65
expect "split without outputs" "$(code "$GYRO" split "$T/nlpcc.ex")" 2
expect "split bad fraction" "$(code "$GYRO" split --dev 2 --train-out a --dev-out b "$T/nlpcc.ex")" 2
expect "split corrupt stream" "$(code "$GYRO" split --train-out "$T/a" --dev-out "$T/b" "$T/bad.tsv")" 65
printf '你好\n' | "$GYRO" normalize -q -o "$T/doc.pb"
expect "split of a Document stream" "$(code "$GYRO" split --train-out "$T/a" --dev-out "$T/b" "$T/doc.pb")" 65
expect "import into a missing directory" "$(code "$GYRO" import -f tsv "$T/bad.tsv" -o "$T/no/such/dir.ex")" 1
expect "import of a directory" "$(code "$GYRO" import -f smp "$T" -o "$T/d.ex")" 1
echo "all import/split checks passed"
