"""train_suite.py — training over gRPC through the gyro package's Client (train_classifier,
train_embeddings), against a `gyro serve --model OLD --train-dir DIR` started by
tests/e2e/python_train.sh. Run with the venv's python (Debian's python3-grpcio underneath).

    train_suite.py ADDR DIR TSV BIG

TSV: labelled lines "text<TAB>label" (sent as examples); BIG: a large corpus file name under DIR
(a training on it lasts long enough to be cancelled). One line per assertion; exit 1 at the
first failure.
"""
import os
import sys
import time

import gyro

ADDR, DIR, TSV, BIG = sys.argv[1:5]
DIR = os.path.realpath(DIR)


def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        sys.exit(1)


def raises(fn, cls):
    """Run fn() (which iterates a call); return the gyro error it raised if it is a cls."""
    try:
        fn()
    except cls as e:
        return e
    except gyro.RpcError as e:
        ok(False, "%s raised %s (%s), not %s" % (getattr(fn, "__name__", fn), type(e).__name__, e.details,
                                                cls.__name__))
    ok(False, "no %s" % cls.__name__)


with open(TSV, encoding="utf-8") as f:
    rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
texts = [r[0] for r in rows]

c = gyro.Client(ADDR)
c.wait_ready(timeout=10)
old = c.model_version()

# ---- train -> progress -> the new model serves ---------------------------------------------------
msgs = list(c.train_classifier(rows, dim=16, epochs=20, output="py.model"))
progress = [m for m in msgs if not m.done]
last = msgs[-1]
ok(len(progress) >= 1 and all(m.stage == "classify" for m in progress), "%d progress messages, stage classify"
   % len(progress))
ok(all(0 <= m.fraction <= 1 and 1 <= m.epoch <= 20 for m in progress), "fraction in [0, 1], epoch in 1..20")
ok(last.done and last.output_path == os.path.join(DIR, "py.model") and os.path.isfile(last.output_path),
   "the last message: done, the model written at %s" % last.output_path)
ok(last.model_version and last.model_version != old, "a new model version %s (was %s)" % (last.model_version, old))
r = c.classify("请播放稻香")
ok(r.model_version == last.model_version and r.intents[0].label == "music.play",
   "Classify answers with the new model: %s %s" % (r.model_version, r.intents[0].label))

# embeddings from strings, then a classifier started from the table (Example messages this time)
e = raises(lambda: c.embed(text="导航"), gyro.Unavailable)
ok("no embedding table" in e.details, "Embed before any table: Unavailable (%s)" % e.details)
emb = list(c.train_embeddings(texts * 4, dim=8, epochs=2, output="py.pb"))
ok(emb[-1].done and emb[-1].output_path.endswith("/py.pb") and not emb[-1].model_version,
   "train_embeddings: done, table %s" % emb[-1].output_path)
table = list(gyro.read_stream(emb[-1].output_path))
ok(len(table) == 1 and table[0].dim == 8 and len(table[0].entries) >= 20,
   "the table reads back with gyro.read_stream: dim 8, %d characters" % len(table[0].entries))
v = c.embed(text="导航")
ok(v.dim == 8 and len(v.entries) == 2 and not v.missing,
   "Embed answers from the trained table: dim %d, %d characters" % (v.dim, len(v.entries)))
nb = c.neighbors(v.entries[0].token, k=3)
ok(len(nb.neighbors) == 3, "Neighbors answers from the trained table too")
ex = [gyro.Example(text=t, label=l) for t, l in rows]
last2 = list(c.train_classifier(ex, embeddings_path="py.pb", epochs=5))[-1]
ok(last2.done and c.classify("导航到机场").model_version == last2.model_version,
   "a classifier from Example messages and the table serves %s" % last2.model_version)
served = last2.model_version

# ---- one at a time; cancellation --------------------------------------------------------------------
it = c.train_embeddings(corpus_path=BIG, epochs=100, output="never.pb")  # tens of seconds: cancelled long before its end
first = next(it)
ok(not first.done and first.stage == "char2vec", "a long training streams progress (%.4f)" % first.fraction)
e = raises(lambda: list(c.train_classifier(rows, epochs=1)), gyro.ResourceExhausted)
ok("one at a time" in e.details, "a second training meanwhile: ResourceExhausted (%s)" % e.details)
t0 = time.monotonic()
n = 0
while time.monotonic() - t0 < 1:
    c.classify("导航到机场")
    n += 1
ok(n >= 5, "Classify keeps answering during the training: %d calls in 1 s" % n)
it.close()  # cancels the call
t0 = time.monotonic()
accepted = None
while time.monotonic() - t0 < 5:
    try:
        accepted = list(c.train_embeddings(texts, dim=4, epochs=1, output="after.pb"))[-1]
        break
    except gyro.ResourceExhausted:
        time.sleep(0.05)
if accepted is not None:
    ok(c.embed(text="导航").dim == 4, "the next trained table (dim 4) replaces it in Embed")
ok(accepted is not None and accepted.done,
   "closing the iterator cancelled the training: a new one accepted %.0f ms later" % (1000 * (time.monotonic() - t0)))
ok(not os.path.exists(os.path.join(DIR, "never.pb")), "the cancelled training wrote nothing")
ok(c.health() == "SERVING" and c.model_version() == served, "still SERVING, still model %s" % served)

# ---- paths -------------------------------------------------------------------------------------------
e = raises(lambda: list(c.train_classifier(data_path="/etc/passwd")), gyro.PermissionDenied)
ok("outside" in e.details, "an absolute path outside the directory: PermissionDenied (%s)" % e.details)
e = raises(lambda: list(c.train_embeddings(corpus_path="../x.txt")), gyro.InvalidArgument)
ok("'..'" in e.details, "'..': InvalidArgument (%s)" % e.details)
os.symlink("/etc", os.path.join(DIR, "etc-link"))
e = raises(lambda: list(c.train_embeddings(corpus_path="etc-link/passwd")), gyro.PermissionDenied)
ok("outside" in e.details, "a symbolic link out of the directory: PermissionDenied (%s)" % e.details)
e = raises(lambda: list(c.train_embeddings(texts, output="/tmp/evil.pb")), gyro.PermissionDenied)
ok(True, "an absolute output: PermissionDenied (%s)" % e.details)
e = raises(lambda: list(c.train_classifier(data_path="missing.tsv")), gyro.NotFound)
ok(True, "a missing file: NotFound (%s)" % e.details)

# ---- malformed and empty data, limits ------------------------------------------------------------------
raises(lambda: list(c.train_classifier([])), gyro.InvalidArgument)
ok(True, "no examples: InvalidArgument")
e = raises(lambda: list(c.train_classifier([("播放稻香", "music.play"), ("导航", "")])), gyro.InvalidArgument)
ok("empty label" in e.details, "an example without a label: InvalidArgument (%s)" % e.details)
e = raises(lambda: list(c.train_embeddings(["", ""])), gyro.InvalidArgument)
ok(True, "empty documents: InvalidArgument (%s)" % e.details)
with open(os.path.join(DIR, "garbage.bin"), "wb") as f:
    f.write(bytes(range(256)) * 8)
e = raises(lambda: list(c.train_classifier(data_path="garbage.bin")), gyro.InvalidArgument)
ok(True, "a malformed data file: InvalidArgument (%s)" % e.details[:90])
e = raises(lambda: list(c.train_classifier(rows, epochs=100000)), gyro.InvalidArgument)
ok("--train-max-epochs" in e.details, "epochs over the limit: InvalidArgument (%s)" % e.details)
e = raises(lambda: list(c.train_classifier(rows, geometry="flat")), gyro.InvalidArgument)
ok(True, "an unknown geometry: InvalidArgument (%s)" % e.details)
ok(c.model_version() == served and c.health() == "SERVING", "after the refusals: still SERVING model %s" % served)
c.close()
