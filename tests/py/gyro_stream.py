#!/usr/bin/python3
"""gyro_stream.py - read and write gyro streams from Python (python3-protobuf), for the
interoperability test tests/e2e/python_interop.sh.

A gyro stream is protobuf's "delimited" format: each record is preceded by its length as a
varint; the first record is a gyro.v1.StreamHeader naming the type of the others.

  gyro_stream.py PBDIR read STREAM          print each record as JSON (proto field names)
  gyro_stream.py PBDIR write KIND STREAM     write a sample stream of KIND (documents,
                                            embeddings, examples-headerless) and print the JSON
                                            of its records as `gyro dump` should print them
  gyro_stream.py PBDIR compare A.json B.json compare two JSON-lines files record by record
                                            (floats to 1e-6 relative, NaN equal to NaN)

PBDIR holds gyro_pb2.py, generated at test time with grpc_tools.protoc.
"""
import json
import math
import sys

from google.protobuf import json_format
from google.protobuf.internal.decoder import _DecodeVarint
from google.protobuf.internal.encoder import _VarintBytes


def to_json(msg):
    return json.dumps(json_format.MessageToDict(msg, preserving_proto_field_name=True),
                      ensure_ascii=False, separators=(",", ":"))


def read_records(data):
    pos = 0
    while pos < len(data):
        size, pos = _DecodeVarint(data, pos)
        if pos + size > len(data):
            raise ValueError("truncated record at byte %d" % pos)
        yield data[pos:pos + size]
        pos += size


def cmd_read(pb, path):
    with open(path, "rb") as f:
        data = f.read()
    records = read_records(data)
    header = pb.StreamHeader()
    header.ParseFromString(next(records))
    assert header.magic == "gyro", header
    assert header.version == 1, header
    name = header.message_type
    assert name.startswith("gyro.v1."), name
    cls = getattr(pb, name[len("gyro.v1."):])
    for raw in records:
        m = cls()
        m.ParseFromString(raw)
        print(to_json(m))


def sample(pb, kind):
    if kind == "documents":
        out = []
        for i, (orig, text) in enumerate([("學生ＡＢＣ", "学生ABC"), ("👍🏽 e\u0301", "👍🏽 é"),
                                          ("", ""), ("引号\"与\\反斜杠\n换行", "x")]):
            d = pb.Document(id=i + 1, source="python", line=10 * i + 1, original=orig, text=text,
                            repairs=i)
            d.chars.extend(list(text))
            out.append(d)
        return "gyro.v1.Document", out
    if kind == "embeddings":
        t = pb.EmbeddingTable(model=pb.HYPERBOLOID, curvature=1.0, dim=3, trained_by="python")
        t.entries.add(token="学", count=12345678901, vector=[1.5, 0.1, -0.25, 3e-8])
        t.entries.add(token="生", count=1, vector=[float("nan"), float("inf"), -float("inf"), 0.0])
        p = pb.EmbeddingTable(model=pb.POINCARE, curvature=0.5, dim=2)
        p.entries.add(token="A", vector=[0.3333333432674408, -0.7])
        return "gyro.v1.EmbeddingTable", [t, p]
    if kind == "examples-headerless":
        out = [pb.Example(text="播放周杰伦的晴天", label="music.play", labels=["music.play"],
                          source="py", session="s1", line=1),
               pb.Example(text="查询歌曲然后播放", label="query_song+play_song",
                          labels=["play_song", "query_song"], line=2)]
        return None, out
    raise SystemExit("unknown kind " + kind)


def cmd_write(pb, kind, path):
    type_name, msgs = sample(pb, kind)
    with open(path, "wb") as f:
        if type_name:
            h = pb.StreamHeader(magic="gyro", version=1, message_type=type_name,
                                producer="python gyro_stream.py")
            raw = h.SerializeToString()
            f.write(_VarintBytes(len(raw)) + raw)
        for m in msgs:
            raw = m.SerializeToString()
            f.write(_VarintBytes(len(raw)) + raw)
    for m in msgs:
        print(to_json(m))


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
    sys.path.insert(0, sys.argv[1])
    import gyro_pb2 as pb
    cmd = sys.argv[2]
    if cmd == "read":
        cmd_read(pb, sys.argv[3])
    elif cmd == "write":
        cmd_write(pb, sys.argv[3], sys.argv[4])
    elif cmd == "compare":
        cmd_compare(sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
