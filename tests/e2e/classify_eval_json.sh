#!/usr/bin/env bash
# classify_eval_json.sh — `gyro classify eval --json` end to end: a tiny model on two-level
# labels with OTHERS and a composite, evaluated on a set holding labels the model never saw.
# Every figure of the JSON object is recomputed in Python from `gyro classify predict` (the
# per-text path, all probabilities) and the gold labels of `gyro dump`: accuracy with unseen
# examples as errors, macro-F1, the NLPCC 2018 task-4 measure as the task's nlpcc_eval.py
# computes it (F1 of macro-P and macro-R over the intents, OTHERS left out), P@2/R@2 as
# fastText's Meter counts them (over atoms; examples with no known atom left out), accuracy per
# level, per-label counts. Then the text report, --others, and bad input (exit 65 / 2).
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "no $PY"; exit 77; }

gen() {
  local pre=("" "请" "帮我" "麻烦")
  for a in 播放 来一首 我想听; do for b in 稻香 晴天 七里香 夜曲; do for p in "${pre[@]}"; do
    echo -e "${p}${a}${b}\tmusic.play"; done; done; done
  for a in 暂停 停止播放 别放了; do for p in "${pre[@]}"; do for q in "" 吧 一下 好吗; do
    echo -e "${p}${a}${q}\tmusic.pause"; done; done; done
  for a in 导航到 带我去; do for b in 北京西站 机场 公司 学校; do for p in "${pre[@]}"; do
    echo -e "${p}${a}${b}\tnavigation.navigation"; done; done; done
  for a in 你好 谢谢你 今天星期几 讲个笑话; do for p in "${pre[@]}"; do
    echo -e "${p}${a}\tOTHERS"; done; done
  for b in 稻香 晴天 夜曲; do for c in 机场 公司; do
    echo -e "播放${b}并导航到${c}\tmusic.play+navigation.navigation"; done; done
}
gen > train.tsv
"$GYRO" import -f tsv -q -o train.pb train.tsv
"$GYRO" classify train --dim 16 --layers 1 --heads 2 --epochs 12 --batch 16 --optimizer adam --lr 0.01 \
  --dev-fraction 0 --seed 5 --quiet -o m.clf train.pb

# the eval set: known labels, OTHERS, a composite, and three labels the model never saw
{
  echo -e "播放稻香\tmusic.play"
  echo -e "我想听晴天吧\tmusic.play"
  echo -e "停止播放\tmusic.pause"
  echo -e "别放了好吗\tmusic.pause"
  echo -e "带我去机场\tnavigation.navigation"
  echo -e "去公司\tnavigation.navigation"
  echo -e "你好\tOTHERS"
  echo -e "讲个笑话吧\tOTHERS"
  echo -e "播放夜曲并导航到公司\tmusic.play+navigation.navigation"
  echo -e "下一首\tmusic.next"
  echo -e "换一首\tmusic.next"
  echo -e "取消导航\tnavigation.cancel_navigation"
  echo -e "播放晴天并打电话\tmusic.play+phone_call.make_a_phone_call"
} > eval.tsv
"$GYRO" import -f tsv -q -o eval.pb eval.tsv
"$GYRO" dump eval.pb > gold.jsonl
"$GYRO" classify predict -m m.clf -k 100 eval.pb > pred.jsonl

"$GYRO" classify eval -m m.clf --json -k 2 eval.pb > ev.json 2> ev.err
[ "$(wc -l < ev.json)" = 1 ] || { echo "FAIL: --json wrote $(wc -l < ev.json) lines"; exit 1; }
grep -q "4 examples of 13 have a label the model never saw" ev.err || { echo "FAIL: stderr: $(cat ev.err)"; exit 1; }
grep -q "music.next (2)" ev.err

"$PY" - <<'EOF'
import json, sys
ev = json.load(open("ev.json"))
gold = [json.loads(l)["label"] for l in open("gold.jsonl") if '"label"' in l]
preds = [json.loads(l)["intents"] for l in open("pred.jsonl")]
assert len(gold) == len(preds) == 13, (len(gold), len(preds))
known = [l["label"] for l in ev["labels"] if l["seen"]]
assert sorted(known) == sorted(["OTHERS", "music.play", "music.pause", "navigation.navigation",
                                "music.play+navigation.navigation"]), known
top = [p[0]["label"] for p in preds]
tol = 1e-9
def close(a, b, what):
    assert abs(a - b) < tol, "%s: gyro %r, recomputed %r" % (what, a, b)

n = len(gold)
assert ev["n"] == n and ev["n_unseen"] == 4 and ev["n_skipped"] == 0, ev
# accuracy: unseen labels are errors
close(ev["accuracy"], sum(g == p for g, p in zip(gold, top)) / n, "accuracy")
# per-label counts and macro-F1 over the labels that occur as gold or predicted
labels = set(gold) | set(top)
f1s = []
by = {l["label"]: l for l in ev["labels"]}
for c in labels:
    tp = sum(g == c and p == c for g, p in zip(gold, top))
    ng = sum(g == c for g in gold); npred = sum(p == c for p in top)
    f1s.append(2 * tp / (ng + npred) if tp else 0.0)
    assert by[c]["support"] == ng and by[c]["predicted"] == npred and by[c]["correct"] == tp, (c, by[c])
    assert by[c]["seen"] == (c in known)
close(ev["macro_f1"], sum(f1s) / len(f1s), "macro-F1")
assert sum(l["support"] for l in ev["labels"]) == n

# NLPCC 2018 task 4 (nlpcc_eval.py, _eval_intent): the schema is the model's labels and the data's
schema = set(known) | set(gold)
stat = {k: [0, 0, 0] for k in schema}
for g, p in zip(gold, top):
    if g == p: stat[g][0] += 1
    else: stat[g][2] += 1; stat[p][1] += 1
div = lambda a, b: a / b if b else 0.0
P = [div(tp, tp + fp) for k, (tp, fp, fn) in stat.items() if k != "OTHERS"]
R = [div(tp, tp + fn) for k, (tp, fp, fn) in stat.items() if k != "OTHERS"]
Pm, Rm = sum(P) / len(P), sum(R) / len(R)
assert ev["nlpcc"]["others"] == "OTHERS" and ev["nlpcc"]["intents"] == len(P) == 7, ev["nlpcc"]
close(ev["nlpcc"]["precision"], Pm, "NLPCC macro-P")
close(ev["nlpcc"]["recall"], Rm, "NLPCC macro-R")
close(ev["nlpcc"]["f1"], div(2 * Pm * Rm, Pm + Rm), "NLPCC F1")

# P@2 / R@2 as fastText's Meter::log, over atoms (a composite's atoms share its probability)
atoms_of = lambda label: sorted(set(a.strip() for a in label.split("+")))
known_atoms = sorted({a for c in known for a in atoms_of(c)})
hits = predicted = ngold = nk = 0
for g, p in zip(gold, preds):
    goldset = [a for a in atoms_of(g) if a in known_atoms]
    if not goldset: continue
    score = {a: 0.0 for a in known_atoms}
    for it in p:
        for a in atoms_of(it["label"]): score[a] += it["probability"]
    ranked = sorted(known_atoms, key=lambda a: -score[a])[:2]
    nk += 1; ngold += len(goldset); predicted += len(ranked); hits += sum(a in goldset for a in ranked)
assert ev["k"] == 2 and ev["n_at_k"] == nk == 10, (ev["n_at_k"], nk)
close(ev["p_at_k"], hits / predicted, "P@2")
close(ev["r_at_k"], hits / ngold, "R@2")

# accuracy per level: the domain is the part before the first '.' of each atom
def proj(label, level):
    return "+".join(sorted(set(".".join(a.split(".")[:level + 1]) for a in atoms_of(label))))
lv = ev["level_accuracy"]
assert len(lv) == 2, lv
close(lv[0], sum(proj(g, 0) == proj(p, 0) for g, p in zip(gold, top)) / n, "level 1")
close(lv[1], ev["accuracy"], "level 2")
close(ev["domain_accuracy"], lv[0], "domain")
assert ev["cross_entropy"] is not None and ev["cross_entropy"] > 0
print("json ok: accuracy %.4f, NLPCC F1 %.4f, P@2 %.4f, R@2 %.4f, domain %.4f"
      % (ev["accuracy"], ev["nlpcc"]["f1"], ev["p_at_k"], ev["r_at_k"], lv[0]))
EOF

# the text report says the same
"$GYRO" classify eval -m m.clf -k 2 eval.pb > ev.txt 2> /dev/null
grep -q '^unseen: 4 examples (3 labels) whose label the model never saw, counted as errors' ev.txt
grep -q '^NLPCC 2018 task-4 intent F1 (OTHERS left out):' ev.txt
grep -q '^P@2:' ev.txt && grep -q '^R@2:' ev.txt
grep -q '^accuracy at level 1: .*(domain' ev.txt
grep -q '^music.next (unseen) *2 ' ev.txt
acc_txt=$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' ev.txt)
"$PY" -c 'import json,sys; a=json.load(open("ev.json"))["accuracy"]; sys.exit(abs(100*a-float(sys.argv[1]))>0.006)' "$acc_txt"

# --others names the label left out; an absent one gives no measure and a notice
"$GYRO" classify eval -m m.clf --json --others music.pause eval.pb 2>/dev/null \
  | "$PY" -c 'import json,sys; e=json.load(sys.stdin); assert e["nlpcc"]["others"]=="music.pause" and e["nlpcc"]["intents"]==7, e["nlpcc"]'
"$GYRO" classify eval -m m.clf --json --others NONE eval.pb > none.json 2> none.err
"$PY" -c 'import json; assert json.load(open("none.json"))["nlpcc"] is None'
grep -q "no label 'NONE'" none.err

# bad input: an empty stream, usage errors
n=$(od -An -tu1 -N1 eval.pb | tr -d ' ')
head -c $((n + 1)) eval.pb > empty.pb     # the stream header alone: no record
rc=0; "$GYRO" classify eval -m m.clf empty.pb > /dev/null 2> err.txt || rc=$?
[ "$rc" = 65 ] && grep -q "no example with a text and a label" err.txt || { echo "FAIL: empty stream: exit $rc, $(cat err.txt)"; exit 1; }
rc=0; "$GYRO" classify eval -m m.clf -k 0 eval.pb > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: -k 0: exit $rc"; exit 1; }
rc=0; "$GYRO" classify eval -m m.clf --others '' eval.pb > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: --others '': exit $rc"; exit 1; }
"$GYRO" classify eval --help | grep 'Exit status: 0 report written' > /dev/null
echo ok
