"""gyro_stream.py - gyro streams from Python through the gyro package (pipeline/python), for
tests/e2e/python_interop.sh and tests/e2e/python_package.sh. Run it with the python of an
environment where the package is installed (tests/py/python_lib.bash makes one).

  gyro_stream.py read STREAM [TYPE]     print each record as JSON (proto field names), as
                                        `gyro dump` does; TYPE: the type of a headerless stream
  gyro_stream.py error STREAM           read STREAM to its end; print the StreamError's message
                                        and class and exit 0, or exit 1 if it reads cleanly
  gyro_stream.py write KIND STREAM      write a sample stream of KIND (documents, embeddings,
                                        examples-headerless) and print the JSON of its records
                                        as `gyro dump` should print them
  gyro_stream.py tsv2ex TSV STREAM      write the Examples of a `text<TAB>label[<TAB>session]`
                                        file as `gyro import -f tsv` does (source tsv:NAME,
                                        session L<line> unless given, line)
  gyro_stream.py copy IN OUT            read IN and write its records to OUT with the same type
  gyro_stream.py compare A.json B.json  compare two JSON-lines files record by record
                                        (floats to 1e-6 relative, NaN equal to NaN)
"""
import json
import math
import os
import sys

import gyro


def cmd_read(path, headerless=None):
    with gyro.StreamReader(path, headerless_type=headerless) as r:
        for m in r:
            print(gyro.to_json(m))


def cmd_error(path):
    try:
        for _ in gyro.read_stream(path):
            pass
    except gyro.StreamError as e:
        print("%s\t%s" % (type(e).__name__, e))
        return 0
    print("%s read without error" % path)
    return 1


def sample(kind):
    if kind == "documents":
        out = []
        for i, (orig, text) in enumerate([("學生ＡＢＣ", "学生ABC"), ("👍🏽 e\u0301", "👍🏽 é"),
                                          ("", ""), ("引号\"与\\反斜杠\n换行", "x")]):
            out.append(gyro.Document(id=i + 1, source="python", line=10 * i + 1, original=orig, text=text,
                                     chars=list(text), repairs=i))
        return "gyro.v1.Document", out
    if kind == "embeddings":
        t = gyro.EmbeddingTable(model=gyro.HYPERBOLOID, curvature=1.0, dim=3, trained_by="python")
        t.entries.add(token="学", count=12345678901, vector=[1.5, 0.1, -0.25, 3e-8])
        t.entries.add(token="生", count=1, vector=[float("nan"), float("inf"), -float("inf"), 0.0])
        p = gyro.EmbeddingTable(model=gyro.POINCARE, curvature=0.5, dim=2)
        p.entries.add(token="A", vector=[0.3333333432674408, -0.7])
        return "gyro.v1.EmbeddingTable", [t, p]
    if kind == "examples-headerless":
        out = [gyro.example("播放周杰伦的晴天", "music.play", source="py", session="s1", line=1),
               gyro.example("查询歌曲然后播放", "query_song+play_song", line=2)]
        return None, out
    raise SystemExit("unknown kind " + kind)


def cmd_write(kind, path):
    type_name, msgs = sample(kind)
    if type_name:
        gyro.write_stream(path, msgs, type_name, producer="python gyro_stream.py")
    else:
        gyro.write_examples(path, msgs, header=False)
    for m in msgs:
        print(gyro.to_json(m))


def cmd_tsv2ex(tsv, path):
    items = []
    name = os.path.basename(tsv)
    with open(tsv, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\r\n").split("\t")
            session = parts[2] if len(parts) > 2 else "L%d" % n
            items.append(gyro.example(parts[0], parts[1], source="tsv:" + name, session=session, line=n))
    print("%d examples" % gyro.write_examples(path, items))


def cmd_copy(src, dst):
    with gyro.StreamReader(src) as r:
        n = gyro.write_stream(dst, r, r.message_class, producer=r.header.producer)
    print("%d %s records copied" % (n, r.message_type))


def same(a, b, where):
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            raise AssertionError("%s: keys %s != %s" % (where, sorted(a), sorted(b)))
        for k in a:
            same(a[k], b[k], where + "." + k)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            raise AssertionError("%s: %d != %d items" % (where, len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, "%s[%d]" % (where, i))
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and not isinstance(b, bool):
        if not (a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))):
            raise AssertionError("%s: %r != %r" % (where, a, b))
    elif isinstance(a, (int, float)) != isinstance(b, (int, float)) and \
            {type(a), type(b)} <= {str, float, int} and \
            all(isinstance(v, float) and math.isnan(v) or v == "NaN" for v in (a, b)):
        return
    elif a != b:
        raise AssertionError("%s: %r != %r" % (where, a, b))


def cmd_compare(path_a, path_b):
    with open(path_a, encoding="utf-8") as f:
        a = [json.loads(l) for l in f if l.strip()]
    with open(path_b, encoding="utf-8") as f:
        b = [json.loads(l) for l in f if l.strip()]
    if len(a) != len(b):
        raise SystemExit("%s has %d records, %s has %d" % (path_a, len(a), path_b, len(b)))
    for i, (x, y) in enumerate(zip(a, b)):
        same(x, y, "record %d" % (i + 1))
    print("%d records equal" % len(a))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "read":
        cmd_read(*args)
    elif cmd == "error":
        sys.exit(cmd_error(*args))
    elif cmd == "write":
        cmd_write(*args)
    elif cmd == "tsv2ex":
        cmd_tsv2ex(*args)
    elif cmd == "copy":
        cmd_copy(*args)
    elif cmd == "compare":
        cmd_compare(*args)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
